//! How fast `opgen init` is: rendering in process, and the whole command against
//! `cargo new` on the same machine (the target is to be faster than `cargo new`).
//!
//! Run with `cargo bench --bench init`. Prints the mean and the fastest run of each.

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use opgen::{
    model::{KubernetesVersion, License},
    project::{Project, Scope},
    scaffold,
};

const RUNS: u32 = 30;

fn main() {
    let project = Project::new(
        "demo-operator".parse().unwrap(),
        "example.com".parse().unwrap(),
        Scope::Cluster,
        KubernetesVersion::default(),
        License::Apache2,
        None,
    );
    // The first render parses the embedded templates; report it apart from the rest.
    let first = Instant::now();
    let files = scaffold::init_files(&project).unwrap().len();
    println!(
        "first render (parses the templates): {:?}, {files} files",
        first.elapsed()
    );
    report(
        "render the init files in process",
        time(|| {
            scaffold::init_files(&project).unwrap();
        }),
    );

    let opgen = env!("CARGO_BIN_EXE_opgen");
    let work = tempfile::tempdir().unwrap();
    let mut n = 0;
    report(
        "opgen init (whole process)",
        time(|| {
            n += 1;
            run(
                work.path(),
                opgen,
                &[
                    "init",
                    &format!("op{n}"),
                    "--domain",
                    "example.com",
                    "--quiet",
                ],
            );
        }),
    );
    report(
        "cargo new (whole process)",
        time(|| {
            n += 1;
            run(
                work.path(),
                "cargo",
                &["new", "--quiet", "--vcs", "none", &format!("crate{n}")],
            );
        }),
    );
}

fn run(dir: &Path, program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "{program} {args:?} failed");
}

fn time(mut f: impl FnMut()) -> Vec<Duration> {
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect()
}

fn report(what: &str, runs: Vec<Duration>) {
    let mean = runs.iter().sum::<Duration>() / runs.len() as u32;
    let fastest = runs.iter().min().unwrap();
    println!(
        "{what}: mean {mean:?}, fastest {fastest:?} over {} runs",
        runs.len()
    );
}
