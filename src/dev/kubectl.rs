//! `kubectl` with a kubeconfig: how `opgen dev` applies objects, as a user would, rather than
//! through a Kubernetes client of its own.

use std::{
    io::Write as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use anyhow::{Context as _, bail};

pub struct Kubectl {
    kubeconfig: PathBuf,
}

impl Kubectl {
    pub fn new(kubeconfig: &Path) -> Self {
        Self {
            kubeconfig: kubeconfig.to_owned(),
        }
    }

    /// Fails with how to install it unless `kubectl` runs.
    pub fn check_installed() -> anyhow::Result<()> {
        match Command::new("kubectl")
            .args(["version", "--client"])
            .output()
        {
            Ok(output) if output.status.success() => Ok(()),
            _ => bail!(
                "`kubectl` is not on PATH: `opgen dev` applies the project's manifests with it; \
                 install it (https://kubernetes.io/docs/tasks/tools/) and run `opgen dev` again"
            ),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
            .args(args);
        // Its own group, so that a terminal's Ctrl-C reaches opgen alone and a session stops
        // in order rather than with a failed kubectl.
        crate::interrupt::own_process_group(&mut command);
        super::child::die_with_parent(&mut command);
        command
    }

    /// Runs `kubectl <args>`; its stdout, or an error with its stderr.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<String> {
        self.run_with_input(args, None)
    }

    /// `kubectl apply --server-side` of `manifest` (YAML documents) on stdin.
    pub fn apply(&self, manifest: &str) -> anyhow::Result<String> {
        self.run_with_input(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(manifest),
        )
    }

    fn run_with_input(&self, args: &[&str], input: Option<&str>) -> anyhow::Result<String> {
        let mut command = self.command(args);
        command
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot run kubectl {}", args.join(" ")))?;
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin.write_all(text.as_bytes())?;
        }
        let output = child.wait_with_output()?;
        if !output.status.success() {
            bail!(
                "`kubectl {}` failed ({}): {}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}
