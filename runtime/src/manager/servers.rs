//! The probe and metrics HTTP servers. They listen on separate addresses, as controller-runtime
//! does, so a NetworkPolicy or Service can expose metrics without exposing the probes.

use ::std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use ::anyhow::Context as _;
use ::axum::{
    Router,
    extract::State,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use ::tokio::net::TcpListener;
use ::tokio_util::sync::CancellationToken;

use crate::exposition;
use crate::metrics::Metrics;
use crate::webhook::{self, Certificates};

/// How /metrics is served: what the project's flags (`--metrics-secure`,
/// `--metrics-cert-dir`) say, handed to [`Manager::metrics`](crate::manager::Manager::metrics).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsServing {
    /// HTTPS, each request's bearer token reviewed with the API server (see
    /// [`metrics_auth`](crate::metrics_auth)); `false` serves plain HTTP to whoever reaches
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
    pub fn certificates(&self) -> ::anyhow::Result<Option<Arc<Certificates>>> {
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

/// Whether /readyz answers 200. Flipped once the manager has started its controllers, or is
/// campaigning for the lease as a standby replica (see the `manager` module).
#[derive(Clone, Debug, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Marks the manager ready.
    pub fn set_ready(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the manager is ready.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// /healthz answers as long as the process serves requests; /readyz once it is [`Readiness`].
pub fn health_router(readiness: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(readiness)
}

async fn readyz(State(readiness): State<Readiness>) -> (StatusCode, &'static str) {
    if readiness.is_ready() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "controllers not started")
    }
}

/// The routes of the metrics server: `/metrics`, in OpenMetrics text for Prometheus and the
/// Prometheus text format for other scrapers (see [`exposition`]).
pub fn metrics_router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(metrics)
}

