//! opgen's outputs that no template renders and that a change leaves without a purpose: the
//! CRD and OLM bundle files of a deleted kind, the stored copy of a deleted external kind's
//! CRD, the Helm chart's webhook templates once the last webhook goes; and whether the CRDs
//! of the kinds that stay change.

use std::path::Path;

use crate::{bundle, helm, project::Project};

/// The outputs of `before` that `after` no longer needs, those that exist under `root`.
pub fn retired(root: &Path, before: &Project, after: &Project) -> Vec<String> {
    let mut paths = Vec::new();
    for kind in before
        .kinds()
        .filter(|kind| !after.resources.iter().any(|r| r.same_kind(kind)))
    {
        let crd = kind.crd_file(&before.domain);
        let name = crd.rsplit('/').next().unwrap_or_default();
        paths.push(format!("{}/{name}", bundle::MANIFESTS_DIR));
        paths.push(crd);
        for role in ["editor", "viewer"] {
            let object = before.project_name.deployed_name(&format!(
                "{}-{}-{role}-role",
                kind.group,
                kind.kind.singular()
            ));
            paths.push(format!(
                "{}/{object}_rbac.authorization.k8s.io_v1_clusterrole.yaml",
                bundle::MANIFESTS_DIR
            ));
        }
    }
    for foreign in &before.foreign_kinds {
        if !after.foreign_kinds.contains(foreign)
            && let Some(crd) = &foreign.crd
        {
            paths.push(crd.clone());
        }
    }
    let has_webhooks = |project: &Project| project.resources.iter().any(|r| r.webhooks.is_some());
    if has_webhooks(before) && !has_webhooks(after) {
        for name in ["webhook.yaml", "cert-manager.yaml"] {
            let path = format!("{}/templates/{name}", helm::CHART_DIR);
            let ours = std::fs::read_to_string(root.join(&path))
                .is_ok_and(|text| text.contains(helm::HEADER));
            if ours {
                paths.push(path);
            }
        }
    }
    paths.retain(|path| root.join(path).is_file());
    paths
}

/// Whether the CRD of a kind that stays changes: it lost a version, or its conversion.
pub fn crds_change(before: &Project, after: &Project) -> bool {
    after.kinds().any(|kind| {
        let versions = |project: &Project| {
            let mut versions: Vec<(String, bool)> = project
                .versions_of(kind)
                .map(|r| (r.version.to_string(), r.storage))
                .collect();
            versions.sort();
            (versions, project.converts(kind))
        };
        versions(before) != versions(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        model::{Resource, Webhooks},
        project::Scope,
    };

    fn project(resources: Vec<Resource>) -> Project {
        Project {
            resources,
            ..Project::for_test("demo", Scope::Cluster)
        }
    }

    #[test]
    fn the_crds_change_with_a_version_or_a_conversion_and_not_with_a_kind() {
        let v1 = Resource::for_test("db", "v1", "Thing");
        let alpha = Resource {
            storage: false,
            controller: false,
            ..Resource::for_test("db", "v1alpha1", "Thing")
        };
        let other = Resource::for_test("ops", "v1", "Backup");
        let converting = Resource {
            webhooks: Some(Webhooks {
                conversion: true,
                ..Webhooks::default()
            }),
            ..v1.clone()
        };
        let all = project(vec![v1.clone(), alpha.clone(), other.clone()]);
        assert!(crds_change(&all, &project(vec![v1.clone(), other.clone()])));
        assert!(!crds_change(
            &all,
            &project(vec![v1.clone(), alpha.clone()])
        ));
        assert!(crds_change(
            &project(vec![converting, alpha.clone()]),
            &project(vec![v1.clone(), alpha])
        ));
        assert!(!crds_change(&all, &all));
    }

    #[test]
    fn a_deleted_kind_retires_its_crd_and_bundle_files_that_exist() {
        let dir = tempfile::tempdir().unwrap();
        let backup = Resource::for_test("ops", "v1", "Backup");
        let before = project(vec![Resource::for_test("db", "v1", "Thing"), backup]);
        let after = project(vec![Resource::for_test("db", "v1", "Thing")]);
        for path in [
            "config/crd/bases/ops.example.com_backups.yaml",
            "bundle/manifests/ops.example.com_backups.yaml",
            "bundle/manifests/demo-ops-backup-editor-role_rbac.authorization.k8s.io_v1_clusterrole.yaml",
            "config/crd/bases/db.example.com_things.yaml",
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let mut retired = retired(dir.path(), &before, &after);
        retired.sort();
        assert_eq!(
            retired,
            [
                "bundle/manifests/demo-ops-backup-editor-role_rbac.authorization.k8s.io_v1_clusterrole.yaml",
                "bundle/manifests/ops.example.com_backups.yaml",
                "config/crd/bases/ops.example.com_backups.yaml",
            ]
        );
    }
}
