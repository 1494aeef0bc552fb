//! What the operand's tests share: a Deployment of the test widget, and what it reports.

use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
use ::k8s_openapi::api::core::v1::Container;

use super::pods::RestrictedPods;
use super::progress::Progress;
use super::workload::Workload as _;
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
