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
