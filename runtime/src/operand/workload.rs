//! The workload that runs an operand's application: a Deployment or a StatefulSet, read and
//! built the same way in the shape of any supported Kubernetes version.
//!
//! The shapes of these types differ between Kubernetes versions: from 1.37 (k8s-openapi's
//! `v1_37` feature) a workload's `spec` is required and the `type`/`status` of its conditions
//! are optional; before, the reverse. Everything here compiles either way, so a project keeps
//! building when the version feature in Cargo.toml changes.

use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, StatefulSet, StatefulSetSpec};
use ::k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use ::kube::Resource;

use super::progress::Progress;
use crate::object::ApiObject;

/// A workload that runs an operand's pods: a Deployment or a StatefulSet.
pub trait Workload: ApiObject + Resource<Scope = NamespaceResourceScope> {
    /// The spec type: `DeploymentSpec` or `StatefulSetSpec`.
    type Spec;

    /// Whether the Service in front of its pods is headless: a StatefulSet's governs it and
    /// gives each pod a DNS name.
    const HEADLESS_SERVICE: bool;

    /// A workload with `metadata` and `spec`.
    fn with_spec(metadata: ObjectMeta, spec: Self::Spec) -> Self;

    /// The number of pods the spec asks for (1 when unset, as Kubernetes defaults it).
    fn replicas(&self) -> i32;

    /// The spec of its pods.
    fn pod_spec(&self) -> Option<&PodSpec>;

    /// The template of its pods, which the controllers' copies keep packed as JSON.
    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec>;

    /// The selector of its pods.
    fn selector(&self) -> Option<&LabelSelector>;

    /// How far it has come, from what it reports in its status.
    fn progress(&self) -> Progress;
}

// `spec.into()` wraps the spec in `Some` before Kubernetes 1.37, and is the spec itself after.
#[allow(clippy::useless_conversion)]
impl Workload for Deployment {
    type Spec = DeploymentSpec;
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

    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        let spec: Option<&mut DeploymentSpec> = Option::from(&mut self.spec);
        spec.map(|spec| &mut spec.template)
    }

    fn selector(&self) -> Option<&LabelSelector> {
        let spec: Option<&DeploymentSpec> = Option::from(&self.spec);
        spec.map(|spec| &spec.selector)
    }

    fn progress(&self) -> Progress {
        let status = self.status.clone().unwrap_or_default();
        Progress {
            workload: "Deployment",
            replicas: status.replicas.unwrap_or(0),
            ready: status.ready_replicas.unwrap_or(0),
            updated: status.updated_replicas.unwrap_or(0),
            pending: status.observed_generation < self.metadata.generation,
            rolling: false,
        }
    }
}

#[allow(clippy::useless_conversion)]
impl Workload for StatefulSet {
    type Spec = StatefulSetSpec;
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

    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        let spec: Option<&mut StatefulSetSpec> = Option::from(&mut self.spec);
        spec.map(|spec| &mut spec.template)
    }

    fn selector(&self) -> Option<&LabelSelector> {
        let spec: Option<&StatefulSetSpec> = Option::from(&self.spec);
        spec.map(|spec| &spec.selector)
    }

    fn progress(&self) -> Progress {
        let status = self.status.clone().unwrap_or_default();
        Progress {
            workload: "StatefulSet",
            replicas: status.replicas,
            ready: status.ready_replicas.unwrap_or(0),
            updated: status.updated_replicas.unwrap_or(0),
            pending: status.observed_generation < self.metadata.generation,
            rolling: status.current_revision != status.update_revision,
        }
    }
}
