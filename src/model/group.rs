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

/// Names a group's module must not take: files of the api crate's `src/` (the crate root, which
/// `mod lib;` there would find, and the folder cargo takes binaries from), and the harness that
/// sits beside the groups' modules in the manager's `tests/integration/`.
const TAKEN_MODULES: &[&str] = &["bin", "lib", "envtest"];

impl Group {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Rust module holding the group's versions and controllers: `data-plane` →
    /// `data_plane`, `type` → `type_`, `1db` → `_1db` (see [`rust_ident::module_name`]), and
    /// `bin` → `bin_`, `lib` → `lib_`, `envtest` → `envtest_` (see [`TAKEN_MODULES`]).
    pub fn module(&self) -> String {
        let module = rust_ident::module_name(&self.0.replace('-', "_"));
        if TAKEN_MODULES.contains(&module.as_str()) {
            return format!("{module}_");
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
            ("db_io", "`_` is not allowed"),
            ("-db", "start and end"),
            ("", "empty"),
        ] {
            let err = bad.parse::<Group>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains("DNS-1123 label"), "{bad}: {err}");
        }
    }

    /// Any DNS label is a group, including names of crates the generated code uses and Rust
    /// keywords: the module name is what adapts.
    #[test]
    fn every_dns_label_gets_a_module() {
        for (group, module) in [
            ("kube", "kube"),
            ("std", "std"),
            ("tokio", "tokio"),
            ("type", "type_"),
            ("self", "self_"),
            ("u8", "u8_"),
            ("1db", "_1db"),
            ("bin", "bin_"),
            ("lib", "lib_"),
            ("envtest", "envtest_"),
            ("my-group", "my_group"),
        ] {
            assert_eq!(group.parse::<Group>().unwrap().module(), module, "{group}");
        }
    }
}
