//! The runtime of operators scaffolded by opgen: what every
//! controller of a project needs and none should repeat, in the part controller-runtime plays
//! for a Kubebuilder project.
//!
//! A project's controller implements [`Reconcile`] for its kind; [`run`] (or [`controller`])
//! watches the kind, keeps its finalizer, retries failures with per-object backoff and
//! records metrics. An operand kind's controller hands the pure functions that build what it
//! runs to [`operand::Operand`]. The project's `main` hands its name, its controllers and its
//! webhooks to a [`manager::Manager`], which runs them with logging, health and metrics
//! servers, leader election and a graceful shutdown.
//!
//! ```no_run
//! use opgen_runtime::{Context, Error, Reconcile};
//! use kube::runtime::controller::Action;
//! # use k8s_openapi::api::core::v1::ConfigMap as Backup;
//!
//! struct Reconciler;
//!
//! impl Reconcile for Reconciler {
//!     type Object = Backup;
//!
//!     async fn apply(&self, backup: &Backup, ctx: &Context) -> Result<Action, Error> {
//!         // Bring the cluster to what `backup` asks for here.
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! async fn run(ctx: Context) -> anyhow::Result<()> {
//!     opgen_runtime::run(ctx, Reconciler).await
//! }
//! ```
//!
//! Nothing in the crate is specific to a project: the project's name comes through
//! [`manager::Manager::new`] (see [`context::field_manager`]). Two features serve the
//! project's tests and are never compiled into its manager: `testing`, a mocked API server
//! for unit tests ([`testing`]), and `envtest`, a real etcd and kube-apiserver for
//! integration tests ([`envtest`]). A third, `otel`, exports the manager's traces over OTLP
//! (`otel`, off by default).

#![warn(missing_docs)]

pub mod apply;
pub mod autoscaling;
pub mod cache;
pub mod compact;
pub mod context;
pub mod cronjob;
pub mod disruption;
#[cfg(any(test, feature = "envtest"))]
pub mod envtest;
pub mod error;
pub mod events;
pub mod exposition;
pub mod job;
pub mod leader;
pub mod manager;
pub mod metrics;
pub mod metrics_auth;
pub mod operand;
#[cfg(feature = "otel")]
pub mod otel;
pub mod recent_applies;
pub mod reconcile;
pub mod reference;
pub mod server;
pub mod serving;
pub mod shutdown;
pub mod status;
pub mod telemetry;
#[cfg(test)]
mod test_kinds;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod webhook;
pub mod webhook_certs;
pub mod workload;

pub use context::Context;
pub use error::Error;
pub use reconcile::{Reconcile, controller, run};
