use ::http::StatusCode;
use ::k8s_openapi::api::apps::v1::{Deployment, StatefulSet, StatefulSetSpec};
use ::k8s_openapi::api::core::v1::Container;
use ::kube::runtime::watcher;

use super::*;
use crate::controller::RESYNC_PERIOD;
use crate::object::{AppLabels, owned_by};
use crate::operand::RestrictedPods;
use crate::operand::serving;
use crate::test_kinds::{self, Widget, WidgetStatus};
use crate::testing;

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
        // As the API server stores it: with a uid and a first generation.
        let mut created = stored::<StatefulSet>(&request);
        created.metadata.uid = Some("9d1e-statefulset".to_owned());
        created.metadata.generation = Some(1);
        request.reply(StatusCode::CREATED, &created);
        applied_workload = Some(created);
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
        .apply_watcher_event(&watcher::Event::Apply(WorkloadCopy::of(&workload)));

    // Any request, a read or a write, would fail the scenario.
    let again = testing::apply(&operand, &widget, async |_| {}).await;
    assert_eq!(again.expect("reconciled"), Action::requeue(RESYNC_PERIOD));
}

#[tokio::test]
async fn a_changed_service_is_applied_without_a_read() {
    let mut operand = Operand::new("widget", statefulset, status).with_service(service);
    let widget = test_kinds::widget();
    let mut old = crate::client::fingerprint::fingerprinted(&service(&widget));
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
        let budget = crate::operand::budget::desired_budget(&workload).expect("a budget");
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
            crate::operand::autoscaler::desired_autoscaler(&widget, &workload, autoscaling);
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
    let left = crate::operand::autoscaler::desired_autoscaler(&widget, &workload, autoscaling);
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
    let left = crate::operand::budget::desired_budget(&three(&widget)).expect("a budget");
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
