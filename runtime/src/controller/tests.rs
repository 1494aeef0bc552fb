use ::http::{Method, StatusCode};
use ::k8s_openapi::api::core::v1::ConfigMap;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ::k8s_openapi::jiff::Timestamp;
use ::serde_json::json;

use ::std::sync::Arc;
use ::std::time::Duration;

use ::kube::runtime::reflector::ObjectRef;
use ::kube::runtime::watcher;

use super::backoff::{BACKOFF_INITIAL, BACKOFF_MAX, backoff};
use super::*;
use crate::client::context::Leadership;
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

    // A later version of the object (the same copy again would find its status applied).
    let mut later = widget.clone();
    later.metadata.resource_version = Some("101".to_owned());
    let error = server
        .run(driver.reconcile(Arc::new(later)), async |server| {
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
async fn nothing_is_reconciled_before_the_owned_caches_have_listed() {
    let (ctx, mut server) = testing::context();
    let (_config_maps, writer) = ::kube::runtime::reflector::store::<ConfigMap>();
    let setup =
        controller(ctx, CollectedWidgets).owns_cached::<ConfigMap>(made_for("widget"), writer);
    let running = ::tokio::spawn(setup.run());
    let empty_list = list_of(&[]);

    // The widgets are listed; the ConfigMaps' list is held: no reconcile may write yet.
    let mut held_list = None;
    let mut watches = Vec::new();
    let wait = Duration::from_millis(500);
    while let Ok(request) = ::tokio::time::timeout(wait, server.next()).await {
        assert_eq!(
            request.method,
            Method::GET,
            "a write before the ConfigMaps were listed: {}",
            request.path
        );
        if request.has_query("watch", "true") {
            watches.push(request);
        } else if request.path == "/api/v1/configmaps" {
            held_list = Some(request);
        } else {
            request.reply(StatusCode::OK, &list_of(&[named("a")]));
        }
    }

    // Listed: the widget is reconciled.
    held_list
        .expect("the ConfigMaps' watch lists them")
        .reply(StatusCode::OK, &empty_list);
    let applied = loop {
        let request = server.next().await;
        if request.method == Method::GET {
            watches.push(request);
            continue;
        }
        break request;
    };
    running.abort();
    assert_eq!(
        applied.path,
        format!("{}/status", testing::path_of(&named("a")))
    );
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

/// Never finishes a reconcile, as one stuck on a call without a timeout.
struct Stuck;

impl Reconcile for Stuck {
    type Object = Widget;
    const FINALIZER: bool = false;

    async fn apply(&self, _widget: &Widget, _ctx: &Context) -> Result<Action, Error> {
        ::std::future::pending().await
    }
}

fn named(name: &str) -> Widget {
    let mut widget = test_kinds::widget();
    widget.metadata.name = Some(name.to_owned());
    widget
}

fn list_of(widgets: &[Widget]) -> ::serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "List", "metadata": { "resourceVersion": "1" },
        "items": widgets,
    })
}

