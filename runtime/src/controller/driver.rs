//! One controller's reconciles: the kind's reconciler, its finalizer, its span, its time
//! limit, its turn (see [`queue`](super::queue)), and the failure counts behind the retry
//! backoff.

use ::std::collections::HashMap;
use ::std::sync::{Arc, Mutex, PoisonError};
use ::std::time::Duration;

use ::futures::FutureExt as _;
use ::futures::future::{BoxFuture, Shared};
use ::kube::Resource;
use ::kube::runtime::controller::Action;
use ::kube::runtime::finalizer::{Event as Finalizer, finalizer};
use ::kube::runtime::reflector::{ObjectRef, Store};
use ::tracing::{Instrument as _, Span, debug, info_span, warn};

use super::backoff::backoff;
use super::queue::{Queue, Turn};
use super::{RESYNC_PERIOD, Reconcile};
use crate::client::Context;
use crate::error::Error;
use crate::object::ApiObject;

/// One controller's state across reconciles: the kind's reconciler, the context, and the
/// failure counts behind the retry backoff.
pub struct Driver<R: Reconcile> {
    reconciler: R,
    pub(super) ctx: Context,
    /// `<kind>.<group>` in lowercase: the controller's name in metrics and logs.
    pub(super) name: String,
    /// `<group>.<domain>/finalizer`
    pub(super) finalizer: String,
    /// Consecutive failed reconciles per object.
    pub(super) failures: Mutex<HashMap<ObjectRef<R::Object>, u32>>,
    /// The objects the controller watches, when it runs: what tells that a failing object
    /// was deleted.
    watched: Option<Store<R::Object>>,
    /// The turns of the reconciles, changed objects first.
    queue: Queue<R::Object>,
    /// What the queue opens after, besides the election: the owned caches' first lists.
    owned_listed: Shared<BoxFuture<'static, ()>>,
}

impl<R: Reconcile> Driver<R> {
    /// The driver of `reconciler`, with no failures yet.
    pub fn new(reconciler: R, ctx: Context) -> Self {
        let group = R::Object::group(&());
        Self {
            name: controller_name::<R::Object>(),
            finalizer: format!("{group}/finalizer"),
            reconciler,
            failures: Mutex::default(),
            watched: None,
            queue: Queue::new(usize::from(ctx.concurrency)),
            owned_listed: ::std::future::ready(()).boxed().shared(),
            ctx,
        }
    }

    /// The driver of a controller whose reconciles wait for `listed` (see
    /// [`OwnedCaches`](super::owned_caches::OwnedCaches)).
    #[must_use]
    pub(crate) fn after(mut self, listed: Shared<BoxFuture<'static, ()>>) -> Self {
        self.owned_listed = listed;
        self
    }

