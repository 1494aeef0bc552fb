//! etcd, kube-apiserver (RBAC on, audit log on) and kube-controller-manager on free loopback
//! ports, with their data, credentials and logs in one directory.
//!
//! No kubelet and no scheduler: pods never run, but the controller manager gives Deployments
//! their ReplicaSets, garbage-collects owned objects and makes each namespace's `default`
//! ServiceAccount, which is what an operator's reconcile relies on.

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::Command,
    thread,
    time::{Duration, Instant},
};

use anyhow::bail;

use super::{
    assets::Assets,
    child::Child,
    credentials::{Credentials, write_kubeconfig},
    http,
    kubectl::Kubectl,
};
use crate::interrupt::Interrupt;

/// How long each process may take to become ready: kube-apiserver takes tens of seconds on a
/// busy two-core machine.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// What kube-apiserver audits, and where it writes the events.
pub struct Audit {
    pub policy: PathBuf,
    pub log: PathBuf,
}

pub struct ControlPlane {
    // Stopped in this order (fields drop in declaration order).
    controller_manager: Option<Child>,
    api_server: Child,
    etcd: Child,
    credentials: Credentials,
    server: String,
    admin_kubeconfig: PathBuf,
}

impl ControlPlane {
    /// Starts the three processes in `dir`, waiting for each to be ready.
    pub fn start(
        assets: &Assets,
        dir: &Path,
        audit: &Audit,
        interrupt: &Interrupt,
    ) -> anyhow::Result<Self> {
        let credentials = Credentials::write(dir)?;
        let [etcd_port, etcd_peer_port, api_server_port] = free_ports();
        let server = format!("https://127.0.0.1:{api_server_port}");

        let mut etcd = Child::start(
            "etcd",
            etcd_command(&assets.binary("etcd"), dir, etcd_port, etcd_peer_port),
            &dir.join("etcd.log"),
        )?;
        wait_until(&mut etcd, "serve clients", interrupt, || {
            http::status(etcd_port, "/health") == Some(200)
        })?;

        let admin_kubeconfig = dir.join("admin.kubeconfig");
        write_kubeconfig(
            &admin_kubeconfig,
            &server,
            &credentials.ca(),
            &credentials.admin_token,
        )?;
        let admin = Kubectl::new(&admin_kubeconfig);
        let mut api_server = Child::start(
            "kube-apiserver",
            api_server_command(
                &assets.binary("kube-apiserver"),
                &credentials,
                etcd_port,
                api_server_port,
                audit,
            ),
            &dir.join("kube-apiserver.log"),
        )?;
        wait_until(&mut api_server, "answer /readyz", interrupt, || {
            admin.run(&["get", "--raw", "/readyz"]).is_ok()
        })?;

        let controller_manager = assets
            .has_controller_manager()
            .then(|| {
                Child::start(
                    "kube-controller-manager",
                    controller_manager_command(
                        &assets.binary("kube-controller-manager"),
                        &credentials,
                        &admin_kubeconfig,
                    ),
                    &dir.join("kube-controller-manager.log"),
                )
            })
            .transpose()?;
        Ok(Self {
            controller_manager,
            api_server,
            etcd,
            credentials,
            server,
            admin_kubeconfig,
        })
    }

    pub fn admin_kubeconfig(&self) -> &Path {
        &self.admin_kubeconfig
    }

    pub fn admin(&self) -> Kubectl {
        Kubectl::new(&self.admin_kubeconfig)
    }

    /// Writes a kubeconfig at `path` that authenticates with `token`.
    pub fn kubeconfig_with_token(&self, path: &Path, token: &str) -> anyhow::Result<()> {
        write_kubeconfig(path, &self.server, &self.credentials.ca(), token)
    }

    /// An error naming the first process that exited, and its log.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        let children = [Some(&mut self.etcd), Some(&mut self.api_server)]
            .into_iter()
            .chain([self.controller_manager.as_mut()])
            .flatten();
        for child in children {
            if let Some(status) = child.exited() {
                bail!(
                    "{} exited ({status}); its log is {}",
                    child.name(),
                    child.log().display()
                );
            }
        }
        Ok(())
    }

    /// Stops the processes, the controller manager first and etcd last.
    pub fn stop(&mut self) {
        if let Some(controller_manager) = &mut self.controller_manager {
            controller_manager.stop();
        }
        self.api_server.stop();
        self.etcd.stop();
    }
}

