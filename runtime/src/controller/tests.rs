use ::http::{Method, StatusCode};
use ::k8s_openapi::api::core::v1::ConfigMap;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ::k8s_openapi::jiff::Timestamp;
use ::serde_json::json;

use ::std::sync::Arc;
use ::std::time::Duration;

use ::kube::runtime::watcher;

use super::backoff::{BACKOFF_INITIAL, BACKOFF_MAX, backoff};
use super::*;
use crate::identity::field_manager;
use crate::object::made_for;
use crate::test_kinds::{self, Widget, WidgetStatus};
use crate::testing;

/// Applies an empty status to widgets, and publishes an event when one is deleted.
struct Widgets;

impl Reconcile for Widgets {
    type Object = Widget;

    async fn apply(&self, widget: &Widget, ctx: &Context) -> Result<Action, Error> {
        ctx.apply_status(widget, &WidgetStatus::default()).await?;
        Ok(Action::requeue(RESYNC_PERIOD))
    }

    async fn cleanup(&self, widget: &Widget, ctx: &Context) -> Result<Action, Error> {
        ctx.events
            .normal(widget, "Deleting", "Cleanup", "bye")
            .await;
        Ok(Action::await_change())
    }
}

/// [`Widgets`] without a finalizer.
struct CollectedWidgets;

impl Reconcile for CollectedWidgets {
    type Object = Widget;
    const FINALIZER: bool = false;

    async fn apply(&self, widget: &Widget, ctx: &Context) -> Result<Action, Error> {
        Widgets.apply(widget, ctx).await
    }
}

fn driver<R: Reconcile>(reconciler: R) -> (Arc<Driver<R>>, testing::ApiServer) {
    let (ctx, server) = testing::context();
    (Arc::new(Driver::new(reconciler, ctx)), server)
}

/// The number of objects whose last reconcile failed.
fn failing<R: Reconcile>(driver: &Driver<R>) -> usize {
    driver.failures.lock().unwrap().len()
}

fn being_deleted(mut widget: Widget) -> Widget {
    widget.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
    widget
}

#[tokio::test]
async fn controllers_are_named_after_their_kind_and_group() {
    let (driver, _server) = driver(Widgets);
    assert_eq!(driver.name, "widget.example");
    assert_eq!(driver.finalizer, "example.com/finalizer");
}

/// Config maps, of the core group, whose name is empty.
struct ConfigMaps;

impl Reconcile for ConfigMaps {
    type Object = ConfigMap;
    const FINALIZER: bool = false;

    async fn apply(&self, _config_map: &ConfigMap, _ctx: &Context) -> Result<Action, Error> {
        Ok(Action::await_change())
    }
}

#[tokio::test]
async fn controllers_of_the_core_group_are_named_with_core() {
    let (driver, _server) = driver(ConfigMaps);
    assert_eq!(driver.name, "configmap.core");
}

#[tokio::test]
async fn the_first_reconcile_adds_the_finalizer() {
    let (driver, mut server) = driver(Widgets);
    let widget = test_kinds::widget();

    let action = server
        .run(driver.reconcile(Arc::new(widget.clone())), async |server| {
            server
                .expect_finalizer_added(&widget, "example.com/finalizer")
                .await;
        })
        .await
        .expect("reconcile succeeds");

    // The patch triggers a watch event, which reconciles again.
    assert_eq!(action, Action::await_change());
}

#[tokio::test]
async fn with_the_finalizer_in_place_reconcile_applies() {
    let (driver, mut server) = driver(Widgets);
    let widget = testing::with_finalizer(test_kinds::widget(), "example.com/finalizer");

    let action = server
        .run(driver.reconcile(Arc::new(widget.clone())), async |server| {
            server.expect_status_applied(&widget).await;
        })
        .await
        .expect("reconcile succeeds");

    assert_eq!(action, Action::requeue(RESYNC_PERIOD));
}

#[tokio::test]
async fn a_deleted_object_is_cleaned_up_then_its_finalizer_removed() {
    let (driver, mut server) = driver(Widgets);
    let widget = testing::with_finalizer(test_kinds::widget(), "example.com/finalizer");
    let widget = being_deleted(widget);

    let action = server
        .run(driver.reconcile(Arc::new(widget.clone())), async |server| {
            server.expect_event(&widget, "Normal", "Deleting").await;
            server
                .expect_finalizer_removed(&widget, "example.com/finalizer")
                .await;
        })
        .await
        .expect("reconcile succeeds");

    assert_eq!(action, Action::await_change());
}

