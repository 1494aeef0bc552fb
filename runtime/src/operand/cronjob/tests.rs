use ::k8s_openapi::api::batch::v1::{JobSpec, JobTemplateSpec};
use ::serde_json::json;

use super::*;
use crate::object::{AppLabels, owned_by};
use crate::test_kinds::{self, Widget, WidgetStatus};
use crate::testing;

fn cronjob(widget: &Widget) -> CronJob {
    let labels = AppLabels::new("widget", "backup", widget);
    let spec = CronJobSpec {
        schedule: "0 3 * * *".to_owned(),
        suspend: Some(widget.spec.size == 0),
        job_template: JobTemplateSpec {
            spec: Some(JobSpec::default()),
            ..JobTemplateSpec::default()
        },
        ..CronJobSpec::default()
    };
    with_spec(owned_by(widget, labels.all()), spec)
}

fn status(widget: &Widget, schedule: &Schedule, conditions: &Conditions) -> WidgetStatus {
    WidgetStatus {
        conditions: vec![schedule.scheduled(conditions)],
        observed_generation: widget.metadata.generation,
    }
}

#[test]
fn the_schedule_follows_what_the_cronjob_reports() {
    let mut widget = test_kinds::widget();
    widget.spec.size = 1;
    let mut value = serde_json::to_value(cronjob(&widget)).expect("serializes");
    value["status"] = json!({
        "lastScheduleTime": "2026-01-01T03:00:00Z",
        "lastSuccessfulTime": "2026-01-01T03:01:00Z",
        "active": [{"kind": "Job", "name": "test-29000000", "namespace": "team-a"}],
    });
    let schedule = Schedule::of(&serde_json::from_value(value).expect("a CronJob"));
    assert_eq!(schedule.active, ["test-29000000"]);
    assert!(schedule.last_schedule_time.is_some() && schedule.last_successful_time.is_some());
    let conditions = Conditions::of(&widget, Timestamp::UNIX_EPOCH);
    let scheduled = schedule.scheduled(&conditions);
    assert_eq!(
        (scheduled.status.as_str(), scheduled.reason.as_str()),
        ("True", "OnSchedule")
    );

    widget.spec.size = 0;
    let suspended = Schedule::of(&cronjob(&widget));
    assert!(suspended.suspended);
    assert_eq!(suspended.scheduled(&conditions).reason, "Suspended");
}

#[test]
fn suspending_resuming_and_rescheduling_are_worth_an_event() {
    let mut widget = test_kinds::widget();
    widget.spec.size = 1;
    let running = cronjob(&widget);
    assert_eq!(change(None, &running, None).map(|c| c.0), Some("Created"));
    assert_eq!(change(Some(&running), &running, None), None);
    widget.spec.size = 0;
    let suspended = cronjob(&widget);
    assert_eq!(
        change(Some(&running), &suspended, None).map(|c| c.0),
        Some("Suspended")
    );
    assert_eq!(
        change(Some(&suspended), &running, None).map(|c| c.0),
        Some("Resumed")
    );
    let mut hourly = running.clone();
    let mut spec = spec_of(&running).cloned().expect("a spec");
    spec.schedule = "@hourly".to_owned();
    hourly = with_spec(hourly.metadata, spec);
    let (reason, note) = change(Some(&running), &hourly, None).expect("a change");
    assert_eq!(
        (reason, note.as_str()),
        ("Rescheduled", "Rescheduled from `0 3 * * *` to `@hourly`")
    );
}

#[tokio::test]
async fn a_new_object_gets_its_cronjob_with_an_event_then_its_status() {
    let operand = CronJobOperand::new("widget", cronjob, status);
    let widget = test_kinds::widget();
    let action = testing::apply(&operand, &widget, async |server| {
        server.expect_created(&cronjob(&widget)).await;
        server.expect_event(&widget, "Normal", "Created").await;
        let status = server.expect_status_applied(&widget).await;
        assert_eq!(status["conditions"][0]["reason"], "Suspended");
    })
    .await;
    assert_eq!(
        action.expect("apply succeeds"),
        Action::requeue(RESYNC_PERIOD)
    );
}

fn gizmo_cronjob(gizmo: &test_kinds::Gizmo) -> CronJob {
    let labels = AppLabels::new("gizmo", "backup", gizmo);
    let pods = crate::operand::RestrictedPods::new(
        labels.all(),
        crate::operand::job::container("gizmo", "gizmo:1"),
    )
    .template();
    let spec = CronJobSpec {
        schedule: "0 3 * * *".to_owned(),
        suspend: Some(false),
        job_template: JobTemplateSpec {
            spec: Some(JobSpec {
                template: crate::operand::job::run_once(pods),
                ..JobSpec::default()
            }),
            ..JobTemplateSpec::default()
        },
        ..CronJobSpec::default()
    };
    with_spec(owned_by(gizmo, labels.all()), spec)
}

fn gizmo_status(
    gizmo: &test_kinds::Gizmo,
    schedule: &Schedule,
    conditions: &Conditions,
) -> WidgetStatus {
    WidgetStatus {
        conditions: schedule.conditions(conditions),
        observed_generation: gizmo.metadata.generation,
    }
}

