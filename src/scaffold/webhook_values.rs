//! What the webhook templates are given: the project's webhooks, one entry per version that
//! has admission webhooks, grouped as the generated module tree lists them.

use serde::Serialize;

use crate::{
    model::{Resource, deployed_configuration_names},
    project::Project,
};

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
        let markers = WebhooksValues::new(&project(Scope::Cluster, true)).ca_injection_markers;
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
        let markers = WebhooksValues::new(&project(Scope::Cluster, false)).ca_injection_markers;
        assert_eq!(markers.len(), 4, "{markers:?}");
        assert!(
            markers
                .iter()
                .all(|m| !m.contains("customresourcedefinitions,verbs=get;patch")),
            "{markers:?}"
        );
        assert!(
            WebhooksValues::new(&project(Scope::Namespace, true))
                .ca_injection_markers
                .is_empty()
        );
    }
}
