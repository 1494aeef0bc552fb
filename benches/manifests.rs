//! How fast a warm `opgen generate manifests` is (nothing changed since the last run): the
//! run CI and `make test` pay on every call. The target is under 3 seconds on 2 cores.
//!
//! Run with `cargo bench --bench manifests`. It builds the generated project's api crate once
//! (into `target/e2e`, shared with the end-to-end tests), then times warm runs.

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

const RUNS: u32 = 10;

fn main() {
    let opgen = env!("CARGO_BIN_EXE_opgen");
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/e2e");
    let work = tempfile::tempdir().unwrap();
    run(
        work.path(),
        opgen,
        &["init", "bench", "--domain", "example.com", "--quiet"],
        &target,
    );
    let root = work.path().join("bench");
    for (group, version, kind) in [
        ("db", "v1alpha1", "MySQLCluster"),
        ("db", "v1", "MySQLCluster"),
        ("ops", "v1", "BackupPolicy"),
    ] {
        run(
            &root,
            opgen,
            &[
                "create",
                "api",
                "--group",
                group,
                "--version",
                version,
                "--kind",
                kind,
                "--quiet",
            ],
            &target,
        );
    }

    let cold = Instant::now();
    run(&root, opgen, &["generate", "manifests", "--quiet"], &target);
    println!(
        "first generate manifests (builds crdgen): {:?}",
        cold.elapsed()
    );

    let runs: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run(&root, opgen, &["generate", "manifests", "--quiet"], &target);
            start.elapsed()
        })
        .collect();
    let mean = runs.iter().sum::<Duration>() / RUNS;
    let fastest = runs.iter().min().unwrap();
    println!("warm generate manifests: mean {mean:?}, fastest {fastest:?} over {RUNS} runs");
}

fn run(dir: &Path, program: &str, args: &[&str], target: &Path) {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .status()
        .unwrap();
    assert!(status.success(), "{program} {args:?} failed");
}
