use super::*;
use crate::test_kinds::{gadget, widget};

#[test]
fn stored_objects_have_what_the_api_server_adds() {
    let widget = widget();
    assert_eq!(widget.namespace().as_deref(), Some(NAMESPACE));
    assert_eq!(widget.uid().as_deref(), Some(UID));
    assert_eq!(widget.metadata.generation, Some(GENERATION));
    assert_eq!(gadget().namespace(), None, "cluster-scoped");
    assert_eq!(
        path_of(&widget),
        "/apis/example.com/v1/namespaces/team-a/widgets/test"
    );
    assert_eq!(path_of(&gadget()), "/apis/example.com/v1/gadgets/test");
}

#[test]
fn workloads_can_report_ready_pods() {
    let deployment = reporting(::k8s_openapi::api::apps::v1::Deployment::default(), 3, 2);
    let status = deployment.status.expect("a status");
    assert_eq!(status.replicas, Some(3));
    assert_eq!(status.ready_replicas, Some(2));
    assert_eq!(status.updated_replicas, Some(3));
}

#[tokio::test]
#[should_panic(
    expected = "the script expects GET /apis/example.com/v1/gadgets/test, but got \
                           POST /apis/events.k8s.io/v1/namespaces/default/events"
)]
async fn a_request_other_than_the_expected_one_fails_with_both() {
    let (ctx, mut server) = context();
    let gadget = gadget();
    server
        .run(
            ctx.events.normal(&gadget, "Made", "Make", "done"),
            async |server| {
                server.expect_get(&gadget, None).await;
            },
        )
        .await;
}

#[tokio::test]
#[should_panic(expected = "the script expects no more requests, but got POST")]
async fn a_request_after_the_script_fails() {
    let (ctx, mut server) = context();
    server
        .run(
            ctx.events.normal(&gadget(), "Made", "Make", "done"),
            async |_| {},
        )
        .await;
}

#[tokio::test(start_paused = true)]
#[should_panic(
    expected = "the script expects GET /apis/example.com/v1/gadgets/test, which never came"
)]
async fn a_request_that_never_comes_fails_with_its_description() {
    let (_ctx, mut server) = context();
    server
        .run(async {}, async |server| {
            server.expect_get(&gadget(), None).await;
        })
        .await;
}
