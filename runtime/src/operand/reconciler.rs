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

use crate::apply::made_for;
use crate::autoscaling::Autoscaling;
use crate::compact::packed;
use crate::reconcile::{Reconcile, Setup, controller, controller_name};
use crate::status::Conditions;
use crate::workload::Workload;
use crate::{Context, Error, context::ApiObject};

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
    workloads: Store<W>,
    services: Store<Service>,
    budgets: Store<PodDisruptionBudget>,
    autoscalers: Store<HorizontalPodAutoscaler>,
    /// What fills them, until [`Operand::controller`] hands it to the watches. Without a
    /// running controller (in unit tests) the stores stay empty, and every object is read.
    writers: Option<Writers<W>>,
}

/// What fills an [`Operand`]'s stores.
struct Writers<W: Workload> {
    workloads: Writer<W>,
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
            workloads,
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
    /// replica, and deletes it at one (see [`crate::disruption`]). Its RBAC: `list`, `watch`,
    /// `create`, `patch` and `delete` on `policy` `poddisruptionbudgets`.
    #[must_use]
    pub fn with_disruption_budget(mut self) -> Self {
        self.disruption_budget = true;
        self
    }

    /// Also keeps a HorizontalPodAutoscaler for the object while `autoscaling` returns what
    /// it asks of one, and deletes it once it returns `None` (see [`crate::autoscaling`]).
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
        ctx.metrics
            .count_replicas(&controller_name::<K>(), self.workloads.clone());
        let mut setup = controller(ctx, self).owns_cached_shrunk::<W>(
            made.clone(),
            writers.workloads,
            packed::<W>,
        );
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
            ctx.keep_budget(&workload, &self.budgets).await?;
        }
        if let Some(autoscaling) = self.autoscaling {
            ctx.keep_autoscaler(obj, &workload, autoscaling(obj), &self.autoscalers)
                .await?;
        }
        ctx.apply_operand(obj, &workload, &self.workloads, self.app, self.status)
            .await
    }
}

#[cfg(test)]
mod tests {
    use ::http::StatusCode;
    use ::k8s_openapi::api::apps::v1::{Deployment, StatefulSet, StatefulSetSpec};
    use ::k8s_openapi::api::core::v1::Container;
    use ::kube::runtime::watcher;

    use super::*;
    use crate::apply::{AppLabels, owned_by};
    use crate::reconcile::RESYNC_PERIOD;
    use crate::serving;
    use crate::test_kinds::{self, Widget, WidgetStatus};
    use crate::testing;
    use crate::workload::RestrictedPods;

    fn labels(widget: &Widget) -> AppLabels {
        AppLabels::new("widget", "server", widget)
    }

    fn statefulset(widget: &Widget) -> StatefulSet {
        let container = Container {
            name: "widget".to_owned(),
            image: Some("widget:1".to_owned()),
            ..Container::default()
        };
        let pods = RestrictedPods::new(labels(widget).all(), container);
        let spec = StatefulSetSpec {
            selector: labels(widget).label_selector(),
            template: pods.template(),
            ..StatefulSetSpec::default()
        };
        StatefulSet::with_spec(owned_by(widget, labels(widget).all()), spec)
    }

    fn service(widget: &Widget) -> Service {
        serving::service::<StatefulSet, _>(widget, &labels(widget), "http", 80)
    }

    fn status(widget: &Widget, _: &StatefulSet, _: &Conditions) -> WidgetStatus {
        WidgetStatus {
            observed_generation: widget.metadata.generation,
            ..WidgetStatus::default()
        }
    }

    #[tokio::test]
    async fn a_new_object_gets_its_service_then_its_workload_with_an_event_then_its_status() {
        let operand = Operand::new("widget", statefulset, status).with_service(service);
        let widget = test_kinds::widget();
        let action = testing::apply(&operand, &widget, async |server| {
            let service = service(&widget);
            server
                .expect_applied(&service)
                .await
                .reply(StatusCode::CREATED, &service);
            server.expect_created(&statefulset(&widget)).await;
            server.expect_event(&widget, "Normal", "Created").await;
            let status = server.expect_status_applied(&widget).await;
            assert_eq!(status["observedGeneration"], testing::GENERATION);
        })
        .await;
        assert_eq!(
            action.expect("apply succeeds"),
            Action::requeue(RESYNC_PERIOD)
        );
    }

