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
