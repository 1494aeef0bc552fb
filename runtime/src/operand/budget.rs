//! The PodDisruptionBudget of an operand's workload: while it runs more than one pod, a
//! voluntary disruption (a node drain, a cluster upgrade) may evict only one of them at a
//! time, so the application is never taken down whole. At one pod a budget could only block
//! the drain forever, so there is none, and one left from a larger scale is deleted.

use ::k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ::kube::runtime::reflector::Store;

use super::apply::keep_companion;
use super::workload::Workload;
use crate::client::Context;
use crate::error::Error;

/// The budget `workload` needs: `None` at one replica or none; above, one that lets a single
/// pod of it (selected as the workload selects them) be unavailable at a time. It has the
/// workload's name, namespace, labels and owner, so that it is watched, and garbage-collected,
/// like the workload.
pub(crate) fn desired_budget<W: Workload>(workload: &W) -> Option<PodDisruptionBudget> {
    if workload.replicas() <= 1 {
        return None;
    }
    let made = workload.meta();
    Some(PodDisruptionBudget {
        metadata: ObjectMeta {
            name: made.name.clone(),
            namespace: made.namespace.clone(),
            labels: made.labels.clone(),
            owner_references: made.owner_references.clone(),
            ..ObjectMeta::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(1)),
            selector: workload.selector().cloned(),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    })
}

/// Keeps the budget of `workload` (see [`desired_budget`]) while it wants one, and deletes it
/// at one replica (see [`keep_companion`]).
pub(crate) async fn keep<W: Workload>(
    ctx: &Context,
    workload: &W,
    cache: &Store<PodDisruptionBudget>,
) -> Result<(), Error> {
    keep_companion(ctx, workload, desired_budget(workload), cache).await
}

#[cfg(test)]
mod tests;
