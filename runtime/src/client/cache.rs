//! The controllers' copies of the objects they watch, and how a desired object is judged
//! against them, so that a reconcile of an object that needs nothing sends nothing.
//!
//! Every cached object is trimmed of what no controller reads (`managedFields`, kubectl's
//! last-applied annotation), which is most of a small object's size. A desired object carries
//! a fingerprint of itself as an annotation: the cached copy is up to date when it holds the
//! same fingerprint (nothing was added to or removed from the desired object since it was
//! applied) and every field the desired object sets has the same value (nobody changed them).

use ::std::fmt::Debug;

use ::futures::{FutureExt as _, Stream};
use ::kube::Resource;
use ::kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use ::kube::runtime::{WatchStreamExt as _, watcher};
use ::kube::{Api, ResourceExt as _};
use ::serde::Serialize;
use ::serde::de::DeserializeOwned;
use ::serde_json::Value;

/// The annotation holding the fingerprint of the desired object last applied.
pub const FINGERPRINT_ANNOTATION: &str = "opgen.io/desired-fingerprint";

/// What kubectl writes on `kubectl apply`; no controller reads it.
const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// `obj` without what no controller reads: its managed fields and kubectl's copy of it.
pub fn trimmed<K: Resource>(obj: &mut K) {
    let metadata = obj.meta_mut();
    metadata.managed_fields = None;
    if let Some(annotations) = &mut metadata.annotations {
        annotations.remove(LAST_APPLIED_ANNOTATION);
    }
}

/// The watch of `api` (objects `config` selects), trimmed, kept in `writer`'s store: each
/// object is in the store before the stream yields it, so a reconcile it triggers reads the
/// copy it was triggered by, or a newer one.
pub fn cached_watch<K>(
    api: Api<K>,
    config: watcher::Config,
    writer: Writer<K>,
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    cached_watch_shrunk(api, config, writer, |_| {})
}

/// [`cached_watch`], each object also shrunk by `shrink` before it is kept (see
/// [`crate::compact`]).
pub fn cached_watch_shrunk<K>(
    api: Api<K>,
    config: watcher::Config,
    writer: Writer<K>,
    shrink: fn(&mut K),
) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    watcher(api, config)
        .default_backoff()
        .modify(move |obj| {
            trimmed(obj);
            shrink(obj);
        })
        .reflect(writer)
}

/// The cached copy of the object `desired` names, if the store holds it.
pub fn cached<K>(store: &Store<K>, desired: &K) -> Option<K>
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
pub fn is_synced<K>(store: &Store<K>) -> bool
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    store
        .wait_until_ready()
        .now_or_never()
        .is_some_and(|ready| ready.is_ok())
}

/// `desired` with its fingerprint annotation: a hash of the object as it is without one.
pub fn fingerprinted<K: Resource + Serialize + Clone>(desired: &K) -> K {
    let mut desired = desired.clone();
    desired.annotations_mut().remove(FINGERPRINT_ANNOTATION);
    let fingerprint = fingerprint(&serde_json::to_vec(&desired).expect("objects serialize"));
    desired
        .annotations_mut()
        .insert(FINGERPRINT_ANNOTATION.to_owned(), fingerprint);
    desired
}

/// Whether `observed` already is what applying `desired` (fingerprinted) would make of it:
/// the same fingerprint, and every field `desired` sets with the same value.
pub fn is_up_to_date<K: Resource + Serialize>(observed: &K, desired: &K) -> bool {
    let fingerprint = |obj: &K| obj.annotations().get(FINGERPRINT_ANNOTATION).cloned();
    if fingerprint(observed).is_none() || fingerprint(observed) != fingerprint(desired) {
        return false;
    }
    let json = |obj: &K| serde_json::to_value(obj).expect("objects serialize");
    contains(&json(observed), &json(desired))
}

/// Whether the status `observed` is `desired`, fields left unset (`null`) being absent.
pub fn is_same_status(observed: &Value, desired: &Value) -> bool {
    without_nulls(observed) == without_nulls(desired)
}

fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key.clone(), without_nulls(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// Whether `observed` holds every value `desired` sets. A `null` is a field left unset, so
/// it matches a missing field; lists match item by item, and must be as long.
pub fn contains(observed: &Value, desired: &Value) -> bool {
    match (observed, desired) {
        (_, Value::Null) => true,
        (Value::Object(observed), Value::Object(desired)) => desired
            .iter()
            .all(|(key, value)| contains(observed.get(key).unwrap_or(&Value::Null), value)),
        (Value::Array(observed), Value::Array(desired)) => {
            observed.len() == desired.len()
                && observed.iter().zip(desired).all(|(o, d)| contains(o, d))
        }
        (observed, desired) => observed == desired,
    }
}

/// FNV-1a, 64 bits, in hexadecimal: stable across Rust releases and processes, unlike std's
/// hasher, so that a new manager recognises what an earlier one applied.
fn fingerprint(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use ::k8s_openapi::api::core::v1::ConfigMap;
    use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
    use ::serde_json::json;

    use super::*;

    fn config_map(data: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("test".to_owned()),
                namespace: Some("team-a".to_owned()),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..ConfigMap::default()
        }
    }

    /// `desired` as the API server stores it: with what the server and others add.
    fn stored(desired: &ConfigMap) -> ConfigMap {
        let mut stored = desired.clone();
        stored.metadata.uid = Some("0b4e".to_owned());
        stored.metadata.resource_version = Some("7".to_owned());
        stored
            .annotations_mut()
            .insert("someone.example/else".to_owned(), "x".to_owned());
        stored
    }

    #[test]
    fn an_applied_object_is_up_to_date_until_someone_or_the_desired_object_changes() {
        let desired = fingerprinted(&config_map(&[("size", "3")]));
        let observed = stored(&desired);
        assert!(is_up_to_date(&observed, &desired));

        let mut edited = observed.clone();
        edited.data = Some([("size".to_owned(), "4".to_owned())].into());
        assert!(!is_up_to_date(&edited, &desired), "someone changed a field");

        let fewer = fingerprinted(&config_map(&[]));
        assert!(
            !is_up_to_date(&stored(&desired), &fewer),
            "a field the desired object no longer sets is to be removed"
        );

        let unapplied = stored(&config_map(&[("size", "3")]));
        assert!(
            !is_up_to_date(&unapplied, &desired),
            "applied by someone else"
        );
    }

    #[test]
    fn fingerprints_depend_on_the_object_only() {
        let desired = fingerprinted(&config_map(&[("size", "3")]));
        let annotation = |obj: &ConfigMap| obj.annotations()[FINGERPRINT_ANNOTATION].clone();
        assert_eq!(annotation(&fingerprinted(&desired)), annotation(&desired));
        assert_ne!(
            annotation(&fingerprinted(&config_map(&[("size", "4")]))),
            annotation(&desired)
        );
        assert_eq!(annotation(&desired).len(), 16);
    }

    #[test]
    fn unset_fields_match_missing_ones_and_lists_match_item_by_item() {
        let observed = json!({"a": 1, "list": [{"x": 1, "default": true}], "extra": "e"});
        assert!(contains(&observed, &json!({"a": 1, "b": null})));
        assert!(contains(&observed, &json!({"list": [{"x": 1}]})));
        assert!(!contains(&observed, &json!({"list": [{"x": 2}]})));
        assert!(!contains(&observed, &json!({"list": [{"x": 1}, {"x": 1}]})));
        assert!(!contains(&observed, &json!({"b": 1})));
        assert!(!contains(&observed, &json!({"a": "1"})));
    }

    #[test]
    fn a_status_is_the_same_when_it_has_the_same_fields() {
        let observed = json!({"observedGeneration": 3, "conditions": [{"type": "A"}]});
        let unset = json!({"observedGeneration": 3, "conditions": [{"type": "A"}], "x": null});
        assert!(is_same_status(&observed, &unset));
        assert!(!is_same_status(
            &observed,
            &json!({"observedGeneration": 3})
        ));
        assert!(!is_same_status(
            &json!({"observedGeneration": 3}),
            &observed
        ));
        assert!(!is_same_status(&Value::Null, &json!({})));
    }

    #[test]
    fn cached_objects_lose_what_no_controller_reads() {
        let mut obj = config_map(&[("size", "3")]);
        obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        obj.annotations_mut()
            .insert(LAST_APPLIED_ANNOTATION.to_owned(), "{}".to_owned());
        obj.annotations_mut()
            .insert("kept.example/a".to_owned(), "b".to_owned());
        trimmed(&mut obj);
        assert_eq!(obj.metadata.managed_fields, None);
        assert_eq!(
            obj.annotations().keys().collect::<Vec<_>>(),
            ["kept.example/a"]
        );
    }
}
