use std::{fmt, str::FromStr};

use super::InvalidValue;

/// The Kubernetes minor version a project compiles against, which picks k8s-openapi's
/// version feature (`1.33` → `v1_33`). Limited to what the pinned k8s-openapi supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubernetesVersion {
    minor: u32,
}

impl KubernetesVersion {
    /// The versions k8s-openapi 0.29 supports.
    pub const OLDEST: Self = Self { minor: 33 };
    pub const NEWEST: Self = Self { minor: 37 };
    /// The oldest release Kubernetes still supports upstream; older ones build but are
    /// end-of-life.
    pub const OLDEST_SUPPORTED: Self = Self { minor: 35 };

    /// When upstream support of this release ended, for the releases k8s-openapi still builds
    /// that Kubernetes no longer patches (kubernetes.io/releases).
    pub fn end_of_life(self) -> Option<&'static str> {
        match self.minor {
            33 => Some("2026-06-28"),
            34 => Some("2026-10-27"),
            _ => None,
        }
    }

    /// The warning `init` and `update` give for a release past its end of life.
    pub fn end_of_life_warning(self) -> Option<String> {
        self.end_of_life().map(|date| {
            format!(
                "Kubernetes {self} reached its end of life on {date} and gets no more fixes; \
                 {} to {} are supported (--kubernetes-version {})",
                Self::OLDEST_SUPPORTED,
                Self::NEWEST,
                Self::OLDEST_SUPPORTED
            )
        })
    }

    /// k8s-openapi's cargo feature for this version.
    pub fn feature(self) -> String {
        format!("v1_{}", self.minor)
    }

    /// The release before this one: 1.34 for 1.35.
    pub fn previous(self) -> Self {
        Self {
            minor: self.minor - 1,
        }
    }

    /// The minor version: 33 for 1.33.
    pub fn minor(self) -> u32 {
        self.minor
    }
}

/// The oldest release Kubernetes still supports is the default: it gives the widest
/// compatibility a new project should start with, because an operator built against an older
/// API runs on newer clusters, and nobody should start on a release that gets no fixes.
impl Default for KubernetesVersion {
    fn default() -> Self {
        Self::OLDEST_SUPPORTED
    }
}

impl FromStr for KubernetesVersion {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let range = format!("{} to {}", Self::OLDEST, Self::NEWEST);
        let minor = value
            .strip_prefix('v')
            .unwrap_or(value)
            .strip_prefix("1.")
            .and_then(|minor| minor.parse::<u32>().ok())
            .ok_or_else(|| {
                InvalidValue::new(
                    "Kubernetes version",
                    value,
                    format!("expected `1.NN`, one of {range}"),
                )
            })?;
        let version = Self { minor };
        if !(Self::OLDEST..=Self::NEWEST).contains(&version) {
            return Err(InvalidValue::new(
                "Kubernetes version",
                value,
                format!(
                    "k8s-openapi 0.29 supports {range}, of which Kubernetes still supports {} to {}",
                    Self::OLDEST_SUPPORTED,
                    Self::NEWEST
                ),
            ));
        }
        Ok(version)
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

super::serde_as_text!(KubernetesVersion);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_supported_versions() {
        assert_eq!(
            "1.33".parse::<KubernetesVersion>().unwrap().feature(),
            "v1_33"
        );
        assert_eq!(
            "v1.37".parse::<KubernetesVersion>().unwrap().to_string(),
            "1.37"
        );
        assert_eq!(KubernetesVersion::default().to_string(), "1.35");
    }

    #[test]
    fn names_the_releases_past_their_end_of_life() {
        let old: KubernetesVersion = "1.33".parse().unwrap();
        let warning = old.end_of_life_warning().unwrap();
        assert!(
            warning.contains("1.33 reached its end of life on 2026-06-28"),
            "{warning}"
        );
        assert!(warning.contains("1.35 to 1.37 are supported"), "{warning}");
        let older_supported: KubernetesVersion = "1.34".parse().unwrap();
        assert_eq!(older_supported.end_of_life(), Some("2026-10-27"));
        for minor in 35..=37 {
            let version: KubernetesVersion = format!("1.{minor}").parse().unwrap();
            assert_eq!(version.end_of_life_warning(), None, "{version}");
        }
    }

    #[test]
    fn refuses_unsupported_versions() {
        let err = "1.32".parse::<KubernetesVersion>().unwrap_err().to_string();
        assert!(err.contains("supports 1.33 to 1.37"), "{err}");
        let err = "latest"
            .parse::<KubernetesVersion>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected `1.NN`"), "{err}");
    }
}
