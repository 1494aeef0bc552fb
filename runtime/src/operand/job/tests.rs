use ::k8s_openapi::api::batch::v1::JobSpec;
use ::serde_json::json;

use super::*;
use crate::object::{AppLabels, owned_by};
use crate::operand::RestrictedPods;
use crate::test_kinds::{self, Widget, WidgetStatus};
use crate::testing;

fn job(widget: &Widget) -> Job {
    let labels = AppLabels::new("widget", "backup", widget);
    let pods = RestrictedPods::new(labels.all(), container("widget", "widget:1")).template();
    let spec = JobSpec {
        backoff_limit: Some(widget.spec.size),
        template: run_once(pods),
        ..JobSpec::default()
    };
    Job {
        metadata: owned_by(widget, labels.all()),
        spec: Some(spec),
        ..Job::default()
    }
}

fn status(widget: &Widget, run: &JobRun, conditions: &Conditions) -> WidgetStatus {
    WidgetStatus {
        conditions: run.conditions(conditions),
        observed_generation: widget.metadata.generation,
    }
}

fn reporting(job: Job, status: serde_json::Value) -> Job {
    let mut value = serde_json::to_value(job).expect("a Job serializes");
    value["status"] = status;
    serde_json::from_value(value).expect("a Job with a status")
}

fn at_epoch() -> Conditions {
    Conditions::of(&test_kinds::widget(), Timestamp::UNIX_EPOCH)
}

#[test]
fn the_pods_of_a_job_are_replaced_not_restarted() {
    let pods = job(&test_kinds::widget()).spec.expect("a spec").template;
    let restart = pods.spec.and_then(|spec| spec.restart_policy);
    assert_eq!(restart.as_deref(), Some("Never"));
}

#[test]
fn the_run_follows_what_the_job_reports() {
    let new = JobRun::of(&job(&test_kinds::widget()));
    assert_eq!(
        (new.phase, new.attempts, new.outcome),
        (Phase::Pending, 0, None)
    );

    let running = reporting(job(&test_kinds::widget()), json!({"active": 1}));
    assert_eq!(JobRun::of(&running).phase, Phase::Running);

    let done = json!({
        "succeeded": 1, "failed": 1,
        "startTime": "2026-01-01T03:00:00Z", "completionTime": "2026-01-01T03:05:00Z",
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods"},
        ],
    });
    let run = JobRun::of(&reporting(job(&test_kinds::widget()), done));
    assert_eq!((run.phase, run.attempts), (Phase::Succeeded, 2));
    assert!(run.completion_time.is_some() && run.start_time.is_some());
    let conditions = run.conditions(&at_epoch());
    assert_eq!(
        testing::summary(&conditions, COMPLETE),
        (
            "True",
            "CompletionsReached",
            "Reached expected number of succeeded pods"
        )
    );
    assert_eq!(testing::summary(&conditions, FAILED).0, "False");

    let failed = json!({
        "failed": 3,
        "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit"}],
    });
    let run = JobRun::of(&reporting(job(&test_kinds::widget()), failed));
    let conditions = run.conditions(&at_epoch());
    assert_eq!((run.phase, run.completion_time), (Phase::Failed, None));
    assert_eq!(
        testing::summary(&conditions, FAILED).1,
        "BackoffLimitExceeded"
    );
    assert_eq!(
        testing::summary(&conditions, COMPLETE),
        ("False", "Failed", "The Job is failed")
    );
}

#[test]
fn the_fingerprint_changes_with_the_spec_only() {
    let mut widget = test_kinds::widget();
    let before = fingerprint(&job(&widget));
    assert_eq!(before.len(), 16);
    assert_eq!(
        fingerprint(&stamped(job(&widget))),
        before,
        "not its metadata"
    );
    widget.spec.size = 7;
    assert_ne!(fingerprint(&job(&widget)), before);
}

#[tokio::test]
async fn a_new_object_gets_its_job_with_an_event_then_its_status() {
    let operand = JobOperand::new("widget", job, status);
    let widget = test_kinds::widget();
    let action = testing::apply(&operand, &widget, async |server| {
        server.expect_created(&stamped(job(&widget))).await;
        server.expect_event(&widget, "Normal", "Created").await;
        let status = server.expect_status_applied(&widget).await;
        assert_eq!(status["conditions"][0]["reason"], "Pending");
        assert_eq!(status["conditions"][2]["status"], "False");
    })
    .await;
    assert_eq!(
        action.expect("apply succeeds"),
        Action::requeue(RESYNC_PERIOD)
    );
}

