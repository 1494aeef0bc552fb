use std::{cmp::Ordering, str::FromStr};

use super::{InvalidValue, string_newtype};

/// An API version such as `v1`, `v2beta1` or `v1alpha3`.
///
/// Ordered as Kubernetes orders versions by priority: GA above beta above alpha, then by
/// number; so the greatest version is the one that should be stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    raw: String,
    major: u32,
    stability: Stability,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Stability {
    Alpha(u32),
    Beta(u32),
    Stable,
}

impl FromStr for Version {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = || {
            InvalidValue::new(
                "version",
                value,
                "expected `v<N>`, optionally followed by `alpha<N>` or `beta<N>` (e.g. `v1`, `v1alpha1`, `v2beta3`), with N a number not starting with 0",
            )
        };
        let rest = value.strip_prefix('v').ok_or_else(invalid)?;
        let digits_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major = positive_number(&rest[..digits_end]).ok_or_else(invalid)?;
        let stability = match &rest[digits_end..] {
            "" => Stability::Stable,
            suffix => {
                if let Some(n) = suffix.strip_prefix("alpha") {
                    Stability::Alpha(positive_number(n).ok_or_else(invalid)?)
                } else if let Some(n) = suffix.strip_prefix("beta") {
                    Stability::Beta(positive_number(n).ok_or_else(invalid)?)
                } else {
                    return Err(invalid());
                }
            }
        };
        Ok(Self {
            raw: value.to_owned(),
            major,
            stability,
        })
    }
}

/// A decimal number without sign or leading zero, greater than zero.
fn positive_number(digits: &str) -> Option<u32> {
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

impl Version {
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

impl Version {
    /// The sort key: stability first (alpha < beta < GA), then the major version, then the
    /// alpha or beta number.
    fn priority(&self) -> (u8, u32, u32) {
        match self.stability {
            Stability::Alpha(n) => (0, self.major, n),
            Stability::Beta(n) => (1, self.major, n),
            Stability::Stable => (2, self.major, 0),
        }
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority().cmp(&other.priority())
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

string_newtype!(Version);

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn parses_kubernetes_versions() {
        for ok in ["v1", "v12", "v1alpha1", "v2beta3", "v1beta10"] {
            assert_eq!(v(ok).as_str(), ok);
        }
        for bad in [
            "1", "v", "v0", "v01", "v1alpha", "v1gamma1", "V1", "v1alpha0", "v1-beta1",
        ] {
            let err = bad.parse::<Version>().unwrap_err().to_string();
            assert!(err.contains("expected `v<N>`"), "{bad}: {err}");
        }
    }

    #[test]
    fn orders_by_kubernetes_priority() {
        let mut versions: Vec<Version> = [
            "v1alpha1",
            "v2",
            "v1beta1",
            "v1",
            "v2alpha1",
            "v1beta2",
            "v10alpha1",
        ]
        .iter()
        .map(|s| v(s))
        .collect();
        versions.sort();
        let sorted: Vec<&str> = versions.iter().map(Version::as_str).collect();
        assert_eq!(
            sorted,
            [
                "v1alpha1",
                "v2alpha1",
                "v10alpha1",
                "v1beta1",
                "v1beta2",
                "v1",
                "v2"
            ]
        );
    }
}
