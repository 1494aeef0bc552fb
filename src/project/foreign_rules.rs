//! The rules of `PROJECT`'s `foreignKinds`, the kinds the project watches without owning them,
//! checked with the other rules (`rules`) whenever `PROJECT` is read or about to be written.
//!
//! A built-in kind must be one the project's Kubernetes version serves, as k8s-openapi has it
//! (the generated code names its type); an external kind must come from a stored CRD; and no
//! kind may have two controllers, or a controller file or types module another kind has.

use std::path::Path;

use super::{BrokenRule, Project, Violation};
use crate::model::{BuiltInKind, ForeignKind, Origin};

/// The first rule a foreign kind breaks. The violation's index counts the owned resources
/// first, then the foreign kinds, as `PROJECT` lists them.
pub fn check(project: &Project) -> Result<(), Violation> {
    for (index, foreign) in project.foreign_kinds.iter().enumerate() {
        let earlier = &project.foreign_kinds[..index];
        check_one(project, foreign, earlier).map_err(|rule| Violation {
            resource: project.resources.len() + index,
            rule: Box::new(rule),
        })?;
    }
    Ok(())
}

fn check_one(
    project: &Project,
    foreign: &ForeignKind,
    earlier: &[ForeignKind],
) -> Result<(), BrokenRule> {
    let kind = &foreign.kind;
    let api_version = foreign.api_version();
    match (foreign.origin, &foreign.crd) {
        (Origin::BuiltIn, None) => check_built_in(project, foreign)?,
        (Origin::External, Some(crd)) if names_a_stored_crd(crd) => {}
        (Origin::External, Some(crd)) => {
            return Err(BrokenRule::CrdOutsideExternal {
                kind: kind.to_string(),
                api_version,
                crd: crd.clone(),
                stored: ForeignKind::stored_crd_file(&foreign.plural, foreign.group.as_str()),
            });
        }
        (Origin::BuiltIn, Some(_)) => {
            return Err(BrokenRule::BuiltInWithCrd {
                kind: kind.to_string(),
                api_version,
            });
        }
        (Origin::External, _) => {
            return Err(BrokenRule::ExternalWithoutCrd {
                kind: kind.to_string(),
                api_version,
            });
        }
    }
    if !foreign.namespaced && project.namespaced() {
        return Err(BrokenRule::ClusterScopedForeign {
            kind: kind.to_string(),
            api_version,
        });
    }
    if let Some(twin) = earlier.iter().find(|other| other.same_kind(foreign)) {
        return Err(BrokenRule::SecondController {
            kind: kind.to_string(),
            group: foreign.group.shown().to_owned(),
            watched: twin.api_version(),
            file: twin.controller_file(),
        });
    }
    let file = foreign.controller_file();
    let owned_files = project
        .resources
        .iter()
        .filter(|r| r.controller)
        .map(|r| r.controller_file());
    let foreign_files = earlier.iter().map(ForeignKind::controller_file);
    if owned_files.chain(foreign_files).any(|other| other == file) {
        return Err(BrokenRule::ControllerFileTaken {
            kind: kind.to_string(),
            api_version,
            file,
        });
    }
    if foreign.origin == Origin::External {
        let qualified = foreign.group.as_str();
        if project
            .resources
            .iter()
            .any(|r| r.qualified_group(&project.domain) == qualified)
        {
            return Err(BrokenRule::OwnGroupExternal {
                group: qualified.to_owned(),
                kind: kind.to_string(),
            });
        }
        if let Some(other) = earlier.iter().find(|other| {
            other.origin == Origin::External
                && other.group != foreign.group
                && other.group.module() == foreign.group.module()
        }) {
            return Err(BrokenRule::SharedExternalModule {
                other: other.group.to_string(),
                group: qualified.to_owned(),
                module: foreign.group.module().to_string(),
            });
        }
        if project
            .resources
            .iter()
            .any(|r| r.group.module() == "external")
        {
            return Err(BrokenRule::ExternalModuleTaken {
                kind: kind.to_string(),
                api_version,
            });
        }
    }
    Ok(())
}

/// Whether `crd` names a `.yaml` file inside `config/external/` by its text: relative, with no
/// empty, `.` or `..` part that could lead out of it.
fn names_a_stored_crd(crd: &str) -> bool {
    crd.strip_prefix("config/external/").is_some_and(|rest| {
        crd.ends_with(".yaml")
            && !rest.contains('\\')
            && rest
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..")
    })
}

/// The first external kind whose stored CRD, as the file system resolves it (symbolic links
/// followed), is not inside the project's `config/external/`; a missing file is left to the
/// command that reads it.
pub fn check_stored_crds(project: &Project, root: &Path) -> Result<(), Violation> {
    let Ok(root) = root.canonicalize() else {
        return Ok(());
    };
    let external_dir = root.join("config/external");
    for (index, foreign) in project.foreign_kinds.iter().enumerate() {
        let Some(crd) = &foreign.crd else { continue };
        let Ok(resolved) = root.join(crd).canonicalize() else {
            continue;
        };
        if !resolved.starts_with(&external_dir) {
            return Err(Violation {
                resource: project.resources.len() + index,
                rule: Box::new(BrokenRule::CrdThroughLink {
                    kind: foreign.kind.to_string(),
                    api_version: foreign.api_version(),
                    crd: crd.clone(),
                }),
            });
        }
    }
    Ok(())
}

