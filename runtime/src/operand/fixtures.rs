//! What the operand's tests share: a Deployment of the test widget, and what it reports.

use ::k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus, StatefulSet,
    StatefulSetSpec, StatefulSetStatus,
};
use ::k8s_openapi::api::core::v1::{Container, PersistentVolumeClaim};
use ::serde_json::json;

use super::pods::RestrictedPods;
use super::progress::Progress;
use super::workload::Workload as _;
use crate::client::fingerprint::fingerprinted;
use crate::object::{AppLabels, owned_by};
use crate::test_kinds;

pub(super) const IMAGE: &str = "example.com/app:1";

pub(super) fn deployment(replicas: i32, image: &str) -> Deployment {
    let owner = test_kinds::widget();
    let labels = AppLabels::new("widget", "server", &owner);
    let container = Container {
        name: "app".to_owned(),
        image: Some(image.to_owned()),
        ..Container::default()
    };
    let spec = DeploymentSpec {
        replicas: Some(replicas),
        selector: labels.label_selector(),
        template: RestrictedPods::new(labels.all(), container).template(),
        ..DeploymentSpec::default()
    };
    Deployment::with_spec(owned_by(&owner, labels.all()), spec)
}

pub(super) fn reporting(mut deployment: Deployment, status: DeploymentStatus) -> Deployment {
    deployment.status = Some(status);
    deployment
}

/// What a Deployment reports when `ready` of its `replicas` pods, all up to date, are ready.
pub(super) fn deployment_status(replicas: i32, ready: i32) -> DeploymentStatus {
    DeploymentStatus {
        replicas: Some(replicas),
        ready_replicas: Some(ready),
        updated_replicas: Some(replicas),
        ..DeploymentStatus::default()
    }
}

/// The status, reason and message of a condition.
pub(super) fn progress(replicas: i32, ready: i32, updated: i32) -> Progress {
    Progress {
        workload: "Deployment",
        replicas,
        ready,
        updated,
        ..Progress::default()
    }
}

/// A Deployment of 3 pods as stored: fingerprinted, with a uid, at `generation`, 2 pods
/// ready and its progress deadline passed.
pub(super) fn stored_deployment(generation: i64) -> Deployment {
    let conditions: Vec<DeploymentCondition> = serde_json::from_value(json!([{
        "type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
        "message": "took too long",
    }]))
    .expect("conditions");
    let stored = reporting(
        fingerprinted(&deployment(3, IMAGE)),
        DeploymentStatus {
            conditions: Some(conditions),
            observed_generation: Some(generation - 1),
            ..deployment_status(3, 2)
        },
    );
    stored_at(stored, generation)
}

/// `workload` as the API server stores it: with a uid, at `generation`.
pub(super) fn stored_at(mut workload: Deployment, generation: i64) -> Deployment {
    workload.metadata.uid = Some("5e0c-1".to_owned());
    workload.metadata.generation = Some(generation);
    workload
}

/// A StatefulSet of 2 pods with a volume claim template, rolling out a new revision.
pub(super) fn rolling_statefulset() -> StatefulSet {
    let owner = test_kinds::widget();
    let labels = AppLabels::new("widget", "store", &owner);
    let container = Container {
        name: "app".to_owned(),
        image: Some(IMAGE.to_owned()),
        args: Some(vec!["--data=/data".to_owned()]),
        ..Container::default()
    };
    let spec = StatefulSetSpec {
        replicas: Some(2),
        selector: labels.label_selector(),
        service_name: Some("widget".to_owned()),
        template: RestrictedPods::new(labels.all(), container).template(),
        volume_claim_templates: Some(vec![PersistentVolumeClaim::default()]),
        ..StatefulSetSpec::default()
    };
    let mut statefulset = StatefulSet::with_spec(owned_by(&owner, labels.all()), spec);
    statefulset.status = Some(StatefulSetStatus {
        replicas: 2,
        ready_replicas: Some(1),
        updated_replicas: Some(2),
        current_revision: Some("widget-1".to_owned()),
        update_revision: Some("widget-2".to_owned()),
        ..StatefulSetStatus::default()
    });
    statefulset
}
