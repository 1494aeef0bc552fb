//! The workload that runs an operand's application: a Deployment or a StatefulSet, read and
//! built the same way in the shape of any supported Kubernetes version.
//!
//! The shapes of these types differ between Kubernetes versions: from 1.37 (k8s-openapi's
//! `v1_37` feature) a workload's `spec` is required and the `type`/`status` of its conditions
//! are optional; before, the reverse. Everything here compiles either way, so a project keeps
//! building when the version feature in Cargo.toml changes.

use ::std::fmt::Debug;

use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStatus, StatefulSet, StatefulSetSpec, StatefulSetStatus,
};
use ::k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use ::kube::Resource;
use ::serde::Serialize;
use ::serde::de::DeserializeOwned;

use super::progress::Progress;
use crate::object::ApiObject;

/// A workload that runs an operand's pods: a Deployment or a StatefulSet.
pub trait Workload: ApiObject + Resource<Scope = NamespaceResourceScope> {
    /// The spec type: `DeploymentSpec` or `StatefulSetSpec`.
    type Spec;

    /// The status type: `DeploymentStatus` or `StatefulSetStatus`.
    type Status: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Whether the Service in front of its pods is headless: a StatefulSet's governs it and
    /// gives each pod a DNS name.
    const HEADLESS_SERVICE: bool;

    /// A workload with `metadata` and `spec`.
    fn with_spec(metadata: ObjectMeta, spec: Self::Spec) -> Self;

    /// A workload with `metadata`, of `replicas` pods of `template` that `selector` selects,
    /// reporting `status`: what a cached copy of one restores (see
    /// [`WorkloadCopy`](super::WorkloadCopy)).
    fn restored(
        metadata: ObjectMeta,
        replicas: i32,
        selector: LabelSelector,
        template: PodTemplateSpec,
        status: Option<Self::Status>,
    ) -> Self;

    /// The number of pods the spec asks for (1 when unset, as Kubernetes defaults it).
    fn replicas(&self) -> i32;

    /// The spec of its pods.
    fn pod_spec(&self) -> Option<&PodSpec>;

    /// The selector of its pods.
    fn selector(&self) -> Option<&LabelSelector>;

    /// What it reports, once its controller has acted.
    fn reported(&self) -> Option<&Self::Status>;

    /// How far a workload at `generation` that reports `status` has come.
    fn progress_of(generation: Option<i64>, status: Option<&Self::Status>) -> Progress;

    /// How far it has come, from what it reports in its status.
    fn progress(&self) -> Progress {
        Self::progress_of(self.meta().generation, self.reported())
    }
}

// `spec.into()` wraps the spec in `Some` before Kubernetes 1.37, and is the spec itself after.
#[allow(clippy::useless_conversion)]
impl Workload for Deployment {
    type Spec = DeploymentSpec;
    type Status = DeploymentStatus;
    const HEADLESS_SERVICE: bool = false;

    fn with_spec(metadata: ObjectMeta, spec: DeploymentSpec) -> Self {
        Deployment {
            metadata,
            spec: spec.into(),
            ..Deployment::default()
        }
    }

    fn replicas(&self) -> i32 {
        let spec: Option<&DeploymentSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.replicas).unwrap_or(1)
    }

    fn pod_spec(&self) -> Option<&PodSpec> {
        let spec: Option<&DeploymentSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.template.spec.as_ref())
    }

    fn restored(
        metadata: ObjectMeta,
        replicas: i32,
        selector: LabelSelector,
        template: PodTemplateSpec,
        status: Option<DeploymentStatus>,
    ) -> Self {
        let spec = DeploymentSpec {
            replicas: Some(replicas),
            selector,
            template,
            ..DeploymentSpec::default()
        };
        Deployment {
            status,
            ..Self::with_spec(metadata, spec)
        }
    }

    fn selector(&self) -> Option<&LabelSelector> {
        let spec: Option<&DeploymentSpec> = Option::from(&self.spec);
        spec.map(|spec| &spec.selector)
    }

    fn reported(&self) -> Option<&DeploymentStatus> {
        self.status.as_ref()
    }

    fn progress_of(generation: Option<i64>, status: Option<&DeploymentStatus>) -> Progress {
        let unknown = DeploymentStatus::default();
        let status = status.unwrap_or(&unknown);
        Progress {
            workload: "Deployment",
            replicas: status.replicas.unwrap_or(0),
            ready: status.ready_replicas.unwrap_or(0),
            updated: status.updated_replicas.unwrap_or(0),
            pending: status.observed_generation < generation,
            rolling: false,
        }
    }
}

#[allow(clippy::useless_conversion)]
impl Workload for StatefulSet {
    type Spec = StatefulSetSpec;
    type Status = StatefulSetStatus;
    const HEADLESS_SERVICE: bool = true;

    fn with_spec(metadata: ObjectMeta, spec: StatefulSetSpec) -> Self {
        StatefulSet {
            metadata,
            spec: spec.into(),
            ..StatefulSet::default()
        }
    }

    fn replicas(&self) -> i32 {
        let spec: Option<&StatefulSetSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.replicas).unwrap_or(1)
    }

    fn pod_spec(&self) -> Option<&PodSpec> {
        let spec: Option<&StatefulSetSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.template.spec.as_ref())
    }

    fn restored(
        metadata: ObjectMeta,
        replicas: i32,
        selector: LabelSelector,
        template: PodTemplateSpec,
        status: Option<StatefulSetStatus>,
    ) -> Self {
        let spec = StatefulSetSpec {
            replicas: Some(replicas),
            selector,
            template,
            ..StatefulSetSpec::default()
        };
        StatefulSet {
            status,
            ..Self::with_spec(metadata, spec)
        }
    }

    fn selector(&self) -> Option<&LabelSelector> {
        let spec: Option<&StatefulSetSpec> = Option::from(&self.spec);
        spec.map(|spec| &spec.selector)
    }

    fn reported(&self) -> Option<&StatefulSetStatus> {
        self.status.as_ref()
    }

    fn progress_of(generation: Option<i64>, status: Option<&StatefulSetStatus>) -> Progress {
        let unknown = StatefulSetStatus::default();
        let status = status.unwrap_or(&unknown);
        Progress {
            workload: "StatefulSet",
            replicas: status.replicas,
            ready: status.ready_replicas.unwrap_or(0),
            updated: status.updated_replicas.unwrap_or(0),
            pending: status.observed_generation < generation,
            rolling: status.current_revision != status.update_revision,
        }
    }
}
