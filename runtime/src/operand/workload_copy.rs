//! A workload as an operand's cache keeps it: what a reconcile reads of it, no more.
//!
//! k8s-openapi's types are trees of optional fields laid out inline: a Deployment takes 2.4 KiB
//! of memory before any field is set, each container 2.3 KiB more, and a small one as its watch
//! delivers it about 14 KiB. A reconcile reads little of its copy: the metadata (fingerprint,
//! labels, owner, generation), the replicas, the containers' images (the events name the image
//! a rollout replaces) and the status (the owner's conditions). A [`WorkloadCopy`] is
//! deserialized straight from the watch's JSON into those fields, so the rest is never held,
//! not even for a moment (its managed fields included); [`WorkloadCopy::restored`] makes a
//! workload of them again for the reconcile that reads it.
//!
//! Labels and annotations are only ever compared with the desired workload's, so a copy keeps
//! them as hashes of their entries (see `EntryHashes`), and the selector as a list: a
//! `BTreeMap` allocates about 540 bytes for its first entry, and these three maps were most of
//! a copy's size.

use ::std::borrow::Cow;
use ::std::collections::BTreeMap;
use ::std::marker::PhantomData;

use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference, Time,
};
use ::kube::Resource;
use ::serde::de::DeserializeOwned;
use ::serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::progress::Progress;
use super::workload::Workload;
use crate::client::fingerprint::{EntryHashes, contains, fingerprint_hash};

/// A workload `W` as an operand's cache keeps it: see the module's documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadCopy<W: Workload> {
    /// Its metadata but its labels, annotations and managed fields.
    metadata: ObjectMeta,
    /// Its labels' entries, as hashes: only ever compared with the desired workload's.
    labels: EntryHashes,
    /// Its annotations' entries, as hashes, the same way.
    annotations: EntryHashes,
    /// The hash of its fingerprint annotation's value.
    fingerprint: Option<u64>,
    replicas: i32,
    selector: Selector,
    /// Its containers' names and images.
    images: Box<[(String, Option<String>)]>,
    status: Option<W::Status>,
    workload: PhantomData<fn() -> W>,
}

/// A label selector, its labels in a list rather than a map.
#[derive(Clone, Debug, PartialEq)]
struct Selector {
    labels: Option<Box<[(String, String)]>>,
    expressions: Option<Vec<LabelSelectorRequirement>>,
}

impl Selector {
    fn of(selector: LabelSelector) -> Self {
        Self {
            labels: selector
                .match_labels
                .map(|labels| labels.into_iter().collect()),
            expressions: selector.match_expressions,
        }
    }

    fn restored(&self) -> LabelSelector {
        LabelSelector {
            match_labels: self
                .labels
                .as_ref()
                .map(|labels| labels.iter().cloned().collect()),
            match_expressions: self.expressions.clone(),
        }
    }
}

impl<W: Workload> WorkloadCopy<W> {
    /// The copy of `workload` the cache would keep.
    pub fn of(workload: &W) -> Self {
        let containers = workload.pod_spec().map(|pod| pod.containers.as_slice());
        Self::kept(
            workload.meta().clone(),
            workload.replicas(),
            workload.selector().cloned().unwrap_or_default(),
            containers
                .unwrap_or_default()
                .iter()
                .map(|container| (container.name.clone(), container.image.clone()))
                .collect(),
            workload.reported().cloned(),
        )
    }

    /// A copy of what it keeps of a workload.
    fn kept(
        mut metadata: ObjectMeta,
        replicas: i32,
        selector: LabelSelector,
        images: Box<[(String, Option<String>)]>,
        status: Option<W::Status>,
    ) -> Self {
        let fingerprint = fingerprint_hash(&metadata);
        let labels = EntryHashes::of(metadata.labels.take().as_ref());
        let annotations = EntryHashes::of(metadata.annotations.take().as_ref());
        metadata.managed_fields = None;
        Self {
            metadata,
            labels,
            annotations,
            fingerprint,
            replicas,
            selector: Selector::of(selector),
            images,
            status,
            workload: PhantomData,
        }
    }

