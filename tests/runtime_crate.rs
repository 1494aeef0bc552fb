//! The runtime crate, `opgen-runtime`, checked as a library of its own: its tests pass, it is
//! clippy-clean with its tests and features, and documented without broken links. (opgen's
//! `cargo build` leaves it out, since it builds only with a Kubernetes version named, so
//! README's `cargo test --locked` runs it through these tests.)
//!
//! These build the crate into `target/runtime-crate`, with a Kubernetes version named through
//! `K8S_OPENAPI_ENABLED_VERSION` (the crate itself leaves the choice to the project, so a
//! build of it alone needs one), always the same, so that the directory is built once.

use std::{path::Path, process::Command};

/// Runs `cargo <args>` on the workspace, in the crate's own target directory, and fails the
/// test with its output unless it succeeds.
fn cargo(args: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("runtime-crate");
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", &target)
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37")
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env("RUSTDOCFLAGS", "-D warnings")
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {} failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
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
