use std::str::FromStr;

use super::{InvalidValue, Kind, dns, string_newtype};

/// A resource name: the plural of a kind (`mysqlclusters`) or a short name (`msc`). The
/// plural names the CRD, the REST path, RBAC rules, and the CRD and sample files, so it is
/// computed once and stored in `PROJECT`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceName(String);

impl FromStr for ResourceName {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match dns::label_1035_problem(value) {
            Some(problem) => Err(InvalidValue::new(
                "resource name",
                value,
                format!(
                    "{problem} (plurals and short names are DNS-1035 labels such as `mysqlclusters`)"
                ),
            )),
            None => Ok(Self(value.to_owned())),
        }
    }
}

/// Lowercase nouns whose plural does not follow the suffix rules below.
const IRREGULAR: &[(&str, &str)] = &[
    ("child", "children"),
    ("person", "people"),
    ("index", "indices"),
    ("schema", "schemas"),
    ("status", "statuses"),
    ("quota", "quotas"),
];

impl ResourceName {
    /// English plural of the lowercase kind, by the rules that cover Kubernetes kinds:
    /// `Policy` → `policies`, `Ingress` → `ingresses`, `Proxy` → `proxies`,
    /// `MySQLCluster` → `mysqlclusters`. Users override it with `--plural`.
    pub fn plural_of(kind: &Kind) -> Self {
        let singular = kind.singular();
        // Irregular words are matched at the end so that `DataIndex` → `dataindices`.
        let word_end = singular.len() - kind.snake_case().rsplit('_').next().unwrap_or("").len();
        let (head, last_word) = singular.split_at(word_end);
        if let Some((_, plural)) = IRREGULAR.iter().find(|(one, _)| *one == last_word) {
            return Self(format!("{head}{plural}"));
        }
        let ends_with_consonant_y = singular.ends_with('y')
            && !singular[..singular.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
        let plural = if ends_with_consonant_y {
            format!("{}ies", &singular[..singular.len() - 1])
        } else if ["s", "x", "z", "ch", "sh"]
            .iter()
            .any(|end| singular.ends_with(end))
        {
            format!("{singular}es")
        } else {
            format!("{singular}s")
        };
        Self(plural)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(ResourceName);

#[cfg(test)]
mod tests {
    use super::*;

    fn plural(kind: &str) -> String {
        ResourceName::plural_of(&kind.parse().unwrap()).to_string()
    }

    #[test]
    fn english_plurals_of_kinds() {
        for (kind, expected) in [
            ("Policy", "policies"),
            ("BackupPolicy", "backuppolicies"),
            ("Ingress", "ingresses"),
            ("Proxy", "proxies"),
            ("MySQLCluster", "mysqlclusters"),
            ("Gateway", "gateways"),
            ("Key", "keys"),
            ("Box", "boxes"),
            ("Match", "matches"),
            ("Mesh", "meshes"),
            ("Person", "people"),
            ("DataIndex", "dataindices"),
            ("Database", "databases"),
        ] {
            assert_eq!(plural(kind), expected, "{kind}");
        }
    }

    #[test]
    fn explicit_plurals_are_dns_labels() {
        assert!(
            "my_things"
                .parse::<ResourceName>()
                .unwrap_err()
                .to_string()
                .contains("`_`")
        );
        assert_eq!("octopi".parse::<ResourceName>().unwrap().as_str(), "octopi");
        assert!(
            "3d".parse::<ResourceName>()
                .unwrap_err()
                .to_string()
                .contains("start with a letter")
        );
    }
}