/// A CronJob operand of gizmos, which reference widgets served on port 80, and a gizmo that
/// names the widget `testing::NAME`.
fn referencing() -> (CronJobOperand<test_kinds::Gizmo>, test_kinds::Gizmo) {
    let reference: Reference<_, Widget> =
        Reference::new("WIDGET", |g: &test_kinds::Gizmo| &g.spec.widget_ref);
    let operand = CronJobOperand::new("gizmo", gizmo_cronjob, gizmo_status)
        .references(reference.service_port(80));
    let mut gizmo = test_kinds::gizmo();
    gizmo.spec.widget_ref = testing::NAME.to_owned();
    (operand, gizmo)
}

/// The gizmo's CronJob, suspended as it is while its widget does not exist.
fn suspended(gizmo: &test_kinds::Gizmo) -> CronJob {
    let mut cronjob = gizmo_cronjob(gizmo);
    spec_mut(&mut cronjob).expect("a spec").suspend = Some(true);
    cronjob
}

/// The gizmo's CronJob once its widget exists: the widget's address in its Jobs' environment.
fn reaching_the_widget(gizmo: &test_kinds::Gizmo) -> CronJob {
    let mut cronjob = gizmo_cronjob(gizmo);
    let job = spec_mut(&mut cronjob)
        .and_then(|spec| spec.job_template.spec.as_mut())
        .expect("a Job spec");
    let env = reference::env("WIDGET", testing::NAME, testing::NAMESPACE, Some(80));
    job.template = reference::with_env(job.template.clone(), &env);
    cronjob
}

#[tokio::test]
async fn without_its_referenced_object_the_cronjob_is_made_suspended_and_the_status_says_why() {
    let (operand, gizmo) = referencing();
    let widget = test_kinds::widget();
    let action = testing::apply(&operand, &gizmo, async |server| {
        server.expect_get(&widget, None).await;
        server.expect_created(&suspended(&gizmo)).await;
        let event = server.expect_event(&gizmo, "Normal", "Created").await;
        assert_eq!(
            event["note"],
            "Created CronJob on the schedule `0 3 * * *`, suspended until its Widget exists"
        );
        let status = server.expect_status_applied(&gizmo).await;
        let scheduled = &status["conditions"][0];
        assert_eq!(scheduled["type"], SCHEDULED);
        assert_eq!(scheduled["status"], "False");
        assert_eq!(scheduled["reason"], reference::NOT_FOUND);
        let referenced = &status["conditions"][1];
        assert_eq!(referenced["type"], reference::REFERENCED);
        assert_eq!(referenced["status"], "False");
        assert_eq!(referenced["reason"], reference::NOT_FOUND);
        let message = referenced["message"].as_str().expect("a message");
        assert!(
            message.starts_with("Widget \"test\" does not exist in namespace \"team-a\"")
                && message.contains("Until then the CronJob is suspended: no Job starts"),
            "{message}"
        );
    })
    .await;
    assert_eq!(
        action.expect("apply succeeds"),
        Action::requeue(RESYNC_PERIOD)
    );
}

#[tokio::test]
async fn once_its_referenced_object_exists_the_cronjob_is_resumed_with_its_address() {
    let (operand, gizmo) = referencing();
    let widget = test_kinds::widget();
    let desired = reaching_the_widget(&gizmo);
    let action = testing::apply(&operand, &gizmo, async |server| {
        server.expect_get(&widget, Some(&widget)).await;
        server.expect_get(&desired, Some(&suspended(&gizmo))).await;
        let request = server.expect_applied(&desired).await;
        request.reply(::http::StatusCode::OK, &desired);
        let event = server.expect_event(&gizmo, "Normal", "Resumed").await;
        assert_eq!(event["note"], "Resumed: Jobs start on the schedule");
        let status = server.expect_status_applied(&gizmo).await;
        assert_eq!(status["conditions"][0]["reason"], "OnSchedule");
        assert_eq!(status["conditions"][1]["status"], "True");
        assert_eq!(status["conditions"][1]["reason"], reference::FOUND);
    })
    .await;
    assert_eq!(
        action.expect("apply succeeds"),
        Action::requeue(RESYNC_PERIOD)
    );
}

#[tokio::test]
async fn a_referenced_object_deleted_later_suspends_the_cronjob_with_an_event() {
    let (operand, gizmo) = referencing();
    let widget = test_kinds::widget();
    let desired = suspended(&gizmo);
    testing::apply(&operand, &gizmo, async |server| {
        server.expect_get(&widget, None).await;
        let running = reaching_the_widget(&gizmo);
        server.expect_get(&desired, Some(&running)).await;
        let request = server.expect_applied(&desired).await;
        request.reply(::http::StatusCode::OK, &desired);
        let event = server.expect_event(&gizmo, "Normal", "Suspended").await;
        assert_eq!(
            event["note"],
            "Suspended until its Widget exists: no new Job starts"
        );
        let status = server.expect_status_applied(&gizmo).await;
        assert_eq!(status["conditions"][0]["reason"], reference::NOT_FOUND);
    })
    .await
    .expect("apply succeeds");
}
