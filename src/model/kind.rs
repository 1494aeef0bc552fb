use std::str::FromStr;

use heck::ToSnakeCase;

use super::{InvalidValue, rust_ident, string_newtype};

/// A custom resource kind such as `MySQLCluster`: PascalCase, as Kubernetes kinds are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kind(String);

/// Names the generated modules already use for their own items; a kind with one of these
/// names would clash with them (or with the prelude) in the generated Rust code.
const TAKEN_NAMES: &[&str] = &[
    "Action",
    "Api",
    "Arc",
    "Client",
    "Condition",
    "Context",
    "Controller",
    "CustomResource",
    "Deserialize",
    "Duration",
    "Error",
    "Event",
    "JsonSchema",
    "Metrics",
    "ObjectMeta",
    "Option",
    "Recorder",
    "Resource",
    "Result",
    "Serialize",
    "State",
    "String",
    "Vec",
];

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
        if rust_ident::is_keyword(value) || TAKEN_NAMES.contains(&value) {
            return Err(invalid(
                "it clashes with a name the generated code uses; choose a more specific kind (e.g. prefix it with your domain's noun)",
            ));
        }
        for suffix in ["Spec", "Status", "List"] {
            if value.ends_with(suffix) && value != suffix {
                return Err(InvalidValue::new(
                    "kind",
                    value,
                    format!(
                        "kinds ending in `{suffix}` clash with the `<Kind>{suffix}` types generated for other kinds"
                    ),
                ));
            }
        }
        Ok(Self(value.to_owned()))
    }
}

impl Kind {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Rust module (and file stem) of the kind: `MySQLCluster` → `my_sql_cluster`.
    pub fn module(&self) -> String {
        self.0.to_snake_case()
    }

    /// Kubernetes' singular resource name: the kind in lowercase.
    pub fn singular(&self) -> String {
        self.0.to_lowercase()
    }

    /// A default short name for `kubectl get`: the initials of the kind's words
    /// (`MySQLCluster` → `msc`), or the first three letters of a one-word kind
    /// (`Ingress` → `ing`, as Kubernetes abbreviates it).
    pub fn default_short_name(&self) -> String {
        let module = self.module();
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
            ("Self", "clashes"),
            ("Error", "clashes"),
            ("Context", "clashes"),
            ("ClusterSpec", "ending in `Spec`"),
            ("ClusterList", "ending in `List`"),
        ] {
            let err = bad.parse::<Kind>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
