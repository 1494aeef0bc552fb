use ::http::StatusCode;
use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use ::kube::ResourceExt as _;
use ::serde_json::json;

use super::*;
use crate::operand::WorkloadCopy;
use crate::operand::fixtures::{
    IMAGE, deployment, deployment_status, progress, reporting, stored_at,
};
use crate::operand::progress::failure;
use crate::{test_kinds, testing};

#[tokio::test]
async fn applying_a_workload_publishes_an_event_per_change() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let running = reporting(deployment(1, IMAGE), deployment_status(1, 1));
    let desired = deployment(3, "example.com/app:2");

    let applied = server
        .run(
            ctx.apply_workload(&owner, &desired, &nothing_cached(), "app"),
            async |server| {
                server.expect_get(&desired, Some(&running)).await;
                let request = server.expect_applied(&desired).await;
                request.reply(
                    StatusCode::OK,
                    &reporting(desired.clone(), deployment_status(3, 1)),
                );
                let event = server.expect_event(&owner, "Normal", "Scaled").await;
                assert_eq!(event["note"], "Scaled from 1 to 3 replicas");
                assert_eq!(event["action"], "Scale");
                let event = server.expect_event(&owner, "Normal", "Upgraded").await;
                assert_eq!(
                    event["note"],
                    "Rolling out example.com/app:2 (was example.com/app:1)"
                );
            },
        )
        .await
        .expect("the workload is applied");
    assert_eq!(applied.progress(), progress(3, 1, 3));
}

#[tokio::test]
async fn a_new_workload_is_created_with_an_event() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);

    server
        .run(
            ctx.apply_workload(&owner, &desired, &nothing_cached(), "app"),
            async |server| {
                server.expect_get(&desired, None).await;
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::CREATED, &desired);
                let event = server.expect_event(&owner, "Normal", "Created").await;
                assert_eq!(
                    event["note"],
                    format!("Created Deployment running {IMAGE}, replicas: 1")
                );
            },
        )
        .await
        .expect("the workload is applied");
}

/// A status for widgets run by a Deployment of one pod: `Available`, and `Degraded` when
/// the Deployment reports a failure.
fn widget_status(
    widget: &test_kinds::Widget,
    deployment: &Deployment,
    conditions: &Conditions,
) -> test_kinds::WidgetStatus {
    let degraded = match failure(deployment) {
        Some(failure) => conditions.set(DEGRADED, true, &failure.reason, failure.message),
        None => conditions.set(DEGRADED, false, "AsExpected", ""),
    };
    test_kinds::WidgetStatus {
        conditions: vec![deployment.progress().available(conditions, 1), degraded],
        observed_generation: widget.metadata.generation,
    }
}

#[tokio::test]
async fn an_operand_applies_its_workload_then_its_status_and_warns_when_degraded() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    let conditions: Vec<DeploymentCondition> = serde_json::from_value(json!([{
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
        "message": "exceeded quota",
    }]))
    .expect("conditions");
    let failing = reporting(
        desired.clone(),
        DeploymentStatus {
            conditions: Some(conditions),
            ..deployment_status(1, 0)
        },
    );

    let action = server
        .run(
            ctx.apply_operand(&owner, &desired, &nothing_cached(), "app", widget_status),
            async |server| {
                server.expect_get(&desired, None).await;
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::CREATED, &failing);
                server.expect_event(&owner, "Normal", "Created").await;
                let status = server.expect_status_applied(&owner).await;
                assert_eq!(status["conditions"][0]["reason"], "ReplicasNotReady");
                assert_eq!(status["conditions"][1]["reason"], "FailedCreate");
                let event = server.expect_event(&owner, "Warning", "Degraded").await;
                assert_eq!(event["note"], "exceeded quota");
            },
        )
        .await
        .expect("the operand is applied");
    assert_eq!(action, Action::requeue(RESYNC_PERIOD));
}

#[tokio::test]
async fn a_failed_apply_fails_without_an_event() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);

    let error = server
        .run(
            ctx.apply_workload(&owner, &desired, &nothing_cached(), "app"),
            async |server| {
                server.expect_get(&desired, None).await;
                let request = server.expect_applied(&desired).await;
                request.fail(StatusCode::CONFLICT);
            },
        )
        .await
        .expect_err("the apply fails");
    assert_eq!(error.reason(), "kube_api");
}

fn nothing_cached() -> WorkloadCache<Deployment> {
    WorkloadCache::new(::kube::runtime::reflector::store().0)
}

