use std::str::FromStr;

use crate::model::{InvalidValue, ProjectName, string_newtype};

/// The name of an OLM package (`--package`): what a Subscription asks for, the stem of every
/// CSV name, the bundle's `package` annotation. OLM wants a DNS-1123 label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageName(String);

impl FromStr for PackageName {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if let Some(problem) = crate::model::dns::label_problem(value) {
            return Err(InvalidValue::new(
                "package name",
                value,
                format!(
                    "{problem} (an OLM package name is a DNS-1123 label, e.g. `mysql-operator`)"
                ),
            ));
        }
        Ok(Self(value.to_owned()))
    }
}

impl PackageName {
    /// The package of a project that names none: the project's name, which is a DNS label.
    pub fn of_project(name: &ProjectName) -> Self {
        Self(name.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(PackageName);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_name_is_a_dns_label() {
        assert_eq!(
            "mysql-operator".parse::<PackageName>().unwrap().as_str(),
            "mysql-operator"
        );
        for (bad, why) in [
            ("MySQL", "`M` is not allowed"),
            ("my.operator", "`.` is not allowed"),
            ("-op", "start and end"),
            ("", "empty"),
        ] {
            let err = bad.parse::<PackageName>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains("invalid package name"), "{bad}: {err}");
        }
    }
}
