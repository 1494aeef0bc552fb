//! The runtime crate, `opgen-runtime`, checked as a library of its own: its tests pass, it is
//! clippy-clean with its tests and features, and documented without broken links. (opgen's
//! `cargo build` leaves it out, since it builds only with a Kubernetes version named, so
//! README's `cargo test --locked` runs it through these tests.)
//!
//! These build the crate into `target/runtime-crate`, with a Kubernetes version named through
//! `K8S_OPENAPI_ENABLED_VERSION` (the crate itself leaves the choice to the project, so a
//! build of it alone needs one), always the same, so that the directory is built once.
//!
//! The crate's public API is checked against the previous release's with cargo-semver-checks
//! (`scripts/semver-checks.sh` builds it once from crates.io; `SEMVER_CHECKS` names another
//! binary): a change that would break a project must come with a new minor version (0.x's
//! major), as 0.3.0 is.

// The update tests use the other releases.
#[allow(dead_code)]
#[path = "common/releases.rs"]
mod releases;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// The crate's own target directory.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("runtime-crate")
}

/// `cargo <args>` in the workspace, in the crate's own target directory, with `env` besides.
fn cargo_with(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    Command::new(env!("CARGO"))
        .args(args)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37")
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env("RUSTDOCFLAGS", "-D warnings")
        .env("CARGO_TERM_COLOR", "never")
        .envs(env.iter().copied())
        .output()
        .expect("cargo runs")
}

/// Fails the test with the output of `what` unless it succeeded.
fn succeeded(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `cargo <args>` on the workspace, in the crate's own target directory, and fails the
/// test with its output unless it succeeds.
fn cargo(args: &[&str]) {
    succeeded(&format!("cargo {}", args.join(" ")), &cargo_with(args, &[]));
}

#[test]
fn the_runtime_crate_is_linted_and_documented() {
    cargo(&[
        "clippy",
        "--locked",
        "-p",
        "opgen-runtime",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]);
    cargo(&[
        "doc",
        "--locked",
        "-p",
        "opgen-runtime",
        "--no-deps",
        "--all-features",
    ]);
}

/// The crate's own unit tests and doc examples, with both harnesses (`testing`, `envtest`).
/// Its `cargo publish --dry-run` is tests/release.rs's, with the workspace's other crates.
#[test]
fn the_runtime_crate_passes_its_own_tests() {
    cargo(&["test", "--locked", "-p", "opgen-runtime", "--all-features"]);
}

/// The crate's tests that need a real etcd and kube-apiserver, which its plain `cargo test`
/// ignores: the manager's leader handover with and without warm standby, a reconcile
/// cancelled at its timeout and retried, and an operand's projected workload cache (someone
/// else's edit repaired, a restart over up-to-date workloads writing nothing). They print what
/// they measure.
#[test]
fn the_runtime_manager_and_operand_cache_work_on_a_control_plane() {
    let assets = control_plane_assets();
    let output = cargo_with(
        &[
            "test",
            "--locked",
            "-p",
            "opgen-runtime",
            "--all-features",
            "--lib",
            "on_control_plane",
            "--",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ],
        &[("KUBEBUILDER_ASSETS", assets.as_os_str())],
    );
    succeeded("the runtime's control-plane tests", &output);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // Both ran against the control plane, rather than skipping for want of one.
    assert!(text.contains("test result: ok. 3 passed"), "{text}");
    assert!(!text.contains("skipped"), "{text}");
    for line in text.lines().filter(|line| line.contains("->")) {
        eprintln!("[runtime on a control plane] {line}");
    }
}

/// The control plane of the release opgen's tests run on by default: `KUBEBUILDER_ASSETS`
/// (`.ci/run` sets it), else what `scripts/control-plane.sh` builds once and then finds.
fn control_plane_assets() -> PathBuf {
    if let Some(dir) = std::env::var_os("KUBEBUILDER_ASSETS").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/control-plane.sh");
    let output = Command::new("bash")
        .arg(&script)
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("bash runs");
    succeeded("scripts/control-plane.sh", &output);
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// Where the semver check keeps its copies of the crate and their rustdoc JSON.
fn semver_dir() -> PathBuf {
    target_dir().join("semver")
}

/// The rustdoc JSON (what cargo-semver-checks compares) of the crate whose manifest is
/// `manifest` (the workspace's own crate when `None`), with every feature, copied to `name`.
///
/// The JSON output is unstable, so rustdoc runs with `RUSTC_BOOTSTRAP=1`, as
/// cargo-semver-checks itself does on a stable toolchain, but through a wrapper of rustdoc
/// alone: set for all of cargo, it would change how some dependencies' build scripts see the
/// compiler, and rebuild them apart from the other tests' builds.
fn rustdoc_json(manifest: Option<&Path>, name: &str) -> PathBuf {
    let dir = semver_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let wrapper = dir.join("rustdoc-json.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec rustdoc \"$@\"\n",
    )
    .unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&wrapper, executable).unwrap();
    let mut args = vec!["rustdoc", "--all-features"];
    let manifest_arg;
    match manifest {
        Some(manifest) => {
            manifest_arg = manifest.to_string_lossy().into_owned();
            args.extend(["--manifest-path", &manifest_arg]);
        }
        None => args.extend(["--locked", "-p", "opgen-runtime"]),
    }
    args.extend(["--", "-Z", "unstable-options", "--output-format", "json"]);
    let output = cargo_with(&args, &[("RUSTDOC", wrapper.as_os_str())]);
    succeeded(&format!("rustdoc JSON of {name}"), &output);
    let json = dir.join(format!("{name}.json"));
    std::fs::copy(target_dir().join("doc/opgen_runtime.json"), &json).unwrap();
    json
}

/// A copy of the crate's sources as a crate of its own in `dir`: `runtime/` as `tree` holds
/// it, with `lock` as its Cargo.lock, its manifest edited by `manifest`.
fn scratch_crate(dir: &Path, lock: &str, manifest: impl FnOnce(String) -> String) -> PathBuf {
    let crate_dir = dir.join("runtime");
    let path = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    // A workspace of its own: the copy lies inside opgen's, which does not list it.
    std::fs::write(&path, format!("{}\n[workspace]\n", manifest(text))).unwrap();
    std::fs::write(crate_dir.join("Cargo.lock"), lock).unwrap();
    path
}

/// The copy of this checkout's crate in `dir`.
fn copy_of_this_crate(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = Command::new("cp")
        .arg("-r")
        .arg(root.join("runtime"))
        .arg(dir)
        .status()
        .unwrap();
    assert!(
        copy.success(),
        "cannot copy runtime/ into {}",
        dir.display()
    );
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    scratch_crate(dir, &lock, |text| text)
}

/// cargo-semver-checks' verdict on `current` against `baseline` (rustdoc JSON).
fn semver_checks(current: &Path, baseline: &Path) -> Output {
    let tool = match std::env::var_os("SEMVER_CHECKS").filter(|p| !p.is_empty()) {
        Some(tool) => PathBuf::from(tool),
        None => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/semver-checks.sh");
            let output = Command::new("bash").arg(&script).output().unwrap();
            succeeded(
                "scripts/semver-checks.sh (it builds cargo-semver-checks from crates.io once, then finds its cache)",
                &output,
            );
            PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
        }
    };
    Command::new(tool)
        .arg("semver-checks")
        .arg("--current-rustdoc")
        .arg(current)
        .arg("--baseline-rustdoc")
        .arg(baseline)
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .expect("cargo-semver-checks runs")
}

