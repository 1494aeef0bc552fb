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

use crate::metrics::Metrics;
use crate::metrics::exposition;
use crate::webhook::certificates::Certificates;
use crate::webhook::tls::serve_tls;

/// Whether /readyz answers 200. Flipped once the manager has started its controllers, or is
/// campaigning for the lease as a standby replica (see the `manager` module).
#[derive(Clone, Debug, Default)]
pub(crate) struct Readiness(Arc<AtomicBool>);

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
pub(crate) fn health_router(readiness: Readiness) -> Router {
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
pub(crate) fn metrics_router(metrics: Arc<Metrics>) -> Router {
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
pub(crate) async fn bind(
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
pub(crate) async fn serve(
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
                serve_tls(listener, router, certificates, shutdown.clone(), "metrics").await
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
mod tests;
