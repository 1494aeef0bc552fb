//! What changes while `opgen dev` runs: the build under way, the running manager, the logs
//! followed, the refusals reported, and the restart after a successful build.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use super::{
    Identity, Options,
    build::{Build, Built},
    generate_manifests, install, kubectl,
    manager::{Launch, Manager},
    refusals::Refusals,
    tail::Tail,
};
use crate::{interrupt::Interrupt, project::Project, shell::Shell};

/// How long the samples wait for a manager that does not get ready (a role that lacks what it
/// needs to start, say): they are applied anyway, so that its refusals show.
const SAMPLES_PATIENCE: Duration = Duration::from_secs(15);
/// What changes while the session runs.
pub struct Session<'a> {
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
    /// The fingerprint of `config/` as last applied to the API server.
    installed_config: u64,
    manager_log: Tail,
    audit_log: Tail,
    refusals: Refusals,
    build_log: PathBuf,
    /// When the sources last changed, until the manager built from them is ready.
    changed_at: Option<Instant>,
}

impl<'a> Session<'a> {
    /// A session reading the API server's audit events from `audit_log`, with `config/` of
    /// fingerprint `installed_config` installed; nothing runs yet.
    pub fn new(
        root: &'a Path,
        project: &'a Project,
        options: &'a Options,
        identity: Identity,
        launch: Launch,
        audit_log: &Path,
        installed_config: u64,
    ) -> Self {
        Self {
            root,
            project,
            options,
            identity,
            manager_log: Tail::from_end(&launch.log),
            launch,
            manager: None,
            manager_started: None,
            build: None,
            samples_applied: false,
            installed_config,
            audit_log: Tail::from_end(audit_log),
            refusals: Refusals::default(),
            build_log: super::session_dir(root).join("build.log"),
            changed_at: None,
        }
    }

    /// The sources changed: regenerates the manifests and re-applies what changed while the
    /// running manager goes on (so the install overlaps the build instead of delaying the
    /// restart), then builds the manager from the new sources. When the manifests cannot be
    /// made or applied, nothing is built and the running manager is kept.
    pub fn sources_changed(
        &mut self,
        admin: &kubectl::Kubectl,
        shell: &mut Shell,
        interrupt: &Interrupt,
    ) -> anyhow::Result<()> {
        self.changed_at = Some(Instant::now());
        if let Some(mut build) = self.build.take() {
            build.cancel();
        }
        if let Err(err) = self.reinstall(admin, shell, interrupt) {
            interrupt.check()?;
            shell.warn(&format!("{err:#}; the running manager is kept"));
            self.changed_at = None;
            return Ok(());
        }
        self.start_build(shell)
    }

    /// `generate manifests`, then the install again if `config/` is not what was applied last.
    fn reinstall(
        &mut self,
        admin: &kubectl::Kubectl,
        shell: &mut Shell,
        interrupt: &Interrupt,
    ) -> anyhow::Result<()> {
        generate_manifests(self.root, shell, interrupt)?;
        let fingerprint = install::config_fingerprint(self.root)?;
        if fingerprint == self.installed_config {
            shell.status("Unchanged", "config/: nothing to apply again");
            return Ok(());
        }
        install::install(admin, self.root, self.launch.webhook_port)?;
        self.installed_config = fingerprint;
        shell.status("Applied", "the CRDs and RBAC of config/default");
        self.refusals.forget();
        Ok(())
    }

    /// Starts a build of the manager, stopping one still running for older sources.
    pub fn start_build(&mut self, shell: &mut Shell) -> anyhow::Result<()> {
        if let Some(mut build) = self.build.take() {
            build.cancel();
        }
        shell.status("Building", "the manager (cargo build)");
        let package = self.project.project_name.as_str();
        self.build = Some(Build::start(self.root, package, &self.build_log)?);
        Ok(())
    }

    /// One look at the build, the manager and the logs.
    pub fn tick(&mut self, admin: &kubectl::Kubectl, shell: &mut Shell) -> anyhow::Result<()> {
        // On a terminal, cargo's progress; elsewhere its outcome alone, one line.
        if shell.shows_progress()
            && let Some(build) = &mut self.build
        {
            for (verb, rest) in build.progress() {
                shell.status(&verb, &rest);
            }
        }
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
                    self.restart(&binary, shell)?;
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

    /// Replaces the running manager with `binary`.
    fn restart(&mut self, binary: &Path, shell: &mut Shell) -> anyhow::Result<()> {
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

    pub fn stop(&mut self) {
        if let Some(mut build) = self.build.take() {
            build.cancel();
        }
        if let Some(mut manager) = self.manager.take() {
            manager.stop();
        }
    }
}