/// A cache holding `workload`, as its watch would: a copy (see [`WorkloadCopy`]).
fn cache_of(workload: &Deployment) -> WorkloadCache<Deployment> {
    let (store, mut writer) = ::kube::runtime::reflector::store();
    writer.apply_watcher_event(&::kube::runtime::watcher::Event::Apply(WorkloadCopy::of(
        workload,
    )));
    WorkloadCache::new(store)
}

/// A cache whose watch has listed everything: `workloads` are all there is.
fn synced_cache_of(workloads: &[Deployment]) -> WorkloadCache<Deployment> {
    use ::kube::runtime::watcher::Event;
    let (store, mut writer) = ::kube::runtime::reflector::store();
    writer.apply_watcher_event(&Event::Init);
    for workload in workloads {
        writer.apply_watcher_event(&Event::InitApply(WorkloadCopy::of(workload)));
    }
    writer.apply_watcher_event(&Event::InitDone);
    WorkloadCache::new(store)
}

#[tokio::test]
async fn a_synced_cache_that_lacks_the_workload_creates_it_without_a_read() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    let cache = synced_cache_of(&[]);

    server
        .run(
            ctx.apply_workload(&owner, &desired, &cache, "app"),
            async |server| {
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::CREATED, &desired);
                server.expect_event(&owner, "Normal", "Created").await;
            },
        )
        .await
        .expect("the workload is created");
    // The watch has not shown the apply yet: the next reconcile reads before writing, and
    // finds nothing to do.
    let applied = crate::client::fingerprint::fingerprinted(&desired);
    assert!(ctx.recent_applies.awaits(&applied));
    server
        .run(
            ctx.apply_workload(&owner, &desired, &cache, "app"),
            async |server| server.expect_get(&desired, Some(&applied)).await,
        )
        .await
        .expect("nothing to apply");
    assert!(
        !ctx.recent_applies.awaits(&applied),
        "the read showed the apply"
    );
}

#[tokio::test]
async fn a_changed_workload_is_written_without_a_read_and_reported_against_its_copy() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let running = reporting(
        crate::client::fingerprint::fingerprinted(&deployment(1, IMAGE)),
        deployment_status(1, 1),
    );
    let desired = deployment(2, IMAGE);

    server
        .run(
            ctx.apply_workload(&owner, &desired, &synced_cache_of(&[running]), "app"),
            async |server| {
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::OK, &desired);
                let event = server.expect_event(&owner, "Normal", "Scaled").await;
                assert_eq!(event["note"], "Scaled from 1 to 2 replicas");
            },
        )
        .await
        .expect("the workload is applied");
}

#[tokio::test]
async fn a_workload_the_watch_does_not_select_is_taken_over_without_a_created_event() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    let mut stored = crate::client::fingerprint::fingerprinted(&desired);
    stored.metadata.managed_fields = Some(
        ["kubectl-create", crate::identity::field_manager()]
            .map(|manager| ManagedFieldsEntry {
                manager: Some(manager.to_owned()),
                operation: Some("Apply".to_owned()),
                ..ManagedFieldsEntry::default()
            })
            .to_vec(),
    );

    // Any event would fail the scenario: the script ends after the apply.
    let applied = server
        .run(
            ctx.apply_workload(&owner, &desired, &synced_cache_of(&[]), "app"),
            async |server| {
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::OK, &stored);
            },
        )
        .await
        .expect("the workload is applied");
    assert_eq!(applied, stored);
}

#[tokio::test]
async fn a_steady_reconcile_of_an_unchanged_operand_sends_nothing() {
    let (ctx, mut server) = testing::context();
    let mut owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    let running = reporting(
        crate::client::fingerprint::fingerprinted(&desired),
        deployment_status(1, 1),
    );
    let running = stored_at(running, 1);
    let conditions = Conditions::of(&owner, Timestamp::now());
    owner.status = Some(widget_status(&owner, &running, &conditions));
    let cache = cache_of(&running);
    cache.prove(&running);

    // Any request, a read or a write, would fail the scenario.
    let action = server
        .run(
            ctx.apply_operand(&owner, &desired, &cache, "app", widget_status),
            async |_| {},
        )
        .await
        .expect("the operand is reconciled");
    assert_eq!(action, Action::requeue(RESYNC_PERIOD));
}

