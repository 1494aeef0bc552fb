use super::*;
use crate::testing;

#[tokio::test]
async fn a_failing_controller_stops_the_others_and_its_error_is_returned() {
    let (ctx, _server) = testing::context();
    let mut controllers = Controllers::new(ctx.clone());
    controllers.spawn(|ctx| async move {
        ctx.shutdown.cancelled().await;
        Ok(())
    });
    controllers.spawn(|_| async { ::anyhow::bail!("CRD missing") });

    let error = controllers.run().await.expect_err("one controller failed");
    assert_eq!(error.to_string(), "CRD missing");
    assert!(ctx.shutdown.is_cancelled());
}

#[tokio::test]
async fn without_controllers_the_manager_waits_for_the_shutdown() {
    let (ctx, _server) = testing::context();
    let shutdown = ctx.shutdown.clone();
    let waiting = ::tokio::spawn(Controllers::new(ctx).run());
    ::tokio::task::yield_now().await;
    assert!(!waiting.is_finished());
    shutdown.cancel();
    waiting.await.expect("no panic").expect("no error");
}
