use ::k8s_openapi::api::apps::v1::StatefulSet;

use super::*;
use crate::operand::fixtures::{IMAGE, deployment, deployment_status, reporting};

#[test]
fn changes_are_what_users_care_about() {
    let running = deployment(1, IMAGE);
    assert_eq!(
        changes(None, &running, "app"),
        [Change::Created {
            workload: "Deployment",
            replicas: 1,
            image: IMAGE.to_owned()
        }]
    );
    assert!(changes(Some(&running), &running, "app").is_empty());
    // What the API server adds (a status) is no change.
    let reported = reporting(running.clone(), deployment_status(1, 1));
    assert!(changes(Some(&reported), &running, "app").is_empty());

    let next = deployment(2, "example.com/app:2");
    assert_eq!(
        changes(Some(&running), &next, "app"),
        [
            Change::Scaled { from: 1, to: 2 },
            Change::Upgraded {
                from: IMAGE.to_owned(),
                to: "example.com/app:2".to_owned()
            },
        ]
    );
    let notes: Vec<String> = changes(Some(&running), &next, "app")
        .iter()
        .map(Change::note)
        .collect();
    assert_eq!(
        notes,
        [
            "Scaled from 1 to 2 replicas",
            "Rolling out example.com/app:2 (was example.com/app:1)"
        ]
    );
    // Without what it was before (a copy that missed someone's change), the new values only.
    let notes: Vec<String> = changes(Some(&running), &next, "app")
        .iter()
        .map(Change::note_without_from)
        .collect();
    assert_eq!(
        notes,
        ["Scaled to 2 replicas", "Rolling out example.com/app:2"]
    );
    let created = &changes(None, &StatefulSet::default(), "app")[0];
    assert_eq!(created.note_without_from(), created.note());
    assert_eq!(
        (created.reason(), created.action(), created.note()),
        (
            "Created",
            "Create",
            "Created StatefulSet running , replicas: 1".to_owned()
        )
    );
}
