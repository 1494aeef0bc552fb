//! Runs the controller of a kind: the [`Reconcile`] trait a kind's controller implements, and
//! the driver around it, which watches the kind, keeps its finalizer, retries failures with
//! per-object exponential backoff, and records metrics and logs.

use ::std::collections::HashMap;
use ::std::fmt::Debug;
use ::std::future::Future;
use ::std::sync::{Arc, Mutex, PoisonError};
use ::std::time::Duration;

use ::futures::StreamExt as _;
use ::kube::api::ListParams;
use ::kube::runtime::controller::{self, Action, Config as ControllerConfig, Controller};
use ::kube::runtime::finalizer::{Event as Finalizer, finalizer};
use ::kube::runtime::reflector::{self, ObjectRef, Store, store::Writer};
use ::kube::runtime::{WatchStreamExt as _, watcher};
use ::kube::{Api, Resource};
use ::serde::de::DeserializeOwned;
use ::tracing::{Instrument as _, Span, debug, info, info_span, warn};

use crate::cache::{cached_watch, cached_watch_shrunk};
pub use crate::error::Error;
use crate::{Context, context::ApiObject};

/// Reconcile again after this long even if nothing changed, to correct drift.
pub const RESYNC_PERIOD: Duration = Duration::from_secs(300);
/// Delay before the first retry of a failed reconcile; doubles on every further failure.
pub const BACKOFF_INITIAL: Duration = Duration::from_secs(5);
/// Longest delay between retries of a failing reconcile.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// What the controller of a kind implements: how to bring the cluster to the state an object
/// asks for, and what to release when the object is deleted. [`run`] (or [`controller()`]) does
/// the rest.
pub trait Reconcile: Send + Sync + 'static {
    /// The kind this controller reconciles.
    type Object: ApiObject;

    /// Whether deleting an object waits for [`Reconcile::cleanup`]: the driver then keeps a
    /// finalizer (`<group>/finalizer`) on every object. Without it, a deleted object is left to
    /// Kubernetes' garbage collector, which deletes the objects that carry its owner reference.
    const FINALIZER: bool = true;

    /// Brings the cluster to the state `obj` asks for. An error is retried with backoff.
    fn apply(
        &self,
        obj: &Self::Object,
        ctx: &Context,
    ) -> impl Future<Output = Result<Action, Error>> + Send;

    /// Releases what the deletion of `obj` must release; runs only with
    /// [`Reconcile::FINALIZER`], which is removed once this returns `Ok`.
    fn cleanup(
        &self,
        _obj: &Self::Object,
        _ctx: &Context,
    ) -> impl Future<Output = Result<Action, Error>> + Send {
        async { Ok(Action::await_change()) }
    }
}

/// Runs the controller of `R`'s kind until `ctx.shutdown` is cancelled: `controller(ctx,
/// reconciler).run()`.
pub async fn run<R: Reconcile>(ctx: Context, reconciler: R) -> ::anyhow::Result<()> {
    controller(ctx, reconciler).run().await
}

/// The controller of `R`'s kind, to set up (what else it watches) before it runs.
pub fn controller<R: Reconcile>(ctx: Context, reconciler: R) -> Setup<R> {
    Setup {
        ctx,
        reconciler,
        watches: Vec::new(),
    }
}

/// Adds a watch to a kind's controller.
pub(crate) type AddWatch<K> = Box<dyn FnOnce(Controller<K>, &Context) -> Controller<K> + Send>;

/// A kind's controller being set up: see [`controller()`].
pub struct Setup<R: Reconcile> {
    ctx: Context,
    reconciler: R,
    watches: Vec<AddWatch<R::Object>>,
}

impl<R: Reconcile> Setup<R> {
    /// Also watches the `C` objects that carry a controller owner reference to an object of
    /// the kind (the objects its reconciler makes), so that their changes reconcile their
    /// owner. `config` selects which ones, such as [`made_for`](super::apply::made_for) those
    /// this manager made.
    #[must_use]
    pub fn owns<C>(mut self, config: watcher::Config) -> Self
    where
        C: ApiObject,
    {
        let add: AddWatch<R::Object> =
            Box::new(move |controller, ctx| controller.owns(ctx.watched::<C>(), config));
        self.watches.push(add);
        self
    }

    /// Like [`Setup::owns`], and also keeps the watched objects, trimmed, in `writer`'s store:
    /// what a reconciler compares its desired objects with instead of reading them.
    #[must_use]
    pub fn owns_cached<C>(self, config: watcher::Config, writer: Writer<C>) -> Self
    where
        C: ApiObject,
    {
        self.owns_cached_shrunk(config, writer, |_| {})
    }

