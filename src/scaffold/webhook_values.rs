//! What the webhook templates are given: the project's webhooks, one entry per version that
//! has admission webhooks, grouped as the generated module tree lists them.

use std::collections::BTreeSet;

use serde::Serialize;

use super::tree::Tree;
use crate::{
    model::{AdmissionWebhook, Resource, deployed_configuration_names},
    project::Project,
};

/// The file that serves each admission webhook of each version: its own
/// ([`Resource::admission_file`]), or, in a project made by opgen 0.2.0 or earlier, the one
/// file that holds both admission webhooks of the version ([`Resource::combined_webhook_file`])
/// for as long as that file is there and the webhook has no file of its own. So a project of
/// then keeps its files as they are, and a webhook added to it later gets its own.
#[derive(Debug, Clone, Default)]
pub struct WebhookFiles {
    /// The webhook files of the project that exist (or are being written).
    present: BTreeSet<String>,
}

impl WebhookFiles {
    /// The webhook files of `project` in `tree`.
    pub fn of(project: &Project, tree: &Tree) -> Self {
        let mut present = BTreeSet::new();
        for resource in &project.resources {
            let candidates = AdmissionWebhook::ALL
                .map(|webhook| resource.admission_file(webhook))
                .into_iter()
                .chain([resource.combined_webhook_file()]);
            present.extend(candidates.filter(|path| tree.has(path)));
        }
        Self { present }
    }

    /// Whether the webhook of `resource` is served by the combined file of its version.
    pub fn in_combined_file(&self, resource: &Resource, webhook: AdmissionWebhook) -> bool {
        !self.present.contains(&resource.admission_file(webhook))
            && self.present.contains(&resource.combined_webhook_file())
    }

    /// The module, in its group, of the file that serves the webhook of `resource`.
    pub fn module(&self, resource: &Resource, webhook: AdmissionWebhook) -> String {
        if self.in_combined_file(resource, webhook) {
            resource.combined_webhook_module()
        } else {
            resource.admission_module(webhook)
        }
    }
}

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
    /// The RBAC markers of the self-managed certificate's CA injection (see
    /// [`ca_injection_markers`]); none for a namespaced project.
    pub ca_injection_markers: Vec<String>,
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
    pub group_module: String,
    pub defaulting: bool,
    pub validation: bool,
    /// The modules, in their group, of the files that serve each: `backup_v1_defaulting`.
    pub defaulting_module: String,
    pub validation_module: String,
    pub mutate_path: String,
    pub validate_path: String,
    /// The webhook configurations' entry names: `mbackup-v1.db.example.com`.
    pub mutate_name: String,
    pub validate_name: String,
}

impl WebhooksValues {
    /// The webhooks of `project`, served by `files`.
    pub fn new(project: &Project, files: &WebhookFiles) -> Self {
        let admission: Vec<AdmissionValues> = project
            .resources
            .iter()
            .filter(|r| r.webhooks.is_some_and(|w| w.admission()))
            .map(|r| AdmissionValues::new(project, r, files))
            .collect();
        let mut groups: Vec<WebhookGroupValues> = Vec::new();
        for webhook in &admission {
            let modules = [
                (webhook.defaulting, &webhook.defaulting_module),
                (webhook.validation, &webhook.validation_module),
            ];
            for (_, module) in modules.into_iter().filter(|(recorded, _)| *recorded) {
                match groups.iter_mut().find(|g| g.module == webhook.group_module) {
                    Some(found) => found.files.push(module.clone()),
                    None => groups.push(WebhookGroupValues {
                        module: webhook.group_module.clone(),
                        files: vec![module.clone()],
                    }),
                }
            }
        }
        groups.sort_by(|a, b| a.module.cmp(&b.module));
        for group in &mut groups {
            group.files.sort();
            // One combined file serves both webhooks of its version.
            group.files.dedup();
        }
        let conversions: Vec<ConversionValues> = project
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
            ca_injection_markers: ca_injection_markers(project, &conversions),
            conversions,
        }
    }
}

