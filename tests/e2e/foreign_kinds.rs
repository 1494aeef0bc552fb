//! An operator with controllers for kinds it does not own, next to a kind of its own: built-in
//! kinds of the core group (ConfigMap, and the cluster-scoped Namespace) and of `apps`
//! (Deployment), the Certificate of an external CRD (tests/fixtures/certificate-crd.yaml), and
//! the Memcached of a Helm-based operator's file of CRDs (tests/fixtures/chart-crds.yaml),
//! whose spec and status keep unknown fields and whose property names collide as Rust
//! identifiers. It builds, tests (the external types' round trips, with data in every place
//! that keeps unknown fields), lints and renders; its manifests have RBAC for those kinds and
//! no CRD but its own. Then its manager runs on a control plane with nothing but its generated role,
//! and every one of those controllers reconciles the objects it watches.

use std::time::{Duration, Instant};

use crate::{
    build_test_lint,
    common::{
        Project,
        control_plane::{ControlPlane, DEFAULT_KUBERNETES},
        shared_target_dir,
        wait::wait_for,
    },
    kustomize, on_cluster, run,
};

/// The scenario's project: its package, and the prefix of its namespace and service account.
const NAME: &str = "foreign-op";

/// The controllers of the kinds the project does not own, as the reconcile metrics name them.
const FOREIGN_CONTROLLERS: [&str; 5] = [
    "configmap.core",
    "deployment.apps",
    "namespace.core",
    "certificate.cert-manager",
    "memcached.charts",
];

#[test]
fn operator_with_controllers_for_kinds_it_does_not_own() {
    let project = Project::init(NAME, "");
    let root = &project.root;
    project.create_api("--group db --version v1 --kind Backup");
    project.create_api("--group core --version v1 --kind ConfigMap --resource=false");
    project.create_api("--group apps --version v1 --kind Deployment --resource=false");
    project.create_api("--group core --version v1 --kind Namespace --resource=false");
    project.create_api(&format!(
        "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {}/tests/fixtures/certificate-crd.yaml",
        env!("CARGO_MANIFEST_DIR")
    ));
    project.create_api(&format!(
        "--group charts.example.org --version v1alpha1 --kind Memcached --resource=false --external-crd {}/tests/fixtures/chart-crds.yaml",
        env!("CARGO_MANIFEST_DIR")
    ));
    let stored = project.read("config/external/memcacheds.charts.example.org.yaml");
    assert!(
        !stored.contains("kind: Redis") && !stored.contains("\n---"),
        "only the Memcached CRD is stored:\n{stored}"
    );
    let types = project.read("api/src/external/charts/v1alpha1.rs");
    for field in [
        "pub replica_count: Option<i64>,",
        "pub replica_count2: Option<i64>,",
        "pub r#ref: Option<String>,",
        "pub ref2: Option<String>,",
        "pub self_: Option<String>,",
        "pub self2: Option<String>,",
        "#[serde(flatten)]\n    pub unknown_fields:",
    ] {
        assert!(types.contains(field), "{field} in\n{types}");
    }

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
        "- apiGroups:\n  - charts.example.org\n  resources:\n  - memcacheds\n  verbs:\n  - get\n  - list\n  - watch\n",
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

    on_a_control_plane(&project);
    // The project's own integration tests run every controller, the external CRD's included,
    // on the harness's control plane, which installs that CRD from config/external.
    crate::integration_tests::run(&project, NAME, DEFAULT_KUBERNETES, &["db::backup"]);
}

/// The manager on a control plane, with the other project's CRD installed first (as a user
/// installs cert-manager), the project's own CRD and its generated RBAC: each foreign
/// controller reconciles, and no request is refused.
fn on_a_control_plane(project: &Project) {
    let started = Instant::now();
    let setup = on_cluster::Setup {
        project,
        name: NAME,
        target_dir: &shared_target_dir(),
        namespaced_operator: false,
        kubernetes: DEFAULT_KUBERNETES,
        check_missing_rule: false,
        webhooks: false,
        secure_metrics: true,
        disruption_budgets: true,
        autoscaling: true,
        object_metrics: true,
        traces: false,
    };
    let binary = on_cluster::manager_binary(&setup);
    let cluster = ControlPlane::start(DEFAULT_KUBERNETES).unwrap_or_else(|err| panic!("{err:#}"));
    let kubectl = cluster.admin();
    let root = &project.root;
    for crd in [
        "config/external/certificates.cert-manager.io.yaml",
        "config/external/memcacheds.charts.example.org.yaml",
        "config/crd/bases/db.example.com_backups.yaml",
    ] {
        let file = root.join(crd);
        kubectl.ok(&["apply", "--server-side", "-f", file.to_str().unwrap()]);
    }
    for crd in [
        "certificates.cert-manager.io",
        "memcacheds.charts.example.org",
        "backups.db.example.com",
    ] {
        kubectl.ok(&[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            &format!("crd/{crd}"),
        ]);
    }
    on_cluster::install_rbac(kubectl, &setup);
    kubectl.ok(&["create", "namespace", "e2e-apps"]);
    let objects = "apiVersion: v1
kind: ConfigMap
metadata:
  name: watched
  namespace: e2e-apps
data:
  key: value
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: watched
  namespace: e2e-apps
spec:
  selector:
    matchLabels:
      app: watched
  template:
    metadata:
      labels:
        app: watched
    spec:
      containers:
        - name: app
          image: registry.example/app:v1
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: watched
  namespace: e2e-apps
spec:
  secretName: watched-tls
  issuerRef:
    name: an-issuer
  dnsNames:
    - app.example.com
---
apiVersion: charts.example.org/v1alpha1
kind: Memcached
metadata:
  name: watched
  namespace: e2e-apps
spec:
  replicaCount: 2
  replica_count: 3
  $ref: a-reference
  Self: itself
  resources:
    limits:
      memory: 64Mi
    requests:
      cpu: 100m
  podLabels:
    team: cache
  extraArgs:
    - -vv
";
    kubectl
        .apply(objects, &[])
        .unwrap_or_else(|err| panic!("the watched objects do not apply: {err}"));
    eprintln!(
        "[e2e {NAME}] cluster: CRDs, RBAC and objects in place ({:.0?})",
        started.elapsed()
    );

    // No webhooks in this project: the port is never served.
    let identity = on_cluster::manager_identity(&cluster, &setup, &binary, 0);
    let mut manager = on_cluster::start_manager(&identity, "manager-a", &setup);
    wait_for(
        "every foreign controller to reconcile",
        Duration::from_secs(60),
        || {
            manager.check_running().map_err(|err| format!("{err:#}"))?;
            let counts = manager.reconciliations();
            let idle: Vec<&str> = FOREIGN_CONTROLLERS
                .into_iter()
                .filter(|controller| counts.get(*controller).is_none_or(|n| *n == 0))
                .collect();
            if idle.is_empty() {
                Ok(())
            } else {
                Err(format!("{idle:?} have not reconciled: {counts:?}"))
            }
        },
    );
    manager.stop_after_all_allowed();
    eprintln!("[e2e {NAME}] cluster: done ({:.0?})", started.elapsed());
}