/// A built-in kind must be one that Kubernetes serves at the project's version, with its
/// plural and scope.
fn check_built_in(project: &Project, foreign: &ForeignKind) -> Result<(), BrokenRule> {
    let found = BuiltInKind::find(
        foreign.group.as_str(),
        foreign.version.as_str(),
        foreign.kind.as_str(),
        project.kubernetes_version,
    )?;
    let kind = &foreign.kind;
    if found.plural != foreign.plural {
        return Err(BrokenRule::BuiltInPlural {
            kind: kind.to_string(),
            plural: found.plural.to_string(),
            given: foreign.plural.to_string(),
        });
    }
    if found.namespaced != foreign.namespaced {
        return Err(BrokenRule::BuiltInScope {
            kind: kind.to_string(),
            namespaced: found.namespaced,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{model::Resource, project::Scope};

    fn project(foreign: Vec<ForeignKind>) -> Project {
        let mut project = Project::for_test("demo", Scope::Cluster);
        project.foreign_kinds = foreign;
        project
    }

    fn message(project: &Project) -> String {
        check(project).unwrap_err().to_string()
    }

    #[test]
    fn built_in_kinds_of_the_project_version_pass() {
        let project = project(vec![
            ForeignKind::built_in_for_test("", "v1", "ConfigMap"),
            ForeignKind::built_in_for_test("apps", "v1", "Deployment"),
            ForeignKind::built_in_for_test("", "v1", "Namespace"),
        ]);
        assert_eq!(check(&project), Ok(()));
    }

    #[test]
    fn a_built_in_kind_must_match_kubernetes() {
        let mut wrong = ForeignKind::built_in_for_test("apps", "v1", "Deployment");
        wrong.plural = "deploys".to_owned();
        assert!(message(&project(vec![wrong])).contains("`deployments`, not `deploys`"));
        let mut wrong = ForeignKind::built_in_for_test("", "v1", "Namespace");
        wrong.namespaced = true;
        assert!(message(&project(vec![wrong])).contains("Set `namespaced: false`"));
        let mut unknown = ForeignKind::built_in_for_test("apps", "v1", "Deployment");
        unknown.version = "v1beta1".parse().unwrap();
        assert!(message(&project(vec![unknown])).contains("Did you mean apps/v1?"));
    }

    #[test]
    fn one_controller_per_kind() {
        let first = ForeignKind::built_in_for_test("apps", "v1", "Deployment");
        let violation = check(&project(vec![first.clone(), first])).unwrap_err();
        assert_eq!(violation.resource, 1);
        assert!(
            violation.to_string().contains("has a controller already"),
            "{violation}"
        );
    }

    #[test]
    fn a_controller_file_is_one_kinds() {
        let mut project = project(vec![ForeignKind::built_in_for_test(
            "apps",
            "v1",
            "Deployment",
        )]);
        project
            .resources
            .push(Resource::for_test("apps", "v1", "Deployment"));
        assert!(message(&project).contains("src/controllers/apps/deployment.rs"));
    }

    #[test]
    fn cluster_scoped_kinds_need_a_cluster_wide_operator() {
        let mut project = project(vec![ForeignKind::built_in_for_test("", "v1", "Namespace")]);
        project.operator_scope = Scope::Namespace;
        assert!(message(&project).contains("Watch Namespace from a cluster-wide operator"));
    }

    #[test]
    fn an_external_kind_names_its_stored_crd() {
        let mut external = ForeignKind::built_in_for_test("apps", "v1", "Deployment");
        external.origin = Origin::External;
        assert!(message(&project(vec![external.clone()])).contains("--external-crd"));
        external.crd = Some("config/external/deployments.apps.yaml".to_owned());
        assert_eq!(check(&project(vec![external])), Ok(()));
    }

    #[test]
    fn a_stored_crd_is_named_inside_config_external() {
        let mut external = ForeignKind::built_in_for_test("apps", "v1", "Deployment");
        external.origin = Origin::External;
        for crd in [
            "config/external/../../../outside.yaml",
            "config/external/./x.yaml",
            "config/external//x.yaml",
            "config/external/a/../../x.yaml",
            "/etc/config/external/x.yaml",
            "config/external/..\\x.yaml",
        ] {
            external.crd = Some(crd.to_owned());
            let message = message(&project(vec![external.clone()]));
            assert!(
                message.contains("which is not a file inside config/external/"),
                "{crd}: {message}"
            );
            assert!(
                message.ends_with("Put back `crd: config/external/deployments.apps.yaml`"),
                "{message}"
            );
        }
        external.crd = Some("config/external/vendor/x.yaml".to_owned());
        assert_eq!(check(&project(vec![external])), Ok(()));
    }

    #[test]
    fn a_stored_crd_must_not_link_out_of_config_external() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("config/external")).unwrap();
        std::fs::write(root.join("outside.yaml"), "x").unwrap();
        std::fs::write(root.join("config/external/inside.yaml"), "x").unwrap();
        std::os::unix::fs::symlink("../../outside.yaml", root.join("config/external/out.yaml"))
            .unwrap();
        std::os::unix::fs::symlink("inside.yaml", root.join("config/external/in.yaml")).unwrap();
        let mut external = ForeignKind::built_in_for_test("apps", "v1", "Deployment");
        external.origin = Origin::External;
        let mut project = project(vec![external]);
        for (crd, allowed) in [
            ("config/external/in.yaml", true),
            ("config/external/missing.yaml", true),
            ("config/external/out.yaml", false),
        ] {
            project.foreign_kinds[0].crd = Some(crd.to_owned());
            let result = check_stored_crds(&project, root);
            assert_eq!(result.is_ok(), allowed, "{crd}: {result:?}");
        }
        let violation = check_stored_crds(&project, root).unwrap_err();
        assert_eq!(violation.resource, 0);
        assert!(violation.to_string().contains("outside config/external/"));
    }
}
