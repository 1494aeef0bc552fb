use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ::k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::*;
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

#[test]
fn a_condition_records_the_generation_and_when_its_status_changed() {
    let conditions = Conditions::new(Vec::new(), Some(3), at(100));
    assert_eq!(
        conditions.set("Ready", true, "Reconciled", "all good"),
        Condition {
            type_: "Ready".to_owned(),
            status: "True".to_owned(),
            reason: "Reconciled".to_owned(),
            message: "all good".to_owned(),
            observed_generation: Some(3),
            last_transition_time: Time(at(100)),
        }
    );
}

#[test]
fn the_transition_time_holds_while_the_status_does() {
    let earlier = Conditions::new(Vec::new(), Some(3), at(100));
    let current = vec![
        earlier.set("Ready", true, "Reconciled", ""),
        earlier.set("Degraded", false, "AsExpected", ""),
    ];
    let later = Conditions::new(current, Some(4), at(200));

    let ready = later.set("Ready", true, "StillReconciled", "new message");
    assert_eq!(ready.last_transition_time, Time(at(100)));
    assert_eq!(ready.observed_generation, Some(4));
    let degraded = later.set("Degraded", true, "Broken", "");
    assert_eq!(degraded.last_transition_time, Time(at(200)));
    let new = later.set("Progressing", false, "Complete", "");
    assert_eq!(new.last_transition_time, Time(at(200)));

    assert_eq!(
        later.held_for("Ready", true),
        Some(SignedDuration::from_secs(100))
    );
    assert_eq!(later.held_for("Ready", false), None);
    assert_eq!(later.held_for("Progressing", true), None);
}

#[test]
fn the_current_conditions_are_those_of_the_status() {
    let mut widget = test_kinds::widget();
    let none = Conditions::of(&widget, at(200));
    assert_eq!(
        none.set("Ready", true, "R", "").last_transition_time,
        Time(at(200))
    );

    let earlier = Conditions::new(Vec::new(), Some(3), at(100));
    widget.status = Some(status(vec![earlier.set("Ready", true, "R", "")]));
    let conditions = Conditions::of(&widget, at(200));
    let ready = conditions.set("Ready", true, "R", "");
    assert_eq!(ready.last_transition_time, Time(at(100)));
    assert_eq!(ready.observed_generation, Some(testing::GENERATION));
}
