//! A project of the previous release, opgen 0.1.0 (its machinery generated into `src/runtime/`
//! and `tests/integration/envtest.rs`), brought to this one with `opgen update`: the
//! machinery's files go, opgen-runtime's copy and the dependency come, and the project, with
//! its kinds and webhooks as 0.1.0 scaffolded them (one file for both admission webhooks of a
//! version), and a webhook this opgen adds beside one of those files, builds, passes its tests
//! and lints, and runs on the control plane.
//!
//! The previous release is built from this repository's own history (`PREVIOUS_RELEASE`), into
//! the shared target directory.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::{
    build_test_lint,
    common::{Project, generated_build_env, shared_target_dir},
    on_cluster, run, webhooks,
};

/// The commit of opgen 0.1.0: the last before the runtime became a crate.
const PREVIOUS_RELEASE: &str = "a23b225";

/// Builds opgen 0.1.0 from the repository's history; `None`, said loudly, when the history
/// does not have it (a shallow clone, or a source archive).
fn previous_opgen() -> Option<PathBuf> {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = Command::new("git")
        .args(["cat-file", "-e", &format!("{PREVIOUS_RELEASE}^{{commit}}")])
        .current_dir(repository)
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the previous release, commit {PREVIOUS_RELEASE} (opgen 0.1.0), is not in this checkout's git history, so the update from it is not proven: fetch the whole history (`git fetch --unshallow`) and run this test again"
        );
        return None;
    }
    // Outside this repository, whose workspace would otherwise claim it.
    let unpacked = tempfile::tempdir().unwrap();
    let source = unpacked.path();
    {
        let archive = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "git -C '{}' archive {PREVIOUS_RELEASE} | tar -x -C '{}'",
                repository.display(),
                source.display()
            ))
            .status()
            .unwrap();
        assert!(archive.success(), "cannot unpack {PREVIOUS_RELEASE}");
    }
    run(source, "cargo build --locked --bin opgen", true);
    let binary = shared_target_dir().join("debug/opgen");
    assert!(binary.exists(), "{} was not built", binary.display());
    Some(binary)
}

pub fn update_from_the_previous_release() {
    let Some(previous) = previous_opgen() else {
        return;
    };
    let previous = previous.to_string_lossy().into_owned();
    let name = "previous-op";
    let temp = tempfile::tempdir().unwrap();
    let status = Command::new(&previous)
        .args(["init", name, "--domain", "example.com"])
        .current_dir(temp.path())
        .env("NO_COLOR", "1")
        .envs(generated_build_env())
        .status()
        .unwrap();
    assert!(status.success(), "opgen 0.1.0 init failed");
    let project = Project {
        root: temp.path().join(name),
        temp,
    };
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

    let update = run(root, "opgen update", true);
    let stderr = String::from_utf8_lossy(&update.stderr);
    for needle in [
        "Removing src/runtime/reconcile.rs",
        "Removing tests/integration/envtest.rs",
        "Creating vendor/opgen-runtime/src/lib.rs",
        "Updating Cargo.toml",
    ] {
        assert!(
            stderr.contains(needle),
            "update did not say {needle:?}:\n{stderr}"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(root.join("src/runtime"))
        .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "left in src/runtime: {leftovers:?}");
    assert!(
        project
            .read("Cargo.toml")
            .contains(&format!("version = \"={}\"", env!("CARGO_PKG_VERSION"))),
        "{}",
        project.read("Cargo.toml")
    );

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
