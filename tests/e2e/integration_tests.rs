//! The generated project's own integration tests (`tests/integration/`, `make
//! test-integration`): skipped, and saying so, without `KUBEBUILDER_ASSETS`; passing on the
//! control plane's binaries with them.

use std::{
    path::Path,
    process::{Command, Output},
    time::Instant,
};

use crate::common::{Project, control_plane::assets_for, generated_build_env};

/// What a skipped test prints (the generated harness's words).
const SKIPPED: &str = "skipped: KUBEBUILDER_ASSETS is not set";

/// Runs the integration tests of `project` twice: without the binaries, then with those of
/// Kubernetes `kubernetes` (`1.37`), through `make test-integration`. `kinds` are the test
/// modules of its kinds (`db::my_sql_cluster`), each of which must have run and passed.
pub fn run(project: &Project, name: &str, kubernetes: &str, kinds: &[&str]) {
    let root = &project.root;
    let output = integration_tests(root, name, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let skipped = stderr.matches(SKIPPED).count();
    // Every test of a kind that needs a control plane (the harness's own tests are
    // opgen-runtime's, which the project does not run).
    assert!(skipped >= kinds.len(), "{skipped} skip messages:\n{stderr}");
    assert!(stderr.contains("setup-envtest use"), "{stderr}");
    assert!(stderr.contains("scripts/control-plane.sh"), "{stderr}");

    let assets = assets_for(kubernetes).unwrap_or_else(|err| panic!("{err:#}"));
    let output = integration_tests(root, name, Some(&assets));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(SKIPPED), "{stderr}");
    assert!(stdout.contains(" 0 failed; 0 ignored;"), "{stdout}");
    for kind in kinds {
        let line = format!("test {kind}::");
        let passed = stdout
            .lines()
            .any(|l| l.starts_with(&line) && l.ends_with(" ... ok"));
        assert!(passed, "no passing integration test of {kind}:\n{stdout}");
    }
}

/// `make test-integration` in `root`, with `KUBEBUILDER_ASSETS` set to `assets` or unset;
/// panics with its output unless it succeeds.
fn integration_tests(root: &Path, name: &str, assets: Option<&Path>) -> Output {
    let started = Instant::now();
    let mut command = Command::new("make");
    command
        .arg("test-integration")
        .current_dir(root)
        .envs(generated_build_env());
    match assets {
        Some(assets) => command.env("KUBEBUILDER_ASSETS", assets),
        None => command.env_remove("KUBEBUILDER_ASSETS"),
    };
    let output = command.output().expect("make runs");
    let with = if assets.is_some() { "with" } else { "without" };
    eprintln!(
        "[e2e {name}] make test-integration {with} KUBEBUILDER_ASSETS ({:.0?})",
        started.elapsed()
    );
    assert!(
        output.status.success(),
        "make test-integration {with} KUBEBUILDER_ASSETS failed:\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
