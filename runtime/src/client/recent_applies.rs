//! What this manager applied lately that its watches may not show yet.
//!
//! A controller compares a desired object with its cached copy and writes without reading
//! when they differ. The copy can lag behind the controller's own last apply, though: the
//! kind's status patch, say, reconciles the object again before the workload's watch event
//! has arrived. Writing again would cost a request and repeat the apply's events. So every
//! apply is remembered (object and fingerprint) until a copy shows it, and a reconcile that
//! finds its desired object remembered but not cached reads it first, as it used to every
//! time.

use ::std::collections::HashMap;
use ::std::sync::Mutex;
use ::std::time::{Duration, Instant};

use ::kube::{Resource, ResourceExt as _};

use crate::cache::FINGERPRINT_ANNOTATION;

/// How long an apply is remembered at most. A watch shows a write within milliseconds, or
/// after a reconnect within seconds; an entry this old is one whose copy was never looked at
/// again (its owner was deleted), and is dropped.
const REMEMBERED_FOR: Duration = Duration::from_secs(120);

/// The applies of one manager whose copies have not been seen yet: see the module's
/// documentation.
#[derive(Debug, Default)]
pub struct RecentApplies {
    /// Fingerprint applied and when, by object (`apiVersion/kind/namespace/name`).
    applied: Mutex<HashMap<String, (String, Instant)>>,
}

impl RecentApplies {
    /// Remembers that `applied` (fingerprinted) was just applied.
    pub fn record<K: Resource<DynamicType = ()>>(&self, applied: &K) {
        let Some(fingerprint) = applied.annotations().get(FINGERPRINT_ANNOTATION) else {
            return;
        };
        let now = Instant::now();
        let mut remembered = self.lock();
        remembered.retain(|_, (_, at)| now.duration_since(*at) < REMEMBERED_FOR);
        remembered.insert(key(applied), (fingerprint.clone(), now));
    }

    /// Whether `desired` (fingerprinted) was applied lately, as it is, and not seen since:
    /// a copy that does not show it is behind the apply rather than the truth.
    pub fn awaits<K: Resource<DynamicType = ()>>(&self, desired: &K) -> bool {
        let fingerprint = desired.annotations().get(FINGERPRINT_ANNOTATION);
        self.lock().get(&key(desired)).is_some_and(|(applied, at)| {
            Some(applied) == fingerprint && at.elapsed() < REMEMBERED_FOR
        })
    }

    /// Forgets `object`: a copy shows its last apply.
    pub fn seen<K: Resource<DynamicType = ()>>(&self, object: &K) {
        self.lock().remove(&key(object));
    }

    /// How many applies are remembered.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> ::std::sync::MutexGuard<'_, HashMap<String, (String, Instant)>> {
        // A panic elsewhere while holding the lock leaves a map that is still whole.
        self.applied
            .lock()
            .unwrap_or_else(::std::sync::PoisonError::into_inner)
    }
}

fn key<K: Resource<DynamicType = ()>>(object: &K) -> String {
    format!(
        "{}/{}/{}/{}",
        K::api_version(&()),
        K::kind(&()),
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}

#[cfg(test)]
mod tests {
    use ::k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::cache::fingerprinted;

    fn config_map(name: &str, size: &str) -> ConfigMap {
        fingerprinted(&ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            data: Some([("size".to_owned(), size.to_owned())].into()),
            ..ConfigMap::default()
        })
    }

    #[test]
    fn an_apply_is_awaited_until_it_is_seen() {
        let recent = RecentApplies::default();
        let applied = config_map("db", "3");
        assert!(!recent.awaits(&applied));
        recent.record(&applied);
        assert!(recent.awaits(&applied));
        recent.seen(&applied);
        assert!(!recent.awaits(&applied));
        assert!(recent.is_empty());
    }

    #[test]
    fn another_desired_object_is_not_the_apply_awaited() {
        let recent = RecentApplies::default();
        recent.record(&config_map("db", "3"));
        assert!(
            !recent.awaits(&config_map("db", "5")),
            "another fingerprint: the object changed since"
        );
        assert!(!recent.awaits(&config_map("web", "3")), "another object");
        let secret = fingerprinted(&Secret {
            metadata: config_map("db", "3").metadata,
            ..Secret::default()
        });
        assert!(!recent.awaits(&secret), "another kind of the same name");
    }

    #[test]
    fn an_object_without_a_fingerprint_is_not_remembered() {
        let recent = RecentApplies::default();
        let mut applied = config_map("db", "3");
        applied.annotations_mut().clear();
        recent.record(&applied);
        assert!(recent.is_empty());
    }

    #[test]
    fn old_applies_are_dropped_when_another_is_recorded() {
        let recent = RecentApplies::default();
        let old = config_map("old", "1");
        let long_ago = Instant::now()
            .checked_sub(REMEMBERED_FOR)
            .expect("the clock reaches back that far");
        let fingerprint = old.annotations()[FINGERPRINT_ANNOTATION].clone();
        recent.lock().insert(key(&old), (fingerprint, long_ago));
        assert!(!recent.awaits(&old), "too old to be awaited");
        recent.record(&config_map("new", "1"));
        assert_eq!(recent.len(), 1, "only the new apply is left");
    }
}
