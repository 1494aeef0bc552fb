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
        body.contains(
            r#"PREFIX_reconcile_failures_total{controller="mysqlcluster",reason="ApplyFailed"} 1"#
        ),
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
