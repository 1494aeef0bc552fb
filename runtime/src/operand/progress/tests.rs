use ::k8s_openapi::api::apps::v1::{
    DeploymentCondition, DeploymentStatus, StatefulSet, StatefulSetStatus,
};
use ::k8s_openapi::jiff::Timestamp;
use ::serde_json::json;

use super::*;
use crate::operand::fixtures::{IMAGE, deployment, deployment_status, progress, reporting};
use crate::operand::workload::Workload as _;

#[derive(Debug, PartialEq, Eq)]
struct Summary {
    status: String,
    reason: String,
    message: String,
}

impl From<(&str, &str, &str)> for Summary {
    fn from((status, reason, message): (&str, &str, &str)) -> Self {
        Summary {
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
        }
    }
}

fn summary(condition: &Condition) -> Summary {
    let c = condition;
    (c.status.as_str(), c.reason.as_str(), c.message.as_str()).into()
}

#[test]
fn availability_counts_ready_pods() {
    let conditions = Conditions::new(Vec::new(), Some(3), Timestamp::UNIX_EPOCH);
    let available = |progress: Progress, wanted| {
        let condition = progress.available(&conditions, wanted);
        summary(&condition)
    };
    assert_eq!(
        available(progress(3, 3, 3), 3),
        ("True", "ReplicasReady", "3 of 3 replicas ready").into()
    );
    assert_eq!(
        available(progress(3, 1, 3), 3),
        ("False", "ReplicasNotReady", "1 of 3 replicas ready").into()
    );
    assert_eq!(
        available(progress(0, 0, 0), 0),
        ("True", "ScaledToZero", "Scaled to 0 replicas").into()
    );
}

#[test]
fn progressing_says_what_is_under_way() {
    let conditions = Conditions::new(Vec::new(), Some(3), Timestamp::UNIX_EPOCH);
    let progressing = |progress: Progress| {
        let condition = progress.progressing(&conditions, 3);
        summary(&condition)
    };

    assert_eq!(
        progressing(progress(3, 3, 3)),
        ("False", "Complete", "3 replicas run the current spec").into()
    );
    assert_eq!(
        progressing(progress(0, 0, 0)),
        ("True", "WaitingForReadyReplicas", "0 of 3 replicas ready").into(),
        "a new workload"
    );
    assert_eq!(
        progressing(progress(1, 1, 1)),
        ("True", "Scaling", "Scaling from 1 to 3 replicas").into()
    );
    let nothing_ready_yet = Progress {
        pending: true,
        ..progress(3, 0, 2)
    };
    assert_eq!(
        progressing(nothing_ready_yet),
        ("True", "WaitingForReadyReplicas", "0 of 3 replicas ready").into(),
        "the steps of a workload with nothing ready are not told apart"
    );
    assert_eq!(
        progressing(progress(3, 1, 3)),
        ("True", "WaitingForReadyReplicas", "1 of 3 replicas ready").into()
    );
    assert_eq!(
        progressing(progress(3, 3, 1)),
        ("True", "RollingOut", "1 of 3 replicas run the current spec").into()
    );
    let revisions = Progress {
        rolling: true,
        ..progress(3, 3, 3)
    };
    assert_eq!(progressing(revisions).reason, "RollingOut");
    let pending = Progress {
        pending: true,
        ..progress(3, 3, 3)
    };
    assert_eq!(
        progressing(pending),
        (
            "True",
            "Updating",
            "The Deployment controller has not acted on the new spec yet"
        )
            .into()
    );
}

#[test]
fn workloads_report_their_progress() {
    let created = deployment(3, IMAGE);
    assert_eq!(created.progress(), progress(0, 0, 0));

    let mut updated = reporting(
        deployment(3, IMAGE),
        DeploymentStatus {
            observed_generation: Some(1),
            ..deployment_status(3, 2)
        },
    );
    updated.metadata.generation = Some(2);
    assert_eq!(
        updated.progress(),
        Progress {
            pending: true,
            ..progress(3, 2, 3)
        }
    );

    let statefulset = StatefulSet {
        status: Some(StatefulSetStatus {
            replicas: 2,
            ready_replicas: Some(2),
            updated_replicas: Some(2),
            current_revision: Some("test-1".to_owned()),
            update_revision: Some("test-2".to_owned()),
            ..StatefulSetStatus::default()
        }),
        ..StatefulSet::default()
    };
    assert_eq!(
        statefulset.progress(),
        Progress {
            workload: "StatefulSet",
            rolling: true,
            ..progress(2, 2, 2)
        }
    );
}

#[test]
fn deployments_report_failures_in_their_conditions() {
    // Built from JSON: the shape of DeploymentCondition depends on the Kubernetes version.
    let with_conditions = |conditions| {
        let conditions: Vec<DeploymentCondition> =
            serde_json::from_value(conditions).expect("conditions");
        let status = DeploymentStatus {
            conditions: Some(conditions),
            ..deployment_status(1, 0)
        };
        reporting(deployment(1, IMAGE), status)
    };

    let stuck = with_conditions(json!([
        { "type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable" },
        {
            "type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
            "message": "ReplicaSet \"test-5d9c\" has timed out progressing.",
        },
    ]));
    assert_eq!(
        failure(&stuck),
        Some(Failure {
            reason: "ProgressDeadlineExceeded".to_owned(),
            message: "ReplicaSet \"test-5d9c\" has timed out progressing.".to_owned(),
        })
    );

    let over_quota = with_conditions(json!([
        {
            "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
            "message": "exceeded quota",
        },
    ]));
    assert_eq!(
        failure(&over_quota).map(|f| f.reason),
        Some("FailedCreate".to_owned())
    );

    let progressing = with_conditions(json!([
        { "type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable" },
    ]));
    assert_eq!(failure(&progressing), None);
    assert_eq!(failure(&deployment(1, IMAGE)), None);
}