    /// The driver of a controller whose watched objects are `store`: the failure counts of
    /// objects gone from it are forgotten.
    #[must_use]
    pub(crate) fn watching(mut self, store: Store<R::Object>) -> Self {
        self.watched = Some(store);
        self
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

    /// The turns of this controller's reconciles, which its watch marks changed objects in.
    pub(crate) fn queue(&self) -> &Queue<R::Object> {
        &self.queue
    }

    /// One reconcile of `obj`: [`Reconcile::apply`], or [`Reconcile::cleanup`] once it is
    /// deleted. A success forgets the object's earlier failures.
    ///
    /// It waits first until the replica leads (see [`Context::elected`]) and the caches of what
    /// the controller owns have listed, then for its turn, the objects changed after the
    /// initial list first; then it reconciles the newest copy the controller's cache holds,
    /// cancelled after the reconcile timeout. A shutdown while it waits skips it.
    pub async fn reconcile(&self, obj: Arc<R::Object>) -> Result<Action, Error> {
        let object_ref = ObjectRef::from_obj(obj.as_ref());
        let shutdown = &self.ctx.shutdown;
        let opened = async {
            self.opened().await;
            ::std::future::pending::<()>().await;
        };
        let turn = ::tokio::select! {
            biased;
            turn = self.queue.turn(&object_ref) => turn,
            () = opened => unreachable!("never ready"),
            () = shutdown.cancelled() => return Ok(Action::await_change()),
        };
        self.reconcile_in_turn(obj, &object_ref, turn).await
    }

    /// Opens the queue once the replica leads and the caches of what the controller owns have
    /// listed.
    pub(crate) async fn opened(&self) {
        self.ctx.elected().await;
        self.owned_listed.clone().await;
        self.queue.open();
    }

    /// [`Driver::reconcile`] as the controller runs it: the reconcile of an object that finds
    /// no turn ends at once, and the object waits in line until the queue triggers it (see
    /// [`queue`](super::queue)). The controller runs [`Driver::opened`] beside it.
    pub(crate) async fn reconcile_or_wait(&self, obj: Arc<R::Object>) -> Result<Action, Error> {
        let object_ref = ObjectRef::from_obj(obj.as_ref());
        match self.queue.turn_now(&object_ref) {
            // Boxed: the reconciles that find no turn end at once, and need none of the room a
            // running one's state takes.
            Some(turn) => Box::pin(self.reconcile_in_turn(obj, &object_ref, turn))
                .await
                .map(left_to_resync),
            // Nothing to requeue: the queue triggers it, and kube's controller forgets
            // nothing else about it.
            None => Ok(Action::await_change()),
        }
    }

    /// Reconciles the newest copy of `obj` (`object_ref`) the controller's cache holds, once
    /// it has `turn`.
    async fn reconcile_in_turn(
        &self,
        obj: Arc<R::Object>,
        object_ref: &ObjectRef<R::Object>,
        _turn: Turn<R::Object>,
    ) -> Result<Action, Error> {
        let obj = match &self.watched {
            Some(store) => match store.get(object_ref) {
                Some(newest) => newest,
                // Deleted while it waited.
                None => return Ok(Action::await_change()),
            },
            None => obj,
        };
        self.reconcile_within_timeout(obj).await
    }

    /// [`Driver::reconcile`] once it has its turn: cancelled after the reconcile timeout.
    async fn reconcile_within_timeout(&self, obj: Arc<R::Object>) -> Result<Action, Error> {
        let span = reconcile_span(obj.as_ref(), &self.name);
        let Some(limit) = self.ctx.reconcile_timeout else {
            return self.reconcile_in_span(obj).instrument(span).await;
        };
        let reconciling = self
            .reconcile_in_span(Arc::clone(&obj))
            .instrument(span.clone());
        match ::tokio::time::timeout(limit, reconciling).await {
            Ok(result) => result,
            Err(_) => Err(self.timed_out(obj.as_ref(), limit).instrument(span).await),
        }
    }

    /// Reports a reconcile cancelled after `limit`: counted, logged, and told in a `Warning`
    /// event on the object; the error it returns retries it with backoff.
    async fn timed_out(&self, obj: &R::Object, limit: Duration) -> Error {
        self.ctx.metrics.reconcile_timeout(&self.name);
        let message = format!("reconcile did not finish within {limit:?}: cancelled");
        self.ctx
            .events
            .warning(
                obj,
                TIMEOUT_REASON,
                "Reconcile",
                format!("{message}, to be retried"),
            )
            .await;
        Error::failed("timeout", message)
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
        debug!(?action, "reconciled");
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

/// `action` as kube's controller is to carry it out: a requeue after [`RESYNC_PERIOD`] is the
/// controller's resync, which reconciles every object again within that period without an
/// entry per object in kube's scheduler (see [`resync`](super::resync)).
fn left_to_resync(action: Action) -> Action {
    if action == Action::requeue(RESYNC_PERIOD) {
        Action::await_change()
    } else {
        action
    }
}

/// The reason of the `Warning` event about a reconcile cancelled after the reconcile timeout.
pub(crate) const TIMEOUT_REASON: &str = "ReconcileTimeout";

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
pub(crate) fn controller_name<K: Resource<DynamicType = ()>>() -> String {
    let group = K::group(&());
    // The core group's name is empty; metrics and logs call it `core`, as kubectl does.
    let short_group = match group.split('.').next() {
        Some("") | None => "core",
        Some(first) => first,
    };
    format!("{}.{short_group}", K::kind(&()).to_lowercase())
}
