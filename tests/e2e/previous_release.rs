//! Projects of earlier releases brought to this one with `opgen update`.
//!
//! - opgen 0.1.0 (its machinery generated into `src/runtime/` and
//!   `tests/integration/envtest.rs`): the machinery's files go, opgen-runtime's copy and the
//!   dependency come, and the project, with its kinds and webhooks as 0.1.0 scaffolded them (one
//!   file for both admission webhooks of a version), and a webhook this opgen adds beside one
//!   of those files, builds, passes its tests and lints, and runs on the control plane.
//! - opgen 0.2.0 (opgen-runtime 0.2.0, whose modules 0.3.0 moved): the copy and the version
//!   move, and the project, with every kind of controller, its webhooks, `main.rs` and `cli.rs`
//!   as 0.2.0 scaffolded them, builds, passes its tests and lints through the `runtime` module
//!   the generated `src/lib.rs` keeps for them; once its files name `opgen_runtime` instead, the
//!   module goes.
//!
//! The releases are built from this repository's own history (see `common::releases`), into
//! the shared target directory.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::{
    build_test_lint,
    common::{
        Project, generated_build_env,
        releases::{self, Release},
        shared_target_dir,
    },
    on_cluster, run, webhooks,
};

/// Builds `release`'s opgen from the repository's history, and returns a copy of its binary
/// that `dir` keeps; `None`, said loudly, when the history does not have it (a shallow clone,
/// or a source archive).
fn opgen_of(release: Release, dir: &Path) -> Option<PathBuf> {
    if !release.in_history(&format!(
        "the update of a project of opgen {}",
        release.version
    )) {
        return None;
    }
    // Outside this repository, whose workspace would otherwise claim it.
    let unpacked = tempfile::tempdir().unwrap();
    release.unpack(&["."], unpacked.path());
    // Into the shared target directory, whose opgen binary another release's build may
    // replace at any time: the build and the copy hold its lock.
    let binary = dir.join(format!("opgen-{}", release.version));
    let lock = shared_target_dir().join(".previous-opgen.lock");
    std::fs::create_dir_all(shared_target_dir()).unwrap();
    let built = shared_target_dir().join("debug/opgen");
    let status = Command::new("flock")
        .arg(&lock)
        .args([
            "sh",
            "-c",
            "cargo build --locked --bin opgen && cp \"$0\" \"$1\"",
        ])
        .arg(&built)
        .arg(&binary)
        .current_dir(unpacked.path())
        .envs(generated_build_env())
        .status()
        .unwrap();
    assert!(status.success(), "cannot build opgen {}", release.version);
    assert!(binary.exists(), "{} was not built", binary.display());
    Some(binary)
}

/// A new project called `name` of `opgen`, a binary of an earlier release.
fn init_with(opgen: &str, name: &str) -> Project {
    let temp = tempfile::tempdir().unwrap();
    let status = Command::new(opgen)
        .args(["init", name, "--domain", "example.com"])
        .current_dir(temp.path())
        .env("NO_COLOR", "1")
        .envs(generated_build_env())
        .status()
        .unwrap();
    assert!(status.success(), "{opgen} init failed");
    Project {
        root: temp.path().join(name),
        temp,
    }
}

/// Runs `opgen update` in `project`, and checks that it said each of `says` and that the
/// project now depends on this release's opgen-runtime.
fn updated(project: &Project, says: &[&str]) {
    let update = run(&project.root, "opgen update", true);
    let stderr = String::from_utf8_lossy(&update.stderr);
    for needle in says.iter().chain(&["Updating Cargo.toml"]) {
        assert!(
            stderr.contains(needle),
            "update did not say {needle:?}:\n{stderr}"
        );
    }
    let manifest = project.read("Cargo.toml");
    let dependency = format!("version = \"={}\"", env!("CARGO_PKG_VERSION"));
    assert!(manifest.contains(&dependency), "{manifest}");
    // The runtime's copy is now this binary's, as a new project's is.
    crate::common::date_vendored_runtime_at_the_binary(&project.root);
}

