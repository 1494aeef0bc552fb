//! A workload as an operand's cache keeps it: what a reconcile reads of it, no more.
//!
//! k8s-openapi's types are trees of optional fields laid out inline: a Deployment takes 2.4 KiB
//! of memory before any field is set, each container 2.3 KiB more, and a small one as its watch
//! delivers it about 14 KiB. A reconcile reads little of its copy: the metadata (fingerprint,
//! labels, owner, generation), the replicas, the containers' images (the events name the image
//! a rollout replaces) and the status (the owner's conditions). A [`WorkloadCopy`] is
//! deserialized straight from the watch's JSON into those fields, so the rest is never held,
//! not even for a moment; [`WorkloadCopy::restored`] makes a workload of them again for the
//! reconcile that reads it.

use ::std::borrow::Cow;
use ::std::marker::PhantomData;

use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use ::kube::Resource;
use ::serde::de::DeserializeOwned;
use ::serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::progress::Progress;
use super::workload::Workload;

/// A workload `W` as an operand's cache keeps it: see the module's documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadCopy<W: Workload> {
    metadata: ObjectMeta,
    replicas: i32,
    selector: LabelSelector,
    /// Its containers' names and images.
    images: Vec<(String, Option<String>)>,
    status: Option<W::Status>,
    workload: PhantomData<fn() -> W>,
}

impl<W: Workload> WorkloadCopy<W> {
    /// The copy of `workload` the cache would keep.
    pub fn of(workload: &W) -> Self {
        let containers = workload.pod_spec().map(|pod| pod.containers.as_slice());
        Self {
            metadata: workload.meta().clone(),
            replicas: workload.replicas(),
            selector: workload.selector().cloned().unwrap_or_default(),
            images: containers
                .unwrap_or_default()
                .iter()
                .map(|container| (container.name.clone(), container.image.clone()))
                .collect(),
            status: workload.reported().cloned(),
            workload: PhantomData,
        }
    }

    /// The workload this is a copy of, with what the copy keeps: its metadata, replicas,
    /// selector, containers (names and images only) and status.
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
            self.selector.clone(),
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
    metadata: ObjectMeta,
    #[serde(default)]
    spec: StoredSpec,
    status: Option<S>,
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
        Ok(Self {
            metadata: stored.metadata,
            // What the API server defaults it to.
            replicas: stored.spec.replicas.unwrap_or(1),
            selector: stored.spec.selector,
            images: stored
                .spec
                .template
                .spec
                .containers
                .into_iter()
                .map(|container| (container.name, container.image))
                .collect(),
            status: stored.status,
            workload: PhantomData,
        })
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
