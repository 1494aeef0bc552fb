//! The operators compared: Kubebuilder's deploy-image Memcached operator and opgen's operand
//! for the same image and port (and without the port, so the Service's cost shows), each
//! scaffolded by its tool and built for release. Built once into the work directory and reused
//! by later runs; delete the directory (or a project in it) to build again.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context as _, bail};

/// The Kubebuilder release compared, built from the Go module proxy.
pub const KUBEBUILDER_VERSION: &str = "4.16.0";
/// The operand both operators run.
pub const IMAGE: &str = "memcached:1.6.26-alpine";
pub const PORT: u16 = 11211;
/// Reconciles each operator runs at once: opgen's default, set on Kubebuilder's manager too
/// (whose controllers run one at a time unless told otherwise), so that neither is favoured.
pub const CONCURRENCY: u32 = 4;

/// One operator, ready to run.
#[derive(Clone)]
pub struct Operator {
    /// Its name in the results.
    pub label: String,
    /// Reconciles at once: a flag of opgen's manager; compiled into Kubebuilder's.
    pub concurrency: u32,
    pub binary: PathBuf,
    /// Its CRDs (`config/crd/bases`).
    pub crds: PathBuf,
    /// Its sample object, the template of every object the benchmark creates.
    pub sample: PathBuf,
    /// What a line of its log that reports a failed reconcile contains.
    pub error_line: &'static str,
    /// How the name of its counter of reconciles ends, in its `/metrics`.
    pub reconcile_counter: &'static str,
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Kubebuilder,
    Opgen,
}

impl Operator {
    /// The manager's command line: no leader election, probes on `health_port`, metrics over
    /// plain HTTP on `metrics_port` (the benchmark counts the reconciles of a restart there).
    pub fn command(&self, health_port: u16, metrics_port: u16) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .arg(format!(
                "--health-probe-bind-address=127.0.0.1:{health_port}"
            ))
            .arg(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"))
            .arg("--metrics-secure=false");
        match self.kind {
            Kind::Kubebuilder => {
                command
                    .arg("--leader-elect=false")
                    // Where its Deployment (config/manager/manager.yaml) names the image.
                    .env("MEMCACHED_IMAGE", IMAGE);
            }
            Kind::Opgen => {
                command
                    .arg(format!("--max-concurrent-reconciles={}", self.concurrency))
                    .env("RUST_LOG", "info");
            }
        }
        command
    }
}

/// Builds (or finds) the three operators under `work`.
pub fn build_all(work: &Path) -> anyhow::Result<Vec<Operator>> {
    Ok(vec![
        kubebuilder(&work.join("kubebuilder"))?,
        opgen(work, "opgen", "memcached-op", true)?,
        opgen(work, "opgen (no port)", "memcached-op-noport", false)?,
    ])
}

fn kubebuilder(dir: &Path) -> anyhow::Result<Operator> {
    let project = dir.join("memcached-operator");
    let binary = project.join("bin/manager");
    if !binary.exists() {
        let kubebuilder = kubebuilder_binary()?;
        let _ = std::fs::remove_dir_all(&project);
        std::fs::create_dir_all(&project)?;
        eprintln!(
            "scaffolding Kubebuilder's deploy-image operator in {}",
            project.display()
        );
        run(Command::new(&kubebuilder).current_dir(&project).args([
            "init",
            "--domain=example.com",
            "--repo=example.com/memcached-operator",
        ]))?;
        run(Command::new(&kubebuilder).current_dir(&project).args([
            "create",
            "api",
            "--group=cache",
            "--version=v1alpha1",
            "--kind=Memcached",
            &format!("--image={IMAGE}"),
            "--image-container-command=memcached,--memory-limit=64,-o,modern,-v",
            &format!("--image-container-port={PORT}"),
            "--run-as-user=1001",
            "--plugins=deploy-image/v1-alpha",
            "--make=false",
        ]))?;
        set_concurrency(&project.join("cmd/main.go"))?;
        run(Command::new("make")
            .current_dir(&project)
            .args(["generate", "manifests"]))?;
        eprintln!("building it (go build)");
        run(Command::new("go").current_dir(&project).args([
            "build",
            "-trimpath",
            "-o",
            "bin/manager",
            "./cmd",
        ]))?;
    }
    Ok(Operator {
        label: "Kubebuilder".to_owned(),
        concurrency: CONCURRENCY,
        binary,
        crds: project.join("config/crd/bases"),
        sample: project.join("config/samples/cache_v1alpha1_memcached.yaml"),
        error_line: "Reconciler error",
        reconcile_counter: "controller_runtime_reconcile_total",
        kind: Kind::Kubebuilder,
    })
}

