//! The project's manager, run on this machine as its ServiceAccount (a kubeconfig with that
//! account's token), so that only the project's generated role applies to it.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::Context as _;

use super::{child::Child, control_plane::free_ports, http};

/// What every start of the manager shares.
pub struct Launch {
    /// The ServiceAccount's kubeconfig.
    pub kubeconfig: PathBuf,
    /// Where the binary is copied, so that cargo can replace its own while it runs.
    pub binary: PathBuf,
    pub log: PathBuf,
    /// The manager's namespace (`POD_NAMESPACE`).
    pub namespace: String,
    /// `--watch-namespace`, for a namespaced operator.
    pub watch_namespace: Option<String>,
    /// Where it serves webhooks: one port for the session, which the webhook configurations
    /// call.
    pub webhook_port: u16,
    /// `WEBHOOK_CERT_SECRET`: the Secret of the certificate it makes for its webhooks.
    pub webhook_cert_secret: Option<String>,
}

pub struct Manager {
    child: Child,
    health_port: u16,
}

impl Manager {
    /// Copies `built` to the launch's binary and starts it.
    pub fn start(launch: &Launch, built: &Path) -> anyhow::Result<Self> {
        let copy = launch.binary.with_extension("new");
        std::fs::copy(built, &copy)
            .with_context(|| format!("cannot copy the manager {}", built.display()))?;
        std::fs::rename(&copy, &launch.binary)?;
        let [health_port, metrics_port] = free_ports();
        let mut command = Command::new(&launch.binary);
        command
            .arg(format!(
                "--health-probe-bind-address=127.0.0.1:{health_port}"
            ))
            .arg(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"))
            .env("KUBECONFIG", &launch.kubeconfig)
            .env("POD_NAME", "opgen-dev")
            .env("POD_NAMESPACE", &launch.namespace)
            .env(
                "WEBHOOK_BIND_ADDRESS",
                format!("127.0.0.1:{}", launch.webhook_port),
            )
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned()),
            )
            // Only this session decides where the manager connects and what it watches.
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("WATCH_NAMESPACE")
            .env_remove("LEADER_ELECT");
        match &launch.webhook_cert_secret {
            Some(secret) => command.env("WEBHOOK_CERT_SECRET", secret),
            None => command.env_remove("WEBHOOK_CERT_SECRET"),
        };
        command.env_remove("WEBHOOK_CERT_DIR");
        if let Some(namespace) = &launch.watch_namespace {
            command.arg(format!("--watch-namespace={namespace}"));
        }
        Ok(Self {
            child: Child::start("manager", command, &launch.log)?,
            health_port,
        })
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether it answers /readyz with 200.
    pub fn ready(&self) -> bool {
        http::status(self.health_port, "/readyz") == Some(200)
    }

    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.exited()
    }

    /// SIGTERM, as Kubernetes stops a pod; SIGKILL if it takes too long.
    pub fn stop(&mut self) {
        self.child.stop();
    }
}
