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
    assert_eq!(change(None, &running).map(|c| c.0), Some("Created"));
    assert_eq!(change(Some(&running), &running), None);
    widget.spec.size = 0;
    let suspended = cronjob(&widget);
    assert_eq!(
        change(Some(&running), &suspended).map(|c| c.0),
        Some("Suspended")
    );
    assert_eq!(
        change(Some(&suspended), &running).map(|c| c.0),
        Some("Resumed")
    );
    let mut hourly = running.clone();
    let mut spec = spec_of(&running).cloned().expect("a spec");
    spec.schedule = "@hourly".to_owned();
    hourly = with_spec(hourly.metadata, spec);
    let (reason, note) = change(Some(&running), &hourly).expect("a change");
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