    /// Like [`Setup::owns_cached`], each copy also shrunk by `shrink` (see
    /// [`crate::compact`]).
    #[must_use]
    pub fn owns_cached_shrunk<C>(
        mut self,
        config: watcher::Config,
        writer: Writer<C>,
        shrink: fn(&mut C),
    ) -> Self
    where
        C: ApiObject,
    {
        let add: AddWatch<R::Object> = Box::new(move |controller, ctx| {
            let watch = cached_watch_shrunk(ctx.watched::<C>(), config, writer, shrink);
            controller.owns_stream(watch.touched_objects())
        });
        self.watches.push(add);
        self
    }

    /// Also adds the watch `add`, as the machinery's own watches do (see
    /// [`Reference::watch`](crate::reference::Reference::watch)).
    pub(crate) fn watching(mut self, add: AddWatch<R::Object>) -> Self {
        self.watches.push(add);
        self
    }

    /// Runs the controller until `ctx.shutdown` is cancelled.
    ///
    /// Fails at once, saying what to do, when the kind's CRD is not installed.
    pub async fn run(self) -> ::anyhow::Result<()> {
        let Setup {
            ctx,
            reconciler,
            watches,
        } = self;
        let api = ctx.watched::<R::Object>();
        ensure_crd_installed(&api).await?;

        let (store, writer) = reflector::store();
        let watch = cached_watch(api, watcher::Config::default(), writer);
        let config = ControllerConfig::default().concurrency(ctx.concurrency);
        let mut controller =
            Controller::for_stream(watch.applied_objects(), store).with_config(config);
        for add in watches {
            controller = add(controller, &ctx);
        }
        let driver = Arc::new(Driver::new(reconciler, ctx.clone()).watching(controller.store()));
        let name = driver.name.as_str();
        ctx.metrics.count_objects(name, controller.store());
        info!(controller = name, "starting controller");
        controller
            .graceful_shutdown_on(ctx.shutdown.clone().cancelled_owned())
            .run(reconcile, error_policy, Arc::clone(&driver))
            .for_each(|result| async move {
                match result {
                    Ok((object, _)) => debug!(%object, "reconciled"),
                    // Already logged and counted by `error_policy`.
                    Err(controller::Error::ReconcilerFailed(..)) => {}
                    Err(error) => warn!(%error, controller = name, "controller error"),
                }
            })
            .await;
        info!(controller = name, "controller stopped");
        Ok(())
    }
}

async fn reconcile<R: Reconcile>(
    obj: Arc<R::Object>,
    driver: Arc<Driver<R>>,
) -> Result<Action, Error> {
    driver.reconcile(obj).await
}

fn error_policy<R: Reconcile>(
    obj: Arc<R::Object>,
    error: &Error,
    driver: Arc<Driver<R>>,
) -> Action {
    driver.error_policy(&obj, error)
}

/// Fails with an actionable message when the CRD is missing, instead of letting the watcher
/// retry forever.
async fn ensure_crd_installed<K>(api: &Api<K>) -> ::anyhow::Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let crd = format!("{}.{}", K::plural(&()), K::group(&()));
    match api.list_metadata(&ListParams::default().limit(1)).await {
        Ok(_) => Ok(()),
        // Not `status.is_not_found()`: in kube 5.0 it ignores the code, and a 404 from a proxy
        // has no JSON Status with reason NotFound.
        Err(::kube::Error::Api(status)) if status.code == 404 => {
            ::anyhow::bail!(
                "CRD {crd} is not installed: run `make install`, or for another project's CRD (config/external/), install that project"
            )
        }
        Err(error) => Err(::anyhow::Error::new(error).context(format!("cannot list {crd}"))),
    }
}

/// One controller's state across reconciles: the kind's reconciler, the context, and the
/// failure counts behind the retry backoff.
pub struct Driver<R: Reconcile> {
    reconciler: R,
    ctx: Context,
    /// `<kind>.<group>` in lowercase: the controller's name in metrics and logs.
    name: String,
    /// `<group>.<domain>/finalizer`
    finalizer: String,
    /// Consecutive failed reconciles per object.
    failures: Mutex<HashMap<ObjectRef<R::Object>, u32>>,
    /// The objects the controller watches, when it runs: what tells that a failing object
    /// was deleted.
    watched: Option<Store<R::Object>>,
}

impl<R: Reconcile> Driver<R> {
    /// The driver of `reconciler`, with no failures yet.
    pub fn new(reconciler: R, ctx: Context) -> Self {
        let group = R::Object::group(&());
        Self {
            name: controller_name::<R::Object>(),
            finalizer: format!("{group}/finalizer"),
            reconciler,
            ctx,
            failures: Mutex::default(),
            watched: None,
        }
    }

    /// The driver of a controller whose watched objects are `store`: the failure counts of
    /// objects gone from it are forgotten.
    #[must_use]
    pub fn watching(mut self, store: Store<R::Object>) -> Self {
        self.watched = Some(store);
        self
    }