/// What the manager needs to put its CA into the project's webhook configurations and
/// converting CRDs, as `+opgen:rbac` markers: listing and watching them by their label, which
/// RBAC cannot narrow, and patching only these objects by name. The names are those the
/// cluster has (kustomize's prefix does not rewrite `resourceNames`): both configurations,
/// whether or not a webhook of each kind exists yet (a marker added by hand makes one), and
/// the CRDs that convert through the webhook. A namespaced project's Role cannot hold these
/// cluster-wide permissions: it uses cert-manager's injection instead.
fn ca_injection_markers(project: &Project, conversions: &[ConversionValues]) -> Vec<String> {
    if project.namespaced() {
        return Vec::new();
    }
    let rule = |group: &str, resources: &str, verbs: &str, names: &[String]| {
        let names = if names.is_empty() {
            String::new()
        } else {
            format!(",resourceNames={}", names.join(";"))
        };
        format!("// +opgen:rbac:groups={group},resources={resources},verbs={verbs}{names}")
    };
    let admission = "admissionregistration.k8s.io";
    let [mutating, validating] = deployed_configuration_names(&project.project_name);
    let crds: Vec<String> = conversions.iter().map(|c| c.crd_name.clone()).collect();
    let mut markers = vec![
        rule(
            admission,
            "mutatingwebhookconfigurations;validatingwebhookconfigurations",
            "list;watch",
            &[],
        ),
        rule(
            admission,
            "mutatingwebhookconfigurations",
            "get;patch",
            &[mutating],
        ),
        rule(
            admission,
            "validatingwebhookconfigurations",
            "get;patch",
            &[validating],
        ),
        rule(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "list;watch",
            &[],
        ),
    ];
    // An empty `resourceNames` would grant every CRD: no rule at all without a converting kind.
    if !crds.is_empty() {
        markers.push(rule(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "get;patch",
            &crds,
        ));
    }
    markers
}

impl AdmissionValues {
    pub fn new(project: &Project, resource: &Resource, files: &WebhookFiles) -> Self {
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
            group_module: resource.group.module(),
            defaulting: webhooks.defaulting,
            validation: webhooks.validation,
            defaulting_module: files.module(resource, AdmissionWebhook::Defaulting),
            validation_module: files.module(resource, AdmissionWebhook::Validation),
            mutate_path: resource.admission_path(AdmissionWebhook::Defaulting.verb(), domain),
            validate_path: resource.admission_path(AdmissionWebhook::Validation.verb(), domain),
            mutate_name: name('m'),
            validate_name: name('v'),
            qualified_group,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{model::Webhooks, project::Scope};

    fn project(scope: Scope, conversion: bool) -> Project {
        let webhooks = Webhooks {
            defaulting: true,
            conversion,
            ..Webhooks::default()
        };
        Project {
            resources: vec![
                Resource {
                    webhooks: Some(webhooks),
                    ..Resource::for_test("db", "v1", "Thing")
                },
                Resource {
                    storage: false,
                    ..Resource::for_test("db", "v1alpha1", "Thing")
                },
                Resource::for_test("ops", "v1", "Other"),
            ],
            ..Project::for_test("demo", scope)
        }
    }

    #[test]
    fn the_ca_injection_patches_only_the_projects_own_objects_by_name() {
        let values = |scope, conversion| {
            WebhooksValues::new(&project(scope, conversion), &WebhookFiles::default())
        };
        let markers = values(Scope::Cluster, true).ca_injection_markers;
        assert_eq!(
            markers,
            [
                "// +opgen:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=list;watch",
                "// +opgen:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;patch,resourceNames=demo-mutating-webhook-configuration",
                "// +opgen:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;patch,resourceNames=demo-validating-webhook-configuration",
                "// +opgen:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=list;watch",
                "// +opgen:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;patch,resourceNames=things.db.example.com",
            ]
        );
        // Without a converting kind no CRD is patched: an empty `resourceNames` would mean all.
        let markers = values(Scope::Cluster, false).ca_injection_markers;
        assert_eq!(markers.len(), 4, "{markers:?}");
        assert!(
            markers
                .iter()
                .all(|m| !m.contains("customresourcedefinitions,verbs=get;patch")),
            "{markers:?}"
        );
        assert!(
            values(Scope::Namespace, true)
                .ca_injection_markers
                .is_empty()
        );
    }
}
