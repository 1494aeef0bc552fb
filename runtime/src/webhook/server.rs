//! Where the webhook server listens and finds its certificate, and its run over HTTPS.

use ::std::net::SocketAddr;
use ::std::path::PathBuf;
use ::std::sync::Arc;

use ::anyhow::Context as _;
use ::axum::Router;
use ::tokio::net::TcpListener;
use ::tokio_util::sync::CancellationToken;

use super::certificates::Certificates;
use super::tls::serve_tls;

/// Where the webhook server listens unless `WEBHOOK_BIND_ADDRESS` says otherwise (the port
/// of controller-runtime's webhook server, which `config/webhook/service.yaml` targets).
pub(crate) const DEFAULT_BIND_ADDRESS: &str = "0.0.0.0:9443";

/// Where a manager run without `WEBHOOK_CERT_DIR` keeps its local certificate: where
/// controller-runtime looks for one, so that Kubebuilder's habits carry over.
pub(crate) fn local_cert_dir() -> PathBuf {
    ::std::env::temp_dir()
        .join("k8s-webhook-server")
        .join("serving-certs")
}

/// Where the webhook server listens and finds its certificate: `WEBHOOK_BIND_ADDRESS`,
/// `WEBHOOK_CERT_DIR` and `WEBHOOK_CERT_SECRET`, environment variables so that the manager's
/// own flags need no change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Options {
    /// Where the server listens (`WEBHOOK_BIND_ADDRESS`).
    pub bind_address: SocketAddr,
    /// The directory of `tls.crt` and `tls.key`; it wins over `cert_secret`.
    pub cert_dir: Option<PathBuf>,
    /// The Secret (in the manager's namespace) of a self-managed certificate.
    pub cert_secret: Option<String>,
}

impl Options {
    /// The options the environment sets (`WEBHOOK_BIND_ADDRESS`, `WEBHOOK_CERT_DIR`,
    /// `WEBHOOK_CERT_SECRET`).
    pub fn from_env() -> ::anyhow::Result<Self> {
        let variable = |name: &str| {
            ::std::env::var(name)
                .ok()
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let address =
            variable("WEBHOOK_BIND_ADDRESS").unwrap_or_else(|| DEFAULT_BIND_ADDRESS.to_owned());
        let bind_address = address.parse().with_context(|| {
            format!(
                "WEBHOOK_BIND_ADDRESS `{address}` is not an address such as {DEFAULT_BIND_ADDRESS}"
            )
        })?;
        Ok(Self {
            bind_address,
            cert_dir: variable("WEBHOOK_CERT_DIR").map(PathBuf::from),
            cert_secret: variable("WEBHOOK_CERT_SECRET"),
        })
    }
}

/// The webhook server's socket, bound up front so a port clash fails the start.
pub(crate) async fn bind(address: SocketAddr) -> ::anyhow::Result<TcpListener> {
    TcpListener::bind(address).await.with_context(|| {
        format!(
            "cannot listen on {address} for webhooks: free the port or set WEBHOOK_BIND_ADDRESS"
        )
    })
}

/// Serves `router` over TLS on `listener` until `shutdown` is cancelled.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    certificates: Arc<Certificates>,
    shutdown: CancellationToken,
) -> ::anyhow::Result<()> {
    serve_tls(listener, router, certificates, shutdown, "webhooks").await
}

#[cfg(test)]
mod tests;
