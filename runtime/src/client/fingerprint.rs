//! How a desired object is judged against the stored one without reading it: it carries a
//! fingerprint of itself as an annotation, and the copy is up to date when it holds the same
//! fingerprint (nothing was added to or removed from the desired object since it was applied)
//! and every field the desired object sets has the same value (nobody changed them).

use ::std::collections::BTreeMap;

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ::kube::{Resource, ResourceExt as _};
use ::serde::Serialize;
use ::serde_json::Value;

/// The annotation holding the fingerprint of the desired object last applied.
pub(crate) const FINGERPRINT_ANNOTATION: &str = "opgen.io/desired-fingerprint";

/// `desired` with its fingerprint annotation: a hash of the object as it is without one.
pub(crate) fn fingerprinted<K: Resource + Serialize + Clone>(desired: &K) -> K {
    let mut desired = desired.clone();
    desired.annotations_mut().remove(FINGERPRINT_ANNOTATION);
    let fingerprint = hash(&serde_json::to_vec(&desired).expect("objects serialize"));
    desired
        .annotations_mut()
        .insert(FINGERPRINT_ANNOTATION.to_owned(), fingerprint);
    desired
}

/// Whether `observed` already is what applying `desired` (fingerprinted) would make of it:
/// the same fingerprint, and every field `desired` sets with the same value.
pub(crate) fn is_up_to_date<K: Resource + Serialize>(observed: &K, desired: &K) -> bool {
    let json = |obj: &K| serde_json::to_value(obj).expect("objects serialize");
    has_same_fingerprint(observed.meta(), desired.meta())
        && contains(&json(observed), &json(desired))
}

/// The fingerprint `obj` holds, if any.
pub(crate) fn fingerprint_of<K: Resource>(obj: &K) -> Option<&str> {
    fingerprint_in(obj.meta())
}

/// The hash of the fingerprint `meta` holds, if any: what a copy keeps of it.
pub(crate) fn fingerprint_hash(meta: &ObjectMeta) -> Option<u64> {
    fingerprint_in(meta).map(|value| hash64(value.as_bytes()))
}

fn fingerprint_in(meta: &ObjectMeta) -> Option<&str> {
    meta.annotations
        .as_ref()?
        .get(FINGERPRINT_ANNOTATION)
        .map(String::as_str)
}

fn has_same_fingerprint(observed: &ObjectMeta, desired: &ObjectMeta) -> bool {
    fingerprint_in(observed).is_some() && fingerprint_in(observed) == fingerprint_in(desired)
}

/// Whether the status `observed` is `desired`, fields left unset (`null`) being absent.
pub(crate) fn is_same_status(observed: &Value, desired: &Value) -> bool {
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
/// it matches a missing field, and so does an empty list, which the API server does not store;
/// lists match item by item, and must be as long.
pub(crate) fn contains(observed: &Value, desired: &Value) -> bool {
    match (observed, desired) {
        (_, Value::Null) => true,
        (Value::Null, Value::Array(items)) if items.is_empty() => true,
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

/// The entries of a map of strings (labels, annotations) as hashes, sorted: enough to tell
/// whether the map holds an entry with a given value, at 8 bytes an entry, where a `BTreeMap`
/// of a few entries allocates a node of about 540 bytes. Two different entries with the same
/// 64-bit hash would pass for each other; among the few entries of one object's map, that is
/// about as likely as two fingerprints of different objects matching.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EntryHashes(Box<[u64]>);

impl EntryHashes {
    /// The hashes of `map`'s entries.
    pub(crate) fn of(map: Option<&BTreeMap<String, String>>) -> Self {
        let mut hashes: Vec<u64> = map
            .into_iter()
            .flatten()
            .map(|(key, value)| entry_hash(key, value))
            .collect();
        hashes.sort_unstable();
        Self(hashes.into_boxed_slice())
    }

    /// Whether the map these are the hashes of holds every entry of `desired`.
    pub(crate) fn contain_all(&self, desired: Option<&BTreeMap<String, String>>) -> bool {
        desired
            .into_iter()
            .flatten()
            .all(|(key, value)| self.0.binary_search(&entry_hash(key, value)).is_ok())
    }
}

/// The hash of a map's entry: its key, a NUL and its value. No key of a label or an annotation
/// may hold a NUL, so no two entries hash the same bytes.
fn entry_hash(key: &str, value: &str) -> u64 {
    [key.as_bytes(), b"\0", value.as_bytes()]
        .into_iter()
        .flatten()
        .fold(FNV_OFFSET_BASIS, fnv_step)
}

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv_step(hash: u64, byte: &u8) -> u64 {
    (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
}

/// FNV-1a, 64 bits, in hexadecimal: stable across Rust releases and processes, unlike std's
/// hasher, so that a new manager recognises what an earlier one applied.
pub(crate) fn hash(bytes: &[u8]) -> String {
    format!("{:016x}", hash64(bytes))
}

/// The FNV-1a hash of `bytes` that [`hash`] writes out.
pub(crate) fn hash64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET_BASIS, fnv_step)
}

#[cfg(test)]
mod tests;