#[tokio::test]
async fn without_a_finalizer_a_deleted_object_is_left_to_the_garbage_collector() {
    let (driver, mut server) = driver(CollectedWidgets);
    let widget = test_kinds::widget();

    let action = server
        .run(driver.reconcile(Arc::new(widget.clone())), async |server| {
            server.expect_status_applied(&widget).await;
        })
        .await
        .expect("reconcile succeeds");
    assert_eq!(action, Action::requeue(RESYNC_PERIOD));

    // Any request would fail the scenario.
    let action = server
        .run(
            driver.reconcile(Arc::new(being_deleted(widget))),
            async |_| {},
        )
        .await
        .expect("reconcile succeeds");
    assert_eq!(action, Action::await_change());
}

#[tokio::test]
async fn failed_reconciles_back_off_exponentially_until_one_succeeds() {
    let (driver, mut server) = driver(CollectedWidgets);
    let widget = test_kinds::widget();
    let shared = Arc::new(widget.clone());
    let failures = [
        (StatusCode::CONFLICT, 5),
        (StatusCode::INTERNAL_SERVER_ERROR, 10),
        (StatusCode::CONFLICT, 20),
    ];

    for (failure, expected_delay) in failures {
        let error = server
            .run(driver.reconcile(Arc::clone(&shared)), async |server| {
                server.expect_status_apply_failing(&widget, failure).await;
            })
            .await
            .expect_err("reconcile fails when the status cannot be applied");
        assert!(
            matches!(
                &error,
                Error::Kube(::kube::Error::Api(status)) if status.code == failure.as_u16()
            ),
            "{error:?}"
        );
        assert_eq!(error.reason(), "kube_api");
        assert_eq!(
            driver.error_policy(&widget, &error),
            Action::requeue(Duration::from_secs(expected_delay))
        );
    }

    server
        .run(driver.reconcile(Arc::clone(&shared)), async |server| {
            server.expect_status_applied(&widget).await;
        })
        .await
        .expect("reconcile succeeds");

    let error = server
        .run(driver.reconcile(Arc::clone(&shared)), async |server| {
            let status = StatusCode::INTERNAL_SERVER_ERROR;
            server.expect_status_apply_failing(&widget, status).await;
        })
        .await
        .expect_err("reconcile fails");
    assert_eq!(
        driver.error_policy(&widget, &error),
        Action::requeue(BACKOFF_INITIAL),
        "a success resets the backoff"
    );

    let metrics = driver.ctx.metrics.encode().expect("metrics encode");
    assert!(
        metrics.contains(
            r#"_reconcile_failures_total{controller="widget.example",reason="kube_api"} 4"#
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"_reconciliations_total{controller="widget.example"} 5"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn failures_are_counted_per_object() {
    let (driver, _server) = driver(Widgets);
    let one = test_kinds::widget();
    let mut other = test_kinds::widget();
    other.metadata.name = Some("other".to_owned());
    let error = Error::failed("widget_failed", "no widget");

    assert_eq!(
        driver.error_policy(&one, &error),
        Action::requeue(BACKOFF_INITIAL)
    );
    assert_eq!(
        driver.error_policy(&other, &error),
        Action::requeue(BACKOFF_INITIAL)
    );
    let twice = Duration::from_secs(10);
    assert_eq!(driver.error_policy(&one, &error), Action::requeue(twice));
}

#[tokio::test]
async fn a_failing_object_deleted_is_forgotten() {
    let (store, mut writer) = ::kube::runtime::reflector::store::<Widget>();
    let (ctx, _server) = testing::context();
    let driver = Driver::new(Widgets, ctx).watching(store);
    let deleted = test_kinds::widget();
    let mut other = test_kinds::widget();
    other.metadata.name = Some("other".to_owned());
    for widget in [&deleted, &other] {
        writer.apply_watcher_event(&watcher::Event::Apply(widget.clone()));
    }
    let error = Error::failed("widget_failed", "no widget");
    driver.error_policy(&deleted, &error);
    assert_eq!(failing(&driver), 1);

    // Deleted while failing: no reconcile comes for it again, and it has no finalizer.
    writer.apply_watcher_event(&watcher::Event::Delete(deleted.clone()));
    driver.error_policy(&other, &error);
    assert_eq!(failing(&driver), 1, "only `other` is still failing");
    assert_eq!(
        driver.error_policy(&other, &error),
        Action::requeue(Duration::from_secs(10))
    );
}

#[tokio::test]
async fn run_fails_clearly_when_the_crd_is_not_installed() {
    // What the API server answers for an unknown resource, and what a proxy may answer.
    let api_server_not_found = json!({
        "apiVersion": "v1", "kind": "Status", "status": "Failure", "code": 404,
        "reason": "NotFound", "message": "the server could not find the requested resource",
    })
    .to_string();
    let proxy_not_found = "404 page not found".to_owned();

    for not_found in [api_server_not_found, proxy_not_found] {
        let (ctx, mut server) = testing::context();
        let error = server
            .run(run(ctx, Widgets), async |server| {
                let request = server
                    .expect(Method::GET, "/apis/example.com/v1/widgets")
                    .await;
                assert!(request.has_query("limit", "1"), "{:?}", request.query);
                request.reply_raw(StatusCode::NOT_FOUND, not_found);
            })
            .await
            .expect_err("run fails without the CRD");

        assert_eq!(
            error.to_string(),
            "CRD widgets.example.com is not installed: run `make install`, or for another project's CRD (config/external/), install that project"
        );
    }
}

#[tokio::test]
async fn owned_objects_are_watched_through_their_selector() {
    let (ctx, mut server) = testing::context();
    let setup = controller(ctx, Widgets).owns::<ConfigMap>(made_for("widget"));
    let running = ::tokio::spawn(setup.run());
    let empty_list = json!({
        "apiVersion": "v1", "kind": "List", "metadata": { "resourceVersion": "1" }, "items": [],
    });

    // The check that the CRD is installed, then the lists that start the two watches, in
    // either order.
    let mut listed = Vec::new();
    while listed.len() < 3 {
        let request = server.next().await;
        let selector = request.query.iter().find(|(key, _)| key == "labelSelector");
        listed.push((request.path.clone(), selector.map(|(_, v)| v.clone())));
        request.reply(StatusCode::OK, &empty_list);
    }
    running.abort();

    listed.sort();
    let selector = format!(
        "app.kubernetes.io%2Fmanaged-by%3D{}%2Capp.kubernetes.io%2Fname%3Dwidget",
        field_manager()
    );
    assert_eq!(listed[0], ("/api/v1/configmaps".to_owned(), Some(selector)));
    let widgets = ("/apis/example.com/v1/widgets".to_owned(), None);
    assert_eq!(listed[1..], [widgets.clone(), widgets]);
}

#[tokio::test]
async fn a_controller_reconciles_no_more_objects_at_once_than_its_concurrency() {
    let (mut ctx, mut server) = testing::context();
    ctx.concurrency = 2;
    let widgets: Vec<Widget> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            let mut widget = testing::with_finalizer(test_kinds::widget(), "example.com/finalizer");
            widget.metadata.name = Some(name.to_owned());
            widget
        })
        .collect();
    let list = json!({
        "apiVersion": "v1", "kind": "List", "metadata": { "resourceVersion": "1" },
        "items": widgets,
    });
    let metrics = ctx.metrics.clone();
    let running = ::tokio::spawn(controller(ctx, Widgets).run());

    // The CRD check and the list are answered; the watch and the status applies are held
    // unanswered, so every reconcile that starts stays under way.
    let mut held = Vec::new();
    let wait = Duration::from_millis(500);
    while let Ok(request) = ::tokio::time::timeout(wait, server.next()).await {
        if request.method == Method::GET && !request.has_query("watch", "true") {
            request.reply(StatusCode::OK, &list);
        } else {
            held.push(request);
        }
    }
    running.abort();
    // The controller's cache is what /metrics counts.
    let exposition = metrics.encode().expect("metrics encode");
    assert!(
        exposition.contains(r#"_objects{controller="widget.example"} 3"#),
        "{exposition}"
    );

    let applying = held
        .iter()
        .filter(|request| request.path.ends_with("/status"))
        .count();
    assert_eq!(
        applying,
        2,
        "{:?}",
        held.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
}

#[test]
fn backoff_doubles_from_five_seconds_up_to_five_minutes() {
    let delays: Vec<u64> = (1..=8)
        .map(|failures| backoff(failures).as_secs())
        .collect();
    assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    assert_eq!(backoff(u32::MAX), BACKOFF_MAX);
}
