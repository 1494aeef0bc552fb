//! The controllers' copies of the objects they watch, so that a reconcile of an object that
//! needs nothing sends nothing (see [`fingerprint`](super::fingerprint)).
//!
//! Every cached object is trimmed of what no controller reads (`managedFields`, kubectl's
//! last-applied annotation), which is most of a small object's size.

use ::std::fmt::Debug;

use ::futures::stream::BoxStream;
use ::futures::{FutureExt as _, StreamExt as _};
use ::kube::Api;
use ::kube::Resource;
use ::kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use ::kube::runtime::{WatchStreamExt as _, watcher};
use ::serde::de::DeserializeOwned;

/// What kubectl writes on `kubectl apply`; no controller reads it.
const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// How many objects a watch's list asks for at once, where kube asks for 500. A page is parsed
/// whole, each object's managed fields included, before the cache trims them: a manager that
/// starts over thousands of objects held a page of them at its memory's peak (7.8 MiB at 500
/// custom objects). A smaller page costs more list requests (100 for 10,000 objects), each a
/// few milliseconds of the API server's.
const LIST_PAGE_SIZE: u32 = 100;

/// `config` listing [`LIST_PAGE_SIZE`] objects at a time, unless it sets its own page size.
pub(crate) fn in_small_pages(config: watcher::Config) -> watcher::Config {
    if config.page_size == watcher::Config::default().page_size {
        config.page_size(LIST_PAGE_SIZE)
    } else {
        config
    }
}

/// `obj` without what no controller reads: its managed fields and kubectl's copy of it.
pub(crate) fn trimmed<K: Resource>(obj: &mut K) {
    let metadata = obj.meta_mut();
    metadata.managed_fields = None;
    if let Some(annotations) = &mut metadata.annotations {
        annotations.remove(LAST_APPLIED_ANNOTATION);
    }
}

/// The watch of `api` (objects `config` selects), trimmed, kept in `writer`'s store: each
/// object is in the store before the stream yields it, so a reconcile it triggers reads the
/// copy it was triggered by, or a newer one.
///
/// Boxed here, in a function of the watched kind alone: the watch's state machine is compiled
/// where its stream is boxed, so the runtime compiles it once for the kinds every operand
/// watches (see `operand::instances`) instead of each controller of a project compiling its own.
pub(crate) fn cached_watch<K>(
    api: Api<K>,
    config: watcher::Config,
    writer: Writer<K>,
) -> BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    watcher(api, in_small_pages(config))
        .default_backoff()
        .modify(trimmed)
        .reflect(writer)
        .boxed()
}

/// The cached copy of the object `desired` names, if the store holds it.
pub(crate) fn cached<K>(store: &Store<K>, desired: &K) -> Option<K>
where
    K: Resource<DynamicType = ()> + Clone,
{
    store
        .get(&ObjectRef::from_obj(desired))
        .map(|found| found.as_ref().clone())
}

/// Whether the watch filling `store` has listed every object once: from then on, an object
/// the store lacks is one the API server lacks too (or one written since, which the watch
/// shows within moments).
pub(crate) fn is_synced<K>(store: &Store<K>) -> bool
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    store
        .wait_until_ready()
        .now_or_never()
        .is_some_and(|ready| ready.is_ok())
}

#[cfg(test)]
mod tests;