    /// The workload this is a copy of, with what the copy keeps: its metadata (without its
    /// labels and annotations, which the copy keeps as hashes), replicas, selector, containers
    /// (names and images only) and status.
    pub fn restored(&self) -> W {
        let containers = self
            .images
            .iter()
            .map(|(name, image)| Container {
                name: name.clone(),
                image: image.clone(),
                ..Container::default()
            })
            .collect();
        let template = PodTemplateSpec {
            metadata: None,
            spec: Some(PodSpec {
                containers,
                ..PodSpec::default()
            }),
        };
        W::restored(
            self.metadata.clone(),
            self.replicas,
            self.selector.restored(),
            template,
            self.status.clone(),
        )
    }

    /// The number of pods its spec asks for.
    pub fn replicas(&self) -> i32 {
        self.replicas
    }

    /// How far it has come, from what it reports.
    pub fn progress(&self) -> Progress {
        W::progress_of(self.metadata.generation, self.status.as_ref())
    }

    /// The hash of the fingerprint it holds, if any (see `client::fingerprint`).
    pub(crate) fn fingerprint(&self) -> Option<u64> {
        self.fingerprint
    }

    /// Whether its metadata holds the `desired` metadata's fingerprint (of a fingerprinted
    /// workload) and every value that sets: its labels, annotations, owner references. (Managed
    /// fields are the API server's to set, and a copy has none.)
    pub(crate) fn has_metadata_of(&self, desired: &ObjectMeta) -> bool {
        let json = |meta: &ObjectMeta| serde_json::to_value(meta).expect("metadata serializes");
        let rest = ObjectMeta {
            labels: None,
            annotations: None,
            managed_fields: None,
            ..desired.clone()
        };
        self.fingerprint.is_some()
            && self.fingerprint == fingerprint_hash(desired)
            && self.labels.contain_all(desired.labels.as_ref())
            && self.annotations.contain_all(desired.annotations.as_ref())
            && contains(&json(&self.metadata), &json(&rest))
    }
}

impl<W: Workload> Resource for WorkloadCopy<W> {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(dt: &()) -> Cow<'_, str> {
        W::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        W::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        W::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        W::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// What a copy reads of a workload's JSON; serde skips every other field as it parses.
#[derive(Deserialize)]
#[serde(bound(deserialize = "S: DeserializeOwned"))]
struct Stored<S> {
    metadata: StoredMeta,
    #[serde(default)]
    spec: StoredSpec,
    status: Option<S>,
}

/// What a copy reads of a workload's metadata: all but its managed fields (most of a small
/// object's JSON, and parsed into JSON values if read at all) and two fields that say nothing
/// of it (`selfLink`, `generateName`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    finalizers: Option<Vec<String>>,
    owner_references: Option<Vec<OwnerReference>>,
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
}

impl From<StoredMeta> for ObjectMeta {
    fn from(stored: StoredMeta) -> Self {
        ObjectMeta {
            name: stored.name,
            namespace: stored.namespace,
            uid: stored.uid,
            resource_version: stored.resource_version,
            generation: stored.generation,
            creation_timestamp: stored.creation_timestamp,
            deletion_timestamp: stored.deletion_timestamp,
            deletion_grace_period_seconds: stored.deletion_grace_period_seconds,
            finalizers: stored.finalizers,
            owner_references: stored.owner_references,
            labels: stored.labels,
            annotations: stored.annotations,
            ..ObjectMeta::default()
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct StoredSpec {
    replicas: Option<i32>,
    selector: LabelSelector,
    template: StoredTemplate,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct StoredTemplate {
    spec: StoredPodSpec,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct StoredPodSpec {
    containers: Vec<StoredContainer>,
}

#[derive(Deserialize)]
struct StoredContainer {
    name: String,
    image: Option<String>,
}

impl<'de, W: Workload> Deserialize<'de> for WorkloadCopy<W> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = Stored::<W::Status>::deserialize(deserializer)?;
        Ok(Self::kept(
            stored.metadata.into(),
            // What the API server defaults it to.
            stored.spec.replicas.unwrap_or(1),
            stored.spec.selector,
            stored
                .spec
                .template
                .spec
                .containers
                .into_iter()
                .map(|container| (container.name, container.image))
                .collect(),
            stored.status,
        ))
    }
}

/// A copy serializes as the workload it restores (the cache never sends one).
impl<W: Workload> Serialize for WorkloadCopy<W> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.restored().serialize(serializer)
    }
}

#[cfg(test)]
mod tests;
