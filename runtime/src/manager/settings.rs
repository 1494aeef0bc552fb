//! The manager's settings, in one place: what a project's `main` hands over from its flags
//! ([`Options`] and what it holds, [`MetricsServing`], the concurrency limit), as a
//! Kubebuilder `main.go` fills controller-runtime's `manager.Options`.

use ::std::net::SocketAddr;
use ::std::sync::Arc;

use ::anyhow::Context as _;

pub use crate::client::context::DEFAULT_CONCURRENCY;
use crate::webhook::certificates::Certificates;

/// How the manager runs: what `main` hands over from the command-line flags. Two more settings
/// are builder methods of [`Manager`](super::Manager), so that projects of earlier releases,
/// which build this as a struct literal, keep compiling:
/// [`metrics`](super::Manager::metrics) and
/// [`max_concurrent_reconciles`](super::Manager::max_concurrent_reconciles).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Where /metrics listens.
    pub metrics_bind_address: SocketAddr,
    /// Where /healthz and /readyz listen.
    pub health_probe_bind_address: SocketAddr,
    /// Run the controllers only while holding this Lease; `None` runs them at once.
    pub leader_election: Option<LeaderElection>,
    /// The namespace to watch; `None` watches all namespaces.
    pub watch_namespace: Option<String>,
    /// How the logs are written.
    pub log_format: LogFormat,
}

/// What `--leader-elect` and its flags ask for: the Lease the replicas compete for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderElection {
    /// `--leader-election-id`
    pub lease_name: String,
    /// `--leader-election-namespace`; the Pod's own namespace (`POD_NAMESPACE`) when `None`.
    pub namespace: Option<String>,
}

/// The format of the logs (`--log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ::clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// How /metrics is served: what the project's flags (`--metrics-secure`,
/// `--metrics-cert-dir`) say, handed to [`Manager::metrics`](crate::manager::Manager::metrics).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsServing {
    /// HTTPS, each request's bearer token reviewed with the API server (see
    /// the `metrics_auth` module); `false` serves plain HTTP to whoever reaches
    /// the port, for development.
    pub secure: bool,
    /// `tls.crt` and `tls.key` here (a mounted Secret, cert-manager's say), re-read when they
    /// change; `None` serves a self-signed certificate made at start.
    pub cert_dir: Option<::std::path::PathBuf>,
}

impl MetricsServing {
    /// Plain HTTP: how a manager serves /metrics unless its project says otherwise, as
    /// projects made before secure metrics did (their RBAC has no review rules).
    pub fn plain() -> Self {
        Self {
            secure: false,
            cert_dir: None,
        }
    }

    /// The certificate to serve /metrics with, when it is served over HTTPS.
    pub(crate) fn certificates(&self) -> ::anyhow::Result<Option<Arc<Certificates>>> {
        if !self.secure {
            return Ok(None);
        }
        Ok(Some(match &self.cert_dir {
            Some(dir) => {
                let certificates = Certificates::from_dir(dir.clone());
                certificates.reload().with_context(|| {
                    format!(
                        "no metrics certificate in {}: mount tls.crt and tls.key there, or drop --metrics-cert-dir for a self-signed one",
                        dir.display()
                    )
                })?;
                certificates
            }
            None => Certificates::self_signed(metrics_names())?,
        }))
    }
}

/// The names the self-signed metrics certificate is valid for: the Pod's and loopback's.
/// Prometheus scrapes Pod IPs, which the certificate cannot know in advance; hence the
/// ServiceMonitor's `insecureSkipVerify`, with the bearer token as the protection.
fn metrics_names() -> Vec<String> {
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    if let Ok(pod) = ::std::env::var("POD_NAME")
        && !pod.is_empty()
    {
        names.push(pod);
    }
    names
}
