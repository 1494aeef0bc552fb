use ::http::{Method, StatusCode};
use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use ::kube::runtime::watcher;

use super::*;
use crate::object::{AppLabels, owned_by};
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
        async move { keep(ctx, widget, workload, Some(BETWEEN_2_AND_5_AT_70), &cache).await }
    };
    server
        .run(keep(cache_of(None)), async |server| {
            let request = server.expect_applied(&autoscaler).await;
            request.reply(StatusCode::CREATED, &autoscaler);
        })
        .await
        .expect("the autoscaler is applied");

    // Any request would fail the scenario.
    let applied = crate::client::fingerprint::fingerprinted(&autoscaler);
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
            keep(&ctx, &widget, &workload, None, &cache_of(Some(&left))),
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
            keep(&ctx, &widget, &workload, None, &cache_of(None)),
            async |_| {},
        )
        .await
        .expect("nothing to delete");
}
