use std::str::FromStr;

use super::{Domain, InvalidValue, dns, rust_ident, string_newtype};

/// An API group's short name (`db`), a DNS-1123 label; the full group adds the domain.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Group(String);

impl FromStr for Group {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match dns::label_problem(value) {
            Some(problem) => Err(InvalidValue::new(
                "group",
                value,
                format!(
                    "{problem} (a group is a DNS-1123 label such as `db`; the domain is added to it)"
                ),
            )),
            None => Ok(Self(value.to_owned())),
        }
    }
}

impl Group {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Rust module holding the group's versions and controllers: `data-plane` →
    /// `data_plane`, `type` → `type_`, `1db` → `_1db` (see [`rust_ident::module_name`]).
    pub fn module(&self) -> String {
        let module = rust_ident::module_name(&self.0.replace('-', "_"));
        // The api crate keeps its binaries in `src/bin/`, where cargo takes every file for one.
        if module == "bin" {
            return "bin_".to_owned();
        }
        module
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
    fn refuses_what_is_not_a_dns_label() {
        for (bad, why) in [
            ("DB", "`D` is not allowed"),
            ("db.io", "`.` is not allowed"),
            ("-db", "start and end"),
            ("", "empty"),
        ] {
            let err = bad.parse::<Group>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    /// Any DNS label is a group, including names of crates the generated code uses and Rust
    /// keywords: the module name is what adapts.
    #[test]
    fn every_dns_label_gets_a_module() {
        for (group, module) in [
            ("kube", "kube"),
            ("std", "std"),
            ("type", "type_"),
            ("1db", "_1db"),
            ("bin", "bin_"),
            ("my-group", "my_group"),
        ] {
            assert_eq!(group.parse::<Group>().unwrap().module(), module, "{group}");
        }
    }
}
