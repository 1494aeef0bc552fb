//! `opgen dev` refuses, before it starts or writes anything, when the control plane's
//! binaries are missing or broken, or when it is not run in a project. The session itself is
//! proven on a real control plane by the `dev` end-to-end test.

mod common;

use std::path::Path;

use common::{Project, opgen, read_tree, write_script};

/// Binaries that answer `--version` as the real ones do.
fn fake_assets(dir: &Path) {
    for binary in ["etcd", "kube-apiserver", "kube-controller-manager"] {
        write_script(&dir.join(binary), "#!/bin/sh\necho fake v1.33.0\n");
    }
}

/// Runs `opgen dev <args>` in `dir` without KUBEBUILDER_ASSETS unless `assets` is given, and
/// expects exit code 1, a stderr with every needle, and the tree (build output too) unchanged.
fn dev_fails(dir: &Path, args: &[&str], assets: Option<&Path>, needles: &[&str]) {
    let before = read_tree(dir);
    let mut command = opgen(dir);
    command
        .arg("dev")
        .args(args)
        .env_remove("KUBEBUILDER_ASSETS");
    if let Some(assets) = assets {
        command.env("KUBEBUILDER_ASSETS", assets);
    }
    let assert = command.assert().code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "stderr lacks {needle:?}:\n{stderr}"
        );
    }
    assert!(read_tree(dir) == before, "opgen dev changed the tree");
    assert!(
        !dir.join("target/opgen-dev").exists(),
        "opgen dev made its directory"
    );
}

#[test]
fn without_binaries_it_says_how_to_get_them() {
    let project = Project::init("dev-cli", "");
    dev_fails(
        &project.root,
        &[],
        None,
        &[
            "error: no control plane binaries",
            "KUBEBUILDER_ASSETS",
            "--assets DIR",
            "setup-envtest use -p path",
        ],
    );
}

#[test]
fn a_missing_or_broken_binary_is_named() {
    let project = Project::init("dev-cli", "");
    let assets = tempfile::tempdir().unwrap();
    fake_assets(assets.path());
    std::fs::remove_file(assets.path().join("kube-apiserver")).unwrap();
    let shown = assets.path().display().to_string();
    dev_fails(
        &project.root,
        &["--assets", &shown],
        None,
        &[
            &format!("kube-apiserver in {shown} is missing"),
            "setup-envtest",
        ],
    );

    fake_assets(assets.path());
    write_script(
        &assets.path().join("kube-controller-manager"),
        "#!/bin/sh\necho 'exec format error' >&2\nexit 126\n",
    );
    dev_fails(
        &project.root,
        &[],
        Some(assets.path()),
        &[
            &format!("kube-controller-manager in {shown} fails `--version`"),
            "exec format error",
        ],
    );
}

/// `--assets` (or KUBEBUILDER_ASSETS) naming nothing, or a file, is said so, with how to get
/// the binaries.
#[test]
fn an_assets_directory_that_does_not_exist_or_is_a_file_is_named() {
    let project = Project::init("dev-cli", "");
    dev_fails(
        &project.root,
        &["--assets", "/nonexistent"],
        None,
        &[
            "error: --assets names /nonexistent, which does not exist",
            "setup-envtest use -p path",
        ],
    );
    let file = project.root.join("Cargo.toml");
    dev_fails(
        &project.root,
        &[],
        Some(&file),
        &[
            &format!(
                "KUBEBUILDER_ASSETS names {}, which is a file, not a directory",
                file.display()
            ),
            "setup-envtest use -p path",
        ],
    );
}

/// setup-envtest ships no kube-controller-manager: the session goes on without it, and says
/// what that costs. (Here the fake etcd then exits, which ends the session with its log.)
#[test]
fn without_a_controller_manager_it_warns_and_goes_on() {
    let project = Project::init("dev-cli", "");
    let assets = tempfile::tempdir().unwrap();
    fake_assets(assets.path());
    std::fs::remove_file(assets.path().join("kube-controller-manager")).unwrap();
    let assert = opgen(&project.root)
        .arg("dev")
        .env("KUBEBUILDER_ASSETS", assets.path())
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("holds no kube-controller-manager: the session runs without it"),
        "{stderr}"
    );
    assert!(
        stderr.contains("etcd exited (exit status: 0) before it could serve clients"),
        "{stderr}"
    );
    assert!(
        project
            .root
            .join("target/opgen-dev/cluster/etcd.log")
            .exists()
    );
}

#[test]
fn the_flag_is_used_over_the_environment() {
    let project = Project::init("dev-cli", "");
    let good = tempfile::tempdir().unwrap();
    fake_assets(good.path());
    let empty = tempfile::tempdir().unwrap();
    let shown = empty.path().display().to_string();
    dev_fails(
        &project.root,
        &["--assets", &shown],
        Some(good.path()),
        &[&format!("etcd in {shown} is missing")],
    );
}

#[test]
fn outside_a_project_it_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let assets = tempfile::tempdir().unwrap();
    fake_assets(assets.path());
    dev_fails(dir.path(), &[], Some(assets.path()), &["PROJECT"]);
}
