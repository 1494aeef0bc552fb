//! The copies of an operand's workloads that its controller keeps, and what the manager has
//! proven of them.
//!
//! A copy ([`WorkloadCopy`]) keeps what a reconcile reads of a workload, not its spec, so it
//! cannot show that someone changed the spec either; the API server does, since every write
//! that changes a spec raises `metadata.generation`. Whenever the manager holds a whole
//! workload known to have the desired spec (the reply to its apply, or one it read and found
//! up to date), it remembers its generation. A copy with the desired fingerprint and metadata
//! is then up to date at that generation or below, and changed by someone else at a higher
//! one: it is applied again. A copy never proven (after the manager's start, or another
//! manager's apply) is read once and compared whole: a restarted manager reads each workload
//! once, and writes none that is up to date.

use ::std::collections::{HashMap, HashSet};
use ::std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ::kube::runtime::reflector::{ObjectRef, Store};
use ::kube::{Resource, ResourceExt as _};

use super::workload::Workload;
use super::workload_copy::WorkloadCopy;
use crate::client::fingerprint::{fingerprint_hash, hash64};

/// How many proofs of workloads that no longer exist are kept at most before they are
/// dropped, beyond as many as the store holds: pruning walks the store, so it waits until
/// that is cheap per proof it drops.
const STALE_PROOFS: usize = 1024;

/// The copies of an operand's workloads and the generations proven up to date:
/// see the module's documentation.
pub struct WorkloadCache<W: Workload> {
    store: Store<WorkloadCopy<W>>,
    proofs: Mutex<HashMap<u64, Proof>>,
}

/// What the manager knows of a workload (all hashed, to keep a proof a few bytes): it had the
/// spec the fingerprint stands for at this generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Proof {
    fingerprint: u64,
    uid: u64,
    generation: i64,
}

/// What a cached copy says of a desired workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judgment {
    /// It is up to date: nothing to send.
    UpToDate,
    /// It needs an apply: the desired workload changed, or someone else changed the workload.
    Changed,
    /// It looks up to date, but its spec was never proven: read it and compare.
    Unproven,
}

impl<W: Workload> WorkloadCache<W> {
    /// The cache of the copies `store` holds (filled by the controller's watch).
    pub fn new(store: Store<WorkloadCopy<W>>) -> Self {
        Self {
            store,
            proofs: Mutex::default(),
        }
    }

    /// The copies.
    pub fn store(&self) -> &Store<WorkloadCopy<W>> {
        &self.store
    }

    /// The copy of the workload `desired` names, if the store holds it.
    pub(crate) fn copy_of(&self, desired: &W) -> Option<Arc<WorkloadCopy<W>>> {
        let namespace = desired.namespace().unwrap_or_default();
        self.store
            .get(&ObjectRef::new(&desired.name_any()).within(&namespace))
    }

    /// What `copy` says of `desired` (fingerprinted).
    pub(crate) fn judge(&self, copy: &WorkloadCopy<W>, desired: &W) -> Judgment {
        if !copy.has_metadata_of(desired.meta()) {
            return Judgment::Changed;
        }
        let proof = self.lock().get(&key(copy)).copied();
        match (proof, proof_of(copy.fingerprint(), copy.meta())) {
            (Some(proven), Some(copied))
                if proven.uid == copied.uid && proven.fingerprint == copied.fingerprint =>
            {
                // A lower generation is a copy behind the proven one, which the watch will
                // replace; a higher one, a change of the spec since.
                if copied.generation <= proven.generation {
                    Judgment::UpToDate
                } else {
                    Judgment::Changed
                }
            }
            _ => Judgment::Unproven,
        }
    }

    /// Remembers that `stored`, a whole workload as the API server returned it, has the spec
    /// its fingerprint stands for.
    pub(crate) fn prove(&self, stored: &W) {
        let Some(proof) = proof_of(fingerprint_hash(stored.meta()), stored.meta()) else {
            return;
        };
        let mut proofs = self.lock();
        proofs.insert(key(stored), proof);
        if proofs.len() > self.store.len() * 2 + STALE_PROOFS {
            let existing: HashSet<u64> = self.store.state().iter().map(|w| key(&**w)).collect();
            proofs.retain(|key, _| existing.contains(key));
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Proof>> {
        // A panic elsewhere while holding the lock leaves a map that is still whole.
        self.proofs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How a workload is named among the proofs of its kind: a hash of its namespace and name.
fn key<K: Resource>(workload: &K) -> u64 {
    let namespace = workload.namespace().unwrap_or_default();
    hash64(format!("{namespace}/{}", workload.name_any()).as_bytes())
}

/// What a workload (or its copy) with `metadata` and the fingerprint of this hash would prove:
/// nothing without a fingerprint, a uid or a generation.
fn proof_of(fingerprint: Option<u64>, metadata: &ObjectMeta) -> Option<Proof> {
    Some(Proof {
        fingerprint: fingerprint?,
        uid: hash64(metadata.uid.as_ref()?.as_bytes()),
        generation: metadata.generation?,
    })
}

#[cfg(test)]
mod tests;
