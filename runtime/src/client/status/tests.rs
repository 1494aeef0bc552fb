use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use ::k8s_openapi::jiff::Timestamp;

use crate::Error;
use crate::conditions::Conditions;
use crate::test_kinds::{self, WidgetStatus};
use crate::testing;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).expect("valid timestamp")
}

fn status(conditions: Vec<Condition>) -> WidgetStatus {
    WidgetStatus {
        conditions,
        observed_generation: Some(testing::GENERATION),
    }
}

/// Applies a status with `after` to a widget whose status has `before`, and returns what
/// changed. Only a status that differs is sent.
async fn update(before: &[Condition], after: &[Condition]) -> (bool, Option<String>) {
    let (ctx, mut server) = testing::context();
    let mut widget = test_kinds::widget();
    widget.status = Some(status(before.to_vec()));
    let applied = status(after.to_vec());
    let differs = before != after;
    let update = server
        .run(ctx.apply_status(&widget, &applied), async |server| {
            if differs {
                server.expect_status_applied(&widget).await;
            }
        })
        .await
        .expect("the status is applied");
    let turned = update.turned_true("Degraded").map(|c| c.message.clone());
    (update.changed(), turned)
}

#[tokio::test]
async fn only_new_generations_and_changed_conditions_are_news() {
    let first = Conditions::new(Vec::new(), Some(3), at(100));
    let current = [first.set("Ready", true, "Reconciled", "")];
    assert!(update(&[], &current).await.0, "no status yet");

    let resync = Conditions::new(current.to_vec(), Some(3), at(200));
    let same = [resync.set("Ready", true, "Reconciled", "")];
    assert!(!update(&current, &same).await.0);
    let failed = [resync.set("Ready", false, "Failed", "")];
    assert!(update(&current, &failed).await.0);
    let next_generation = Conditions::new(current.to_vec(), Some(4), at(200));
    let next = [next_generation.set("Ready", true, "Reconciled", "")];
    assert!(update(&current, &next).await.0);
}

#[tokio::test]
async fn a_status_like_the_current_one_is_not_sent() {
    let (ctx, mut server) = testing::context();
    let mut widget = test_kinds::widget();
    let conditions = Conditions::new(Vec::new(), Some(3), at(100));
    widget.status = Some(status(vec![conditions.set(
        "Ready",
        true,
        "Reconciled",
        "",
    )]));
    let resync = Conditions::of(&widget, at(200));
    let same = status(vec![resync.set("Ready", true, "Reconciled", "")]);

    // Any request would fail the scenario.
    let update = server
        .run(ctx.apply_status(&widget, &same), async |_| {})
        .await
        .expect("nothing to apply");
    assert!(!update.changed());
}

#[tokio::test]
async fn only_turning_true_is_worth_a_warning() {
    let conditions = Conditions::new(Vec::new(), Some(3), at(100));
    let healthy = [conditions.set("Degraded", false, "AsExpected", "")];
    let degraded = [conditions.set("Degraded", true, "Stuck", "stuck")];
    let stuck = Some("stuck".to_owned());

    assert_eq!(update(&[], &healthy).await.1, None);
    assert_eq!(update(&healthy, &healthy).await.1, None);
    assert_eq!(update(&[], &degraded).await.1, stuck);
    assert_eq!(update(&healthy, &degraded).await.1, stuck);
    assert_eq!(update(&degraded, &degraded).await.1, None);
}

#[tokio::test]
async fn the_warning_names_the_condition_and_says_its_message() {
    let (ctx, mut server) = testing::context();
    let widget = test_kinds::widget();
    let conditions = Conditions::of(&widget, at(100));
    let degraded = status(vec![conditions.set("Degraded", true, "Stuck", "stuck")]);

    server
        .run(
            async {
                let update = ctx.apply_status(&widget, &degraded).await?;
                update.warn_if_turned_true("Degraded").await;
                update.warn_if_turned_true("Ready").await;
                Ok::<_, Error>(())
            },
            async |server| {
                let applied = server.expect_status_applied(&widget).await;
                assert_eq!(applied["observedGeneration"], testing::GENERATION);
                assert_eq!(
                    applied["conditions"][0]["lastTransitionTime"],
                    "1970-01-01T00:01:40Z"
                );
                let event = server.expect_event(&widget, "Warning", "Degraded").await;
                assert_eq!(event["note"], "stuck");
                assert_eq!(event["action"], "Reconcile");
            },
        )
        .await
        .expect("the status is applied");
}

#[tokio::test]
async fn a_status_just_applied_is_not_applied_again_to_the_copy_it_was_judged_against() {
    let (ctx, mut server) = testing::context();
    let widget = test_kinds::widget();
    let conditions = Conditions::of(&widget, at(100));
    let degraded = status(vec![conditions.set("Degraded", true, "Stuck", "stuck")]);

    server
        .run(ctx.apply_status(&widget, &degraded), async |server| {
            server.expect_status_applied(&widget).await;
        })
        .await
        .expect("the status is applied");

    // The same copy again (its watch has not shown the write yet): any request fails this,
    // and it is no news, so no second warning.
    let again = server
        .run(ctx.apply_status(&widget, &degraded), async |_| {})
        .await
        .expect("nothing to apply");
    assert!(!again.changed());
    assert!(again.turned_true("Degraded").is_none());

    // A later version of the object without that status (someone else's write since): the
    // status is applied again.
    let mut edited = widget.clone();
    edited.metadata.resource_version = Some("102".to_owned());
    server
        .run(ctx.apply_status(&edited, &degraded), async |server| {
            server.expect_status_applied(&edited).await;
        })
        .await
        .expect("the status is applied again");
}

#[tokio::test]
async fn another_status_for_a_lagging_copy_is_applied() {
    let (ctx, mut server) = testing::context();
    let widget = test_kinds::widget();
    let conditions = Conditions::of(&widget, at(100));
    let first = status(vec![conditions.set("Ready", false, "Creating", "")]);
    let second = status(vec![conditions.set("Ready", true, "Reconciled", "")]);

    for next in [&first, &second] {
        server
            .run(ctx.apply_status(&widget, next), async |server| {
                server.expect_status_applied(&widget).await;
            })
            .await
            .expect("the status is applied");
    }
}
