use std::{fmt, str::FromStr};

use crate::model::InvalidValue;

use super::PackageName;

/// A bundle's version (`--version`), the CSV's `spec.version`: a semantic version, `X.Y.Z` with
/// an optional pre-release and build, as OLM orders upgrades by it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BundleVersion(semver::Version);

impl FromStr for BundleVersion {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: String| InvalidValue::new("version", value, problem);
        if let Some(rest) = value.strip_prefix('v') {
            return Err(invalid(format!(
                "write it without the leading `v`: `{}` (the CSV's name adds the `v`)",
                crate::model::Escaped(rest)
            )));
        }
        semver::Version::parse(value).map(Self).map_err(|err| {
            invalid(format!(
                "{err}; expected a semantic version `X.Y.Z` such as `0.1.0` or `1.2.0-rc.1`"
            ))
        })
    }
}

impl fmt::Display for BundleVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The name of a ClusterServiceVersion, `<package>.v<version>`: what `replaces` and `skips`
/// name, and what OLM shows while it installs or upgrades.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CsvName {
    package: String,
    version: BundleVersion,
}

impl CsvName {
    pub fn new(package: &PackageName, version: &BundleVersion) -> Self {
        Self {
            package: package.to_string(),
            version: version.clone(),
        }
    }

    /// `--replaces`: a CSV name, or a version (`0.1.0`, `v0.1.0`) of `package`.
    pub fn parse_in(value: &str, package: &PackageName) -> Result<Self, InvalidValue> {
        let bare = value.strip_prefix('v').unwrap_or(value);
        if bare.starts_with(|c: char| c.is_ascii_digit()) {
            let version = bare
                .parse()
                .map_err(|err: InvalidValue| InvalidValue::new("CSV name", value, err.problem))?;
            return Ok(Self::new(package, &version));
        }
        value.parse()
    }

    pub fn package(&self) -> &str {
        &self.package
    }

    pub fn version(&self) -> &BundleVersion {
        &self.version
    }
}

impl FromStr for CsvName {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: String| InvalidValue::new("CSV name", value, problem);
        let (package, version) = value.split_once(".v").ok_or_else(|| {
            invalid("expected `<package>.v<version>`, such as `mysql-operator.v0.1.0`".into())
        })?;
        let package: PackageName = package
            .parse()
            .map_err(|err: InvalidValue| invalid(err.to_string()))?;
        let version: BundleVersion = version
            .parse()
            .map_err(|err: InvalidValue| invalid(err.to_string()))?;
        Ok(Self::new(&package, &version))
    }
}

impl fmt::Display for CsvName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.v{}", self.package, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package() -> PackageName {
        "demo".parse().unwrap()
    }

    #[test]
    fn versions_are_semantic() {
        assert_eq!(
            "1.2.0-rc.1+build.5"
                .parse::<BundleVersion>()
                .unwrap()
                .to_string(),
            "1.2.0-rc.1+build.5"
        );
        for (bad, why) in [
            ("1.2", "expected a semantic version"),
            ("01.2.3", "expected a semantic version"),
            ("v1.2.3", "without the leading `v`: `1.2.3`"),
            ("latest", "expected a semantic version"),
        ] {
            let err = bad.parse::<BundleVersion>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert!(
            "0.10.0".parse::<BundleVersion>().unwrap() > "0.9.0".parse::<BundleVersion>().unwrap()
        );
    }

    #[test]
    fn csv_names() {
        let name = CsvName::new(&package(), &"0.1.0".parse().unwrap());
        assert_eq!(name.to_string(), "demo.v0.1.0");
        assert_eq!("demo.v0.1.0".parse::<CsvName>().unwrap(), name);
        assert_eq!(CsvName::parse_in("0.1.0", &package()).unwrap(), name);
        assert_eq!(CsvName::parse_in("v0.1.0", &package()).unwrap(), name);
        assert_eq!(
            CsvName::parse_in("other.v2.0.0", &package())
                .unwrap()
                .to_string(),
            "other.v2.0.0"
        );
        for bad in ["demo", "demo.0.1.0", "Demo.v0.1.0", "demo.v0.1"] {
            let err = CsvName::parse_in(bad, &package()).unwrap_err().to_string();
            assert!(err.contains("invalid CSV name"), "{bad}: {err}");
        }
    }
}
