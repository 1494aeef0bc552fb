use std::str::FromStr;

use heck::ToSnakeCase;

use super::{InvalidValue, rust_ident, string_newtype};

/// A custom resource kind such as `MySQLCluster`: PascalCase, as Kubernetes kinds are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kind(String);

impl FromStr for Kind {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: &str| InvalidValue::new("kind", value, problem);
        if !value.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(invalid(
                "a kind is PascalCase and starts with an uppercase letter, e.g. `MySQLCluster`",
            ));
        }
        if !value.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(invalid(
                "a kind holds only ASCII letters and digits, e.g. `MySQLCluster`",
            ));
        }
        // Kubernetes names a kind's list `<Kind>List`, and the plural may add two letters
        // (`es`): both must stay within a 63-character DNS label.
        if value.len() > 59 {
            return Err(invalid(
                "a kind is at most 59 characters long, so that its list kind `<Kind>List` and its plural fit in 63",
            ));
        }
        // PascalCase leaves one keyword: `Self`, which no type can be named.
        if rust_ident::is_keyword(value) {
            return Err(invalid(
                "`Self` is a Rust keyword, so no Rust type can be named after it; choose another kind",
            ));
        }
        Ok(Self(value.to_owned()))
    }
}

impl Kind {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The kind's words in snake case: `MySQLCluster` → `my_sql_cluster`.
    pub fn snake_case(&self) -> String {
        self.0.to_snake_case()
    }

    /// The Rust module (and file stem) of the kind: `MySQLCluster` → `my_sql_cluster`, and
    /// `Type` → `type_` (see [`rust_ident::module_name`]).
    pub fn module(&self) -> String {
        rust_ident::module_name(&self.snake_case())
    }

    /// The Rust type of the kind's objects, which `#[derive(CustomResource)]` defines next to
    /// its `Spec`: the kind itself, or `<Kind>Resource` for a kind named like a type or trait
    /// of Rust's prelude (`Option` → `OptionResource`). The derive, and the kind's own file,
    /// use the prelude's by their bare names, which a type of that name would hide.
    pub fn rust_type(&self) -> String {
        if rust_ident::is_prelude_type(&self.0) {
            format!("{}Resource", self.0)
        } else {
            self.0.clone()
        }
    }

    /// Kubernetes' singular resource name: the kind in lowercase.
    pub fn singular(&self) -> String {
        self.0.to_lowercase()
    }

    /// A default short name for `kubectl get`: the initials of the kind's words
    /// (`MySQLCluster` → `msc`), or the first three letters of a one-word kind
    /// (`Ingress` → `ing`, as Kubernetes abbreviates it).
    pub fn default_short_name(&self) -> String {
        let snake_case = self.snake_case();
        let words: Vec<&str> = snake_case.split('_').collect();
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
            ("", "starts with an uppercase letter"),
            ("My-Cluster", "only ASCII letters and digits"),
            ("My_Cluster", "only ASCII letters and digits"),
            ("Clüster", "only ASCII letters and digits"),
            ("Self", "`Self` is a Rust keyword"),
        ] {
            let err = bad.parse::<Kind>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn length_leaves_room_for_the_list_kind_and_plural() {
        let longest = format!("A{}", "b".repeat(58));
        assert_eq!(kind(&longest).as_str().len(), 59);
        let err = format!("{longest}c").parse::<Kind>().unwrap_err();
        assert!(err.to_string().contains("at most 59"), "{err}");
    }

    /// Kubernetes accepts these, and so does opgen: the generated code names crates and
    /// their types by paths that no kind can hide.
    #[test]
    fn accepts_names_the_generated_code_also_uses() {
        for ok in [
            "Action",
            "Api",
            "Condition",
            "Context",
            "CustomResource",
            "Error",
            "Event",
            "JsonSchema",
            "Option",
            "Resource",
            "Serialize",
            "Service",
            "ClusterSpec",
            "ClusterStatus",
            "ClusterList",
        ] {
            assert_eq!(kind(ok).as_str(), ok);
        }
    }

    #[test]
    fn kinds_named_like_the_prelude_get_another_rust_type() {
        assert_eq!(kind("MySQLCluster").rust_type(), "MySQLCluster");
        assert_eq!(kind("Condition").rust_type(), "Condition");
        assert_eq!(kind("Option").rust_type(), "OptionResource");
        assert_eq!(kind("Default").rust_type(), "DefaultResource");
        assert_eq!(kind("Vec").rust_type(), "VecResource");
    }

    #[test]
    fn keyword_modules_get_an_underscore() {
        assert_eq!(kind("Type").module(), "type_");
        assert_eq!(kind("Match").module(), "match_");
        assert_eq!(kind("Str").module(), "str_");
        assert_eq!(kind("Match").default_short_name(), "mat");
        assert_eq!(kind("AsyncFn").module(), "async_fn");
    }
}
