//! A kind's controller being set up: what else it watches, then its run, on kube-runtime's
//! `Controller`.

use ::std::fmt::Debug;
use ::std::sync::Arc;

use ::futures::stream::BoxStream;
use ::futures::{StreamExt as _, TryStreamExt as _};
use ::kube::api::{ListParams, PartialObjectMeta};
use ::kube::runtime::controller::{self, Action, Config as ControllerConfig, Controller};
use ::kube::runtime::reflector::{self, ObjectRef, store::Writer};
use ::kube::runtime::{WatchStreamExt as _, watcher};
use ::kube::{Api, Resource};
use ::serde::de::DeserializeOwned;
use ::tracing::{debug, info, warn};

use super::driver::Driver;
use super::owned_caches::OwnedCaches;
use super::queue::Queue;
use super::resync::resync;
use super::{RESYNC_PERIOD, Reconcile};
use crate::client::Context;
use crate::client::cache::{cached_watch, in_small_pages};
use crate::error::Error;
use crate::object::ApiObject;

/// Adds a watch to a kind's controller.
pub(crate) type AddWatch<K> = Box<dyn FnOnce(Controller<K>, &Context) -> Controller<K> + Send>;

/// A kind's controller being set up: see [`controller()`](super::controller()).
pub struct Setup<R: Reconcile> {
    ctx: Context,
    reconciler: R,
    watches: Vec<AddWatch<R::Object>>,
    /// The caches [`Setup::owns_cached`] fills, which the first reconcile waits for.
    owned: OwnedCaches,
}

impl<R: Reconcile> Setup<R> {
    /// The controller of `reconciler`, which watches nothing else yet.
    pub(super) fn new(ctx: Context, reconciler: R) -> Self {
        Self {
            ctx,
            reconciler,
            watches: Vec::new(),
            owned: OwnedCaches::default(),
        }
    }

    /// Also watches the `C` objects that carry a controller owner reference to an object of
    /// the kind (the objects its reconciler makes), so that their changes reconcile their
    /// owner. `config` selects which ones, such as [`made_for`](crate::made_for) those
    /// this manager made.
    #[must_use]
    pub fn owns<C>(mut self, config: watcher::Config) -> Self
    where
        C: ApiObject,
    {
        let add: AddWatch<R::Object> = Box::new(move |controller, ctx| {
            controller.owns_stream(metadata_watch(
                ctx.watched::<PartialObjectMeta<C>>(),
                config,
            ))
        });
        self.watches.push(add);
        self
    }

    /// Like [`Setup::owns`], and also keeps the watched objects, trimmed, in `writer`'s store:
    /// what a reconciler compares its desired objects with instead of reading them. The
    /// controller reconciles nothing before the store has listed what exists.
    #[must_use]
    pub fn owns_cached<C>(mut self, config: watcher::Config, writer: Writer<C>) -> Self
    where
        C: ApiObject,
    {
        self.owned.add(writer.as_reader());
        let add: AddWatch<R::Object> = Box::new(move |controller, ctx| {
            let watch = cached_watch(ctx.watched::<C>(), config, writer);
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
            owned,
        } = self;
        let api = ctx.watched::<R::Object>();
        ensure_crd_installed(&api).await?;

        let (store, writer) = reflector::store();
        let driver = Arc::new(
            Driver::new(reconciler, ctx.clone())
                .watching(store.clone())
                .after(owned.listed()),
        );
        let queue = driver.queue().clone();
        let watch =
            cached_watch(api, watcher::Config::default(), writer).inspect_ok(move |event| {
                mark_changes(&queue, event);
            });
        // No limit in kube's controller: the driver keeps it, with its own order (see
        // `queue`), and the objects whose turn comes after their reconcile found none come
        // back through `triggers`.
        let config = ControllerConfig::default().concurrency(0);
        let resyncs = resync(store.clone(), RESYNC_PERIOD);
        let mut controller = Controller::for_stream(watch.applied_objects(), store)
            .with_config(config)
            .reconcile_on(resyncs);
        if let Some(triggers) = driver.queue().triggers() {
            controller = controller.reconcile_on(triggers);
        }
        for add in watches {
            controller = add(controller, &ctx);
        }
        let name = driver.name.as_str();
        ctx.metrics.count_objects(name, controller.store());
        info!(controller = name, "starting controller");
        let running = controller
            .graceful_shutdown_on(ctx.shutdown.clone().cancelled_owned())
            .run(reconcile, error_policy, Arc::clone(&driver))
            .for_each(|result| async move {
                match result {
                    // Also the reconciles that found no turn and ended at once: the driver
                    // logs the reconciles it runs.
                    Ok(_) => {}
                    // Already logged and counted by `error_policy`.
                    Err(controller::Error::ReconcilerFailed(..)) => {}
                    // Deleted after its turn came and before kube's controller started it.
                    Err(controller::Error::ObjectNotFound(object)) => {
                        debug!(%object, "not reconciled: deleted");
                    }
                    Err(error) => warn!(%error, controller = name, "controller error"),
                }
            });
        let opening = async {
            driver.opened().await;
            ::std::future::pending::<()>().await;
        };
        ::tokio::select! {
            () = running => {}
            () = opening => unreachable!("never ready"),
        }
        info!(controller = name, "controller stopped");
        Ok(())
    }
}

/// The watch of the metadata of the objects `config` selects (`api` asks for their metadata
/// alone), as kube's `Controller::owns` watches the objects a controller owns.
///
/// Boxed here, in a function of the watched kind alone, for the reason
/// [`cached_watch`] is: the runtime compiles it once for the kinds operands own (see
/// `operand::instances`).
pub(crate) fn metadata_watch<C: ApiObject>(
    api: Api<PartialObjectMeta<C>>,
    config: watcher::Config,
) -> BoxStream<'static, Result<PartialObjectMeta<C>, watcher::Error>> {
    watcher(api, in_small_pages(config))
        .touched_objects()
        .boxed()
}

/// Marks in `queue` the objects the watch of the kind saw change after its initial list (not
/// those of the initial list, nor of a re-list after the watch expired).
fn mark_changes<K: ApiObject>(queue: &Queue<K>, event: &watcher::Event<K>) {
    match event {
        watcher::Event::Apply(obj) => queue.changed(&ObjectRef::from_obj(obj)),
        watcher::Event::Delete(obj) => queue.deleted(&ObjectRef::from_obj(obj)),
        watcher::Event::Init | watcher::Event::InitApply(_) | watcher::Event::InitDone => {}
    }
}

async fn reconcile<R: Reconcile>(
    obj: Arc<R::Object>,
    driver: Arc<Driver<R>>,
) -> Result<Action, Error> {
    driver.reconcile_or_wait(obj).await
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
