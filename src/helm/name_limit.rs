//! How long a release's fullname may be: every object's name is `<fullname>-<suffix>`, and
//! must stay within the limit of its kind's names, so the longest suffix decides. A longer
//! fullname is cut in `_helpers.tpl`, keeping a hash of the whole.

use crate::{bundle::object::Object, model::SERVICE_NAME_LIMIT};

/// The limit of most objects' names (DNS-1123 subdomains).
const SUBDOMAIN_LIMIT: usize = 253;

/// What a cut fullname ends with: `-` and 8 hexadecimal digits of its hash.
pub const HASH_SUFFIX: usize = 9;

/// The name the chart makes that leaves its fullname the least room: `<fullname>-<suffix>`
/// must stay within the limit of its kind's names.
#[derive(Debug)]
pub struct LongestName {
    pub suffix: String,
    pub kind: String,
    pub limit: usize,
}

impl LongestName {
    pub fn of(objects: &[Object], prefix: &str) -> Self {
        objects
            .iter()
            .filter_map(|object| {
                let suffix = object.name().strip_prefix(prefix)?;
                // A Service's name is a DNS-1035 label; the others' are DNS-1123 subdomains.
                let limit = if object.kind() == "Service" {
                    SERVICE_NAME_LIMIT
                } else {
                    SUBDOMAIN_LIMIT
                };
                Some(Self {
                    suffix: suffix.to_owned(),
                    kind: object.kind().to_owned(),
                    limit,
                })
            })
            .min_by_key(|name| name.fullname_limit())
            .unwrap_or(Self {
                suffix: String::new(),
                kind: "Service".into(),
                limit: SERVICE_NAME_LIMIT,
            })
    }

    /// The longest fullname that leaves room for the suffix; never so short that a cut one
    /// would be its hash alone.
    pub fn fullname_limit(&self) -> usize {
        (self.limit - 1)
            .saturating_sub(self.suffix.len())
            .max(HASH_SUFFIX + 1)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_longest_service_name_sets_the_limit() {
        let objects = [
            Object(
                json!({"kind": "Service", "metadata": {"name": "demo-controller-manager-metrics-service"}}),
            ),
            Object(
                json!({"kind": "ClusterRole", "metadata": {"name": format!("demo-{}", "r".repeat(100))}}),
            ),
            Object(
                json!({"kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"}}),
            ),
        ];
        let longest = LongestName::of(&objects, "demo-");
        assert_eq!(longest.suffix, "controller-manager-metrics-service");
        assert_eq!(longest.fullname_limit(), 28);
    }
}