pub fn update_from_the_previous_release() {
    let binaries = tempfile::tempdir().unwrap();
    let Some(previous) = opgen_of(releases::V0_1_0, binaries.path()) else {
        return;
    };
    let previous = previous.to_string_lossy().into_owned();
    let name = "previous-op";
    let project = init_with(&previous, name);
    let root = &project.root;
    for args in [
        "create api --group db --version v1alpha1 --kind MySQLCluster",
        "create api --group db --version v1 --kind MySQLCluster",
        "create api --group data --version v1alpha1 --kind PostgresCluster --image postgres:17 --workload statefulset --port 5432",
        // A Deployment too: the on-cluster checks patch one of each workload.
        "create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6.26-alpine --port 11211",
    ] {
        run(root, &format!("{previous} {args}"), true);
    }
    webhooks::add_with_older(&project, &previous);
    // A version with one admission webhook, in the one file per version the release
    // scaffolded: this opgen adds the other beside it.
    let combined = "src/webhooks/data/postgres_cluster_v1alpha1.rs";
    run(
        root,
        &format!(
            "{previous} create webhook --group data --version v1alpha1 --kind PostgresCluster --defaulting"
        ),
        true,
    );
    let defaulting = project.read(combined);
    assert!(root.join("src/runtime/reconcile.rs").exists());
    assert!(root.join("tests/integration/envtest.rs").exists());

    updated(
        &project,
        &[
            "Removing src/runtime/reconcile.rs",
            "Removing tests/integration/envtest.rs",
            "Creating vendor/opgen-runtime/src/lib.rs",
        ],
    );
    let leftovers: Vec<_> = std::fs::read_dir(root.join("src/runtime"))
        .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "left in src/runtime: {leftovers:?}");

    run(
        root,
        "opgen create webhook --group data --version v1alpha1 --kind PostgresCluster --validation",
        true,
    );
    assert_eq!(project.read(combined), defaulting, "{combined} was changed");
    assert!(
        root.join("src/webhooks/data/postgres_cluster_v1alpha1_validation.rs")
            .is_file()
    );

    // What docs/update.md asks of a 0.1.0 plain controller's test: an unchanged status is no
    // longer written.
    let controller = "src/controllers/db/my_sql_cluster.rs";
    let source = project.read(controller);
    let test = source
        .find("fn apply_without_changes_publishes_no_event()")
        .unwrap_or_else(|| panic!("{controller} has no test to update:\n{source}"));
    let start = test
        + source[test..]
            .find("let action = testing::apply(&Reconciler, &obj, async |server| {")
            .unwrap();
    let closure_end = "})\n        .await;";
    let end = start + source[start..].find(closure_end).unwrap() + closure_end.len();
    project.write(
        controller,
        &format!(
            "{}let action = testing::apply(&Reconciler, &obj, async |_| {{}}).await;{}",
            &source[..start],
            &source[end..]
        ),
    );

    // 0.1.0 started projects on Kubernetes 1.33, which no other scenario builds against: the
    // project moves to 1.35 first, so that its build shares the dependencies the others build
    // instead of compiling every one of them for 1.33 (minutes on a machine that has none).
    run(root, "opgen update --kubernetes-version 1.35", true);
    assert!(project.read("Cargo.toml").contains("\"v1_35\""));
    run(root, "opgen generate manifests", true);
    build_test_lint(root);
    run(root, "opgen generate manifests --check", true);
    on_cluster::run(&on_cluster::Setup {
        project: &project,
        name,
        target_dir: &shared_target_dir(),
        namespaced_operator: false,
        kubernetes: crate::common::control_plane::DEFAULT_KUBERNETES,
        check_missing_rule: false,
        webhooks: true,
        // Its main.rs, as 0.1.0 scaffolded it, runs the manager without choosing: plain HTTP.
        secure_metrics: false,
        // Its operand controllers call `Operand::new`, as 0.1.0 scaffolded them.
        disruption_budgets: false,
        // Its operand kinds have no `spec.autoscaling`: 0.1.0 had no `--autoscale`.
        autoscaling: false,
        // `opgen update` brought this release's runtime, which counts the objects.
        object_metrics: true,
        traces: false,
    });
}

/// A project of opgen 0.2.0, with every kind of controller that release scaffolds, its webhooks
/// and its `main.rs` and `cli.rs`, updated: the user's files keep compiling through the
/// `runtime` module of the generated `src/lib.rs`, which goes once they name `opgen_runtime`;
/// then moved from Kubernetes 1.33, the release 0.2.0 chose, to 1.35.
pub fn update_from_0_2_0() {
    let binaries = tempfile::tempdir().unwrap();
    let Some(opgen_0_2_0) = opgen_of(releases::V0_2_0, binaries.path()) else {
        return;
    };
    let opgen_0_2_0 = opgen_0_2_0.to_string_lossy().into_owned();
    let project = init_with(&opgen_0_2_0, "op-of-0-2");
    let root = &project.root;
    for args in [
        "create api --group db --version v1alpha1 --kind MySQLCluster",
        "create api --group db --version v1 --kind MySQLCluster",
        "create api --group data --version v1alpha1 --kind PostgresCluster --image postgres:17 --workload statefulset --port 5432",
        "create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6.26-alpine --port 11211",
        "create api --group db --version v1alpha1 --kind MySQLBackup --image busybox:1.37 --workload job",
        "create api --group db --version v1alpha1 --kind MySQLBackupSchedule --image busybox:1.37 --workload cronjob",
        "create api --group apps --version v1 --kind Deployment --resource=false",
    ] {
        run(root, &format!("{opgen_0_2_0} {args}"), true);
    }
    webhooks::add_with_older(&project, &opgen_0_2_0);
    let lib = project.read("src/lib.rs");
    assert!(lib.contains("pub mod runtime {"), "{lib}");

    updated(
        &project,
        &[
            "Updating vendor/opgen-runtime/src/lib.rs",
            "Removing vendor/opgen-runtime/src/reconcile.rs",
        ],
    );
    let lib = project.read("src/lib.rs");
    assert!(
        lib.contains("pub mod runtime {") && lib.contains("pub mod reconcile {"),
        "the 0.2.0 files name crate::runtime, so src/lib.rs keeps its paths:\n{lib}"
    );
    let main = project.read("src/main.rs");
    assert!(main.contains("runtime::manager"), "{main}");

    // 0.2.0 started projects on Kubernetes 1.33, past its end of life now: the project moves
    // to 1.35, and what follows builds, tests and lints against that release's types.
    assert!(
        project
            .read("PROJECT")
            .contains("kubernetesVersion: \"1.33\"")
    );
    let moved = run(root, "opgen update --kubernetes-version 1.35", true);
    let stderr = String::from_utf8_lossy(&moved.stderr);
    assert!(
        stderr.contains("the project now builds against Kubernetes 1.35"),
        "{stderr}"
    );
    assert!(project.read("Cargo.toml").contains("\"v1_35\""));

    run(root, "opgen generate manifests", true);
    build_test_lint(root);
    run(root, "opgen generate manifests --check", true);
}
