use serde::{Deserialize, Serialize};

use super::{Group, Kind};

/// The kind of the project whose objects an operand kind's objects reference by name, in
/// their namespace (`create api --references`), as `PROJECT` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindReference {
    pub group: Group,
    pub kind: Kind,
}

impl KindReference {
    /// The field of the referencing kind's spec: the referenced kind in lowerCamelCase, then
    /// `Ref` (`MySQLCluster` → `mySQLClusterRef`, `HTTPRoute` → `httpRouteRef`), as Kubernetes
    /// names its own references (`secretRef`, `configMapRef`).
    pub fn field(&self) -> String {
        format!("{}Ref", lower_camel(self.kind.as_str()))
    }

    /// The Rust field behind [`KindReference::field`]: `my_sql_cluster_ref`.
    pub fn rust_field(&self) -> String {
        format!("{}_ref", self.kind.snake_case())
    }

    /// The start of the environment variables that reach a referenced object:
    /// `MY_SQL_CLUSTER` (`MY_SQL_CLUSTER_HOST`, …).
    pub fn env_prefix(&self) -> String {
        self.kind.snake_case().to_uppercase()
    }
}

/// `kind` with its leading capitals in lowercase, but the last of several when a lowercase
/// letter follows it (the start of the next word): `HTTPRoute` → `httpRoute`.
fn lower_camel(kind: &str) -> String {
    let capitals = kind.chars().take_while(char::is_ascii_uppercase).count();
    let lowered = match capitals {
        n if n > 1 && n < kind.len() => n - 1,
        n => n,
    };
    format!(
        "{}{}",
        kind[..lowered].to_ascii_lowercase(),
        &kind[lowered..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(kind: &str) -> KindReference {
        KindReference {
            group: "db".parse().unwrap(),
            kind: kind.parse().unwrap(),
        }
    }

    #[test]
    fn names_follow_the_referenced_kind() {
        let cluster = reference("MySQLCluster");
        assert_eq!(cluster.field(), "mySQLClusterRef");
        assert_eq!(cluster.rust_field(), "my_sql_cluster_ref");
        assert_eq!(cluster.env_prefix(), "MY_SQL_CLUSTER");
        assert_eq!(reference("HTTPRoute").field(), "httpRouteRef");
        assert_eq!(reference("Database").field(), "databaseRef");
        assert_eq!(reference("DB").field(), "dbRef");
        assert_eq!(reference("Match").rust_field(), "match_ref");
    }
}
