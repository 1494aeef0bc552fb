//! The values templates see: every name a template prints is computed here, once, from the
//! validated model.

use serde::Serialize;

use super::{operand_values::OperandValues, reference_values::ReferenceValues, rust_order};
use crate::{
    model::{License, Resource},
    project::{Project, Scope},
};

/// The version of a new project.
const FIRST_VERSION: &str = "0.1.0";

#[derive(Debug, Serialize)]
pub struct ProjectValues {
    /// `demo-operator`
    pub name: String,
    /// `demo_operator`: the manager's library crate.
    pub crate_ident: String,
    /// `demo-operator-api`
    pub api_crate: String,
    /// `demo_operator_api`
    pub api_crate_ident: String,
    /// The version of `opgen-runtime` the project depends on, and where its copy is.
    pub runtime_version: &'static str,
    pub runtime_dir: &'static str,
    pub domain: String,
    /// The operator watches only its own namespace.
    pub namespaced: bool,
    /// `operatorScope` as PROJECT spells it: `cluster` or `namespace`.
    pub scope: &'static str,
    /// What the scope makes of the manager role and its binding.
    pub role_kind: &'static str,
    pub role_binding_kind: &'static str,
    /// What the manager watches, in words.
    pub watched_namespaces: &'static str,
    /// k8s-openapi's version feature, `v1_33`.
    pub k8s_feature: String,
    /// The Kubernetes release the project targets, `1.33`: the control plane its integration
    /// tests want.
    pub kubernetes_version: String,
    /// SPDX identifier, absent without a license.
    pub license: Option<&'static str>,
    /// The owner given with `--owner`, else `The <name> Authors`.
    pub copyright_holder: String,
    /// `demo-operator-system`
    pub system_namespace: String,
    /// The version a new project starts at (Cargo.toml), which also tags its manager image.
    pub version: &'static str,
    pub kinds: Vec<KindValues>,
    pub groups: Vec<GroupValues>,
    /// Module paths of every controller (`db::my_sql_cluster`), sorted.
    pub controllers: Vec<String>,
    /// The webhooks (`create webhook`).
    pub webhooks: super::webhook_values::WebhooksValues,
    /// Whether the project's files name the runtime `crate::runtime`, as those of opgen 0.1
    /// and 0.2 do (see `runtime_alias`): `src/lib.rs` keeps their paths.
    pub runtime_alias: bool,
    /// The api crate has the `external` module: types of other projects' CRDs.
    pub external_types: bool,
    /// Where opgen's releases are downloaded from: `<repository>/releases/download`.
    pub opgen_releases: &'static str,
    /// The metrics, alerts and dashboard of the controllers.
    pub monitoring: super::monitoring_values::MonitoringValues,
}

/// One kind, whatever its number of versions.
#[derive(Debug, Serialize)]
pub struct KindValues {
    /// `MySQLCluster`
    pub kind: String,
    /// The Rust type of the kind's objects: `MySQLCluster`, `OptionResource` for `Option`.
    pub rust_type: String,
    /// The Rust type is named like the kind, so `#[kube(root = ...)]` is not needed.
    pub rust_type_is_kind: bool,
    /// `db`
    pub group: String,
    /// `db`, as a Rust module
    pub group_module: String,
    /// `db.example.com`
    pub qualified_group: String,
    /// `my_sql_cluster`
    pub module: String,
    pub plural: String,
    pub singular: String,
    pub short_name: String,
    pub namespaced: bool,
    /// `mysqlclusters.db.example.com`
    pub crd_name: String,
    /// The CRD file relative to `config/crd`.
    pub crd_file: String,
    /// The sample file of the stored version, relative to `config/samples`.
    pub sample_file: String,
    /// Editor and viewer role files, relative to `config/rbac`.
    pub editor_role_file: String,
    pub viewer_role_file: String,
    /// `demo-operator` object-name stem of the editor/viewer roles: `db-mysqlcluster`.
    pub role_stem: String,
    /// Every version, oldest first by Kubernetes priority.
    pub versions: Vec<String>,
    pub storage_version: String,
    /// The version the controller watches, when the kind has a controller.
    pub controller_version: Option<String>,
    /// The application the kind runs, for kinds made with `create api --image`.
    pub operand: Option<OperandValues>,
    /// The kind its objects reference (`create api --references`).
    pub reference: Option<ReferenceValues>,
    /// The path of the kind's conversion webhook, when its versions convert through one.
    pub conversion_path: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct GroupValues {
    pub group: String,
    pub module: String,
    /// In the order rustfmt gives their `mod` lines.
    pub versions: Vec<GroupVersionValues>,
    /// Kinds of the group that have a controller, by module.
    pub controllers: Vec<String>,
    /// Kinds of the group with an integration test: those it owns that have a controller.
    pub integration_tests: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct GroupVersionValues {
    pub version: String,
    /// Kind modules defined in this version, in the order rustfmt gives `mod` lines.
    pub kinds: Vec<String>,
    /// The same, in the order rustfmt gives `use` lines.
    pub reexports: Vec<String>,
    /// The conversion modules of the kinds of this version that convert through a hub.
    pub conversions: Vec<String>,
}

/// The values of one resource being scaffolded, with its project.
#[derive(Debug, Serialize)]
pub struct ResourceValues<'a> {
    pub project: &'a ProjectValues,
    pub kind: KindValues,
    /// The version whose files are being written.
    pub version: String,
}

impl ProjectValues {
    /// The values of `project`, for the templates that do not name webhook files.
    pub fn new(project: &Project) -> Self {
        Self::with_webhook_files(project, &super::webhook_values::WebhookFiles::default())
    }

