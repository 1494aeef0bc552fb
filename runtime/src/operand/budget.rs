//! The PodDisruptionBudget of an operand's workload: while it runs more than one pod, a
//! voluntary disruption (a node drain, a cluster upgrade) may evict only one of them at a
//! time, so the application is never taken down whole. At one pod a budget could only block
//! the drain forever, so there is none, and one left from a larger scale is deleted.

use ::k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ::kube::ResourceExt as _;
use ::kube::runtime::reflector::Store;

use crate::workload::Workload;
use crate::{Context, Error};

/// The budget `workload` needs: `None` at one replica or none; above, one that lets a single
/// pod of it (selected as the workload selects them) be unavailable at a time. It has the
/// workload's name, namespace, labels and owner, so that it is watched, and garbage-collected,
/// like the workload.
pub fn desired_budget<W: Workload>(workload: &W) -> Option<PodDisruptionBudget> {
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

impl Context {
    /// Keeps the budget of `workload` (see [`desired_budget`]): applies it unless `cache`
    /// shows it up to date, or deletes the one `cache` holds when none is wanted (see
    /// [`Context::delete_cached`]).
    pub async fn keep_budget<W: Workload>(
        &self,
        workload: &W,
        cache: &Store<PodDisruptionBudget>,
    ) -> Result<(), Error> {
        match desired_budget(workload) {
            Some(budget) => self.apply_cached(&budget, cache).await.map(drop),
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
    use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, StatefulSet};
    use ::kube::runtime::watcher;

    use super::*;
    use crate::apply::{AppLabels, owned_by};
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
            .run(
                ctx.keep_budget(&workload, &cache_of(None)),
                async |server| {
                    let request = server.expect_applied(&budget).await;
                    request.reply(StatusCode::CREATED, &budget);
                },
            )
            .await
            .expect("the budget is applied");

        // Any request would fail the scenario.
        let applied = crate::cache::fingerprinted(&budget);
        server
            .run(
                ctx.keep_budget(&workload, &cache_of(Some(&applied))),
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
                ctx.keep_budget(&workload, &cache_of(Some(&left))),
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
                ctx.keep_budget(&workload, &cache_of(Some(&left))),
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
            .run(ctx.keep_budget(&workload, &cache_of(None)), async |_| {})
            .await
            .expect("nothing to delete");
    }
}
