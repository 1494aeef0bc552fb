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

    /// k8s-openapi's cargo feature for this version.
    pub fn feature(self) -> String {
        format!("v1_{}", self.minor)
    }

    /// The minor version: 33 for 1.33.
    pub fn minor(self) -> u32 {
        self.minor
    }
}

/// The oldest supported version is the default: it gives the widest compatibility, because
/// an operator built against an older API runs on newer clusters.
impl Default for KubernetesVersion {
    fn default() -> Self {
        Self::OLDEST
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
                format!("k8s-openapi 0.29 supports {range}"),
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
        assert_eq!(KubernetesVersion::default().to_string(), "1.33");
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
