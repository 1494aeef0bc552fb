//! The values templates see: every name a template prints is computed here, once, from the
//! validated model.

use serde::Serialize;

use super::rust;
use crate::{
    model::{License, Operand, Resource, Workload},
    project::Project,
};

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
    pub domain: String,
    /// The operator watches only its own namespace.
    pub namespaced: bool,
    /// k8s-openapi's version feature, `v1_33`.
    pub k8s_feature: String,
    /// SPDX identifier, absent without a license.
    pub license: Option<&'static str>,
    /// The owner given with `--owner`, else `The <name> Authors`.
    pub copyright_holder: String,
    /// `demo-operator-system`
    pub system_namespace: String,
    pub opgen_version: &'static str,
    pub kinds: Vec<KindValues>,
    pub groups: Vec<GroupValues>,
    /// Every controller, sorted by module path.
    pub controllers: Vec<ControllerValues>,
}

/// A controller, as the generated `controllers` module starts it.
#[derive(Debug, Serialize)]
pub struct ControllerValues {
    /// Its module path: `db::my_sql_cluster`.
    pub path: String,
    /// Whether the line that starts it fits the width rustfmt keeps on one line; else the
    /// template writes the call the way rustfmt wraps it.
    pub fits_one_line: bool,
}

impl ControllerValues {
    fn new(path: String) -> Self {
        let line = format!("    controllers.spawn({path}::run);");
        Self {
            fits_one_line: rust::fits(&line),
            path,
        }
    }
}

/// One kind, whatever its number of versions.
#[derive(Debug, Serialize)]
pub struct KindValues {
    /// `MySQLCluster`
    pub kind: String,
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
}

/// An operand kind's application (see `model::Operand`).
#[derive(Debug, Serialize)]
pub struct OperandValues {
    /// The default image: `mysql:8.0`.
    pub image: String,
    /// `Deployment` or `StatefulSet`, as Kubernetes spells the kind.
    pub workload: &'static str,
    /// `deployments` or `statefulsets`, as RBAC rules name them.
    pub workload_resource: &'static str,
    pub statefulset: bool,
    pub port: Option<u16>,
    pub run_as_user: Option<i64>,
    pub command: Vec<String>,
    /// The arguments of `command` as Rust string literals, quotes included.
    pub command_literals: Vec<String>,
    /// The longest name of an object of the kind, and of its workload.
    pub name_max: usize,
    /// How many characters may stand between the first and the last of a name:
    /// `name_max - 2`, for the name's regular expression.
    pub name_middle_max: usize,
}

#[derive(Debug, Serialize)]
pub struct GroupValues {
    pub group: String,
    pub module: String,
    pub versions: Vec<GroupVersionValues>,
    /// Kinds of the group that have a controller, by module.
    pub controllers: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct GroupVersionValues {
    pub version: String,
    /// Kind modules defined in this version.
    pub kinds: Vec<String>,
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
    pub fn new(project: &Project) -> Self {
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
        controllers.sort();
        Self {
            name: name.to_string(),
            crate_ident: name.crate_ident(),
            api_crate: name.api_crate(),
            api_crate_ident: name.api_crate_ident(),
            domain: project.domain.to_string(),
            namespaced: project.namespaced(),
            k8s_feature: project.kubernetes_version.feature(),
            license: project.license.spdx(),
            copyright_holder: project
                .owner
                .clone()
                .unwrap_or_else(|| format!("The {name} Authors")),
            system_namespace: name.system_namespace(),
            opgen_version: env!("CARGO_PKG_VERSION"),
            kinds,
            groups: groups(project),
            controllers: controllers.into_iter().map(ControllerValues::new).collect(),
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
        }
    }
}

impl OperandValues {
    fn new(operand: &Operand) -> Self {
        let name_max = operand.workload.max_name_len();
        Self {
            image: operand.image.to_string(),
            workload: operand.workload.kind(),
            workload_resource: operand.workload.resource(),
            statefulset: operand.workload == Workload::StatefulSet,
            port: operand.port,
            run_as_user: operand.run_as_user,
            command: operand.command.clone(),
            command_literals: operand
                .command
                .iter()
                .map(|argument| rust::string_literal(argument))
                .collect(),
            name_max,
            name_middle_max: name_max - 2,
        }
    }
}

/// The groups of the project, sorted by name, with their versions and controllers.
fn groups(project: &Project) -> Vec<GroupValues> {
    let mut names: Vec<_> = project.resources.iter().map(|r| r.group.clone()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|group| {
            let in_group: Vec<&Resource> = project
                .resources
                .iter()
                .filter(|r| r.group == group)
                .collect();
            let mut versions: Vec<_> = in_group.iter().map(|r| r.version.clone()).collect();
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
                            .filter(|r| r.version == version)
                            .map(|r| r.kind.module())
                            .collect();
                        kinds.sort();
                        GroupVersionValues {
                            version: version.to_string(),
                            kinds,
                        }
                    })
                    .collect(),
                controllers,
                group: group.to_string(),
            }
        })
        .collect()
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
    use crate::model::Operand;

    #[test]
    fn controllers_too_long_for_one_line_are_wrapped() {
        assert!(ControllerValues::new("db::my_sql_cluster".into()).fits_one_line);
        // 4 + 18 + 73 + 7 = 102 characters.
        let long = format!("{}::{}", "g".repeat(30), "k".repeat(41));
        assert!(!ControllerValues::new(long).fits_one_line);
        let longest_fitting = format!("{}::{}", "g".repeat(30), "k".repeat(39));
        assert!(ControllerValues::new(longest_fitting).fits_one_line);
    }

    #[test]
    fn operand_values_prepare_rust_literals_and_name_limits() {
        let operand = Operand {
            image: "memcached:1.6".parse().unwrap(),
            workload: Workload::StatefulSet,
            port: None,
            run_as_user: None,
            command: vec!["memcached".into(), "say \"hi\"\n".into()],
        };
        let values = OperandValues::new(&operand);
        assert_eq!(
            values.command_literals,
            [r#""memcached""#, r#""say \"hi\"\n""#]
        );
        assert_eq!((values.name_max, values.name_middle_max), (52, 50));
        assert_eq!(values.workload, "StatefulSet");
        assert_eq!(values.workload_resource, "statefulsets");
    }
}
