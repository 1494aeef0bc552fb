//! How far an operand's workload has come, from what it reports: the `Available` and
//! `Progressing` conditions, and the failures a Deployment reports.

use ::k8s_openapi::api::apps::v1::Deployment;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::conditions::{AVAILABLE, Conditions, PROGRESSING};

/// How far a workload has come towards the replicas its owner wants, from what it reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// `Deployment` or `StatefulSet`.
    pub workload: &'static str,
    /// Its pods, …
    pub replicas: i32,
    /// … those of them that are ready, …
    pub ready: i32,
    /// … and those that run its current spec.
    pub updated: i32,
    /// Its controller has not acted on its latest spec yet.
    pub pending: bool,
    /// A rollout is under way that the counts do not show (a StatefulSet whose update
    /// revision is not its current one).
    pub rolling: bool,
}

impl Progress {
    /// The [`AVAILABLE`] condition: whether enough pods are ready, all `wanted` of them
    /// (none are needed at 0).
    pub fn available(&self, conditions: &Conditions, wanted: i32) -> Condition {
        let ready = self.ready;
        let message = format!("{ready} of {wanted} replicas ready");
        if wanted == 0 {
            conditions.set(AVAILABLE, true, "ScaledToZero", "Scaled to 0 replicas")
        } else if ready >= wanted {
            conditions.set(AVAILABLE, true, "ReplicasReady", message)
        } else {
            conditions.set(AVAILABLE, false, "ReplicasNotReady", message)
        }
    }

    /// The [`PROGRESSING`] condition: whether a rollout or a scaling is under way, or pods are
    /// not ready yet. While no pod is ready, it says only that.
    pub fn progressing(&self, conditions: &Conditions, wanted: i32) -> Condition {
        let Self {
            workload,
            replicas,
            ready,
            updated,
            ..
        } = *self;
        let (progressing, reason, message) = if ready == 0 && wanted > 0 {
            // Nothing runs yet: a new workload, or one whose pods all fail. Its controller's
            // steps on the way (acting on the spec, creating pods) are not news to the owner,
            // and reporting each would rewrite its status at every one.
            let message = format!("0 of {wanted} replicas ready");
            (true, "WaitingForReadyReplicas", message)
        } else if self.pending {
            let message = format!("The {workload} controller has not acted on the new spec yet");
            (true, "Updating", message)
        } else if updated < replicas || self.rolling {
            let message = format!("{updated} of {replicas} replicas run the current spec");
            (true, "RollingOut", message)
        } else if replicas != wanted {
            let message = format!("Scaling from {replicas} to {wanted} replicas");
            (true, "Scaling", message)
        } else if ready < wanted {
            let message = format!("{ready} of {wanted} replicas ready");
            (true, "WaitingForReadyReplicas", message)
        } else {
            let message = format!("{wanted} replicas run the current spec");
            (false, "Complete", message)
        };
        conditions.set(PROGRESSING, progressing, reason, message)
    }
}

/// A failure a Deployment reports: its progress deadline passed (`Progressing` is `False`), or
/// it cannot create pods (`ReplicaFailure`, e.g. over a quota). StatefulSets report none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The condition's reason.
    pub reason: String,
    /// Its message.
    pub message: String,
}

/// The failure `deployment` reports, if any.
pub fn failure(deployment: &Deployment) -> Option<Failure> {
    let status = deployment.status.as_ref()?;
    let failed = status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| {
            matches!(
                (condition_field(&c.type_), condition_field(&c.status)),
                (Some("Progressing"), Some("False")) | (Some("ReplicaFailure"), Some("True"))
            )
        })?;
    Some(Failure {
        reason: failed
            .reason
            .clone()
            .unwrap_or_else(|| "DeploymentFailed".to_owned()),
        message: failed.message.clone().unwrap_or_default(),
    })
}

/// A field of a workload condition: `&String` before Kubernetes 1.37, `&Option<String>` from it.
fn condition_field<'a>(field: impl Into<Option<&'a String>>) -> Option<&'a str> {
    field.into().map(String::as_str)
}

#[cfg(test)]
mod tests;
