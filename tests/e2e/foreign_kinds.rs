//! An operator with controllers for kinds it does not own, next to a kind of its own: built-in
//! kinds of the core group (ConfigMap, and the cluster-scoped Namespace) and of `apps`
//! (Deployment), and the Certificate of an external CRD (tests/fixtures/certificate-crd.yaml).
//! It builds, tests, lints and renders; its manifests have RBAC for those kinds and no CRD
//! but its own.

use crate::{build_test_lint, common::Project, kustomize, run};

#[test]
fn operator_with_controllers_for_kinds_it_does_not_own() {
    let project = Project::init("foreign-op", "");
    let root = &project.root;
    project.create_api("--group db --version v1 --kind Backup");
    project.create_api("--group core --version v1 --kind ConfigMap --resource=false");
    project.create_api("--group apps --version v1 --kind Deployment --resource=false");
    project.create_api("--group core --version v1 --kind Namespace --resource=false");
    project.create_api(&format!(
        "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {}/tests/fixtures/certificate-crd.yaml",
        env!("CARGO_MANIFEST_DIR")
    ));

    run(root, "opgen generate manifests", true);
    // The external types' round-trip test and every controller's tests run here.
    build_test_lint(root);
    run(root, "opgen generate manifests --check", true);

    let bases: Vec<String> = std::fs::read_dir(root.join("config/crd/bases"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        bases,
        ["db.example.com_backups.yaml"],
        "only the project's own CRD"
    );
    let role = project.read("config/rbac/role.yaml");
    for rule in [
        "- apiGroups:\n  - \"\"\n  resources:\n  - configmaps\n  - namespaces\n  verbs:\n  - get\n  - list\n  - watch\n",
        "- apiGroups:\n  - apps\n  resources:\n  - deployments\n  verbs:\n  - get\n  - list\n  - watch\n",
        "- apiGroups:\n  - cert-manager.io\n  resources:\n  - certificates\n  verbs:\n  - get\n  - list\n  - watch\n",
    ] {
        assert!(role.contains(rule), "role.yaml lacks\n{rule}in\n{role}");
    }
    let rendered = kustomize(
        root,
        "config/default",
        &["CustomResourceDefinition", "ClusterRole", "Deployment"],
    );
    assert!(
        rendered.contains("name: backups.db.example.com"),
        "{rendered}"
    );
    assert!(
        !rendered.contains("certificates.cert-manager.io"),
        "the external CRD is not the project's to install:\n{rendered}"
    );
}