/// The crate's API against 0.2.0's: this release breaks it (see CHANGELOG.md) and so is 0.3.0.
/// Then a scratch copy proves the check: one public signature changed without a new version
/// fails it, and passes it once the version moves.
#[test]
fn the_runtime_api_breaks_only_with_a_new_version() {
    let previous = releases::V0_2_0;
    if !previous.in_history("the runtime's API against its previous release") {
        return;
    }
    let current = rustdoc_json(None, "current");

    let baseline_dir = semver_dir().join("baseline");
    let _ = std::fs::remove_dir_all(&baseline_dir);
    previous.unpack(&["runtime"], &baseline_dir);
    let manifest = scratch_crate(&baseline_dir, &previous.read("Cargo.lock"), |text| text);
    let baseline = rustdoc_json(Some(&manifest), "baseline");
    let verdict = semver_checks(&current, &baseline);
    succeeded("cargo-semver-checks against opgen-runtime 0.2.0", &verdict);

    // `run` takes one more argument, and the version stays.
    let broken_dir = semver_dir().join("broken");
    let manifest = copy_of_this_crate(&broken_dir);
    let controller = broken_dir.join("runtime/src/controller/mod.rs");
    let source = std::fs::read_to_string(&controller).unwrap();
    let signature = "pub async fn run<R: Reconcile>(ctx: Context, reconciler: R)";
    assert!(source.contains(signature), "{}", controller.display());
    let broken_source = source.replace(
        signature,
        "pub async fn run<R: Reconcile>(ctx: Context, reconciler: R, _name: &str)",
    );
    std::fs::write(&controller, broken_source).unwrap();
    let broken = rustdoc_json(Some(&manifest), "broken");
    let verdict = semver_checks(&broken, &current);
    let report = String::from_utf8_lossy(&verdict.stdout).into_owned()
        + &String::from_utf8_lossy(&verdict.stderr);
    assert!(!verdict.status.success(), "the break passed:\n{report}");
    assert!(
        report.contains("function_parameter_count_changed")
            && report.contains("opgen_runtime::controller::run"),
        "{report}"
    );

    // The same break with the next minor version is allowed.
    let text = std::fs::read_to_string(&manifest).unwrap();
    let version = format!("version = \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&version), "{text}");
    std::fs::write(
        &manifest,
        text.replacen(&version, "version = \"0.99.0\"", 1),
    )
    .unwrap();
    let bumped = rustdoc_json(Some(&manifest), "bumped");
    succeeded(
        "cargo-semver-checks of a break with a new version",
        &semver_checks(&bumped, &current),
    );
}