#[tokio::test]
async fn a_copy_never_proven_is_read_once_and_not_written_when_up_to_date() {
    let (ctx, mut server) = testing::context();
    let mut owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    // What a manager that just started finds: a workload an earlier one applied.
    let running = stored_at(
        reporting(
            crate::client::fingerprint::fingerprinted(&desired),
            deployment_status(1, 1),
        ),
        4,
    );
    let conditions = Conditions::of(&owner, Timestamp::now());
    owner.status = Some(widget_status(&owner, &running, &conditions));
    let cache = synced_cache_of(std::slice::from_ref(&running));

    server
        .run(
            ctx.apply_operand(&owner, &desired, &cache, "app", widget_status),
            async |server| server.expect_get(&desired, Some(&running)).await,
        )
        .await
        .expect("the operand is reconciled");
    // Proven now: the next reconcile sends nothing (any request would fail it).
    server
        .run(
            ctx.apply_operand(&owner, &desired, &cache, "app", widget_status),
            async |_| {},
        )
        .await
        .expect("the operand is reconciled");
}

#[tokio::test]
async fn a_spec_someone_changed_after_the_proof_is_applied_again_without_a_read() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    let applied = stored_at(crate::client::fingerprint::fingerprinted(&desired), 1);
    // Someone scaled it to 5: the spec changed, so did the generation; the fingerprint and
    // the metadata did not.
    let fingerprint = crate::client::fingerprint::FINGERPRINT_ANNOTATION.to_owned();
    let mut edited = stored_at(deployment(5, IMAGE), 2);
    let applied_fingerprint = applied.annotations()[&fingerprint].clone();
    edited
        .annotations_mut()
        .insert(fingerprint, applied_fingerprint);
    let cache = synced_cache_of(std::slice::from_ref(&edited));
    cache.prove(&applied);

    let stored = server
        .run(
            ctx.apply_workload(&owner, &desired, &cache, "app"),
            async |server| {
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::OK, &stored_at(applied.clone(), 3));
                let event = server.expect_event(&owner, "Normal", "Scaled").await;
                assert_eq!(event["note"], "Scaled from 5 to 1 replicas");
            },
        )
        .await
        .expect("the workload is applied");
    // The apply's reply is proven: its copy, when the watch shows it, is up to date.
    assert_eq!(
        cache.judge(
            &WorkloadCopy::of(&stored),
            &crate::client::fingerprint::fingerprinted(&desired)
        ),
        Judgment::UpToDate
    );
}

#[tokio::test]
async fn a_workload_someone_changed_is_applied_again() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    // Scaled to 5 by someone, after this manager applied `desired`.
    let fingerprint = crate::client::fingerprint::FINGERPRINT_ANNOTATION.to_owned();
    let applied =
        crate::client::fingerprint::fingerprinted(&desired).annotations()[&fingerprint].clone();
    let mut edited = reporting(deployment(5, IMAGE), deployment_status(5, 5));
    edited.annotations_mut().insert(fingerprint, applied);

    server
        .run(
            ctx.apply_workload(&owner, &desired, &cache_of(&edited), "app"),
            async |server| {
                server.expect_get(&desired, Some(&edited)).await;
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::OK, &desired);
                let event = server.expect_event(&owner, "Normal", "Scaled").await;
                assert_eq!(event["note"], "Scaled from 5 to 1 replicas");
            },
        )
        .await
        .expect("the workload is applied");
}

#[tokio::test]
async fn a_cache_behind_the_last_apply_costs_a_read_not_a_second_write_or_event() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let before = crate::client::fingerprint::fingerprinted(&deployment(1, IMAGE));
    let desired = deployment(3, IMAGE);
    let applied = reporting(
        crate::client::fingerprint::fingerprinted(&desired),
        deployment_status(3, 1),
    );

    let stored = server
        .run(
            ctx.apply_workload(&owner, &desired, &cache_of(&before), "app"),
            async |server| {
                server.expect_get(&desired, Some(&applied)).await;
            },
        )
        .await
        .expect("nothing to apply");
    assert_eq!(stored, applied);
}

/// `workload` as the API server stores it at `generation` (without a uid).
fn at_generation(mut workload: Deployment, generation: i64) -> Deployment {
    workload.metadata.generation = Some(generation);
    workload
}

