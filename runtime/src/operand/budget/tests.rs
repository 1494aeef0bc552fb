use ::http::{Method, StatusCode};
use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, StatefulSet};
use ::kube::runtime::watcher;

use super::*;
use crate::object::{AppLabels, owned_by};
use crate::{test_kinds, testing};

fn deployment(replicas: i32) -> Deployment {
    let owner = test_kinds::widget();
    let labels = AppLabels::new("widget", "server", &owner);
    let spec = DeploymentSpec {
        replicas: Some(replicas),
        selector: labels.label_selector(),
        ..DeploymentSpec::default()
    };
    Deployment::with_spec(owned_by(&owner, labels.all()), spec)
}

fn cache_of(budget: Option<&PodDisruptionBudget>) -> Store<PodDisruptionBudget> {
    let (store, mut writer) = ::kube::runtime::reflector::store();
    if let Some(budget) = budget {
        writer.apply_watcher_event(&watcher::Event::Apply(budget.clone()));
    }
    store
}

#[test]
fn more_than_one_replica_get_a_budget_of_one_unavailable_pod() {
    let workload = deployment(3);
    let budget = desired_budget(&workload).expect("a budget at 3 replicas");
    assert_eq!(budget.metadata.name, workload.metadata.name);
    assert_eq!(budget.metadata.namespace, workload.metadata.namespace);
    assert_eq!(budget.metadata.labels, workload.metadata.labels);
    assert_eq!(
        budget.metadata.owner_references, workload.metadata.owner_references,
        "owned by the custom object, as the workload is"
    );
    let spec = budget.spec.expect("a spec");
    assert_eq!(spec.max_unavailable, Some(IntOrString::Int(1)));
    assert_eq!(spec.min_available, None);
    assert_eq!(spec.selector.as_ref(), workload.selector());
    assert!(desired_budget(&deployment(2)).is_some());
}

#[test]
fn one_replica_or_none_get_no_budget() {
    assert_eq!(desired_budget(&deployment(1)), None);
    assert_eq!(desired_budget(&deployment(0)), None);
    assert_eq!(
        desired_budget(&StatefulSet::default()),
        None,
        "1 when unset"
    );
}

#[tokio::test]
async fn a_wanted_budget_is_applied_unless_cached_up_to_date() {
    let (ctx, mut server) = testing::context();
    let workload = deployment(3);
    let budget = desired_budget(&workload).expect("a budget");
    server
        .run(keep(&ctx, &workload, &cache_of(None)), async |server| {
            let request = server.expect_applied(&budget).await;
            request.reply(StatusCode::CREATED, &budget);
        })
        .await
        .expect("the budget is applied");

    // Any request would fail the scenario.
    let applied = crate::client::fingerprint::fingerprinted(&budget);
    server
        .run(
            keep(&ctx, &workload, &cache_of(Some(&applied))),
            async |_| {},
        )
        .await
        .expect("nothing to do");
}

#[tokio::test]
async fn an_unwanted_budget_is_deleted_once_and_none_is_not_looked_for() {
    let (ctx, mut server) = testing::context();
    let left = desired_budget(&deployment(3)).expect("a budget");
    let workload = deployment(1);
    server
        .run(
            keep(&ctx, &workload, &cache_of(Some(&left))),
            async |server| {
                let path = testing::path_of(&left);
                let request = server.expect(Method::DELETE, &path).await;
                request.reply(StatusCode::OK, &left);
            },
        )
        .await
        .expect("the budget is deleted");

    server
        .run(
            keep(&ctx, &workload, &cache_of(Some(&left))),
            async |server| {
                let path = testing::path_of(&left);
                server
                    .expect(Method::DELETE, &path)
                    .await
                    .fail(StatusCode::NOT_FOUND);
            },
        )
        .await
        .expect("deleted already, by someone else");

    // Any request would fail the scenario.
    server
        .run(keep(&ctx, &workload, &cache_of(None)), async |_| {})
        .await
        .expect("nothing to delete");
}
