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
mod refusals;
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
use build::{Build, Built};
use control_plane::{Audit, ControlPlane};
use manager::{Launch, Manager};
use refusals::Refusals;
use tail::Tail;
use watcher::Watcher;

/// How often the session looks at its processes, logs and sources.
const TICK: Duration = Duration::from_millis(200);
/// How long the samples wait for a manager that does not get ready (a role that lacks what it
/// needs to start, say): they are applied anyway, so that its refusals show.
const SAMPLES_PATIENCE: Duration = Duration::from_secs(15);
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
struct Identity {
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

    fn user(&self) -> String {
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
    shell.status(
        "Starting",
        "etcd, kube-apiserver and kube-controller-manager",
    );
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

    let mut session = Session {
        root,
        project,
        options,
        identity,
        launch,
        manager: None,
        manager_started: None,
        build: None,
        samples_applied: false,
        installed: true,
        manager_log: Tail::from_end(&dir.join("manager.log")),
        audit_log: Tail::from_end(&audit.log),
        refusals: Refusals::default(),
        build_log: dir.join("build.log"),
        changed_at: None,
    };
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
            session.changed_at = Some(Instant::now());
            session.installed = false;
            if let Err(err) = session.start_build(shell) {
                break Err(err);
            }
        }
        if let Err(err) = session.tick(&admin, shell, interrupt) {
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

/// What changes while the session runs.
struct Session<'a> {
    root: &'a Path,
    project: &'a Project,
    options: &'a Options,
    identity: Identity,
    launch: Launch,
    manager: Option<Manager>,
    /// When the running manager was started, until it is ready.
    manager_started: Option<Instant>,
    build: Option<Build>,
    samples_applied: bool,
    /// The manifests on the API server are those of the sources the running build is of:
    /// true from the install at the start until the first build is run.
    installed: bool,
    manager_log: Tail,
    audit_log: Tail,
    refusals: Refusals,
    build_log: PathBuf,
    /// When the sources last changed, until the manager built from them is ready.
    changed_at: Option<Instant>,
}

impl Session<'_> {
    /// Starts a build of the manager, stopping one still running for older sources.
    fn start_build(&mut self, shell: &mut Shell) -> anyhow::Result<()> {
        if let Some(mut build) = self.build.take() {
            build.cancel();
        }
        shell.status("Building", "the manager (cargo build)");
        let package = self.project.project_name.as_str();
        self.build = Some(Build::start(self.root, package, &self.build_log)?);
        Ok(())
    }

    /// One look at the build, the manager and the logs.
    fn tick(
        &mut self,
        admin: &kubectl::Kubectl,
        shell: &mut Shell,
        interrupt: &Interrupt,
    ) -> anyhow::Result<()> {
        if let Some(built) = self.build.as_mut().and_then(Build::finished) {
            let build = self.build.take().expect("a build finished");
            match built {
                Built::Failed(messages) => {
                    shell.print(&messages);
                    let keeps = if self.manager.is_some() {
                        "the running manager is kept"
                    } else {
                        "no manager runs"
                    };
                    shell.warn(&format!(
                        "the build failed (above); {keeps}: fix the error and save to try again"
                    ));
                    self.changed_at = None;
                }
                Built::Binary(binary) => {
                    shell.status(
                        "Built",
                        &format!("the manager in {:.1}s", build.elapsed().as_secs_f64()),
                    );
                    self.restart(&binary, admin, shell, interrupt)?;
                }
            }
        }
        for line in self.manager_log.new_lines() {
            shell.print(&format!("[manager] {line}\n"));
        }
        let user = self.identity.user();
        for refusal in self.refusals.new_in(&self.audit_log.new_lines(), &user) {
            shell.warn(&refusal.report(self.project));
        }
        if let Some(manager) = &mut self.manager {
            if let Some(status) = manager.exited() {
                shell.warn(&format!(
                    "the manager exited ({status}); its log is above: fix the cause and save to restart it"
                ));
                self.manager = None;
                self.manager_started = None;
            } else if let Some(since) = self.manager_started
                && !manager.ready()
                && since.elapsed() > SAMPLES_PATIENCE
                && !self.samples_applied
            {
                shell.warn(&format!(
                    "the manager is not ready after {SAMPLES_PATIENCE:?}; applying the samples anyway"
                ));
                self.apply_samples(admin, shell)?;
            } else if let Some(since) = self.manager_started
                && manager.ready()
            {
                self.manager_started = None;
                let after_change = self
                    .changed_at
                    .take()
                    .map(|at| format!(", {:.1}s after the change", at.elapsed().as_secs_f64()))
                    .unwrap_or_default();
                shell.status(
                    "Ready",
                    &format!(
                        "the manager answers /readyz ({:.1}s after its start{after_change})",
                        since.elapsed().as_secs_f64()
                    ),
                );
                self.apply_samples(admin, shell)?;
            }
        }
        Ok(())
    }

    /// Regenerates and re-applies the manifests, then replaces the running manager with
    /// `binary`. A failed `generate manifests` keeps the old manager.
    fn restart(
        &mut self,
        binary: &Path,
        admin: &kubectl::Kubectl,
        shell: &mut Shell,
        interrupt: &Interrupt,
    ) -> anyhow::Result<()> {
        if !std::mem::take(&mut self.installed) {
            if let Err(err) = generate_manifests(self.root, shell, interrupt) {
                interrupt.check()?;
                shell.warn(&format!("{err:#}; the running manager is kept"));
                return Ok(());
            }
            if let Err(err) = install::install(admin, self.root, self.launch.webhook_port) {
                shell.warn(&format!("{err:#}; the running manager is kept"));
                return Ok(());
            }
            shell.status("Applied", "the CRDs and RBAC of config/default");
            self.refusals.forget();
        }
        if let Some(mut old) = self.manager.take() {
            old.stop();
        }
        let manager = Manager::start(&self.launch, binary)?;
        shell.status(
            "Running",
            &format!(
                "the manager as {} (pid {}, log {})",
                self.identity.user(),
                manager.id(),
                self.launch.log.display()
            ),
        );
        self.manager = Some(manager);
        self.manager_started = Some(Instant::now());
        Ok(())
    }

    fn apply_samples(&mut self, admin: &kubectl::Kubectl, shell: &mut Shell) -> anyhow::Result<()> {
        if self.samples_applied || !self.options.samples {
            return Ok(());
        }
        self.samples_applied = true;
        let namespace = if self.project.namespaced() {
            self.identity.namespace.clone()
        } else {
            "default".to_owned()
        };
        install::apply_samples(admin, self.root, &namespace)?;
        shell.status(
            "Applied",
            &format!("config/samples in namespace {namespace}"),
        );
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut build) = self.build.take() {
            build.cancel();
        }
        if let Some(mut manager) = self.manager.take() {
            manager.stop();
        }
    }
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
