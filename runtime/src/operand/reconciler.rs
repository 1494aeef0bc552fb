//! The reconciler of an operand kind (`opgen create api --image`). Its controller decides what
//! runs with pure functions of the object (the workload, the Service in front of it, the
//! status); [`Operand`] applies what they return, in the order Kubernetes needs, and watches
//! what it made. A controller that needs more than pure functions (state of its own, calls to
//! other systems) implements [`Reconcile`] itself, as a plain kind's controller does, and can
//! still call [`Context::apply_operand`].

use ::k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use ::k8s_openapi::api::core::v1::Service;
use ::k8s_openapi::api::policy::v1::PodDisruptionBudget;
use ::kube::core::object::HasStatus;
use ::kube::runtime::controller::Action;
use ::kube::runtime::reflector::{self, Store, store::Writer};
use ::serde::Serialize;

use super::autoscaler::{self, Autoscaling};
use super::budget;
use super::workload::Workload;
use super::workload_cache::WorkloadCache;
use super::workload_copy::WorkloadCopy;
use crate::client::Context;
use crate::conditions::Conditions;
use crate::controller::{Reconcile, Setup, controller, controller_name};
use crate::error::Error;
use crate::object::ApiObject;
use crate::object::made_for;

/// The object `K`'s workload `W`, from `K`.
pub type DesiredWorkload<K, W> = fn(&K) -> W;
/// The status of `K`, from what its workload `W` (as applied) reports.
pub type DesiredStatus<K, W> = fn(&K, &W, &Conditions) -> <K as HasStatus>::Status;
/// The Service in front of the pods of `K`'s workload, from `K`.
pub type DesiredService<K> = fn(&K) -> Service;
/// What `K` asks of its autoscaler, from `K`: `None` while it asks for no autoscaling.
pub type DesiredAutoscaling<K> = fn(&K) -> Option<Autoscaling>;

/// An operand kind's reconciler: see the module's documentation.
pub struct Operand<K: HasStatus, W: Workload> {
    app: &'static str,
    workload: DesiredWorkload<K, W>,
    status: DesiredStatus<K, W>,
    service: Option<DesiredService<K>>,
    /// Whether the workload gets a PodDisruptionBudget above one replica.
    disruption_budget: bool,
    /// Whether, and how, the object gets a HorizontalPodAutoscaler.
    autoscaling: Option<DesiredAutoscaling<K>>,
    /// The workloads, Services, budgets and autoscalers the controller's watches keep, which a steady
    /// reconcile compares the desired ones with instead of reading them.
    workloads: WorkloadCache<W>,
    services: Store<Service>,
    budgets: Store<PodDisruptionBudget>,
    autoscalers: Store<HorizontalPodAutoscaler>,
    /// What fills them, until [`Operand::controller`] hands it to the watches. Without a
    /// running controller (in unit tests) the stores stay empty, and every object is read.
    writers: Option<Writers<W>>,
}

/// What fills an [`Operand`]'s stores.
struct Writers<W: Workload> {
    workloads: Writer<WorkloadCopy<W>>,
    services: Writer<Service>,
    budgets: Writer<PodDisruptionBudget>,
    autoscalers: Writer<HorizontalPodAutoscaler>,
}

