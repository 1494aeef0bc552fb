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

use crate::context::ApiObject;
use crate::workload::Workload;
use crate::{Context, Error};

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
pub fn desired_autoscaler<K, W>(
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

impl Context {
    /// Keeps the autoscaler of `obj` (see [`desired_autoscaler`]) while `autoscaling` asks
    /// for one: applies it unless `cache` shows it up to date; without, deletes the one
    /// `cache` holds (see [`Context::delete_cached`]).
    pub async fn keep_autoscaler<K, W>(
        &self,
        obj: &K,
        workload: &W,
        autoscaling: Option<Autoscaling>,
        cache: &Store<HorizontalPodAutoscaler>,
    ) -> Result<(), Error>
    where
        K: ApiObject,
        W: Workload,
    {
        match autoscaling {
            Some(autoscaling) => {
                let autoscaler = desired_autoscaler(obj, workload, autoscaling);
                self.apply_cached(&autoscaler, cache).await.map(drop)
            }
            None => {
                let namespace = workload.namespace().unwrap_or_default();
                self.delete_cached(&workload.name_any(), &namespace, cache)
                    .await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ::http::{Method, StatusCode};
    use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
    use ::kube::runtime::watcher;

    use super::*;
    use crate::apply::{AppLabels, owned_by};
    use crate::test_kinds::{self, Widget};
    use crate::testing;

    fn deployment(owner: &Widget) -> Deployment {
        let labels = AppLabels::new("widget", "server", owner);
        let spec = DeploymentSpec {
            replicas: Some(2),
            selector: labels.label_selector(),
            ..DeploymentSpec::default()
        };
        Deployment::with_spec(owned_by(owner, labels.all()), spec)
    }

    fn cache_of(autoscaler: Option<&HorizontalPodAutoscaler>) -> Store<HorizontalPodAutoscaler> {
        let (store, mut writer) = ::kube::runtime::reflector::store();
        if let Some(autoscaler) = autoscaler {
            writer.apply_watcher_event(&watcher::Event::Apply(autoscaler.clone()));
        }
        store
    }

    const BETWEEN_2_AND_5_AT_70: Autoscaling = Autoscaling {
        min_replicas: 2,
        max_replicas: 5,
        target_cpu_utilization: 70,
    };

    #[test]
    fn the_autoscaler_scales_the_custom_object_itself_on_cpu_use() {
        let widget = test_kinds::widget();
        let workload = deployment(&widget);
        let autoscaler = desired_autoscaler(&widget, &workload, BETWEEN_2_AND_5_AT_70);
        assert_eq!(autoscaler.metadata.name, workload.metadata.name);
        assert_eq!(autoscaler.metadata.namespace, workload.metadata.namespace);
        assert_eq!(autoscaler.metadata.labels, workload.metadata.labels);
        assert_eq!(
            autoscaler.metadata.owner_references, workload.metadata.owner_references,
            "owned by the custom object, as the workload is"
        );
        // The spec's shape depends on the Kubernetes version: read it as JSON.
        let spec = serde_json::to_value(&autoscaler).expect("serializes")["spec"].clone();
        let target = &spec["scaleTargetRef"];
        assert_eq!(target["apiVersion"], "example.com/v1");
        assert_eq!(target["kind"], "Widget");
        assert_eq!(target["name"], widget.name_any());
        assert_eq!(
            (&spec["minReplicas"], &spec["maxReplicas"]),
            (&2.into(), &5.into())
        );
        let metrics = spec["metrics"].as_array().expect("metrics");
        assert_eq!(metrics.len(), 1, "{metrics:?}");
        assert_eq!(metrics[0]["type"], "Resource");
        assert_eq!(metrics[0]["resource"]["name"], "cpu");
        let target = &metrics[0]["resource"]["target"];
        assert_eq!(target["type"], "Utilization");
        assert_eq!(target["averageUtilization"], 70);
    }

    #[test]
    fn the_bounds_and_target_are_those_asked_for() {
        let widget = test_kinds::widget();
        let workload = deployment(&widget);
        let asked = Autoscaling::new(1, 10, 50);
        let autoscaler = desired_autoscaler(&widget, &workload, asked);
        let spec = serde_json::to_value(&autoscaler).expect("serializes")["spec"].clone();
        assert_eq!(
            (&spec["minReplicas"], &spec["maxReplicas"]),
            (&1.into(), &10.into())
        );
        assert_eq!(
            spec["metrics"][0]["resource"]["target"]["averageUtilization"],
            50
        );
    }

    #[tokio::test]
    async fn a_wanted_autoscaler_is_applied_unless_cached_up_to_date() {
        let (ctx, mut server) = testing::context();
        let widget = test_kinds::widget();
        let workload = deployment(&widget);
        let autoscaler = desired_autoscaler(&widget, &workload, BETWEEN_2_AND_5_AT_70);
        let keep = |cache| {
            let (ctx, widget, workload) = (&ctx, &widget, &workload);
            async move {
                ctx.keep_autoscaler(widget, workload, Some(BETWEEN_2_AND_5_AT_70), &cache)
                    .await
            }
        };
        server
            .run(keep(cache_of(None)), async |server| {
                let request = server.expect_applied(&autoscaler).await;
                request.reply(StatusCode::CREATED, &autoscaler);
            })
            .await
            .expect("the autoscaler is applied");

        // Any request would fail the scenario.
        let applied = crate::cache::fingerprinted(&autoscaler);
        server
            .run(keep(cache_of(Some(&applied))), async |_| {})
            .await
            .expect("nothing to do");
    }

    #[tokio::test]
    async fn turned_off_the_autoscaler_is_deleted_once_and_none_is_not_looked_for() {
        let (ctx, mut server) = testing::context();
        let widget = test_kinds::widget();
        let workload = deployment(&widget);
        let left = desired_autoscaler(&widget, &workload, BETWEEN_2_AND_5_AT_70);
        server
            .run(
                ctx.keep_autoscaler(&widget, &workload, None, &cache_of(Some(&left))),
                async |server| {
                    let path = testing::path_of(&left);
                    let request = server.expect(Method::DELETE, &path).await;
                    request.reply(StatusCode::OK, &left);
                },
            )
            .await
            .expect("the autoscaler is deleted");

        // Any request would fail the scenario.
        server
            .run(
                ctx.keep_autoscaler(&widget, &workload, None, &cache_of(None)),
                async |_| {},
            )
            .await
            .expect("nothing to delete");
    }
}