async fn scrape(State(metrics): State<Arc<Metrics>>, headers: HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    match metrics.encode() {
        Ok(body) if exposition::wants_openmetrics(accept) => (
            [(header::CONTENT_TYPE, exposition::OPENMETRICS_CONTENT_TYPE)],
            body,
        )
            .into_response(),
        Ok(body) => (
            [(header::CONTENT_TYPE, exposition::CLASSIC_CONTENT_TYPE)],
            exposition::classic_text(&body),
        )
            .into_response(),
        Err(err) => {
            ::tracing::error!(error = %err, "cannot encode metrics");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Binds both addresses up front so a port clash fails the start, not a later probe.
pub async fn bind(
    health: ::std::net::SocketAddr,
    metrics: ::std::net::SocketAddr,
) -> ::anyhow::Result<(TcpListener, TcpListener)> {
    let health = TcpListener::bind(health).await.with_context(|| {
        format!("cannot listen on {health} for health probes: free the port or set --health-probe-bind-address")
    })?;
    let metrics = TcpListener::bind(metrics).await.with_context(|| {
        format!(
            "cannot listen on {metrics} for metrics: free the port or set --metrics-bind-address"
        )
    })?;
    Ok((health, metrics))
}

/// Serves both routers until `shutdown` is cancelled, metrics over TLS when there are
/// `metrics_tls` certificates. A server that fails cancels `shutdown` too: without probes the
/// kubelet would restart the Pod anyway, so stop cleanly instead.
pub async fn serve(
    health: (TcpListener, Router),
    metrics: (TcpListener, Router),
    metrics_tls: Option<Arc<Certificates>>,
    shutdown: CancellationToken,
) -> ::anyhow::Result<()> {
    let run = |(listener, router): (TcpListener, Router), what: &'static str| {
        let shutdown = shutdown.clone();
        async move {
            let addr = listener.local_addr()?;
            ::tracing::info!(%addr, "serving {what}");
            ::axum::serve(listener, router)
                .with_graceful_shutdown(shutdown.cancelled_owned())
                .await
                .with_context(|| format!("{what} server on {addr} failed"))
        }
    };
    let metrics = async {
        match metrics_tls {
            Some(certificates) => {
                let (listener, router) = metrics;
                webhook::serve_tls(listener, router, certificates, shutdown.clone(), "metrics")
                    .await
            }
            None => run(metrics, "metrics").await,
        }
    };
    let result = ::tokio::try_join!(run(health, "health probes"), metrics).map(|_| ());
    if result.is_err() {
        shutdown.cancel();
    }
    result
}

#[cfg(test)]
mod tests {
    use ::axum::body::{Body, to_bytes};
    use ::http::Request;
    use ::tower::ServiceExt;

    use super::*;

    async fn get(router: Router, path: &str) -> (StatusCode, Option<String>, String) {
        get_accepting(router, path, "*/*").await
    }

    async fn get_accepting(
        router: Router,
        path: &str,
        accept: &str,
    ) -> (StatusCode, Option<String>, String) {
        let request = Request::get(path)
            .header(header::ACCEPT, accept)
            .body(Body::empty())
            .unwrap();
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (
            status,
            content_type,
            String::from_utf8(body.to_vec()).unwrap(),
        )
    }

    #[::tokio::test]
    async fn healthz_is_ok_even_before_controllers_start() {
        let (status, _, body) = get(health_router(Readiness::default()), "/healthz").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, "ok");
    }

    #[::tokio::test]
    async fn readyz_waits_for_controllers() {
        let readiness = Readiness::default();
        let router = health_router(readiness.clone());

        let (status, _, _) = get(router.clone(), "/readyz").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);

        readiness.set_ready();
        let (status, _, body) = get(router, "/readyz").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, "ok");
    }

    #[::tokio::test]
    async fn health_router_does_not_serve_metrics() {
        let (status, _, _) = get(health_router(Readiness::default()), "/metrics").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    #[::tokio::test]
    async fn metrics_are_served_as_openmetrics_to_prometheus() {
        let metrics = Arc::new(Metrics::new());
        let _timer = metrics.reconcile("mysqlcluster");
        metrics.reconcile_failure("mysqlcluster", "ApplyFailed");

        let (status, content_type, body) = get_accepting(
            metrics_router(metrics),
            "/metrics",
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        )
        .await;
        let body = crate::metrics::tests::without_prefix(body);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            content_type.as_deref(),
            Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
        );
        assert!(
            body.contains(r#"PREFIX_reconciliations_total{controller="mysqlcluster"} 1"#),
            "{body}"
        );
        assert!(
            body.contains(r#"PREFIX_reconcile_failures_total{controller="mysqlcluster",reason="ApplyFailed"} 1"#),
            "{body}"
        );
        assert!(body.ends_with("# EOF\n"), "{body}");
    }

    #[::tokio::test]
    async fn metrics_are_served_in_the_classic_format_to_other_scrapers() {
        let metrics = Arc::new(Metrics::new());
        let _timer = metrics.reconcile("mysqlcluster");

        let (status, content_type, body) = get(metrics_router(metrics), "/metrics").await;
        let body = crate::metrics::tests::without_prefix(body);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            content_type.as_deref(),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        assert!(
            body.contains("# TYPE PREFIX_reconciliations_total counter\n"),
            "{body}"
        );
        assert!(
            body.contains(r#"PREFIX_reconciliations_total{controller="mysqlcluster"} 1"#),
            "{body}"
        );
        assert!(!body.contains("# EOF"), "{body}");
        assert!(!body.contains("# UNIT"), "{body}");
    }

    #[::tokio::test]
    async fn servers_listen_and_stop_on_shutdown() {
        let (health, metrics) = bind(
            "127.0.0.1:0".parse().unwrap(),
            "127.0.0.1:0".parse().unwrap(),
        )
        .await
        .unwrap();
        let health_addr = health.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let server = ::tokio::spawn(serve(
            (health, health_router(Readiness::default())),
            (metrics, metrics_router(Arc::new(Metrics::new()))),
            None,
            shutdown.clone(),
        ));

        let mut stream = ::tokio::net::TcpStream::connect(health_addr).await.unwrap();
        use ::tokio::io::{AsyncReadExt, AsyncWriteExt};
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");

        shutdown.cancel();
        ::tokio::time::timeout(::std::time::Duration::from_secs(5), server)
            .await
            .expect("servers stop once shutdown is cancelled")
            .unwrap()
            .unwrap();
    }

    #[::tokio::test]
    async fn a_taken_port_fails_with_the_flag_to_change() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err = bind("127.0.0.1:0".parse().unwrap(), addr)
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("--metrics-bind-address"),
            "{err:#}"
        );
    }
}
