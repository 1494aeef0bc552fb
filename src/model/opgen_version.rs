use std::{cmp::Ordering, fmt, str::FromStr};

use super::InvalidValue;

/// A release of opgen, as `opgenVersion` in `PROJECT` records the one that made or last
/// updated a project. Releases compare by semantic-version precedence: `0.10.0` is newer than
/// `0.9.0`, a pre-release is older than its release, and build metadata does not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpgenVersion(semver::Version);

/// A project stamped by a newer opgen than the one running: the running one would rewrite
/// its generated files with older templates, so every command that reads `PROJECT` stops.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this project was made by opgen {project}; install {project} or newer (`cargo install opgen --version {project}`)\n\nThis is opgen {running}, older than the `opgenVersion` in PROJECT: it would take the project's generated files back to its own, older templates"
)]
pub struct NewerProject {
    pub project: OpgenVersion,
    pub running: OpgenVersion,
}

impl OpgenVersion {
    /// The release of this binary.
    pub fn running() -> Self {
        env!("CARGO_PKG_VERSION")
            .parse()
            .expect("the crate's version is a semantic version")
    }

    /// How this release compares with `other`, by precedence (build metadata ignored).
    pub fn compare(&self, other: &Self) -> Ordering {
        self.0.cmp_precedence(&other.0)
    }

    /// Whether the opgen `running` may work on a project stamped with this release: any
    /// release up to and including its own.
    pub fn check_readable_by(&self, running: &Self) -> Result<(), NewerProject> {
        match self.compare(running) {
            Ordering::Greater => Err(NewerProject {
                project: self.clone(),
                running: running.clone(),
            }),
            Ordering::Less | Ordering::Equal => Ok(()),
        }
    }
}

impl FromStr for OpgenVersion {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        semver::Version::parse(value).map(Self).map_err(|err| {
            InvalidValue::new(
                "opgen version",
                value,
                format!("{err}; it is the release that made the project, such as 0.1.0"),
            )
        })
    }
}

impl fmt::Display for OpgenVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

super::serde_as_text!(OpgenVersion);

#[cfg(test)]
mod tests {
    use super::*;

    fn version(text: &str) -> OpgenVersion {
        text.parse().unwrap()
    }

    /// Whether opgen `running` may work on a project stamped `project`.
    fn readable(project: &str, running: &str) -> bool {
        version(project)
            .check_readable_by(&version(running))
            .is_ok()
    }

    #[test]
    fn the_running_release_is_this_crates() {
        assert_eq!(
            OpgenVersion::running().to_string(),
            env!("CARGO_PKG_VERSION")
        );
    }

    #[test]
    fn older_and_equal_projects_are_readable() {
        assert!(readable("0.1.0", "0.1.0"));
        assert!(readable("0.1.0", "0.2.0"));
        assert!(readable("0.9.9", "1.0.0"));
    }

    #[test]
    fn newer_projects_are_refused_with_the_release_to_install() {
        assert!(!readable("0.2.0", "0.1.0"));
        assert!(!readable("0.1.1", "0.1.0"));
        let err = version("0.3.1")
            .check_readable_by(&version("0.2.0"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "this project was made by opgen 0.3.1; install 0.3.1 or newer (`cargo install opgen --version 0.3.1`)"
            ),
            "{err}"
        );
        assert!(err.contains("This is opgen 0.2.0"), "{err}");
    }

    #[test]
    fn numbers_compare_as_numbers_not_text() {
        assert!(readable("0.9.0", "0.10.0"));
        assert!(!readable("0.10.0", "0.9.0"));
        assert!(!readable("10.0.0", "9.0.0"));
    }

    #[test]
    fn a_pre_release_precedes_its_release() {
        assert!(readable("0.2.0-alpha.1", "0.2.0"));
        assert!(!readable("0.2.0", "0.2.0-alpha.1"));
        assert!(readable("0.2.0-alpha.1", "0.2.0-beta.1"));
        assert!(!readable("0.2.0-rc.1", "0.1.9"));
    }

    #[test]
    fn build_metadata_does_not_count() {
        assert!(readable("0.1.0+abc", "0.1.0"));
        assert!(readable("0.1.0", "0.1.0+abc"));
        assert_eq!(
            version("0.1.0+abc").compare(&version("0.1.0+xyz")),
            Ordering::Equal
        );
    }

    #[test]
    fn malformed_versions_are_refused() {
        for text in ["", "1", "0.1", "v0.1.0", "0.1.0.0", "latest"] {
            let err = text.parse::<OpgenVersion>().unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("invalid opgen version `{text}`")),
                "{err}"
            );
            assert!(err.contains("such as 0.1.0"), "{err}");
        }
    }

    #[test]
    fn round_trips_through_its_text() {
        for text in ["0.1.0", "1.2.3-rc.1", "1.2.3+build.5"] {
            assert_eq!(version(text).to_string(), text);
        }
    }
}
