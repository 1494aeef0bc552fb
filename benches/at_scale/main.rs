//! Operators at scale, side by side on one control plane: Kubebuilder's deploy-image operator
//! and opgen's operand for the same image, each run alone on a fresh etcd, kube-apiserver and
//! kube-controller-manager while `n` custom resources are created at once.
//!
//! Run with `cargo bench --bench at_scale` (sizes 100, 1000 and 3000) or
//! `cargo bench --bench at_scale -- 100 500`. It needs Go (to build Kubebuilder and its
//! operator, and the control plane through scripts/control-plane.sh), `make` and `kubectl`;
//! it says which is missing. It prints the results and writes them, with a chart, into
//! docs/performance.md. The operators are built once into `target/at-scale` and reused.

#[path = "../../tests/common/mod.rs"]
mod common;
mod measure;
mod operators;
mod report;

use std::{path::Path, process::Command};

const DEFAULT_SIZES: [usize; 3] = [100, 1_000, 3_000];

fn main() {
    if let Err(err) = bench() {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

fn bench() -> anyhow::Result<()> {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .map(|arg| arg.parse())
        .collect::<Result<_, _>>()
        .map_err(|err| anyhow::anyhow!("the arguments are numbers of objects: {err}"))?;
    if sizes.is_empty() {
        sizes = DEFAULT_SIZES.to_vec();
    }
    for (tool, version, why) in [
        (
            "go",
            &["version"][..],
            "builds Kubebuilder, its operator and the control plane",
        ),
        (
            "make",
            &["--version"][..],
            "runs Kubebuilder's code generators",
        ),
        (
            "kubectl",
            &["version", "--client"][..],
            "creates the objects and reads their state",
        ),
    ] {
        if Command::new(tool).args(version).output().is_err() {
            anyhow::bail!("{tool} is needed (it {why}): install it, or put it on PATH");
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = root.join("target/at-scale");
    std::fs::create_dir_all(&work)?;
    let operators = operators::build_all(&work)?;

    let mut runs = Vec::new();
    for &size in &sizes {
        // One operator at a time, alternating, each on its own control plane.
        for operator in &operators {
            eprintln!("{} with {size} objects…", operator.label);
            let run = measure::run(operator, size, &work)?;
            eprintln!(
                "  statuses after {:?}, peak RSS {:.1} MiB, control plane {:.1} s CPU",
                run.statuses, run.rss_peak, run.control_plane_cpu.0
            );
            runs.push(run);
        }
    }
    let machine = machine();
    let tables = report::tables(&runs, &machine);
    println!("{tables}");
    report::write_docs(root, &tables, &report::chart(&runs))?;
    eprintln!("written into docs/performance.md and docs/performance-at-scale.svg");
    Ok(())
}

/// The machine, as the results should say: CPUs and memory.
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let kib: f64 = info
                .lines()
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some(kib / 1024.0 / 1024.0)
        })
        .unwrap_or(0.0);
    format!(
        "{cpus} CPUs, {memory:.0} GiB, Kubernetes {}, Kubebuilder {} (controller-runtime of its scaffold), {} reconciles at once for both",
        crate::common::control_plane::DEFAULT_KUBERNETES,
        operators::KUBEBUILDER_VERSION,
        operators::CONCURRENCY
    )
}