#[tokio::test]
async fn a_spec_changed_after_the_job_started_is_reported_not_applied() {
    let operand = JobOperand::new("widget", job, status);
    let mut widget = test_kinds::widget();
    let made = stamped(job(&widget));
    widget.spec.size = 7;
    let action = testing::apply(&operand, &widget, async |server| {
        // Read, never written again.
        server.expect_get(&made, Some(&made)).await;
        let status = server.expect_status_applied(&widget).await;
        assert_eq!(status["conditions"][2]["type"], OUTDATED);
        assert_eq!(status["conditions"][2]["status"], "True");
        let event = server.expect_event(&widget, "Warning", OUTDATED).await;
        assert!(event["note"].as_str().unwrap_or("").contains("re-create"));
    })
    .await;
    assert!(action.is_ok(), "{action:?}");
}

#[tokio::test]
async fn a_finished_job_that_is_gone_is_not_run_again() {
    let operand = JobOperand::new("widget", job, status);
    let mut widget = test_kinds::widget();
    let conditions = at_epoch();
    widget.status = Some(WidgetStatus {
        conditions: vec![conditions.set(COMPLETE, true, "CompletionsReached", "")],
        observed_generation: widget.metadata.generation,
    });
    let action = testing::apply(&operand, &widget, async |server| {
        server.expect_get(&stamped(job(&widget)), None).await;
    })
    .await;
    assert_eq!(action.expect("nothing to do"), Action::await_change());
}

fn gizmo_job(gizmo: &test_kinds::Gizmo) -> Job {
    let labels = AppLabels::new("gizmo", "backup", gizmo);
    let pods = RestrictedPods::new(labels.all(), container("gizmo", "gizmo:1")).template();
    let spec = JobSpec {
        template: run_once(pods),
        ..JobSpec::default()
    };
    Job {
        metadata: owned_by(gizmo, labels.all()),
        spec: Some(spec),
        ..Job::default()
    }
}

fn gizmo_status(gizmo: &test_kinds::Gizmo, run: &JobRun, conditions: &Conditions) -> WidgetStatus {
    WidgetStatus {
        conditions: run.conditions(conditions),
        observed_generation: gizmo.metadata.generation,
    }
}

fn referencing() -> (JobOperand<test_kinds::Gizmo>, test_kinds::Gizmo) {
    let reference: Reference<_, Widget> =
        Reference::new("WIDGET", |g: &test_kinds::Gizmo| &g.spec.widget_ref);
    let operand =
        JobOperand::new("gizmo", gizmo_job, gizmo_status).references(reference.service_port(80));
    let mut gizmo = test_kinds::gizmo();
    gizmo.spec.widget_ref = testing::NAME.to_owned();
    (operand, gizmo)
}

#[tokio::test]
async fn without_its_referenced_object_no_job_is_made_and_the_status_says_why() {
    let (operand, gizmo) = referencing();
    let widget = test_kinds::widget();
    let action = testing::apply(&operand, &gizmo, async |server| {
        server.expect_get(&widget, None).await;
        server.expect_get(&stamped(gizmo_job(&gizmo)), None).await;
        let status = server.expect_status_applied(&gizmo).await;
        assert_eq!(status["conditions"][0]["reason"], "Pending");
        assert_eq!(status["conditions"][3]["type"], reference::REFERENCED);
        assert_eq!(status["conditions"][3]["status"], "False");
        assert_eq!(status["conditions"][3]["reason"], reference::NOT_FOUND);
    })
    .await;
    // Not a requeue: the watch of the referenced kind brings the object back.
    assert_eq!(action.expect("apply succeeds"), Action::await_change());
}

#[tokio::test]
async fn with_its_referenced_object_the_job_gets_its_address() {
    let (operand, gizmo) = referencing();
    let widget = test_kinds::widget();
    let mut expected = gizmo_job(&gizmo);
    let spec = expected.spec.as_mut().expect("a spec");
    let env = reference::env("WIDGET", testing::NAME, testing::NAMESPACE, Some(80));
    spec.template = reference::with_env(spec.template.clone(), &env);
    let action = testing::apply(&operand, &gizmo, async |server| {
        server.expect_get(&widget, Some(&widget)).await;
        server.expect_created(&stamped(expected.clone())).await;
        server.expect_event(&gizmo, "Normal", "Created").await;
        let status = server.expect_status_applied(&gizmo).await;
        assert_eq!(status["conditions"][3]["reason"], reference::FOUND);
        assert_eq!(status["conditions"][2]["status"], "False", "not outdated");
    })
    .await;
    assert_eq!(
        action.expect("apply succeeds"),
        Action::requeue(RESYNC_PERIOD)
    );
}