    #[tokio::test]
    async fn the_controller_reports_the_replicas_of_the_workloads_it_watches() {
        let (ctx, _server) = testing::context();
        let metrics = ctx.metrics.clone();
        let _setup = Operand::new("widget", statefulset, status).controller(ctx);
        let exposition = metrics.encode().expect("metrics encode");
        for gauge in ["operand_replicas_desired", "operand_replicas_ready"] {
            assert!(
                exposition.contains(&format!(r#"_{gauge}{{controller="widget.example"}} 0"#)),
                "{exposition}"
            );
        }
    }

    #[tokio::test]
    async fn without_a_service_only_the_workload_and_the_status_are_applied() {
        let operand = Operand::new("widget", statefulset, status);
        let widget = test_kinds::widget();
        let action = testing::apply(&operand, &widget, async |server| {
            let workload = statefulset(&widget);
            let status = server.expect_new_operand(&widget, None, &workload).await;
            assert_eq!(status["observedGeneration"], testing::GENERATION);
        })
        .await;
        assert!(action.is_ok());
    }

    #[tokio::test]
    async fn a_failed_service_apply_stops_the_reconcile_before_the_workload() {
        let operand = Operand::new("widget", statefulset, status).with_service(service);
        let widget = test_kinds::widget();
        let action = testing::apply(&operand, &widget, async |server| {
            let request = server.expect_applied(&service(&widget)).await;
            request.fail(StatusCode::INTERNAL_SERVER_ERROR);
        })
        .await;
        assert!(matches!(action, Err(Error::Kube(_))), "{action:?}");
    }

    #[test]
    fn operands_leave_deletion_to_the_garbage_collector() {
        const { assert!(!<Operand<Widget, Deployment> as Reconcile>::FINALIZER) };
    }

    /// What the API server stores for `request`, a server-side apply: its body.
    fn stored<C: ::serde::de::DeserializeOwned>(request: &testing::Received) -> C {
        serde_json::from_value(request.body.clone()).expect("an applied object")
    }

    #[tokio::test]
    async fn once_its_watches_saw_what_it_applied_a_steady_reconcile_sends_nothing() {
        let mut operand = Operand::new("widget", statefulset, status).with_service(service);
        let mut widget = test_kinds::widget();
        let (mut applied_service, mut applied_workload, mut applied_status) = (None, None, None);
        let first = testing::apply(&operand, &widget, async |server| {
            let request = server.expect_applied(&service(&widget)).await;
            let body = request.body.clone();
            applied_service = Some(stored::<Service>(&request));
            request.reply(StatusCode::CREATED, &body);
            let workload = statefulset(&widget);
            server.expect_get(&workload, None).await;
            let request = server.expect_applied(&workload).await;
            let body = request.body.clone();
            applied_workload = Some(stored::<StatefulSet>(&request));
            request.reply(StatusCode::CREATED, &body);
            server.expect_event(&widget, "Normal", "Created").await;
            applied_status = Some(server.expect_status_applied(&widget).await);
        })
        .await;
        assert!(first.is_ok(), "{first:?}");
        let status = applied_status.expect("a status applied");
        widget.status = Some(serde_json::from_value(status).expect("a status"));
        assert!(first.is_ok(), "{first:?}");

        // The watches deliver what was applied, and the object's own watch its new status.
        let writers = operand.writers.as_mut().expect("not running");
        let (service, workload) = (applied_service.unwrap(), applied_workload.unwrap());
        writers
            .services
            .apply_watcher_event(&watcher::Event::Apply(service));
        writers
            .workloads
            .apply_watcher_event(&watcher::Event::Apply(workload));

        // Any request, a read or a write, would fail the scenario.
        let again = testing::apply(&operand, &widget, async |_| {}).await;
        assert_eq!(again.expect("reconciled"), Action::requeue(RESYNC_PERIOD));
    }

    #[tokio::test]
    async fn a_changed_service_is_applied_without_a_read() {
        let mut operand = Operand::new("widget", statefulset, status).with_service(service);
        let widget = test_kinds::widget();
        let mut old = crate::cache::fingerprinted(&service(&widget));
        old.metadata.labels = None;
        let writers = operand.writers.as_mut().expect("not running");
        writers
            .services
            .apply_watcher_event(&watcher::Event::Apply(old));

        let action = testing::apply(&operand, &widget, async |server| {
            let request = server.expect_applied(&service(&widget)).await;
            request.fail(StatusCode::INTERNAL_SERVER_ERROR);
        })
        .await;
        assert!(matches!(action, Err(Error::Kube(_))), "{action:?}");
    }

    fn scaled(replicas: i32) -> impl Fn(&Widget) -> StatefulSet {
        move |widget| {
            let mut workload = statefulset(widget);
            if let Some(spec) = Option::<&mut StatefulSetSpec>::from(&mut workload.spec) {
                spec.replicas = Some(replicas);
            }
            workload
        }
    }

    fn three(widget: &Widget) -> StatefulSet {
        scaled(3)(widget)
    }

    #[tokio::test]
    async fn a_workload_of_more_than_one_replica_gets_its_budget_before_it_is_applied() {
        let operand = Operand::available("widget", three, status);
        let widget = test_kinds::widget();
        let action = testing::apply(&operand, &widget, async |server| {
            let workload = three(&widget);
            let budget = crate::disruption::desired_budget(&workload).expect("a budget");
            let request = server.expect_applied(&budget).await;
            request.reply(StatusCode::CREATED, &budget);
            server.expect_new_operand(&widget, None, &workload).await;
        })
        .await;
        assert!(action.is_ok(), "{action:?}");
    }

    #[tokio::test]
    async fn without_disruption_budgets_a_scaled_workload_gets_none() {
        let operand = Operand::new("widget", three, status);
        let widget = test_kinds::widget();
        let action = testing::apply(&operand, &widget, async |server| {
            server
                .expect_new_operand(&widget, None, &three(&widget))
                .await;
        })
        .await;
        assert!(action.is_ok(), "{action:?}");
    }

    /// Autoscaling between 2 and 5 pods while the widget's size is not 0.
    fn sized(widget: &Widget) -> Option<Autoscaling> {
        (widget.spec.size > 0).then(|| Autoscaling::new(2, 5, 80))
    }

    #[tokio::test]
    async fn an_object_that_asks_for_autoscaling_gets_its_autoscaler_before_its_workload() {
        let operand = Operand::new("widget", statefulset, status).with_autoscaling(sized);
        let mut widget = test_kinds::widget();
        widget.spec.size = 1;
        let action = testing::apply(&operand, &widget, async |server| {
            let workload = statefulset(&widget);
            let autoscaling = sized(&widget).expect("autoscaling");
            let autoscaler =
                crate::autoscaling::desired_autoscaler(&widget, &workload, autoscaling);
            let request = server.expect_applied(&autoscaler).await;
            request.reply(StatusCode::CREATED, &autoscaler);
            server.expect_new_operand(&widget, None, &workload).await;
        })
        .await;
        assert!(action.is_ok(), "{action:?}");
    }

    #[tokio::test]
    async fn an_autoscaler_left_once_autoscaling_is_turned_off_is_deleted() {
        let mut operand = Operand::new("widget", statefulset, status).with_autoscaling(sized);
        let widget = test_kinds::widget();
        let workload = statefulset(&widget);
        let autoscaling = Autoscaling::new(2, 5, 80);
        let left = crate::autoscaling::desired_autoscaler(&widget, &workload, autoscaling);
        let writers = operand.writers.as_mut().expect("not running");
        writers
            .autoscalers
            .apply_watcher_event(&watcher::Event::Apply(left.clone()));

        let action = testing::apply(&operand, &widget, async |server| {
            let request = server
                .expect(::http::Method::DELETE, &testing::path_of(&left))
                .await;
            request.reply(StatusCode::OK, &left);
            server.expect_new_operand(&widget, None, &workload).await;
        })
        .await;
        assert!(action.is_ok(), "{action:?}");
    }

    #[tokio::test]
    async fn a_budget_left_from_a_larger_scale_is_deleted() {
        let mut operand = Operand::new("widget", statefulset, status).with_disruption_budget();
        let widget = test_kinds::widget();
        let left = crate::disruption::desired_budget(&three(&widget)).expect("a budget");
        let writers = operand.writers.as_mut().expect("not running");
        writers
            .budgets
            .apply_watcher_event(&watcher::Event::Apply(left.clone()));

        let action = testing::apply(&operand, &widget, async |server| {
            let request = server
                .expect(::http::Method::DELETE, &testing::path_of(&left))
                .await;
            request.reply(StatusCode::OK, &left);
            server
                .expect_new_operand(&widget, None, &statefulset(&widget))
                .await;
        })
        .await;
        assert!(action.is_ok(), "{action:?}");
    }
}
