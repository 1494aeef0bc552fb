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

    /// The webhooks of `self` that `other` does not have.
    pub fn without(self, other: Webhooks) -> Webhooks {
        Webhooks {
            defaulting: self.defaulting && !other.defaulting,
            validation: self.validation && !other.validation,
            conversion: self.conversion && !other.conversion,
        }
    }

    /// Its admission webhooks, defaulting first.
    pub fn admission_webhooks(self) -> impl Iterator<Item = AdmissionWebhook> {
        AdmissionWebhook::ALL
            .into_iter()
            .filter(move |webhook| webhook.is_in(&self))
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
        assert_eq!(
            both.without(defaulting)
                .admission_webhooks()
                .collect::<Vec<_>>(),
            [AdmissionWebhook::Validation]
        );
        assert!(defaulting.without(both).is_empty());
    }
}

/// An admission webhook of one version: each has a file of the user's, so that one can be
/// added or removed later without touching the other's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AdmissionWebhook {
    Defaulting,
    Validation,
}

impl AdmissionWebhook {
    pub const ALL: [AdmissionWebhook; 2] =
        [AdmissionWebhook::Defaulting, AdmissionWebhook::Validation];

    /// The word in its file's name and in the command line: `defaulting`, `validation`.
    pub fn name(self) -> &'static str {
        match self {
            AdmissionWebhook::Defaulting => "defaulting",
            AdmissionWebhook::Validation => "validation",
        }
    }

    /// The flag that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            AdmissionWebhook::Defaulting => "--defaulting",
            AdmissionWebhook::Validation => "--validation",
        }
    }

    /// Whether `webhooks` records it.
    pub fn is_in(self, webhooks: &Webhooks) -> bool {
        match self {
            AdmissionWebhook::Defaulting => webhooks.defaulting,
            AdmissionWebhook::Validation => webhooks.validation,
        }
    }

    /// The verb of its URL path: `mutate` or `validate`.
    pub fn verb(self) -> &'static str {
        match self {
            AdmissionWebhook::Defaulting => "mutate",
            AdmissionWebhook::Validation => "validate",
        }
    }
}

/// The names of a version's webhooks, computed here so that the scaffolded files, the routes
/// and the manifests agree.
impl super::Resource {
    /// The module of the version's file for one admission webhook, in its group:
    /// `backup_v1_defaulting`.
    pub fn admission_module(&self, webhook: AdmissionWebhook) -> String {
        format!("{}_{}_{}", self.kind.module(), self.version, webhook.name())
    }

    /// The version's file for one admission webhook, the user's:
    /// `src/webhooks/db/backup_v1_defaulting.rs`.
    pub fn admission_file(&self, webhook: AdmissionWebhook) -> String {
        format!(
            "src/webhooks/{}/{}.rs",
            self.group.module(),
            self.admission_module(webhook)
        )
    }

    /// The module of the one file that holds both admission webhooks of the version, as opgen
    /// 0.2.0 and earlier scaffolded it: `backup_v1`.
    pub fn combined_webhook_module(&self) -> String {
        format!("{}_{}", self.kind.module(), self.version)
    }

    /// That file, which a project made then still has: `src/webhooks/db/backup_v1.rs`.
    pub fn combined_webhook_file(&self) -> String {
        format!(
            "src/webhooks/{}/{}.rs",
            self.group.module(),
            self.combined_webhook_module()
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
    use super::AdmissionWebhook;
    use crate::model::Resource;

    #[test]
    fn webhook_names_follow_the_kind_and_version() {
        let resource = Resource::for_test("db", "v1alpha1", "MySQLCluster");
        let domain = "example.com".parse().unwrap();
        assert_eq!(
            resource.admission_file(AdmissionWebhook::Validation),
            "src/webhooks/db/my_sql_cluster_v1alpha1_validation.rs"
        );
        assert_eq!(
            resource.combined_webhook_file(),
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
