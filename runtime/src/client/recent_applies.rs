//! What this manager applied lately that its watches may not show yet.
//!
//! A controller compares a desired object with its cached copy and writes without reading
//! when they differ. The copy can lag behind the controller's own last apply, though: the
//! kind's status patch, say, reconciles the object again before the workload's watch event
//! has arrived. Writing again would cost a request and repeat the apply's events. So every
//! apply is remembered (object and fingerprint) until a copy shows it, and a reconcile that
//! finds its desired object remembered but not cached reads it first, as it used to every
//! time.
//!
//! Statuses are remembered the same way, in a memory of their own (see
//! [`Context::apply_status`](crate::Context::apply_status)): by the status applied and the
//! version of the object it was judged against, so that a reconcile that still finds that
//! version cached does not write the same status again.

use ::std::collections::HashMap;
use ::std::sync::Mutex;
use ::std::time::{Duration, Instant};

use ::kube::{Resource, ResourceExt as _};

use super::fingerprint::fingerprint_of;

/// How long an apply is remembered at most. A watch shows a write within milliseconds, or
/// after a reconnect within seconds; an entry this old is one whose copy was never looked at
/// again (its owner was deleted), and is dropped.
const REMEMBERED_FOR: Duration = Duration::from_secs(120);

/// How often, at most, the entries older than [`REMEMBERED_FOR`] are dropped: each time walks
/// them all, which at thousands of objects should not happen on every apply.
const PRUNED_EVERY: Duration = Duration::from_secs(10);

/// The applies of one manager whose copies have not been seen yet: see the module's
/// documentation.
#[derive(Debug, Default)]
pub struct RecentApplies {
    remembered: Mutex<Remembered>,
}

#[derive(Debug, Default)]
struct Remembered {
    /// Fingerprint applied and when, by object (`apiVersion/kind/namespace/name`).
    applied: HashMap<String, (String, Instant)>,
    /// When the old entries were last dropped.
    pruned: Option<Instant>,
}

impl RecentApplies {
    /// Remembers that `applied` (fingerprinted) was just applied.
    pub fn record<K: Resource<DynamicType = ()>>(&self, applied: &K) {
        if let Some(fingerprint) = fingerprint_of(applied) {
            self.remember(key(applied), fingerprint.to_owned());
        }
    }

    /// Whether `desired` (fingerprinted) was applied lately, as it is, and not seen since:
    /// a copy that does not show it is behind the apply rather than the truth.
    pub fn awaits<K: Resource<DynamicType = ()>>(&self, desired: &K) -> bool {
        fingerprint_of(desired)
            .is_some_and(|fingerprint| self.remembers(&key(desired), fingerprint))
    }

    /// Forgets `object`: a copy shows its last apply.
    pub fn seen<K: Resource<DynamicType = ()>>(&self, object: &K) {
        self.forget(&key(object));
    }

    /// Remembers that what `fingerprint` stands for was just applied to the object `key`
    /// names (see [`key`]).
    pub(crate) fn remember(&self, key: String, fingerprint: String) {
        let now = Instant::now();
        let mut remembered = self.lock();
        if remembered
            .pruned
            .is_none_or(|pruned| now.duration_since(pruned) >= PRUNED_EVERY)
        {
            remembered
                .applied
                .retain(|_, (_, at)| now.duration_since(*at) < REMEMBERED_FOR);
            remembered.pruned = Some(now);
        }
        remembered.applied.insert(key, (fingerprint, now));
    }

    /// Whether `fingerprint` is the last thing applied to the object `key` names, lately.
    pub(crate) fn remembers(&self, key: &str, fingerprint: &str) -> bool {
        self.lock()
            .applied
            .get(key)
            .is_some_and(|(applied, at)| applied == fingerprint && at.elapsed() < REMEMBERED_FOR)
    }

    /// Forgets the object `key` names.
    pub(crate) fn forget(&self, key: &str) {
        self.lock().applied.remove(key);
    }

    fn lock(&self) -> ::std::sync::MutexGuard<'_, Remembered> {
        // A panic elsewhere while holding the lock leaves a map that is still whole.
        self.remembered
            .lock()
            .unwrap_or_else(::std::sync::PoisonError::into_inner)
    }
}

/// How an object is named in a memory of applies: `apiVersion/kind/namespace/name`.
pub(crate) fn key<K: Resource<DynamicType = ()>>(object: &K) -> String {
    format!(
        "{}/{}/{}/{}",
        K::api_version(&()),
        K::kind(&()),
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}

#[cfg(test)]
mod tests;