    /// The values of `project` whose admission webhooks are served by `files`.
    pub fn with_webhook_files(
        project: &Project,
        files: &super::webhook_values::WebhookFiles,
    ) -> Self {
        let name = &project.project_name;
        let kinds: Vec<KindValues> = project
            .kinds()
            .map(|r| KindValues::new(project, r))
            .collect();
        let mut controllers: Vec<String> = kinds
            .iter()
            .filter(|k| k.controller_version.is_some())
            .map(|k| format!("{}::{}", k.group_module, k.module))
            .collect();
        let mut groups = groups(project);
        add_foreign_controllers(project, &mut groups, &mut controllers);
        Self {
            name: name.to_string(),
            api_crate: name.api_crate(),
            crate_ident: name.crate_ident(),
            api_crate_ident: name.api_crate_ident(),
            runtime_version: super::vendored_runtime::VERSION,
            runtime_dir: super::vendored_runtime::DIR,
            domain: project.domain.to_string(),
            namespaced: project.namespaced(),
            scope: match project.operator_scope {
                Scope::Cluster => "cluster",
                Scope::Namespace => "namespace",
            },
            role_kind: if project.namespaced() {
                "Role"
            } else {
                "ClusterRole"
            },
            role_binding_kind: if project.namespaced() {
                "RoleBinding"
            } else {
                "ClusterRoleBinding"
            },
            watched_namespaces: if project.namespaced() {
                "only the one it runs in"
            } else {
                "all of them (an empty WATCH_NAMESPACE)"
            },
            k8s_feature: project.kubernetes_version.feature(),
            kubernetes_version: project.kubernetes_version.to_string(),
            license: project.license.spdx(),
            copyright_holder: project
                .owner
                .clone()
                .unwrap_or_else(|| format!("The {name} Authors")),
            system_namespace: name.system_namespace(),
            version: FIRST_VERSION,
            kinds,
            groups,
            controllers,
            webhooks: super::webhook_values::WebhooksValues::new(project, files),
            runtime_alias: false,
            external_types: project
                .foreign_kinds
                .iter()
                .any(|f| f.origin == crate::model::Origin::External),
            opgen_releases: concat!(env!("CARGO_PKG_REPOSITORY"), "/releases/download"),
            monitoring: super::monitoring_values::MonitoringValues::new(project),
        }
    }
}

impl KindValues {
    pub fn new(project: &Project, resource: &Resource) -> Self {
        let domain = &project.domain;
        let mut versions: Vec<&Resource> = project.versions_of(resource).collect();
        versions.sort_by(|a, b| a.version.cmp(&b.version));
        let storage = versions
            .iter()
            .find(|r| r.storage)
            .copied()
            .unwrap_or(resource);
        let strip = |path: String, folder: &str| path.trim_start_matches(folder).to_owned();
        Self {
            kind: resource.kind.to_string(),
            rust_type: resource.kind.rust_type(),
            rust_type_is_kind: resource.kind.rust_type() == resource.kind.as_str(),
            group: resource.group.to_string(),
            group_module: resource.group.module(),
            qualified_group: resource.qualified_group(domain),
            module: resource.kind.module(),
            plural: resource.plural.to_string(),
            singular: resource.kind.singular(),
            short_name: resource.short_name.to_string(),
            namespaced: resource.namespaced,
            crd_name: resource.crd_name(domain),
            crd_file: strip(resource.crd_file(domain), "config/crd/"),
            sample_file: strip(storage.sample_file(), "config/samples/"),
            editor_role_file: strip(resource.role_file("editor"), "config/rbac/"),
            viewer_role_file: strip(resource.role_file("viewer"), "config/rbac/"),
            role_stem: format!("{}-{}", resource.group, resource.kind.singular()),
            versions: versions.iter().map(|r| r.version.to_string()).collect(),
            storage_version: storage.version.to_string(),
            controller_version: versions
                .iter()
                .find(|r| r.controller)
                .map(|r| r.version.to_string()),
            operand: versions
                .iter()
                .find_map(|r| r.operand.as_ref())
                .map(OperandValues::new),
            reference: versions
                .iter()
                .find_map(|r| r.operand.as_ref()?.references.as_ref())
                .and_then(|reference| ReferenceValues::new(project, resource, reference)),
            conversion_path: project
                .converts(resource)
                .then(|| resource.conversion_path(domain)),
        }
    }
}

/// The groups of the project, in the order rustfmt gives their `mod` lines, with their
/// versions and controllers.
fn groups(project: &Project) -> Vec<GroupValues> {
    let mut names: Vec<_> = project.resources.iter().map(|r| r.group.clone()).collect();
    names.sort_by_key(|group| group.module());
    names.dedup();
    names
        .into_iter()
        .map(|group| {
            let in_group: Vec<&Resource> = project
                .resources
                .iter()
                .filter(|r| r.group == group)
                .collect();
            let mut versions: Vec<String> =
                in_group.iter().map(|r| r.version.to_string()).collect();
            versions.sort();
            versions.dedup();
            let mut controllers: Vec<String> = in_group
                .iter()
                .filter(|r| r.controller)
                .map(|r| r.kind.module())
                .collect();
            controllers.sort();
            GroupValues {
                module: group.module(),
                versions: versions
                    .into_iter()
                    .map(|version| {
                        let mut kinds: Vec<String> = in_group
                            .iter()
                            .filter(|r| r.version.as_str() == version)
                            .map(|r| r.kind.module())
                            .collect();
                        kinds.sort();
                        let mut reexports = kinds.clone();
                        reexports.sort_by(|a, b| rust_order::version_sort(a, b));
                        let mut conversions: Vec<String> = in_group
                            .iter()
                            .filter(|r| r.version.as_str() == version)
                            .filter(|r| project.spokes(r).iter().any(|s| std::ptr::eq(*s, **r)))
                            .map(|r| r.conversion_module())
                            .collect();
                        conversions.sort();
                        GroupVersionValues {
                            version,
                            kinds,
                            reexports,
                            conversions,
                        }
                    })
                    .collect(),
                integration_tests: controllers.clone(),
                controllers,
                group: group.to_string(),
            }
        })
        .collect()
}

/// Adds the controllers of the foreign kinds to the project's controller modules: into the
/// module of an owned group of the same name, or a module of their own.
fn add_foreign_controllers(
    project: &Project,
    groups: &mut Vec<GroupValues>,
    controllers: &mut Vec<String>,
) {
    for foreign in &project.foreign_kinds {
        let module = foreign.group.module();
        controllers.push(format!("{module}::{}", foreign.module()));
        match groups.iter_mut().find(|g| g.module == module) {
            Some(group) => {
                group.controllers.push(foreign.module());
                group.controllers.sort();
            }
            None => groups.push(GroupValues {
                group: foreign.group.shown().to_owned(),
                module,
                versions: Vec::new(),
                controllers: vec![foreign.module()],
                integration_tests: Vec::new(),
            }),
        }
    }
    groups.sort_by(|a, b| a.module.cmp(&b.module));
    controllers.sort();
}

/// The license text's template, if the project has a license.
pub fn license_template(license: License) -> Option<&'static str> {
    match license {
        License::Apache2 => Some("license/apache2"),
        License::Mit => Some("license/mit"),
        License::None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ForeignKind;

    #[test]
    fn foreign_controllers_join_an_owned_group_of_their_module_or_have_their_own() {
        let mut project = Project::for_test("demo", Scope::Cluster);
        project
            .resources
            .push(Resource::for_test("apps", "v1", "Website"));
        project.foreign_kinds = vec![
            ForeignKind::built_in_for_test("apps", "v1", "Deployment"),
            ForeignKind::built_in_for_test("", "v1", "ConfigMap"),
        ];
        let values = ProjectValues::new(&project);
        let groups: Vec<(&str, usize, &[String])> = values
            .groups
            .iter()
            .map(|g| {
                (
                    g.module.as_str(),
                    g.versions.len(),
                    g.controllers.as_slice(),
                )
            })
            .collect();
        assert_eq!(
            groups,
            [
                (
                    "apps",
                    1,
                    &["deployment".to_owned(), "website".to_owned()][..]
                ),
                ("core", 0, &["config_map".to_owned()][..]),
            ]
        );
        assert_eq!(
            values.controllers,
            ["apps::deployment", "apps::website", "core::config_map"]
        );
        assert!(!values.external_types);
    }
}
