use super::*;

#[tokio::test(start_paused = true)]
async fn a_server_that_does_not_finish_is_closed_after_the_timeout() {
    let finishing = ::tokio::spawn(async { Ok(()) });
    assert!(stopped(finishing, "server").await.is_ok());
    let failing = ::tokio::spawn(async { Err(::anyhow::anyhow!("port taken")) });
    assert!(stopped(failing, "server").await.is_err());

    // A server waiting on a connection that never ends: closed, and the stop goes on.
    let hanging = ::tokio::spawn(::std::future::pending::<::anyhow::Result<()>>());
    let started = ::tokio::time::Instant::now();
    assert!(stopped(hanging, "server").await.is_ok());
    assert_eq!(started.elapsed(), SERVER_STOP_TIMEOUT);
}

#[derive(Debug, ::thiserror::Error)]
#[error("failed to read kubeconfig: {0}")]
struct Quoting(#[source] ::std::io::Error);

#[test]
fn error_chain_skips_causes_already_quoted() {
    let io = ::std::io::Error::new(::std::io::ErrorKind::NotFound, "no such file");
    let err = ::anyhow::Error::new(Quoting(io)).context("no Kubernetes configuration found");
    assert_eq!(
        error_chain(&err),
        "no Kubernetes configuration found: failed to read kubeconfig: no such file"
    );
}

#[test]
fn error_chain_keeps_distinct_causes() {
    let err = ::anyhow::anyhow!("connection refused")
        .context("cannot reach the API server")
        .context("start-up failed");
    assert_eq!(
        error_chain(&err),
        "start-up failed: cannot reach the API server: connection refused"
    );
}

#[test]
fn durations_are_read_as_go_writes_them() {
    let secs = Duration::from_secs;
    assert_eq!(parse_duration("60s"), Ok(secs(60)));
    assert_eq!(parse_duration("1m30s"), Ok(secs(90)));
    assert_eq!(parse_duration("2h"), Ok(secs(7200)));
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    for invalid in ["", "60", "s", "1.5s", "1d", "-1s", "1m 30s"] {
        let err = parse_duration(invalid).unwrap_err();
        assert!(err.contains("60s, 1m30s or 500ms"), "{invalid}: {err}");
    }
}

#[test]
fn the_reconcile_timeout_and_warm_standby_are_builder_settings() {
    let options = Options {
        metrics_bind_address: "127.0.0.1:0".parse().unwrap(),
        health_probe_bind_address: "127.0.0.1:0".parse().unwrap(),
        leader_election: None,
        watch_namespace: None,
        log_format: LogFormat::Text,
    };
    let manager = Manager::new("test", options.clone());
    assert!(manager.warm_standby);
    assert_eq!(manager.reconcile_timeout, Some(DEFAULT_RECONCILE_TIMEOUT));
    let manager = Manager::new("test", options)
        .warm_standby(false)
        .reconcile_timeout(Duration::ZERO);
    assert!(!manager.warm_standby);
    assert_eq!(manager.reconcile_timeout, None, "zero sets no limit");
}

mod on_control_plane;
