//! Operands: kinds whose objects each run an application (`opgen create api --image`). Their
//! controllers decide what runs with pure functions of the object, and the reconcilers here
//! apply what those return, in the order Kubernetes needs, watch what they made, and report
//! its progress in the status:
//!
//! - [`Operand`]: a Deployment or StatefulSet ([`Workload`]) with hardened pods
//!   ([`RestrictedPods`]), the Service in front of them ([`serving`]), a PodDisruptionBudget
//!   above one replica and a HorizontalPodAutoscaler while the object asks for one
//!   ([`Autoscaling`]);
//! - [`JobOperand`](job::JobOperand): a Job once per object;
//! - [`CronJobOperand`](cronjob::CronJobOperand): Jobs on a schedule.
//!
//! ```
//! use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
//! use k8s_openapi::api::core::v1::Container;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
//! use kube::CustomResource;
//! use opgen_runtime::operand::{Operand, RestrictedPods, Workload as _};
//! use opgen_runtime::{AppLabels, Conditions, Context, owned_by};
//! use serde::{Deserialize, Serialize};
//!
//! /// A memcached of `replicas` pods.
//! #[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize)]
//! #[kube(group = "example.com", version = "v1", kind = "Cache", namespaced)]
//! #[kube(status = "CacheStatus", schema = "disabled")]
//! pub struct CacheSpec {
//!     pub replicas: i32,
//! }
//!
//! #[derive(Clone, Debug, Default, Deserialize, Serialize)]
//! pub struct CacheStatus {
//!     pub conditions: Vec<Condition>,
//! }
//!
//! fn desired_workload(cache: &Cache) -> Deployment {
//!     let labels = AppLabels::new("cache", "server", cache);
//!     let container = Container {
//!         name: "cache".to_owned(),
//!         image: Some("memcached:1.6".to_owned()),
//!         ..Container::default()
//!     };
//!     let spec = DeploymentSpec {
//!         replicas: Some(cache.spec.replicas),
//!         selector: labels.label_selector(),
//!         template: RestrictedPods::new(labels.all(), container).template(),
//!         ..DeploymentSpec::default()
//!     };
//!     Deployment::with_spec(owned_by(cache, labels.all()), spec)
//! }
//!
//! fn desired_status(cache: &Cache, deployment: &Deployment, conditions: &Conditions) -> CacheStatus {
//!     let available = deployment.progress().available(conditions, cache.spec.replicas);
//!     CacheStatus { conditions: vec![available] }
//! }
//!
//! async fn run(ctx: Context) -> anyhow::Result<()> {
//!     let operand = Operand::available("cache", desired_workload, desired_status);
//!     operand.controller(ctx).run().await
//! }
//! ```

mod apply;
mod autoscaler;
mod budget;
mod changes;
pub mod cronjob;
mod instances;
pub mod job;
mod pods;
mod progress;
mod reconciler;
pub mod serving;
mod workload;
mod workload_cache;
mod workload_copy;

#[cfg(test)]
mod fixtures;

pub use self::autoscaler::Autoscaling;
pub use self::changes::{Change, changes};
pub use self::pods::RestrictedPods;
pub use self::progress::{Failure, Progress, failure};
pub use self::reconciler::{
    DesiredAutoscaling, DesiredService, DesiredStatus, DesiredWorkload, Operand,
};
pub use self::workload::Workload;
pub use self::workload_cache::WorkloadCache;
pub use self::workload_copy::WorkloadCopy;
pub use crate::conditions::{AVAILABLE, DEGRADED, PROGRESSING};