/// `N` distinct free ports on 127.0.0.1: each is held open until all are found.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<TcpListener> = (0..N)
        .filter_map(|_| TcpListener::bind("127.0.0.1:0").ok())
        .collect();
    std::array::from_fn(|i| {
        listeners
            .get(i)
            .and_then(|listener| listener.local_addr().ok())
            .map_or(0, |address| address.port())
    })
}

/// Polls `ready` until it holds; fails when `child` exits, a signal arrives or time runs out.
fn wait_until(
    child: &mut Child,
    what: &str,
    interrupt: &Interrupt,
    mut ready: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        interrupt.check()?;
        if let Some(status) = child.exited() {
            bail!(
                "{} exited ({status}) before it could {what}; its log is {}",
                child.name(),
                child.log().display()
            );
        }
        if ready() {
            return Ok(());
        }
        if started.elapsed() > READY_TIMEOUT {
            bail!(
                "{} did not {what} within {READY_TIMEOUT:?}; its log is {}",
                child.name(),
                child.log().display()
            );
        }
        thread::sleep(Duration::from_millis(100));
    }
}

fn etcd_command(binary: &Path, dir: &Path, port: u16, peer_port: u16) -> Command {
    let client_url = format!("http://127.0.0.1:{port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let mut command = Command::new(binary);
    command
        .arg(format!("--data-dir={}", dir.join("etcd").display()))
        .arg(format!("--listen-client-urls={client_url}"))
        .arg(format!("--advertise-client-urls={client_url}"))
        // Never the default peer port 2380, which another etcd may hold.
        .arg(format!("--listen-peer-urls={peer_url}"))
        .arg(format!("--initial-advertise-peer-urls={peer_url}"))
        .arg(format!("--initial-cluster=default={peer_url}"))
        // Development data need not survive a power cut; fsync would slow every write.
        .arg("--unsafe-no-fsync=true");
    command
}

fn api_server_command(
    binary: &Path,
    credentials: &Credentials,
    etcd_port: u16,
    port: u16,
    audit: &Audit,
) -> Command {
    let server = format!("https://127.0.0.1:{port}");
    let mut command = Command::new(binary);
    command
        .arg(format!("--etcd-servers=http://127.0.0.1:{etcd_port}"))
        .arg("--advertise-address=127.0.0.1")
        // Newer releases refuse loopback endpoints for the `kubernetes` Service; nothing
        // here uses them.
        .arg("--endpoint-reconciler-type=none")
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--secure-port={port}"))
        .arg(format!("--cert-dir={}", credentials.cert_dir.display()))
        .arg(format!(
            "--token-auth-file={}",
            credentials.token_file.display()
        ))
        // The default, AlwaysAllow, would hide every missing RBAC rule.
        .arg("--authorization-mode=RBAC")
        .arg(format!("--service-account-issuer={server}"))
        .arg(format!(
            "--service-account-key-file={}",
            credentials.service_account_public_key.display()
        ))
        .arg(format!(
            "--service-account-signing-key-file={}",
            credentials.service_account_key.display()
        ))
        .arg("--service-cluster-ip-range=10.0.0.0/24")
        .arg(format!("--audit-policy-file={}", audit.policy.display()))
        .arg(format!("--audit-log-path={}", audit.log.display()))
        .arg("--audit-log-format=json")
        // Written as they happen, so that a refusal shows while the developer looks.
        .arg("--audit-log-mode=blocking");
    command
}

fn controller_manager_command(
    binary: &Path,
    credentials: &Credentials,
    kubeconfig: &Path,
) -> Command {
    let mut command = Command::new(binary);
    command
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        // It serves nothing needed here, and its fixed default port could clash.
        .arg("--secure-port=0")
        .arg("--leader-elect=false")
        .arg(format!(
            "--service-account-private-key-file={}",
            credentials.service_account_key.display()
        ))
        .arg(format!("--root-ca-file={}", credentials.ca().display()));
    command
}