/// Gives every controller of the manager [`CONCURRENCY`] workers, with controller-runtime's
/// manager-wide default (`ctrl.Options.Controller`): the one edit made to the scaffold.
fn set_concurrency(main: &Path) -> anyhow::Result<()> {
    let source = std::fs::read_to_string(main)?;
    let options = "ctrl.Options{\n";
    let import = "ctrl \"sigs.k8s.io/controller-runtime\"\n";
    if !source.contains(options) || !source.contains(import) {
        bail!(
            "{} changed shape: the concurrency edit no longer applies",
            main.display()
        );
    }
    let edited = source
        .replacen(
            options,
            &format!("{options}\t\tController: config.Controller{{MaxConcurrentReconciles: {CONCURRENCY}}},\n"),
            1,
        )
        .replacen(
            import,
            &format!("{import}\t\"sigs.k8s.io/controller-runtime/pkg/config\"\n"),
            1,
        );
    std::fs::write(main, edited)?;
    Ok(())
}

/// Kubebuilder's CLI, built with `go install` into the tools' store once.
fn kubebuilder_binary() -> anyhow::Result<PathBuf> {
    let dir = crate::common::go_tool::tools_store()
        .join("kubebuilder")
        .join(KUBEBUILDER_VERSION);
    let binary = dir.join("kubebuilder");
    if !binary.exists() {
        eprintln!(
            "building Kubebuilder {KUBEBUILDER_VERSION} (go install, through the Go module proxy)"
        );
        run(Command::new("go")
            .env("GOBIN", &dir)
            .arg("install")
            .arg(format!("sigs.k8s.io/kubebuilder/v4@v{KUBEBUILDER_VERSION}")))?;
    }
    Ok(binary)
}

fn opgen(work: &Path, label: &'static str, name: &str, port: bool) -> anyhow::Result<Operator> {
    let dir = work.join("opgen");
    let project = dir.join(name);
    // One target directory for both projects: their dependencies are built once.
    let target = dir.join("target");
    let binary = target.join("release").join(name);
    if !binary.exists() {
        let opgen = env!("CARGO_BIN_EXE_opgen");
        let _ = std::fs::remove_dir_all(&project);
        std::fs::create_dir_all(&dir)?;
        eprintln!("scaffolding opgen's operand {name}");
        run(Command::new(opgen).current_dir(&dir).args([
            "--quiet",
            "init",
            name,
            "--domain",
            "example.com",
        ]))?;
        let mut create = Command::new(opgen);
        create.current_dir(&project).args([
            "--quiet",
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--image",
            IMAGE,
        ]);
        if port {
            create.args(["--port", &PORT.to_string()]);
        }
        run(&mut create)?;
        run(Command::new(opgen)
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", &target)
            .args(["--quiet", "generate", "manifests"]))?;
        eprintln!("building it (cargo build --release)");
        run(Command::new("cargo")
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", &target)
            .args(["build", "--release", "--bin", name]))?;
    }
    Ok(Operator {
        label: label.to_owned(),
        concurrency: CONCURRENCY,
        binary,
        crds: project.join("config/crd/bases"),
        sample: project.join("config/samples/cache_v1alpha1_memcached.yaml"),
        error_line: "reconcile failed",
        reconcile_counter: "_reconciliations_total",
        kind: Kind::Opgen,
    })
}

/// Runs a command, failing with its output unless it succeeds.
pub fn run(command: &mut Command) -> anyhow::Result<String> {
    let output = command
        .output()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !output.status.success() {
        bail!(
            "{command:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