impl<K, W> Operand<K, W>
where
    K: ApiObject + HasStatus<Status: Serialize + Send + Sync>,
    W: Workload,
{
    /// The reconciler of an operand whose pods are labelled `app.kubernetes.io/name=<app>`
    /// and run the application in a container named `<app>` (the events report changes of its
    /// image).
    pub fn new(
        app: &'static str,
        workload: DesiredWorkload<K, W>,
        status: DesiredStatus<K, W>,
    ) -> Self {
        let (workloads, workload_writer) = reflector::store();
        let (services, service_writer) = reflector::store();
        let (budgets, budget_writer) = reflector::store();
        let (autoscalers, autoscaler_writer) = reflector::store();
        Self {
            app,
            workload,
            status,
            service: None,
            disruption_budget: false,
            autoscaling: None,
            workloads: WorkloadCache::new(workloads),
            services,
            budgets,
            autoscalers,
            writers: Some(Writers {
                workloads: workload_writer,
                services: service_writer,
                budgets: budget_writer,
                autoscalers: autoscaler_writer,
            }),
        }
    }

    /// The reconciler [`Operand::new`] makes, which also keeps a PodDisruptionBudget for the
    /// workload (see [`Operand::with_disruption_budget`]): what `opgen create api` scaffolds
    /// from 0.2.0 on. `new` keeps none, for controllers whose RBAC does not grant budgets.
    pub fn available(
        app: &'static str,
        workload: DesiredWorkload<K, W>,
        status: DesiredStatus<K, W>,
    ) -> Self {
        Self::new(app, workload, status).with_disruption_budget()
    }

    /// Also applies a Service in front of the pods, before the workload: a StatefulSet needs
    /// its governing Service to exist first.
    #[must_use]
    pub fn with_service(mut self, service: DesiredService<K>) -> Self {
        self.service = Some(service);
        self
    }

    /// Also keeps a PodDisruptionBudget for the workload while it asks for more than one
    /// replica, and deletes it at one (see the `budget` module). Its RBAC: `list`, `watch`,
    /// `create`, `patch` and `delete` on `policy` `poddisruptionbudgets`.
    #[must_use]
    pub fn with_disruption_budget(mut self) -> Self {
        self.disruption_budget = true;
        self
    }

    /// Also keeps a HorizontalPodAutoscaler for the object while `autoscaling` returns what
    /// it asks of one, and deletes it once it returns `None` (see the `autoscaler` module).
    /// The autoscaler writes the object's `spec.replicas` through its scale subresource: the
    /// workload must take its replicas from there, and the kind's status must report the
    /// `replicas` and `selector` its scale subresource reads. Its RBAC: `list`, `watch`,
    /// `create`, `patch` and `delete` on `autoscaling` `horizontalpodautoscalers`.
    #[must_use]
    pub fn with_autoscaling(mut self, autoscaling: DesiredAutoscaling<K>) -> Self {
        self.autoscaling = Some(autoscaling);
        self
    }

    /// The controller of the kind, which also watches the workloads, Services, budgets and
    /// autoscalers this manager made for the app: a pod that becomes ready, or an edit of the workload,
    /// reconciles its owner.
    pub fn controller(mut self, ctx: Context) -> Setup<Self> {
        let made = made_for(self.app);
        let (has_service, has_budget) = (self.service.is_some(), self.disruption_budget);
        let has_autoscaler = self.autoscaling.is_some();
        let Some(writers) = self.writers.take() else {
            unreachable!("`controller` takes the operand, so it runs once")
        };
        ctx.metrics.count_replicas(
            &controller_name::<K>(),
            self.workloads.store().clone(),
            replicas::<W>,
        );
        let mut setup =
            controller(ctx, self).owns_cached::<WorkloadCopy<W>>(made.clone(), writers.workloads);
        if has_service {
            setup = setup.owns_cached::<Service>(made.clone(), writers.services);
        }
        if has_budget {
            setup = setup.owns_cached::<PodDisruptionBudget>(made.clone(), writers.budgets);
        }
        if has_autoscaler {
            setup = setup.owns_cached::<HorizontalPodAutoscaler>(made, writers.autoscalers);
        }
        setup
    }
}

/// What the metrics count of a workload: the pods it asks for, and those ready.
fn replicas<W: Workload>(copy: &WorkloadCopy<W>) -> (i32, i32) {
    (copy.replicas(), copy.progress().ready)
}

impl<K, W> Reconcile for Operand<K, W>
where
    K: ApiObject + HasStatus<Status: Serialize + Send + Sync>,
    W: Workload,
{
    type Object = K;
    /// What an operand makes carries its owner reference: once the object is deleted,
    /// Kubernetes' garbage collector deletes it, and there is nothing to clean up.
    const FINALIZER: bool = false;

    async fn apply(&self, obj: &K, ctx: &Context) -> Result<Action, Error> {
        if let Some(service) = self.service {
            ctx.apply_cached(&service(obj), &self.services).await?;
        }
        let workload = (self.workload)(obj);
        if self.disruption_budget {
            budget::keep(ctx, &workload, &self.budgets).await?;
        }
        if let Some(autoscaling) = self.autoscaling {
            autoscaler::keep(ctx, obj, &workload, autoscaling(obj), &self.autoscalers).await?;
        }
        ctx.apply_operand(obj, &workload, &self.workloads, self.app, self.status)
            .await
    }
}

#[cfg(test)]
mod tests;