#[tokio::test]
async fn a_copy_that_missed_someone_elses_change_gives_no_from_values() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    // The watch's copy is at generation 1 (1 replica); someone scaled it to 3 (generation 2),
    // and the watch has not delivered that yet when this manager applies 5 replicas and a new
    // image (generation 3).
    let copy = at_generation(
        crate::client::fingerprint::fingerprinted(&deployment(1, IMAGE)),
        1,
    );
    let desired = deployment(5, "example.com/app:2");
    let stored = at_generation(crate::client::fingerprint::fingerprinted(&desired), 3);

    server
        .run(
            ctx.apply_workload(&owner, &desired, &synced_cache_of(&[copy]), "app"),
            async |server| {
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::OK, &stored);
                let event = server.expect_event(&owner, "Normal", "Scaled").await;
                assert_eq!(
                    event["note"], "Scaled to 5 replicas",
                    "not from 1: it was 3"
                );
                let event = server.expect_event(&owner, "Normal", "Upgraded").await;
                assert_eq!(event["note"], "Rolling out example.com/app:2");
            },
        )
        .await
        .expect("the workload is applied");
}

#[tokio::test]
async fn a_copy_one_generation_behind_the_apply_gives_the_from_values() {
    let (ctx, mut server) = testing::context();
    let owner = test_kinds::widget();
    let copy = at_generation(
        crate::client::fingerprint::fingerprinted(&deployment(1, IMAGE)),
        1,
    );
    let desired = deployment(5, IMAGE);
    let stored = at_generation(crate::client::fingerprint::fingerprinted(&desired), 2);

    server
        .run(
            ctx.apply_workload(&owner, &desired, &synced_cache_of(&[copy]), "app"),
            async |server| {
                let request = server.expect_applied(&desired).await;
                request.reply(StatusCode::OK, &stored);
                let event = server.expect_event(&owner, "Normal", "Scaled").await;
                assert_eq!(event["note"], "Scaled from 1 to 5 replicas");
            },
        )
        .await
        .expect("the workload is applied");
}

#[tokio::test]
async fn a_workload_on_its_way_up_costs_no_status_write_until_it_is_available() {
    let (ctx, mut server) = testing::context();
    let mut owner = test_kinds::widget();
    let desired = deployment(1, IMAGE);
    // The status written when the Deployment was created, before its controller acted.
    let created = stored_at(crate::client::fingerprint::fingerprinted(&desired), 1);
    let conditions = Conditions::of(&owner, Timestamp::now());
    owner.status = Some(widget_status(&owner, &created, &conditions));
    let proven_cache_of = |workload: &Deployment| {
        let cache = synced_cache_of(std::slice::from_ref(workload));
        cache.prove(workload);
        cache
    };

    // Its pod is made, not ready yet: nothing the status did not say (any request fails).
    let starting = reporting(
        created.clone(),
        DeploymentStatus {
            observed_generation: Some(1),
            ..deployment_status(1, 0)
        },
    );
    let cache = proven_cache_of(&starting);
    server
        .run(
            ctx.apply_operand(&owner, &desired, &cache, "app", widget_status),
            async |_| {},
        )
        .await
        .expect("the operand is reconciled");

    // Ready: one write.
    let cache = proven_cache_of(&reporting(created, deployment_status(1, 1)));
    server
        .run(
            ctx.apply_operand(&owner, &desired, &cache, "app", widget_status),
            async |server| {
                let status = server.expect_status_applied(&owner).await;
                assert_eq!(status["conditions"][0]["status"], "True");
            },
        )
        .await
        .expect("the operand is reconciled");
}

#[test]
fn a_status_that_only_tells_steps_on_the_way_up_is_not_news() {
    let owner = test_kinds::widget();
    let now = Timestamp::now();
    let status = |available: bool, reason: &str, message: &str| test_kinds::WidgetStatus {
        conditions: vec![Conditions::of(&owner, now).set(AVAILABLE, available, reason, message)],
        observed_generation: owner.metadata.generation,
    };
    let written = status(false, "ReplicasNotReady", "0 of 3 replicas ready");
    let one_ready = status(false, "ReplicasNotReady", "1 of 3 replicas ready");
    assert!(is_still_unavailable(Some(&written), &one_ready));
    assert!(!is_still_unavailable(None, &one_ready), "no status yet");
    let available = status(true, "ReplicasReady", "3 of 3 replicas ready");
    assert!(!is_still_unavailable(Some(&written), &available));
    let other_reason = status(false, "ScaledDown", "");
    assert!(!is_still_unavailable(Some(&written), &other_reason));
    let was_available = status(true, "ReplicasReady", "3 of 3 replicas ready");
    assert!(
        !is_still_unavailable(Some(&was_available), &was_available.clone()),
        "only while unavailable"
    );
}
