//! The driver of a kind's controller: the [`Reconcile`] trait a kind's controller implements,
//! and what runs it, as kube-runtime's `Controller` does with a reconcile function: the watch
//! of the kind (and of what it owns or references, see [`Setup`]), its finalizer, per-object
//! exponential backoff, metrics and logs.
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::runtime::controller::Action;
//! use opgen_runtime::{Context, Error, RESYNC_PERIOD, Reconcile};
//!
//! /// Reconciles config maps, and keeps no finalizer: there is nothing to release.
//! struct Reconciler;
//!
//! impl Reconcile for Reconciler {
//!     type Object = ConfigMap;
//!     const FINALIZER: bool = false;
//!
//!     async fn apply(&self, config_map: &ConfigMap, ctx: &Context) -> Result<Action, Error> {
//!         // Bring the cluster to what `config_map` asks for, e.g. with `ctx.apply(&child)`.
//!         Ok(Action::requeue(RESYNC_PERIOD))
//!     }
//! }
//!
//! async fn run(ctx: Context) -> anyhow::Result<()> {
//!     opgen_runtime::run(ctx, Reconciler).await
//! }
//! ```

mod backoff;
mod driver;
mod owned_caches;
mod queue;
pub mod reference;
mod resync;
pub(crate) mod setup;

use ::std::future::Future;
use ::std::time::Duration;

use ::kube::runtime::controller::Action;

pub use self::driver::Driver;
pub(crate) use self::driver::controller_name;
pub(crate) use self::setup::AddWatch;
pub use self::setup::Setup;
use crate::client::Context;
use crate::error::Error;
use crate::object::ApiObject;

/// How often a controller reconciles every object of its kind again, even if nothing changed,
/// to correct drift. A reconcile that returns `Action::requeue(RESYNC_PERIOD)` leaves its
/// object to that resync, which keeps nothing per object, where kube's controller would
/// schedule each object's requeue one by one (see the `resync` module).
pub const RESYNC_PERIOD: Duration = Duration::from_secs(300);

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
    Setup::new(ctx, reconciler)
}

#[cfg(test)]
mod tests;