    /// The number of objects whose last reconcile failed.
    pub fn failing(&self) -> usize {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Forgets the failures of `done` (reconciled) and of every object deleted since. A
    /// deleted object is not reconciled again, and one without a finalizer (an operand's)
    /// never sees the success that would forget it, so without this a failing object deleted
    /// would keep its entry as long as the manager runs.
    fn forget(
        &self,
        failures: &mut HashMap<ObjectRef<R::Object>, u32>,
        done: Option<&ObjectRef<R::Object>>,
    ) {
        if let Some(done) = done {
            failures.remove(done);
        }
        if let Some(store) = &self.watched {
            failures.retain(|object, _| store.get(object).is_some());
        }
    }

    /// One reconcile of `obj`: [`Reconcile::apply`], or [`Reconcile::cleanup`] once it is
    /// deleted. A success forgets the object's earlier failures.
    pub async fn reconcile(&self, obj: Arc<R::Object>) -> Result<Action, Error> {
        let span = reconcile_span(obj.as_ref(), &self.name);
        self.reconcile_in_span(obj).instrument(span).await
    }

    async fn reconcile_in_span(&self, obj: Arc<R::Object>) -> Result<Action, Error> {
        let _timer = self.ctx.metrics.reconcile(&self.name);
        let object_ref = ObjectRef::from_obj(obj.as_ref());
        let action = if R::FINALIZER {
            let api = self.ctx.api_of(obj.as_ref())?;
            finalizer(&api, &self.finalizer, obj, |event| async {
                match event {
                    Finalizer::Apply(obj) => self.reconciler.apply(&obj, &self.ctx).await,
                    Finalizer::Cleanup(obj) => self.reconciler.cleanup(&obj, &self.ctx).await,
                }
            })
            .await
            .map_err(Box::new)?
        } else if obj.meta().deletion_timestamp.is_some() {
            // The garbage collector deletes what the object owns; applying it now would
            // recreate it.
            Action::await_change()
        } else {
            self.reconciler.apply(&obj, &self.ctx).await?
        };
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        self.forget(&mut failures, Some(&object_ref));
        Ok(action)
    }

    /// Decides when to retry a failed reconcile: exponential backoff per object.
    pub fn error_policy(&self, obj: &R::Object, error: &Error) -> Action {
        self.ctx
            .metrics
            .reconcile_failure(&self.name, error.reason());
        let failures = {
            let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
            self.forget(&mut failures, None);
            let count = failures.entry(ObjectRef::from_obj(obj)).or_default();
            *count = count.saturating_add(1);
            *count
        };
        let delay = backoff(failures);
        warn!(%error, failures, retry_in = ?delay, "reconcile failed");
        Action::requeue(delay)
    }
}

/// The span a reconcile runs in: what each line logged during it says about the object, and
/// with the `otel` feature one span of a trace (see the `otel` module for the requests'
/// spans inside it).
/// Traces may name objects, unlike metrics: a span is a record of one event, not a series.
fn reconcile_span<K: ApiObject>(obj: &K, controller: &str) -> Span {
    let meta = obj.meta();
    info_span!(
        "reconcile",
        controller,
        kind = %K::kind(&()),
        namespace = meta.namespace.as_deref().unwrap_or_default(),
        name = meta.name.as_deref().unwrap_or_default(),
    )
}

/// The name of the controller of kind `K` in metrics and logs: `<kind>.<first part of the
/// group>` in lowercase, such as `mysqlcluster.db`.
pub fn controller_name<K: Resource<DynamicType = ()>>() -> String {
    let group = K::group(&());
    // The core group's name is empty; metrics and logs call it `core`, as kubectl does.
    let short_group = match group.split('.').next() {
        Some("") | None => "core",
        Some(first) => first,
    };
    format!("{}.{short_group}", K::kind(&()).to_lowercase())
}

/// Delay before the next retry after `failures` consecutive failures (at least 1).
pub fn backoff(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1));
    BACKOFF_INITIAL.saturating_mul(factor).min(BACKOFF_MAX)
}

#[cfg(test)]
mod tests {
    use ::http::{Method, StatusCode};
    use ::k8s_openapi::api::core::v1::ConfigMap;
    use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use ::k8s_openapi::jiff::Timestamp;
    use ::serde_json::json;

    use super::*;
    use crate::apply::made_for;
    use crate::context::field_manager;
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
        assert_eq!(driver.failing(), 1);

        // Deleted while failing: no reconcile comes for it again, and it has no finalizer.
        writer.apply_watcher_event(&watcher::Event::Delete(deleted.clone()));
        driver.error_policy(&other, &error);
        assert_eq!(driver.failing(), 1, "only `other` is still failing");
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
                let mut widget =
                    testing::with_finalizer(test_kinds::widget(), "example.com/finalizer");
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
}
