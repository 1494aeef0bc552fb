use ::http::StatusCode;

use crate::test_kinds::{self, Gadget};
use crate::testing;

#[tokio::test]
async fn events_name_the_object_and_the_reporting_controller() {
    let (ctx, mut server) = testing::context();
    let widget = test_kinds::widget();

    server
        .run(
            ctx.events.warning(&widget, "Stuck", "Check", "help"),
            async |server| {
                let event = server.expect_event(&widget, "Warning", "Stuck").await;
                assert_eq!(event["action"], "Check");
                assert_eq!(event["note"], "help");
                assert_eq!(event["regarding"]["apiVersion"], "example.com/v1");
            },
        )
        .await;
}

#[tokio::test]
async fn events_of_cluster_scoped_objects_go_to_the_default_namespace() {
    let (ctx, mut server) = testing::context();
    let gadget = test_kinds::gadget();

    server
        .run(
            ctx.events.normal(&gadget, "Made", "Make", "done"),
            async |server| {
                let event = server.expect_event(&gadget, "Normal", "Made").await;
                assert_eq!(event["regarding"]["kind"], "Gadget");
            },
        )
        .await;
}

#[tokio::test]
async fn an_event_that_cannot_be_published_fails_nothing() {
    let (ctx, mut server) = testing::context();
    let gadget: Gadget = test_kinds::gadget();

    // `normal` returns (), whatever the API server answers.
    server
        .run(
            ctx.events.normal(&gadget, "Made", "Make", "done"),
            async |server| {
                let path = testing::events_path(None);
                server
                    .expect(::http::Method::POST, &path)
                    .await
                    .fail(StatusCode::FORBIDDEN);
            },
        )
        .await;
}
