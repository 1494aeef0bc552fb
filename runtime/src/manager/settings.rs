//! The manager's settings, in one place: what a project's `main` hands over from its flags
//! ([`Options`] and what it holds, [`MetricsServing`], the concurrency limit), as a
//! Kubebuilder `main.go` fills controller-runtime's `manager.Options`.

use ::std::net::SocketAddr;
use ::std::sync::Arc;

use ::anyhow::Context as _;

pub use crate::client::context::{DEFAULT_CONCURRENCY, DEFAULT_RECONCILE_TIMEOUT};
use crate::webhook::certificates::Certificates;

/// How the manager runs: what `main` hands over from the command-line flags. Two more settings
/// are builder methods of [`Manager`](super::Manager), so that projects of earlier releases,
/// which build this as a struct literal, keep compiling:
/// [`metrics`](super::Manager::metrics),
/// [`max_concurrent_reconciles`](super::Manager::max_concurrent_reconciles),
/// [`warm_standby`](super::Manager::warm_standby) and
/// [`reconcile_timeout`](super::Manager::reconcile_timeout).
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

/// Reads a duration as Go (and so controller-runtime's flags) writes one: numbers each with a
/// unit, `h`, `m`, `s` or `ms`, such as `90s`, `1m30s` or `500ms`; `0` alone is no time at
/// all. For a project's duration flags (`--reconcile-timeout`), as clap's `value_parser`.
pub fn parse_duration(text: &str) -> Result<::std::time::Duration, String> {
    use ::std::time::Duration;
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let invalid = || format!("`{text}` is not a duration such as 60s, 1m30s or 500ms");
    let mut rest = text;
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(invalid)?;
        let number: u64 = rest[..digits].parse().map_err(|_| invalid())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "h" => Duration::from_secs(3600),
            "m" => Duration::from_secs(60),
            "s" => Duration::from_secs(1),
            "ms" => Duration::from_millis(1),
            _ => return Err(invalid()),
        };
        rest = &rest[unit_len..];
        let part = u32::try_from(number)
            .ok()
            .and_then(|number| unit.checked_mul(number))
            .ok_or_else(invalid)?;
        total = total.checked_add(part).ok_or_else(invalid)?;
    }
    if text.is_empty() {
        return Err(invalid());
    }
    Ok(total)
}
