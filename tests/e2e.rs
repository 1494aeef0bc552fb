//! End to end: generate operator projects and prove them by building them. Each scenario runs
//! `cargo build`, `cargo test`, `cargo clippy -D warnings` and `cargo fmt --check` on the
//! generated workspace, checks its manifests with `opgen generate manifests --check`, and
//! renders its kustomize tree with `kubectl kustomize`.
//!
//! All generated projects share one Cargo target directory (`target/e2e`), so the operator's
//! dependencies are compiled once per Kubernetes version feature, not once per scenario.

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use common::Project;

/// The target directory every generated project builds into.
fn shared_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("e2e")
}

/// Runs `program args` in `dir` with the shared target directory; panics with its output if
/// it does not exit as `success` says.
fn run(dir: &Path, program: &str, args: &[&str], success: bool) -> Output {
    eprintln!("[e2e] {} $ {program} {}", dir.display(), args.join(" "));
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .unwrap_or_else(|err| panic!("cannot run {program}: {err}"));
    if output.status.success() != success {
        panic!(
            "`{program} {}` in {} {}:\n--- stdout\n{}\n--- stderr\n{}",
            args.join(" "),
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

fn opgen(dir: &Path, args: &[&str], success: bool) -> Output {
    run(dir, env!("CARGO_BIN_EXE_opgen"), args, success)
}

/// What a user runs on a generated project before committing.
fn build_test_lint(root: &Path) {
    run(root, "cargo", &["build", "--all-targets"], true);
    run(root, "cargo", &["test"], true);
    run(
        root,
        "cargo",
        &["clippy", "--all-targets", "--", "-D", "warnings"],
        true,
    );
    run(root, "cargo", &["fmt", "--check"], true);
}

/// `kubectl kustomize dir` rendered, as text.
fn kustomize(root: &Path, dir: &str) -> String {
    let output = run(root, "kubectl", &["kustomize", dir], true);
    String::from_utf8(output.stdout).unwrap()
}

fn assert_renders(root: &Path, kinds: &[&str]) -> String {
    let rendered = kustomize(root, "config/default");
    for kind in kinds {
        assert!(
            rendered.contains(&format!("\nkind: {kind}\n")),
            "config/default renders no {kind}:\n{rendered}"
        );
    }
    rendered
}

/// The kinds every scenario adds: two groups, a two-version kind, and a cluster-scoped kind
/// (namespaced kind in a namespaced operator, which cannot hold cluster-scoped ones).
fn add_kinds(project: &Project, namespaced_operator: bool) {
    project.create_api(&[
        "--group",
        "db",
        "--version",
        "v1alpha1",
        "--kind",
        "MySQLCluster",
    ]);
    project.create_api(&["--group", "db", "--version", "v1", "--kind", "MySQLCluster"]);
    let scope = if namespaced_operator {
        "--namespaced=true"
    } else {
        "--namespaced=false"
    };
    project.create_api(&[
        "--group",
        "ops",
        "--version",
        "v1",
        "--kind",
        "BackupPolicy",
        scope,
    ]);
    project.create_api(&["--group", "ops", "--version", "v1beta1", "--kind", "Proxy"]);
}

fn scenario(name: &str, init_args: &[&str], manager_role: &str) {
    let project = Project::init(name, init_args);
    let root = &project.root;

    // The project `init` writes builds and renders before any kind is added.
    build_test_lint(root);
    assert_renders(root, &["Deployment", manager_role, "ServiceAccount"]);
    kustomize(root, "config/samples");

    let namespaced_operator = init_args.contains(&"--namespaced");
    add_kinds(&project, namespaced_operator);
    opgen(root, &["generate", "manifests"], true);
    build_test_lint(root);

    // Manifests: one CRD per kind, all versions merged, one storage version; idempotent.
    let crd = project.read("config/crd/bases/db.example.com_mysqlclusters.yaml");
    assert_eq!(crd.matches("storage: true").count(), 1, "{crd}");
    assert!(
        crd.contains("name: v1alpha1") && crd.contains("name: v1\n"),
        "{crd}"
    );
    assert!(crd.contains("- msc"), "{crd}");
    let backup = project.read("config/crd/bases/ops.example.com_backuppolicies.yaml");
    let scope = if namespaced_operator {
        "scope: Namespaced"
    } else {
        "scope: Cluster"
    };
    assert!(backup.contains(scope), "{backup}");
    project.read("config/crd/bases/ops.example.com_proxies.yaml");
    opgen(root, &["generate", "manifests", "--check"], true);
    let before = project.tree();
    opgen(root, &["generate", "manifests"], true);
    assert!(
        project.tree() == before,
        "a second generate manifests changed files"
    );

    let rendered = assert_renders(
        root,
        &["CustomResourceDefinition", manager_role, "Deployment"],
    );
    assert!(
        rendered.contains("mysqlclusters.db.example.com"),
        "{rendered}"
    );
    let samples = kustomize(root, "config/samples");
    for kind in ["MySQLCluster", "BackupPolicy", "Proxy"] {
        assert!(samples.contains(&format!("kind: {kind}\n")), "{samples}");
    }

    // Drift: a new Spec field makes both opgen's check and the project's own test fail.
    let types = root.join("api/src/db/v1/my_sql_cluster.rs");
    let source = std::fs::read_to_string(&types).unwrap();
    let edited = source.replace(
        "    pub size: i32,\n",
        "    pub size: i32,\n    /// Whether backups are taken.\n    #[serde(default)]\n    pub backups: bool,\n",
    );
    assert_ne!(source, edited, "the example field moved: update this test");
    std::fs::write(&types, edited).unwrap();
    let check = opgen(root, &["generate", "manifests", "--check"], false);
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(
        stderr.contains("config/crd/bases/db.example.com_mysqlclusters.yaml"),
        "{stderr}"
    );
    let drift = run(
        root,
        "cargo",
        &["test", "--package", &format!("{name}-api")],
        false,
    );
    let stdout = String::from_utf8_lossy(&drift.stdout);
    assert!(stdout.contains("run `make manifests`"), "{stdout}");
    opgen(root, &["generate", "manifests"], true);
    opgen(root, &["generate", "manifests", "--check"], true);
    run(
        root,
        "cargo",
        &["test", "--package", &format!("{name}-api")],
        true,
    );

    // `make build-installer` bundles CRDs, RBAC and the Deployment into one file.
    let opgen_var = format!("OPGEN={}", env!("CARGO_BIN_EXE_opgen"));
    run(
        root,
        "make",
        &["build-installer", &opgen_var, "IMG=registry.example/op:v1"],
        true,
    );
    let installer = project.read("dist/install.yaml");
    for needle in [
        "kind: CustomResourceDefinition",
        &format!("kind: {manager_role}"),
        "kind: Deployment",
        "image: registry.example/op:v1",
    ] {
        assert!(
            installer.contains(needle),
            "dist/install.yaml lacks {needle}"
        );
    }
}

#[test]
fn cluster_wide_operator_on_the_oldest_kubernetes() {
    scenario("cluster-op", &[], "ClusterRole");
}

#[test]
fn namespaced_operator_on_the_newest_kubernetes() {
    scenario(
        "namespaced-op",
        &["--namespaced", "--kubernetes-version", "1.37"],
        "Role",
    );
}
