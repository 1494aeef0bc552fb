//! The values templates see for kinds the project watches without owning them (`PROJECT`'s
//! `foreignKinds`); [`super::values`] places their controllers in the project's module tree.

use serde::Serialize;

use super::values::ProjectValues;
use crate::{
    model::{BuiltInKind, ForeignKind, Origin},
    project::Project,
};

/// One foreign kind, for its controller's template.
#[derive(Debug, Serialize)]
pub struct ForeignKindValues {
    /// `ConfigMap`
    pub kind: String,
    /// The API group as RBAC markers write it: empty for the core group.
    pub group: String,
    /// The group as people write it: `core` for the core group.
    pub group_shown: String,
    /// `v1`, or `apps/v1`
    pub api_version: String,
    pub plural: String,
    pub namespaced: bool,
    pub built_in: bool,
    /// The module whose alias `api` the controller names the kind's type through:
    /// `::k8s_openapi::api::core::v1`, or the api crate's `external::<group>::<version>`.
    pub types_module: String,
    /// The stored CRD of an external kind.
    pub crd: Option<String>,
}

/// The values of a foreign kind's controller, with its project.
#[derive(Debug, Serialize)]
pub struct ForeignControllerValues<'a> {
    pub project: &'a ProjectValues,
    pub kind: ForeignKindValues,
}

impl ForeignKindValues {
    pub fn new(project: &Project, foreign: &ForeignKind) -> Self {
        let types_module = match foreign.origin {
            Origin::BuiltIn => {
                let found = BuiltInKind::find(
                    foreign.group.as_str(),
                    foreign.version.as_str(),
                    foreign.kind.as_str(),
                    project.kubernetes_version,
                )
                .expect("PROJECT's rules admit only built-in kinds of its Kubernetes version");
                let path = found.rust_path();
                path.rsplit_once("::")
                    .map(|(module, _)| module.to_owned())
                    .unwrap_or(path)
            }
            Origin::External => format!(
                "::{}::external::{}",
                project.project_name.api_crate_ident(),
                foreign.external_module()
            ),
        };
        Self {
            kind: foreign.kind.to_string(),
            group: foreign.group.to_string(),
            group_shown: foreign.group.shown().to_owned(),
            api_version: foreign.api_version(),
            plural: foreign.plural.clone(),
            namespaced: foreign.namespaced,
            built_in: foreign.origin == Origin::BuiltIn,
            types_module,
            crd: foreign.crd.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    #[test]
    fn the_controller_names_the_type_through_its_module() {
        let project = Project::for_test("demo", Scope::Cluster);
        let ingress = ForeignKind::built_in_for_test("networking.k8s.io", "v1", "Ingress");
        let values = ForeignKindValues::new(&project, &ingress);
        assert_eq!(values.types_module, "::k8s_openapi::api::networking::v1");
        assert_eq!(values.group_shown, "networking.k8s.io");
        let mut external = ingress.clone();
        external.origin = Origin::External;
        external.group = "cert-manager.io".parse().unwrap();
        let values = ForeignKindValues::new(&project, &external);
        assert_eq!(
            values.types_module,
            "::demo_api::external::cert_manager::v1"
        );
    }
}
