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

#[tokio::test]
async fn the_same_event_again_counts_on_the_first() {
    let (ctx, mut server) = testing::context();
    let widget = test_kinds::widget();
    let twice = async {
        ctx.events.normal(&widget, "Scaled", "Scale", "to 3").await;
        ctx.events.normal(&widget, "Scaled", "Scale", "to 3").await;
    };

    server
        .run(twice, async |server| {
            let first = server.expect_event(&widget, "Normal", "Scaled").await;
            let name = first["metadata"]["name"].as_str().unwrap().to_owned();
            let path = format!("{}/{name}", testing::events_path(Some(testing::NAMESPACE)));
            let again = server.expect(::http::Method::PATCH, &path).await;
            assert_eq!(again.body["series"]["count"], 2, "{}", again.body);
            assert!(again.body["series"]["lastObservedTime"].is_string());
            let body = again.body.clone();
            again.reply(StatusCode::OK, &body);
        })
        .await;
}

#[tokio::test]
async fn an_event_with_another_note_is_an_event_of_its_own() {
    let (ctx, mut server) = testing::context();
    let widget = test_kinds::widget();
    let two = async {
        ctx.events.normal(&widget, "Scaled", "Scale", "to 3").await;
        ctx.events.normal(&widget, "Scaled", "Scale", "to 1").await;
    };

    server
        .run(two, async |server| {
            let first = server.expect_event(&widget, "Normal", "Scaled").await;
            assert_eq!(first["note"], "to 3");
            let second = server.expect_event(&widget, "Normal", "Scaled").await;
            assert_eq!(second["note"], "to 1");
        })
        .await;
}

#[tokio::test]
async fn a_series_whose_event_expired_starts_a_new_event() {
    let (ctx, mut server) = testing::context();
    let widget = test_kinds::widget();
    let twice = async {
        ctx.events.warning(&widget, "Stuck", "Check", "help").await;
        ctx.events.warning(&widget, "Stuck", "Check", "help").await;
    };

    server
        .run(twice, async |server| {
            let first = server.expect_event(&widget, "Warning", "Stuck").await;
            let name = first["metadata"]["name"].as_str().unwrap().to_owned();
            let path = format!("{}/{name}", testing::events_path(Some(testing::NAMESPACE)));
            server
                .expect(::http::Method::PATCH, &path)
                .await
                .fail(StatusCode::NOT_FOUND);
            let again = server.expect_event(&widget, "Warning", "Stuck").await;
            assert!(again["series"].is_null(), "a new event: {again}");
        })
        .await;
}
