//! End to end: generate operator projects and prove them by building them. Each scenario runs
//! `cargo build`, `cargo test`, `cargo clippy -D warnings` and `cargo fmt --check` on the
//! generated workspace, right after `init` and again after adding kinds, checks its manifests
//! with `opgen generate manifests --check` and the project's own drift test, and renders its
//! kustomize tree with `kubectl kustomize`. Then it runs the operator for real on a control plane
//! (etcd, kube-apiserver, kube-controller-manager from `KUBEBUILDER_ASSETS`): see `on_cluster`.
//!
//! All generated projects share one Cargo target directory (`target/e2e`), so the operator's
//! dependencies are compiled once per Kubernetes version feature, not once per scenario.

mod common;
#[path = "e2e/manifests.rs"]
mod manifests;
#[path = "e2e/on_cluster.rs"]
mod on_cluster;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    time::Instant,
};

use common::{Project, control_plane::DEFAULT_KUBERNETES};

/// The target directory every generated project builds into: `target/e2e`, or
/// `OPGEN_E2E_TARGET_DIR` when set (so that several checkouts can share one dependency build).
fn shared_target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("OPGEN_E2E_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("e2e")
}

/// Runs `command_line` (split at whitespace; `opgen` is the binary under test) in `dir` with
/// the shared target directory, and panics with its output unless it exits as `success` says.
fn run(dir: &Path, command_line: &str, success: bool) -> Output {
    let mut words = command_line.split_whitespace();
    let program = match words.next().unwrap() {
        "opgen" => env!("CARGO_BIN_EXE_opgen"),
        program => program,
    };
    let started = Instant::now();
    let output = Command::new(program)
        .args(words)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .unwrap_or_else(|err| panic!("cannot run {program}: {err}"));
    let name = dir.file_name().unwrap().to_string_lossy();
    eprintln!("[e2e {name}] {command_line} ({:.0?})", started.elapsed());
    if output.status.success() != success {
        panic!(
            "`{command_line}` in {} {}:\n--- stdout\n{}\n--- stderr\n{}",
            dir.display(),
            if success {
                "failed"
            } else {
                "succeeded unexpectedly"
            },
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
    }
    output
}

/// What a user runs on a generated project before committing.
fn build_test_lint(root: &Path) {
    run(root, "cargo build --all-targets", true);
    run(root, "cargo test", true);
    run(root, "cargo clippy --all-targets -- -D warnings", true);
    run(root, "cargo fmt --check", true);
}

/// `kubectl kustomize dir`, rendered, after checking it holds an object of every kind in `kinds`.
fn kustomize(root: &Path, dir: &str, kinds: &[&str]) -> String {
    let output = run(root, &format!("kubectl kustomize {dir}"), true);
    let rendered = String::from_utf8(output.stdout).unwrap();
    for kind in kinds {
        assert!(
            rendered.contains(&format!("\nkind: {kind}\n")),
            "{dir} renders no {kind}:\n{rendered}"
        );
    }
    rendered
}

/// Adds the kinds of a scenario: several groups (one kind name in two of them), a
/// two-version kind, a cluster-scoped kind (a namespaced one in a namespaced operator, which
/// cannot hold cluster-scoped kinds), and operands run by a StatefulSet (with a Service) and
/// by a Deployment (without).
fn add_kinds(project: &Project, namespaced_operator: bool) {
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    project.create_api("--group db --version v1 --kind MySQLCluster");
    let scope = if namespaced_operator { "true" } else { "false" };
    project.create_api(&format!(
        "--group ops --version v1 --kind BackupPolicy --namespaced={scope}"
    ));
    project.create_api("--group ops --version v1beta1 --kind Proxy");
    // The same kind name in a second group.
    project.create_api("--group ops --version v1 --kind MySQLCluster");
    project.create_api(
        "--group data --version v1alpha1 --kind PostgresCluster --image postgres:17 --workload statefulset --port 5432 --run-as-user 999",
    );
    project.create_api("--group cache --version v1 --kind Memcached --image memcached:1.6 --command memcached,-m=64");
}

/// Checks a CRD that `generate manifests` wrote against what `PROJECT` says of its kind.
fn check_crd(
    project: &Project,
    file: &str,
    scope: &str,
    short_name: &str,
    versions: &[(&str, bool)],
) {
    let text = project.read(&format!("config/crd/bases/{file}.yaml"));
    let crd: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let spec = &crd["spec"];
    assert_eq!(spec["scope"], scope, "{file}");
    assert_eq!(
        spec["names"]["shortNames"],
        serde_json::json!([short_name]),
        "{file}"
    );
    let mut found: Vec<(&str, bool)> = spec["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["storage"].as_bool().unwrap()))
        .collect();
    found.sort();
    let mut expected = versions.to_vec();
    expected.sort();
    assert_eq!(found, expected, "{file}: versions and storage flags");
    for version in spec["versions"].as_array().unwrap() {
        assert!(
            version["subresources"]["status"].is_object(),
            "{file}: no status subresource"
        );
        let columns = version["additionalPrinterColumns"]
            .as_array()
            .expect("printer columns");
        assert!(
            columns.iter().any(|c| c["name"] == "Age"),
            "{file}: no Age column"
        );
    }
}

fn scenario(name: &str, init_args: &str, manager_role: &str, check_missing_rule: bool) {
    let started = Instant::now();
    let project = Project::init(name, init_args);
    let root = &project.root;

    // The project `init` writes builds and renders before any kind is added.
    build_test_lint(root);
    kustomize(
        root,
        "config/default",
        &["Deployment", manager_role, "ServiceAccount"],
    );
    kustomize(root, "config/samples", &[]);

    let namespaced_operator = init_args.contains("--namespaced");
    let kubernetes = init_args
        .split_whitespace()
        .skip_while(|arg| *arg != "--kubernetes-version")
        .nth(1)
        .unwrap_or(DEFAULT_KUBERNETES);
    add_kinds(&project, namespaced_operator);
    run(root, "opgen generate manifests", true);
    build_test_lint(root);

    // Manifests: one CRD per kind, all versions merged, one storage version; idempotent.
    let scope = if namespaced_operator {
        "Namespaced"
    } else {
        "Cluster"
    };
    check_crd(
        &project,
        "db.example.com_mysqlclusters",
        "Namespaced",
        "msc",
        &[("v1", true), ("v1alpha1", false)],
    );
    check_crd(
        &project,
        "ops.example.com_backuppolicies",
        scope,
        "bp",
        &[("v1", true)],
    );
    check_crd(
        &project,
        "ops.example.com_mysqlclusters",
        "Namespaced",
        "msc",
        &[("v1", true)],
    );
    check_crd(
        &project,
        "ops.example.com_proxies",
        "Namespaced",
        "pro",
        &[("v1beta1", true)],
    );
    check_crd(
        &project,
        "data.example.com_postgresclusters",
        "Namespaced",
        "pc",
        &[("v1alpha1", true)],
    );
    check_crd(
        &project,
        "cache.example.com_memcacheds",
        "Namespaced",
        "mem",
        &[("v1", true)],
    );
    // crdgen builds from the api crate alone: none of the manager's runtime is in its graph.
    let tree = run(
        root,
        &format!("cargo tree --package {name}-api --edges normal --prefix none"),
        true,
    );
    let tree = String::from_utf8(tree.stdout).unwrap();
    for heavy in ["tokio ", "hyper ", "axum ", "kube-runtime "] {
        assert!(
            !tree.contains(heavy),
            "the api crate depends on {heavy}:\n{tree}"
        );
    }
    let role = project.read("config/rbac/role.yaml");
    for resource in [
        "statefulsets",
        "deployments",
        "services",
        "mysqlclusters/status",
        "events",
    ] {
        assert!(
            role.contains(&format!("- {resource}\n")),
            "role.yaml lacks {resource}:\n{role}"
        );
    }
    assert!(
        !role.contains("'*'") && !role.contains("\"*\""),
        "role.yaml has a wildcard:\n{role}"
    );
    run(root, "opgen generate manifests --check", true);
    let before = project.tree();
    run(root, "opgen generate manifests", true);
    assert!(
        project.tree() == before,
        "a second generate manifests changed files"
    );

    // The manager `build_test_lint` built, on a control plane.
    on_cluster::run(&on_cluster::Setup {
        project: &project,
        name,
        target_dir: &shared_target_dir(),
        namespaced_operator,
        kubernetes,
        check_missing_rule,
    });

    let rendered = kustomize(
        root,
        "config/default",
        &["CustomResourceDefinition", manager_role, "Deployment"],
    );
    assert!(
        rendered.contains("name: mysqlclusters.db.example.com"),
        "{rendered}"
    );
    kustomize(
        root,
        "config/samples",
        &[
            "MySQLCluster",
            "BackupPolicy",
            "Proxy",
            "PostgresCluster",
            "Memcached",
        ],
    );

    // Drift: a new Spec field makes both opgen's check and the project's own test fail.
    let types = root.join("api/src/db/v1/my_sql_cluster.rs");
    let source = std::fs::read_to_string(&types).unwrap();
    let edited = source.replace(
        "    pub size: i32,\n",
        "    pub size: i32,\n    /// Whether backups are taken.\n    #[serde(default)]\n    pub backups: bool,\n",
    );
    assert_ne!(source, edited, "the example field moved: update this test");
    std::fs::write(&types, edited).unwrap();
    let check = run(root, "opgen generate manifests --check", false);
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(
        stderr.contains("config/crd/bases/db.example.com_mysqlclusters.yaml"),
        "{stderr}"
    );
    let drift = run(root, &format!("cargo test --package {name}-api"), false);
    let stdout = String::from_utf8_lossy(&drift.stdout);
    assert!(stdout.contains("run `make manifests`"), "{stdout}");
    run(root, "opgen generate manifests", true);
    run(root, "opgen generate manifests --check", true);
    run(root, &format!("cargo test --package {name}-api"), true);

    // `make build-installer` bundles CRDs, RBAC and the Deployment into one file.
    let make = format!(
        "make build-installer OPGEN={} IMG=registry.example/op:v1",
        env!("CARGO_BIN_EXE_opgen")
    );
    run(root, &make, true);
    let installer = project.read("dist/install.yaml");
    for needle in [
        "kind: CustomResourceDefinition",
        &format!("kind: {manager_role}\n"),
        "kind: Deployment",
        "image: registry.example/op:v1",
    ] {
        assert!(
            installer.contains(needle),
            "dist/install.yaml lacks {needle}"
        );
    }
    eprintln!("[e2e {name}] scenario took {:.0?}", started.elapsed());
}

#[test]
fn cluster_wide_operator_on_the_oldest_kubernetes() {
    scenario("cluster-op", "", "ClusterRole", true);
}

#[test]
fn namespaced_operator_on_the_newest_kubernetes() {
    scenario(
        "namespaced-op",
        "--namespaced --kubernetes-version 1.37",
        "Role",
        false,
    );
}
