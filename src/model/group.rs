use std::str::FromStr;

use super::{Domain, InvalidValue, dns, rust_ident, string_newtype};

/// An API group's short name (`db`), a DNS-1123 label; the full group adds the domain.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Group(String);

impl FromStr for Group {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: String| InvalidValue::new("group", value, problem);
        if let Some(problem) = dns::label_problem(value) {
            return Err(invalid(format!(
                "{problem} (a group is a DNS-1123 label such as `db`; the domain is added to it)"
            )));
        }
        if !value.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(invalid(
                "it must start with a letter (it names a Rust module)".into(),
            ));
        }
        let module = value.replace('-', "_");
        // `bin` would put the group's module where the api crate keeps its binaries, and
        // `envtest` beside the integration tests' harness of the same name.
        if rust_ident::is_keyword(&module) || module == "bin" || module == "envtest" {
            return Err(invalid(format!(
                "`{module}` cannot name a Rust module in the generated crates; choose another group"
            )));
        }
        Ok(Self(value.to_owned()))
    }
}

impl Group {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Rust module holding the group's versions and controllers.
    pub fn module(&self) -> String {
        self.0.replace('-', "_")
    }

    /// The API group as Kubernetes knows it: `db.example.com`.
    pub fn qualified(&self, domain: &Domain) -> String {
        format!("{}.{}", self.0, domain)
    }
}

string_newtype!(Group);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_module_and_full_group() {
        let group: Group = "data-plane".parse().unwrap();
        assert_eq!(group.module(), "data_plane");
        assert_eq!(
            group.qualified(&"example.com".parse().unwrap()),
            "data-plane.example.com"
        );
    }

    #[test]
    fn refuses_invalid_groups() {
        for (bad, why) in [
            ("DB", "`D` is not allowed"),
            ("db.io", "`.` is not allowed"),
            ("1db", "start with a letter"),
            ("type", "cannot name a Rust module"),
            ("bin", "cannot name a Rust module"),
            ("envtest", "cannot name a Rust module"),
        ] {
            let err = bad.parse::<Group>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
