use serde::{Deserialize, Serialize};

/// The webhooks of one version of a kind, as `PROJECT` records them (`create webhook`).
///
/// Defaulting and validation are admission webhooks of this version; conversion belongs to
/// the whole kind, and is recorded on the version it was asked for, as Kubebuilder does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Webhooks {
    /// A mutating webhook that fills in defaults (`--defaulting`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub defaulting: bool,
    /// A validating webhook for creates, updates and deletes (`--validation`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub validation: bool,
    /// The kind's versions convert through a webhook (`--conversion`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub conversion: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

impl Webhooks {
    /// Whether it records no webhook at all.
    pub fn is_empty(&self) -> bool {
        !(self.defaulting || self.validation || self.conversion)
    }

    /// Whether it has an admission (defaulting or validation) webhook.
    pub fn admission(&self) -> bool {
        self.defaulting || self.validation
    }

    /// The webhooks of both.
    pub fn union(self, other: Webhooks) -> Webhooks {
        Webhooks {
            defaulting: self.defaulting || other.defaulting,
            validation: self.validation || other.validation,
            conversion: self.conversion || other.conversion,
        }
    }

    /// The webhooks of `self` that `other` has too, by their flags (`--defaulting`, ...).
    pub fn shared_flags(&self, other: &Webhooks) -> Vec<&'static str> {
        [
            (self.defaulting && other.defaulting, "--defaulting"),
            (self.validation && other.validation, "--validation"),
            (self.conversion && other.conversion, "--conversion"),
        ]
        .into_iter()
        .filter_map(|(both, flag)| both.then_some(flag))
        .collect()
    }
}

/// The names of a project's two webhook configurations before kustomize's `namePrefix`: the
/// mutating one first.
pub const CONFIGURATION_NAMES: [&str; 2] = [
    "mutating-webhook-configuration",
    "validating-webhook-configuration",
];

/// The names of the project's webhook configurations as the cluster has them: with the
/// project's prefix, which `config/default` and `config/dev` both give them (so that the
/// development overlay replaces the deployed pair, and two projects never share one). The
/// mutating one first.
pub fn deployed_configuration_names(project_name: &super::ProjectName) -> [String; 2] {
    CONFIGURATION_NAMES.map(|name| project_name.deployed_name(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_the_webhooks_it_has() {
        let webhooks = Webhooks {
            defaulting: true,
            ..Webhooks::default()
        };
        let yaml = serde_saphyr::to_string(&webhooks).unwrap();
        assert_eq!(yaml.trim(), "defaulting: true");
        let read: Webhooks = serde_saphyr::from_str("validation: true\n").unwrap();
        assert!(read.validation && !read.defaulting && !read.conversion);
        assert!(serde_saphyr::from_str::<Webhooks>("mutating: true\n").is_err());
    }

    #[test]
    fn union_and_shared_flags() {
        let defaulting = Webhooks {
            defaulting: true,
            ..Webhooks::default()
        };
        let both = Webhooks {
            validation: true,
            ..defaulting
        };
        assert!(Webhooks::default().is_empty());
        assert!(!defaulting.is_empty() && defaulting.admission());
        assert_eq!(defaulting.union(both), both);
        assert_eq!(both.shared_flags(&defaulting), ["--defaulting"]);
        assert!(defaulting.shared_flags(&Webhooks::default()).is_empty());
    }
}

/// The names of a version's webhooks, computed here so that the scaffolded file, the routes
/// and the manifests agree.
impl super::Resource {
    /// The module of the version's webhook file in its group: `backup_v1`.
    pub fn webhook_module(&self) -> String {
        format!("{}_{}", self.kind.module(), self.version)
    }

    /// The version's webhook file, the user's: `src/webhooks/db/backup_v1.rs`.
    pub fn webhook_file(&self) -> String {
        format!(
            "src/webhooks/{}/{}.rs",
            self.group.module(),
            self.webhook_module()
        )
    }

    /// The URL path of an admission webhook (`verb` is `mutate` or `validate`), as Kubebuilder
    /// names it: `/mutate-db-example-com-v1-backup`.
    pub fn admission_path(&self, verb: &str, domain: &super::Domain) -> String {
        format!(
            "/{verb}-{}-{}-{}",
            self.qualified_group(domain).replace('.', "-"),
            self.version,
            self.kind.singular()
        )
    }

    /// The scaffolded `From` impls between this version, a spoke, and the kind's hub:
    /// `api/src/db/v1alpha1/backup_conversion.rs`.
    pub fn conversion_file(&self) -> String {
        format!(
            "api/src/{}/{}/{}.rs",
            self.group.module(),
            self.version,
            self.conversion_module()
        )
    }

    /// The module of [`Self::conversion_file`] in its version: `backup_conversion`.
    pub fn conversion_module(&self) -> String {
        format!("{}_conversion", self.kind.module())
    }

    /// The URL path of the kind's conversion webhook: `/convert-db-example-com-backup`.
    pub fn conversion_path(&self, domain: &super::Domain) -> String {
        format!(
            "/convert-{}-{}",
            self.qualified_group(domain).replace('.', "-"),
            self.kind.singular()
        )
    }
}

#[cfg(test)]
mod names {
    use crate::model::Resource;

    #[test]
    fn webhook_names_follow_the_kind_and_version() {
        let resource = Resource::for_test("db", "v1alpha1", "MySQLCluster");
        let domain = "example.com".parse().unwrap();
        assert_eq!(resource.webhook_module(), "my_sql_cluster_v1alpha1");
        assert_eq!(
            resource.webhook_file(),
            "src/webhooks/db/my_sql_cluster_v1alpha1.rs"
        );
        assert_eq!(
            resource.admission_path("mutate", &domain),
            "/mutate-db-example-com-v1alpha1-mysqlcluster"
        );
        assert_eq!(
            resource.conversion_path(&domain),
            "/convert-db-example-com-mysqlcluster"
        );
    }
}
