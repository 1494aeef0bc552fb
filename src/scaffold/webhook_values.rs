//! What the webhook templates are given: the project's webhooks, one entry per version that
//! has admission webhooks, grouped as the generated module tree lists them.

use serde::Serialize;

use crate::{model::Resource, project::Project};

/// The webhooks of a project.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WebhooksValues {
    /// Whether the project has any webhook: the manager then runs the webhook server.
    pub any: bool,
    /// The groups with admission webhook files, by module name.
    pub groups: Vec<WebhookGroupValues>,
    /// Every version with admission webhooks, in `PROJECT`'s order.
    pub admission: Vec<AdmissionValues>,
    /// Every kind that converts between its versions, in `PROJECT`'s order.
    pub conversions: Vec<ConversionValues>,
}

/// A kind whose versions convert through its hub, the storage version.
#[derive(Debug, Clone, Serialize)]
pub struct ConversionValues {
    pub kind: String,
    /// The kind's Rust type (see `Kind::rust_type`).
    pub rust_type: String,
    pub group_module: String,
    pub qualified_group: String,
    pub crd_name: String,
    pub path: String,
    /// The function of `src/webhooks/mod.rs` that converts it: `convert_db_backup`.
    pub function: String,
    pub hub: String,
    pub spokes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WebhookGroupValues {
    pub module: String,
    /// The webhook file modules of the group, sorted.
    pub files: Vec<String>,
}

/// One version's admission webhooks.
#[derive(Debug, Clone, Serialize)]
pub struct AdmissionValues {
    pub kind: String,
    pub version: String,
    pub qualified_group: String,
    pub plural: String,
    /// `db::backup_v1`, under `crate::webhooks`.
    pub module_path: String,
    /// The module of the file in its group: `backup_v1`.
    pub module: String,
    pub file: String,
    pub defaulting: bool,
    pub validation: bool,
    pub mutate_path: String,
    pub validate_path: String,
    /// The webhook configurations' entry names: `mbackup-v1.db.example.com`.
    pub mutate_name: String,
    pub validate_name: String,
}

impl WebhooksValues {
    pub fn new(project: &Project) -> Self {
        let admission: Vec<AdmissionValues> = project
            .resources
            .iter()
            .filter(|r| r.webhooks.is_some_and(|w| w.admission()))
            .map(|r| AdmissionValues::new(project, r))
            .collect();
        let mut groups: Vec<WebhookGroupValues> = Vec::new();
        for webhook in &admission {
            let group = webhook.module_path.split("::").next().unwrap_or_default();
            match groups.iter_mut().find(|g| g.module == group) {
                Some(found) => found.files.push(webhook.module.clone()),
                None => groups.push(WebhookGroupValues {
                    module: group.to_owned(),
                    files: vec![webhook.module.clone()],
                }),
            }
        }
        groups.sort_by(|a, b| a.module.cmp(&b.module));
        for group in &mut groups {
            group.files.sort();
        }
        let conversions = project
            .kinds()
            .filter(|kind| project.converts(kind))
            .map(|kind| {
                let domain = &project.domain;
                let hub = project
                    .versions_of(kind)
                    .find(|r| r.storage)
                    .unwrap_or(kind);
                ConversionValues {
                    kind: kind.kind.to_string(),
                    rust_type: kind.kind.rust_type(),
                    group_module: kind.group.module(),
                    qualified_group: kind.qualified_group(domain),
                    crd_name: kind.crd_name(domain),
                    path: kind.conversion_path(domain),
                    function: format!("convert_{}_{}", kind.group.module(), kind.kind.module()),
                    hub: hub.version.to_string(),
                    spokes: project
                        .spokes(kind)
                        .iter()
                        .map(|r| r.version.to_string())
                        .collect(),
                }
            })
            .collect();
        Self {
            any: project.resources.iter().any(|r| r.webhooks.is_some()),
            groups,
            admission,
            conversions,
        }
    }
}

impl AdmissionValues {
    pub fn new(project: &Project, resource: &Resource) -> Self {
        let domain = &project.domain;
        let webhooks = resource.webhooks.unwrap_or_default();
        let qualified_group = resource.qualified_group(domain);
        let name = |prefix: char| {
            format!(
                "{prefix}{}-{}.{qualified_group}",
                resource.kind.singular(),
                resource.version
            )
        };
        Self {
            kind: resource.kind.to_string(),
            version: resource.version.to_string(),
            plural: resource.plural.to_string(),
            module_path: format!("{}::{}", resource.group.module(), resource.webhook_module()),
            module: resource.webhook_module(),
            file: resource.webhook_file(),
            defaulting: webhooks.defaulting,
            validation: webhooks.validation,
            mutate_path: resource.admission_path("mutate", domain),
            validate_path: resource.admission_path("validate", domain),
            mutate_name: name('m'),
            validate_name: name('v'),
            qualified_group,
        }
    }
}
