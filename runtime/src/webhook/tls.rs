//! HTTPS for the manager's servers (webhooks, and /metrics when it is secure): each handshake
//! served with whatever certificate [`Certificates`] holds at the time, handshakes completed
//! side by side.

use ::std::net::SocketAddr;
use ::std::sync::Arc;
use ::std::time::Duration;

use ::anyhow::Context as _;
use ::axum::Router;
use ::tokio::net::{TcpListener, TcpStream};
use ::tokio::sync::mpsc;
use ::tokio_rustls::TlsAcceptor;
use ::tokio_rustls::rustls::ServerConfig;
use ::tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use ::tokio_rustls::rustls::sign::CertifiedKey;
use ::tokio_rustls::server::TlsStream;
use ::tokio_util::sync::CancellationToken;

use super::certificates::Certificates;

/// How often the certificate files are checked for a change.
const RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// How long a client has to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug)]
struct Resolver(Arc<Certificates>);

impl ResolvesServerCert for Resolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.current()
    }
}

/// The TLS configuration that serves whatever certificate `certificates` holds at the time of
/// each handshake.
pub(crate) fn tls_config(certificates: Arc<Certificates>) -> ::anyhow::Result<ServerConfig> {
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(super::certificates::crypto_provider()))
            .with_safe_default_protocol_versions()
            .context("cannot set up TLS")?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(Resolver(certificates)));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Serves `router` over TLS on `listener` until `shutdown` is cancelled, re-reading the
/// certificate files (if any) when they change; `what` names the server in the logs.
pub(crate) async fn serve_tls(
    listener: TcpListener,
    router: Router,
    certificates: Arc<Certificates>,
    shutdown: CancellationToken,
    what: &'static str,
) -> ::anyhow::Result<()> {
    let addr = listener.local_addr()?;
    let acceptor = TlsAcceptor::from(Arc::new(tls_config(certificates.clone())?));
    let (sender, accepted) = mpsc::channel(64);
    ::tokio::spawn(accept_tls(listener, acceptor, sender, shutdown.clone()));
    ::tokio::spawn(certificates.watch(RELOAD_INTERVAL, shutdown.clone()));
    ::tracing::info!(%addr, "serving {what} over HTTPS");
    ::axum::serve(TlsListener { addr, accepted }, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .with_context(|| format!("{what} server on {addr} failed"))
}

/// Accepts connections and completes their handshakes side by side, so that one slow client
/// holds up no other.
async fn accept_tls(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    sender: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
    shutdown: CancellationToken,
) {
    loop {
        let (stream, peer) = ::tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    ::tracing::warn!(error = %err, "cannot accept a TLS connection");
                    ::tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let (acceptor, sender) = (acceptor.clone(), sender.clone());
        ::tokio::spawn(async move {
            match ::tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    let _ = sender.send((tls, peer)).await;
                }
                Ok(Err(err)) => {
                    ::tracing::debug!(%peer, error = %err, "TLS handshake failed")
                }
                Err(_) => ::tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

struct TlsListener {
    addr: SocketAddr,
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl ::axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(accepted) => accepted,
            // The acceptor stopped at the shutdown: the graceful shutdown ends the server.
            None => ::std::future::pending().await,
        }
    }

    fn local_addr(&self) -> ::std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
