//! The HorizontalPodAutoscaler of an operand (`opgen create api --autoscale`): while the
//! custom object asks for autoscaling, an autoscaler (autoscaling/v2) scales the custom object
//! itself through its scale subresource, between a minimum and a maximum number of pods, to
//! keep their CPU use near a target. It writes the object's `spec.replicas`, which the
//! controller then gives the workload, so the two never fight over the workload's replicas.
//! Once autoscaling is turned off, the autoscaler is deleted and `spec.replicas` stays where
//! it left it, the user's again.

use ::k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ::kube::ResourceExt as _;
use ::kube::runtime::reflector::Store;

use super::apply::keep_companion;
use super::workload::Workload;
use crate::client::Context;
use crate::error::Error;
use crate::object::ApiObject;

/// What a custom object asks of its autoscaler: the bounds of its number of pods, and the
/// average CPU use of their requests (in percent) to keep them at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Autoscaling {
    min_replicas: i32,
    max_replicas: i32,
    target_cpu_utilization: i32,
}

impl Autoscaling {
    /// Between `min_replicas` and `max_replicas` pods, as many as keep their average CPU use
    /// at `target_cpu_utilization` percent of what they request. The API server refuses an
    /// autoscaler whose bounds are not `1 <= min <= max`: the kind's schema should too.
    pub fn new(min_replicas: i32, max_replicas: i32, target_cpu_utilization: i32) -> Self {
        Self {
            min_replicas,
            max_replicas,
            target_cpu_utilization,
        }
    }
}

/// The autoscaler of `obj`, which runs `workload`: it scales `obj` through its scale
/// subresource as `autoscaling` asks. It has the workload's name, namespace, labels and owner
/// (`obj`), so that it is watched, and garbage-collected, like the workload.
// `spec.into()` wraps the spec in `Some` before Kubernetes 1.37, and is the spec itself after.
#[allow(clippy::useless_conversion)]
pub(crate) fn desired_autoscaler<K, W>(
    obj: &K,
    workload: &W,
    autoscaling: Autoscaling,
) -> HorizontalPodAutoscaler
where
    K: ApiObject,
    W: Workload,
{
    let made = workload.meta();
    let cpu = MetricSpec {
        type_: "Resource".to_owned(),
        resource: Some(ResourceMetricSource {
            name: "cpu".to_owned(),
            target: MetricTarget {
                type_: "Utilization".to_owned(),
                average_utilization: Some(autoscaling.target_cpu_utilization),
                ..MetricTarget::default()
            },
        }),
        ..MetricSpec::default()
    };
    let spec = HorizontalPodAutoscalerSpec {
        min_replicas: Some(autoscaling.min_replicas),
        max_replicas: autoscaling.max_replicas,
        scale_target_ref: CrossVersionObjectReference {
            api_version: Some(K::api_version(&()).into_owned()),
            kind: K::kind(&()).into_owned(),
            name: obj.name_any(),
        },
        metrics: Some(vec![cpu]),
        ..HorizontalPodAutoscalerSpec::default()
    };
    HorizontalPodAutoscaler {
        metadata: ObjectMeta {
            name: made.name.clone(),
            namespace: made.namespace.clone(),
            labels: made.labels.clone(),
            owner_references: made.owner_references.clone(),
            ..ObjectMeta::default()
        },
        spec: spec.into(),
        ..HorizontalPodAutoscaler::default()
    }
}

/// Keeps the autoscaler of `obj` (see [`desired_autoscaler`]) while `autoscaling` asks for
/// one, and deletes it once it does not (see [`keep_companion`]).
pub(crate) async fn keep<K, W>(
    ctx: &Context,
    obj: &K,
    workload: &W,
    autoscaling: Option<Autoscaling>,
    cache: &Store<HorizontalPodAutoscaler>,
) -> Result<(), Error>
where
    K: ApiObject,
    W: Workload,
{
    let desired = autoscaling.map(|autoscaling| desired_autoscaler(obj, workload, autoscaling));
    keep_companion(ctx, workload, desired, cache).await
}

#[cfg(test)]
mod tests;
