//! `opgen dev`: the project's operator on a development control plane of this machine,
//! running as its own ServiceAccount, rebuilt and restarted when a source changes.
//!
//! One thread does everything, polling: the processes it starts die with that thread
//! (`PR_SET_PDEATHSIG`), so a killed opgen leaves nothing behind.

pub mod assets;
mod build;
mod child;
mod control_plane;
mod credentials;
mod http;
mod install;
pub mod kubectl;
mod manager;
mod pid_file;
pub mod refusals;
mod session;
mod tail;
mod watcher;

use std::{
    path::{Path, PathBuf},
    process::Command,
    thread,
    time::{Duration, Instant},
};

use anyhow::{Context as _, bail};

use crate::{
    interrupt::{Interrupt, own_process_group},
    project::Project,
    shell::Shell,
};
use assets::Assets;
use control_plane::{Audit, ControlPlane};
use manager::Launch;
use session::Session;
use watcher::Watcher;

/// How often the session looks at its processes, logs and sources.
const TICK: Duration = Duration::from_millis(200);
/// How long the sources must stay unchanged before a rebuild: an editor's save of several
/// files, or a `git checkout`, is then one rebuild.
const SETTLE: Duration = Duration::from_millis(300);

/// What the user asked of the session.
pub struct Options {
    pub assets: Assets,
    /// Apply `config/samples` once the manager runs.
    pub samples: bool,
}

/// Where the session keeps its files: `target/opgen-dev/` of the project.
pub fn session_dir(root: &Path) -> PathBuf {
    root.join("target/opgen-dev")
}

/// The names the project's install gives the manager's identity.
pub struct Identity {
    namespace: String,
    service_account: String,
}

impl Identity {
    fn of(project: &Project) -> Self {
        Self {
            namespace: project.project_name.system_namespace(),
            service_account: project.project_name.deployed_name("controller-manager"),
        }
    }

    pub fn user(&self) -> String {
        format!(
            "system:serviceaccount:{}:{}",
            self.namespace, self.service_account
        )
    }
}

/// Runs the session until SIGINT or SIGTERM; everything it started is stopped on return.
pub fn run(
    options: &Options,
    root: &Path,
    project: &Project,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    let dir = session_dir(root);
    let _claim = pid_file::PidFile::claim(&dir)?;
    let cluster_dir = dir.join("cluster");
    if cluster_dir.exists() {
        std::fs::remove_dir_all(&cluster_dir)
            .with_context(|| format!("cannot clear {}", cluster_dir.display()))?;
    }
    std::fs::create_dir_all(&cluster_dir)
        .with_context(|| format!("cannot create {}", cluster_dir.display()))?;
    let identity = Identity::of(project);
    let audit = Audit {
        policy: cluster_dir.join("audit-policy.yaml"),
        log: cluster_dir.join("audit.log"),
    };
    refusals::write_audit_policy(&audit.policy, &identity.user())?;

    let started = Instant::now();
    let processes = if options.assets.has_controller_manager() {
        "etcd, kube-apiserver and kube-controller-manager"
    } else {
        "etcd and kube-apiserver"
    };
    shell.status("Starting", processes);
    let mut cluster = ControlPlane::start(&options.assets, &cluster_dir, &audit, interrupt)?;
    let admin = cluster.admin();
    shell.status(
        "Started",
        &format!(
            "control plane in {:.1}s; admin kubeconfig: {}",
            started.elapsed().as_secs_f64(),
            cluster.admin_kubeconfig().display()
        ),
    );

    generate_manifests(root, shell, interrupt)?;
    let [webhook_port] = control_plane::free_ports();
    install::install(&admin, root, webhook_port)?;
    let installed_config = install::config_fingerprint(root)?;
    shell.status(
        "Installed",
        &format!(
            "config/default (CRDs, RBAC, namespace {}, ServiceAccount {})",
            identity.namespace, identity.service_account
        ),
    );
    let webhooks = install::has_webhooks(root);
    if webhooks {
        shell.status(
            "Installed",
            &format!("config/dev: the webhooks call https://127.0.0.1:{webhook_port}/"),
        );
    }
    let token = install::token(&admin, &identity.service_account, &identity.namespace)?;
    let launch = Launch {
        kubeconfig: cluster_dir.join("manager.kubeconfig"),
        binary: dir.join("manager"),
        log: dir.join("manager.log"),
        namespace: identity.namespace.clone(),
        watch_namespace: project.namespaced().then(|| identity.namespace.clone()),
        webhook_port,
        webhook_cert_secret: webhooks.then(|| project.project_name.deployed_name("webhook-cert")),
    };
    cluster.kubeconfig_with_token(&launch.kubeconfig, &token)?;
    std::fs::write(&launch.log, "")?;

    let mut session = Session::new(
        root,
        project,
        options,
        identity,
        launch,
        &audit.log,
        installed_config,
    );
    session.start_build(shell)?;
    let mut watcher = Watcher::new(root);
    shell.status(
        "Watching",
        "src/, api/, Cargo.toml and PROJECT; Ctrl-C stops everything",
    );
    let mut pending: Option<Instant> = None;
    let result = loop {
        if interrupt.check().is_err() {
            break Ok(());
        }
        if let Err(err) = cluster.check_running() {
            break Err(err);
        }
        let changes = watcher.changes();
        if !changes.is_empty() {
            for change in &changes {
                shell.status("Changed", &change.display().to_string());
            }
            pending = Some(Instant::now());
        }
        if pending.is_some_and(|since| since.elapsed() >= SETTLE) {
            pending = None;
            if let Err(err) = session.sources_changed(&admin, shell, interrupt) {
                break Err(err);
            }
        }
        if let Err(err) = session.tick(&admin, shell) {
            break Err(err);
        }
        thread::sleep(TICK);
    };
    shell.status("Stopping", "the manager and the control plane");
    session.stop();
    cluster.stop();
    shell.status("Stopped", "everything `opgen dev` started");
    result
}

/// `opgen generate manifests` in `root`, as its own process: it locks the project, builds
/// and runs crdgen, and writes the CRDs and the role. Its output goes to a file, shown when
/// it fails.
fn generate_manifests(root: &Path, shell: &mut Shell, interrupt: &Interrupt) -> anyhow::Result<()> {
    shell.status("Generating", "manifests (opgen generate manifests)");
    let opgen = std::env::current_exe().context("cannot find opgen's own executable")?;
    let log = session_dir(root).join("manifests.log");
    let out =
        std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut command = Command::new(opgen);
    command
        .current_dir(root)
        .args(["--color=never", "generate", "manifests"])
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    own_process_group(&mut command);
    child::die_with_parent(&mut command);
    let mut child = command
        .spawn()
        .context("cannot run opgen generate manifests")?;
    let status = interrupt.wait(&mut child)??;
    if !status.success() {
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        bail!("`opgen generate manifests` failed:\n{}", output.trim_end());
    }
    Ok(())
}
