//! Operators at scale, side by side on one control plane: Kubebuilder's deploy-image operator
//! and opgen's operand for the same image, each run alone on a fresh etcd, kube-apiserver and
//! kube-controller-manager while `n` custom resources are created at once.
//!
//! Run with `cargo bench --bench at_scale` (sizes 100, 1000, 3000 and 10000) or
//! `cargo bench --bench at_scale -- 100 500`. It needs Go (to build Kubebuilder and its
//! operator, and the control plane through scripts/control-plane.sh), `make` and `kubectl`;
//! it says which is missing. It prints the results and writes them, with a chart, into
//! docs/performance.md. The operators are built once into `target/at-scale` and reused.
//!
//! `cargo bench --bench at_scale -- --concurrency 1,2,4,8,16 1000` runs opgen's operand alone
//! at each `--max-concurrent-reconciles` instead: what its default is chosen from.
//!
//! `--service-cidr CIDR` gives the control planes another Service range than the /12 of
//! kubeadm's default; such a run prints its tables without writing them into the docs.

#[path = "../../tests/common/mod.rs"]
mod common;
mod measure;
mod operators;
mod report;

use std::{path::Path, process::Command};

const DEFAULT_SIZES: [usize; 4] = [100, 1_000, 3_000, 10_000];

fn main() {
    if let Err(err) = bench() {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

/// What to run: the sizes, and the concurrencies of a sweep of opgen's operand (none: both
/// operators side by side).
struct Arguments {
    sizes: Vec<usize>,
    concurrencies: Vec<u32>,
    /// The control planes' Service range, when not [`measure::SERVICE_CIDR`].
    service_cidr: Option<String>,
}

fn arguments() -> anyhow::Result<Arguments> {
    let numbers =
        "the arguments are numbers of objects, `--concurrency N,M,…` and `--service-cidr CIDR`";
    let mut arguments = Arguments {
        sizes: Vec::new(),
        concurrencies: Vec::new(),
        service_cidr: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--concurrency" {
            let list = args.next().ok_or_else(|| anyhow::anyhow!("{numbers}"))?;
            for value in list.split(',') {
                arguments.concurrencies.push(
                    value
                        .parse()
                        .map_err(|err| anyhow::anyhow!("{numbers}: {value}: {err}"))?,
                );
            }
        } else if arg == "--service-cidr" {
            let cidr = args.next().ok_or_else(|| anyhow::anyhow!("{numbers}"))?;
            arguments.service_cidr = Some(cidr);
        } else if !arg.starts_with("--") {
            // cargo's own `--bench` is left aside.
            arguments.sizes.push(
                arg.parse()
                    .map_err(|err| anyhow::anyhow!("{numbers}: {arg}: {err}"))?,
            );
        }
    }
    if arguments.sizes.is_empty() {
        arguments.sizes = DEFAULT_SIZES.to_vec();
    }
    Ok(arguments)
}

fn bench() -> anyhow::Result<()> {
    let Arguments {
        sizes,
        concurrencies,
        service_cidr,
    } = arguments()?;
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
    let mut operators = operators::build_all(&work)?;
    let section = if concurrencies.is_empty() {
        &report::COMPARISON
    } else {
        // opgen's operand with its Service, the heavier of the two on the API server.
        let opgen = operators.swap_remove(1);
        operators = concurrencies
            .iter()
            .map(|&concurrency| {
                let mut operator = opgen.clone();
                operator.label = format!("opgen, {concurrency} at once");
                operator.concurrency = concurrency;
                operator
            })
            .collect();
        &report::CONCURRENCY
    };

    let mut runs = Vec::new();
    for &size in &sizes {
        // One operator at a time, alternating, each on its own control plane.
        for operator in &operators {
            eprintln!("{} with {size} objects…", operator.label);
            let cidr = service_cidr.as_deref().unwrap_or(measure::SERVICE_CIDR);
            let run = measure::run(operator, size, cidr, &work)?;
            eprintln!(
                "  statuses after {:?}, peak RSS {:.1} MiB, control plane {:.1} s CPU",
                run.statuses, run.rss_peak, run.control_plane_cpu.0
            );
            runs.push(run);
        }
    }
    let machine = if concurrencies.is_empty() {
        format!(
            "{}, Kubebuilder {} (controller-runtime of its scaffold), {} reconciles at once for both",
            machine(),
            operators::KUBEBUILDER_VERSION,
            operators::CONCURRENCY
        )
    } else {
        machine()
    };
    let machine = match &service_cidr {
        Some(cidr) => format!("{machine}, Service range {cidr}"),
        None => machine,
    };
    let tables = report::tables(&runs, &machine);
    println!("{tables}");
    if service_cidr.is_none() {
        report::write_docs(root, section, &tables, &report::chart(&runs))?;
        eprintln!("written into docs/performance.md");
    }
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
        "{cpus} CPUs, {memory:.0} GiB, Kubernetes {}",
        crate::common::control_plane::DEFAULT_KUBERNETES,
    )
}
