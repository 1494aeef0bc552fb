use std::str::FromStr;

use heck::ToSnakeCase;

use super::{InvalidValue, rust_ident, string_newtype};

/// A custom resource kind such as `MySQLCluster`: PascalCase, as Kubernetes kinds are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kind(String);

/// The longest kind: Kubernetes names a kind's lists `<Kind>List`, and that name, lowercased,
/// must be a DNS label of at most 63 characters.
pub const MAX_LEN: usize = 63 - "List".len();

impl FromStr for Kind {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: String| InvalidValue::new("kind", value, problem);
        if !value.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(invalid(
                "a kind is PascalCase and starts with an uppercase letter, e.g. `MySQLCluster`"
                    .into(),
            ));
        }
        if !value.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(invalid(
                "a kind holds only ASCII letters and digits, e.g. `MySQLCluster`".into(),
            ));
        }
        if value.len() > MAX_LEN {
            return Err(invalid(format!(
                "it is {} characters long; a kind has at most {MAX_LEN}, because Kubernetes names its lists `{value}List`, which must fit in 63 characters",
                value.len()
            )));
        }
        if rust_ident::is_keyword(value) {
            return Err(invalid(format!(
                "`{value}` is a Rust keyword, so no Rust type can be named after it; choose another kind"
            )));
        }
        Ok(Self(value.to_owned()))
    }
}

impl Kind {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Rust module (and file stem) of the kind: `MySQLCluster` → `my_sql_cluster`, and
    /// `Type` → `type_` (see [`rust_ident::module_name`]).
    pub fn module(&self) -> String {
        rust_ident::module_name(&self.0.to_snake_case())
    }

    /// The kind of its lists, as Kubernetes names it: `MySQLClusterList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.0)
    }

    /// Kubernetes' singular resource name: the kind in lowercase.
    pub fn singular(&self) -> String {
        self.0.to_lowercase()
    }

    /// A default short name for `kubectl get`: the initials of the kind's words
    /// (`MySQLCluster` → `msc`), or the first three letters of a one-word kind
    /// (`Ingress` → `ing`, as Kubernetes abbreviates it).
    pub fn default_short_name(&self) -> String {
        let module = self.0.to_snake_case();
        let words: Vec<&str> = module.split('_').collect();
        if words.len() > 1 {
            words.iter().filter_map(|w| w.chars().next()).collect()
        } else {
            self.singular().chars().take(3).collect()
        }
    }
}

string_newtype!(Kind);

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Kind {
        s.parse().unwrap()
    }

    #[test]
    fn derives_names() {
        let k = kind("MySQLCluster");
        assert_eq!(k.module(), "my_sql_cluster");
        assert_eq!(k.singular(), "mysqlcluster");
        assert_eq!(k.default_short_name(), "msc");
        assert_eq!(kind("Ingress").default_short_name(), "ing");
        assert_eq!(kind("BackupPolicy").default_short_name(), "bp");
        assert_eq!(kind("Db").default_short_name(), "db");
    }

    #[test]
    fn refuses_invalid_kinds() {
        for (bad, why) in [
            ("mysqlCluster", "starts with an uppercase letter"),
            ("1Cluster", "starts with an uppercase letter"),
            ("My-Cluster", "only ASCII letters and digits"),
            ("My_Cluster", "only ASCII letters and digits"),
            ("", "starts with an uppercase letter"),
            ("Self", "`Self` is a Rust keyword"),
        ] {
            let err = bad.parse::<Kind>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    /// Kubernetes accepts these, and so does opgen: what could clash in the generated code is
    /// the generated code's problem, not the kind's.
    #[test]
    fn accepts_names_the_generated_code_also_uses() {
        for ok in [
            "Action",
            "Api",
            "Condition",
            "Context",
            "Error",
            "Event",
            "Option",
            "Resource",
            "Service",
            "ClusterSpec",
            "ClusterList",
        ] {
            assert_eq!(kind(ok).as_str(), ok);
        }
    }

    #[test]
    fn length_leaves_room_for_the_list_kind() {
        let longest = format!("A{}", "b".repeat(MAX_LEN - 1));
        assert_eq!(kind(&longest).list_kind().len(), 63);
        let err = format!("{longest}c")
            .parse::<Kind>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("at most 59"), "{err}");
        assert!(err.contains("List`"), "{err}");
    }

    #[test]
    fn keyword_modules_get_an_underscore() {
        assert_eq!(kind("Type").module(), "type_");
        assert_eq!(kind("Match").module(), "match_");
        assert_eq!(kind("Str").module(), "str_");
        assert_eq!(kind("Match").default_short_name(), "mat");
    }
}
