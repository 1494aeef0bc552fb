//! The controller's resync: every object of the kind is reconciled again once a period,
//! [`RESYNC_PERIOD`](super::RESYNC_PERIOD), even if no watch showed a change, so that drift
//! no watch shows (a change to something the controller does not watch, an event lost while
//! a watch restarted) is corrected.
//!
//! kube's controller would keep each object's next resync in its scheduler, from the
//! `Action::requeue` its reconcile returns: two copies of the object's reference (its name,
//! namespace, resource version and UID) and their entries in a map and a timer queue, about
//! 700 bytes an object for as long as the manager runs. The resync keeps nothing per object
//! instead: it cuts the period into [`SLOTS`] ticks, gives every object a slot by a hash of
//! its name and namespace, and at each tick triggers the objects of that tick's slot that the
//! controller's cache holds. So each object is reconciled once a period, at the same point of
//! it, and objects created since the last tick are found in the cache when their slot comes.

use ::std::hash::{DefaultHasher, Hash as _, Hasher as _};
use ::std::time::Duration;

use ::futures::{Stream, StreamExt as _, stream};
use ::kube::runtime::reflector::{ObjectRef, Store};
use ::tokio::time::{Instant, sleep_until};

use crate::object::ApiObject;

/// How many ticks a period is cut into: each tick lists the cache once and triggers about
/// one sixtieth of its objects, so that a large cache's resync is spread evenly over the
/// period instead of queueing every object at once.
const SLOTS: u64 = 60;

/// The references of the objects in `store`, each once every `period`, spread over it.
pub(crate) fn resync<K: ApiObject>(
    store: Store<K>,
    period: Duration,
) -> impl Stream<Item = ObjectRef<K>> + Send + 'static {
    let tick = period / u32::try_from(SLOTS).unwrap_or(u32::MAX);
    let first = Instant::now() + tick;
    stream::unfold((store, 0, first), move |(store, slot, at)| async move {
        sleep_until(at).await;
        let due: Vec<ObjectRef<K>> = store
            .state()
            .iter()
            .filter(|obj| slot_of(obj.as_ref()) == slot)
            .map(|obj| ObjectRef::from_obj(obj.as_ref()))
            .collect();
        let next = (store, (slot + 1) % SLOTS, at + tick);
        Some((stream::iter(due), next))
    })
    .flatten()
}

/// The slot of `obj` in every period: a hash of its namespace and name, which stay the same
/// for as long as the object exists. `DefaultHasher::new()` hashes the same way in every run.
fn slot_of<K: ApiObject>(obj: &K) -> u64 {
    let meta = obj.meta();
    let mut hasher = DefaultHasher::new();
    meta.namespace.hash(&mut hasher);
    meta.name.hash(&mut hasher);
    hasher.finish() % SLOTS
}

#[cfg(test)]
mod tests;