// Paused time: the timeout passes at once.
#[tokio::test(start_paused = true)]
async fn a_reconcile_past_its_timeout_is_cancelled_counted_and_evented() {
    let (mut ctx, mut server) = testing::context();
    ctx.reconcile_timeout = Some(Duration::from_secs(2));
    let metrics = ctx.metrics.clone();
    let driver = Driver::new(Stuck, ctx);
    let widget = test_kinds::widget();
    let started = ::tokio::time::Instant::now();

    let result = server
        .run(driver.reconcile(Arc::new(widget.clone())), async |server| {
            let event = server
                .expect_event(&widget, "Warning", "ReconcileTimeout")
                .await;
            assert_eq!(
                event["note"],
                "reconcile did not finish within 2s: cancelled, to be retried"
            );
        })
        .await;

    assert_eq!(started.elapsed(), Duration::from_secs(2));
    let error = result.expect_err("a reconcile past its timeout fails");
    assert_eq!(error.reason(), "timeout");
    // Retried like any failure: with backoff.
    assert_eq!(
        driver.error_policy(&widget, &error),
        Action::requeue(BACKOFF_INITIAL)
    );
    let exposition = metrics.encode().expect("metrics encode");
    for counted in [
        r#"_reconcile_timeouts_total{controller="widget.example"} 1"#,
        r#"_reconcile_failures_total{controller="widget.example",reason="timeout"} 1"#,
    ] {
        assert!(exposition.contains(counted), "{counted} in {exposition}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_controller_retries_a_reconcile_its_timeout_cancelled() {
    let (mut ctx, mut server) = testing::context();
    ctx.reconcile_timeout = Some(Duration::from_secs(2));
    let running = ::tokio::spawn(controller(ctx, Stuck).run());
    let widget = test_kinds::widget();
    let events = testing::events_path(Some(testing::NAMESPACE));

    // The CRD check and the list are answered, the watch held; each cancelled reconcile
    // publishes an event (the second one patches the first, as a series).
    let mut evented = Vec::new();
    let mut held = Vec::new();
    while evented.len() < 2 {
        let request = server.next().await;
        if request.method == Method::GET && !request.has_query("watch", "true") {
            request.reply(StatusCode::OK, &list_of(std::slice::from_ref(&widget)));
        } else if request.path.starts_with(&events) {
            evented.push(::tokio::time::Instant::now());
            let body = request.body.clone();
            request.reply(StatusCode::OK, &body);
        } else {
            held.push(request);
        }
    }
    running.abort();

    // Cancelled after 2 s, retried 5 s later (the first backoff), cancelled again.
    let between = evented[1] - evented[0];
    assert_eq!(between, BACKOFF_INITIAL + Duration::from_secs(2));
}

#[tokio::test]
async fn a_warm_standby_fills_its_cache_and_reconciles_once_it_leads() {
    let (mut ctx, mut server) = testing::context();
    ctx.leadership = Leadership::standby();
    let leadership = ctx.leadership.clone();
    let metrics = ctx.metrics.clone();
    let widgets = [named("a"), named("b"), named("c")];
    let running = ::tokio::spawn(controller(ctx, CollectedWidgets).run());

    // The standby lists and watches, and writes nothing.
    let mut held = Vec::new();
    let wait = Duration::from_millis(500);
    while let Ok(request) = ::tokio::time::timeout(wait, server.next()).await {
        if request.method != Method::GET {
            panic!(
                "a standby writes nothing, but sent {} {}",
                request.method, request.path
            );
        }
        if request.has_query("watch", "true") {
            held.push(request);
        } else {
            request.reply(StatusCode::OK, &list_of(&widgets));
        }
    }
    let exposition = metrics.encode().expect("metrics encode");
    assert!(
        exposition.contains(r#"_objects{controller="widget.example"} 3"#),
        "the cache is filled before leading: {exposition}"
    );

    // Elected: it reconciles what its cache holds, without listing again.
    leadership.lead();
    let mut applied = Vec::new();
    while applied.len() < 3 {
        let request = server.next().await;
        assert!(request.path.ends_with("/status"), "{}", request.path);
        applied.push(request.path.clone());
        let name = request
            .path
            .split('/')
            .rev()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        request.reply(StatusCode::OK, &named(&name));
    }
    running.abort();
    applied.sort();
    assert_eq!(
        applied[0],
        format!("{}/status", testing::path_of(&widgets[0]))
    );
}

#[tokio::test]
async fn a_change_made_after_the_list_overtakes_the_backlog() {
    let (mut ctx, mut server) = testing::context();
    ctx.concurrency = 1;
    let running = ::tokio::spawn(controller(ctx, CollectedWidgets).run());
    let backlog = [named("a"), named("b"), named("c")];

    // The list; one object takes the only turn, its status apply held; the others wait.
    let mut watch = None;
    let mut applying = None;
    while watch.is_none() || applying.is_none() {
        let request = server.next().await;
        if request.method == Method::GET && request.has_query("watch", "true") {
            watch = Some(request);
        } else if request.method == Method::GET {
            request.reply(StatusCode::OK, &list_of(&backlog));
        } else {
            applying = Some(request);
        }
    }

    // A user creates `d`: its watch event comes after the list.
    let mut added = named("d");
    added.metadata.resource_version = Some("2".to_owned());
    let event = json!({ "type": "ADDED", "object": added });
    watch
        .unwrap()
        .reply_raw(StatusCode::OK, format!("{event}\n"));
    ::tokio::time::sleep(Duration::from_millis(200)).await;

    let mut order = Vec::new();
    let mut next = applying;
    // Bounded: an object left waiting (its turn never handed back to kube's controller) fails
    // the test instead of hanging it.
    let deadline = ::tokio::time::Instant::now() + Duration::from_secs(30);
    while order.len() < 4 {
        let request = match next.take() {
            Some(request) => request,
            None => ::tokio::time::timeout_at(deadline, server.next())
                .await
                .unwrap_or_else(|_| panic!("every object reconciled in time: {order:?}")),
        };
        if request.method == Method::GET {
            // The watch again, after the one answered ended.
            continue;
        }
        let name = request
            .path
            .split('/')
            .rev()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        request.reply(StatusCode::OK, &named(&name));
        order.push(name);
    }
    running.abort();
    // The first of the backlog (kube's scheduler picks which), then the change, then the rest.
    assert_eq!(order[1], "d", "{order:?}");
    order.remove(1);
    order.sort();
    assert_eq!(order, ["a", "b", "c"]);
}

#[tokio::test]
async fn a_reconcile_without_a_turn_ends_at_once_and_runs_when_its_turn_comes() {
    use ::futures::FutureExt as _;

    let (mut ctx, mut server) = testing::context();
    ctx.concurrency = 1;
    let driver = Driver::new(CollectedWidgets, ctx);
    let mut triggers = driver.queue().triggers().expect("the triggers");
    driver.opened().await;
    let held = driver
        .queue()
        .turn_now(&ObjectRef::from_obj(&named("a")))
        .expect("the only turn");
    let widget = named("b");

    // It ends without a request (the mock API server would keep it pending), and without a
    // requeue: the queue triggers it.
    let ended = driver
        .reconcile_or_wait(Arc::new(widget.clone()))
        .now_or_never()
        .expect("ends at once");
    assert_eq!(ended.expect("no error"), Action::await_change());
    assert!(triggers.try_recv().is_err());

    drop(held);
    let triggered = triggers.try_recv().expect("its turn came");
    assert_eq!(triggered, ObjectRef::from_obj(&widget));
    let action = server
        .run(
            driver.reconcile_or_wait(Arc::new(widget.clone())),
            async |server| {
                server.expect_status_applied(&widget).await;
            },
        )
        .await
        .expect("reconcile succeeds");
    // The reconciler asked for `Action::requeue(RESYNC_PERIOD)`: left to the resync.
    assert_eq!(action, Action::await_change());
}

/// Asks to be reconciled again in ten seconds, and sends nothing.
struct SoonAgain;

impl Reconcile for SoonAgain {
    type Object = Widget;
    const FINALIZER: bool = false;

    async fn apply(&self, _widget: &Widget, _ctx: &Context) -> Result<Action, Error> {
        Ok(Action::requeue(Duration::from_secs(10)))
    }
}

#[tokio::test]
async fn a_requeue_other_than_the_resync_is_left_to_kubes_controller() {
    let (ctx, _server) = testing::context();
    let driver = Driver::new(SoonAgain, ctx);
    driver.opened().await;
    let action = driver
        .reconcile_or_wait(Arc::new(named("a")))
        .await
        .expect("reconcile succeeds");
    assert_eq!(action, Action::requeue(Duration::from_secs(10)));
}

/// Sends nothing, and notes the name of each object it reconciles.
struct Noting(Arc<::std::sync::Mutex<Vec<String>>>);

impl Reconcile for Noting {
    type Object = Widget;
    const FINALIZER: bool = false;

    async fn apply(&self, widget: &Widget, _ctx: &Context) -> Result<Action, Error> {
        let name = widget.metadata.name.clone().unwrap_or_default();
        self.0.lock().unwrap().push(name);
        Ok(Action::requeue(RESYNC_PERIOD))
    }
}

// Paused time: the periods pass at once, and each tick comes at its exact instant.
#[tokio::test(start_paused = true)]
async fn a_running_controller_reconciles_every_object_again_each_resync_period() {
    let (ctx, mut server) = testing::context();
    let reconciled = Arc::new(::std::sync::Mutex::new(Vec::new()));
    let period = RESYNC_PERIOD;
    let running = ::tokio::spawn(controller(ctx, Noting(Arc::clone(&reconciled))).run());

    // The CRD check and the list are answered, and the watch held: no change is ever seen.
    // Two periods and a little: the second period's last tick (at its end) has come, and no
    // tick of the third (the first is a sixtieth of a period in).
    let until = ::tokio::time::Instant::now() + period * 2 + period / 120;
    let mut held = Vec::new();
    while let Ok(request) = ::tokio::time::timeout_at(until, server.next()).await {
        if request.method == Method::GET && !request.has_query("watch", "true") {
            request.reply(StatusCode::OK, &list_of(&[named("a"), named("b")]));
        } else {
            held.push(request);
        }
    }
    running.abort();
    let mut reconciled = reconciled.lock().unwrap().clone();
    reconciled.sort();
    // Once after the list, then once in each period.
    assert_eq!(reconciled, ["a", "a", "a", "b", "b", "b"]);
}

#[test]
fn backoff_doubles_from_five_seconds_up_to_five_minutes() {
    let delays: Vec<u64> = (1..=8)
        .map(|failures| backoff(failures).as_secs())
        .collect();
    assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300]);
    assert_eq!(backoff(u32::MAX), BACKOFF_MAX);
}

/// The metadata watch of an owned kind lists small pages, as the cached watches do.
#[tokio::test]
async fn an_owned_kinds_metadata_watch_lists_a_small_page() {
    let (ctx, mut server) = testing::context();
    let mut watch = setup::metadata_watch::<ConfigMap>(ctx.watched(), watcher::Config::default());
    let watching =
        ::tokio::spawn(
            async move { while ::futures::StreamExt::next(&mut watch).await.is_some() {} },
        );
    let list = server.next().await;
    watching.abort();
    assert_eq!(list.path, "/api/v1/configmaps");
    assert!(list.has_query("limit", "100"), "{:?}", list.query);
}
