//! The runtime of operators scaffolded by opgen: what every controller of a project needs and
//! none should repeat, in the part controller-runtime plays for a Kubebuilder project.
//!
//! A project's controller implements [`Reconcile`] for its kind; [`run`] (or [`controller()`])
//! watches the kind, keeps its finalizer, retries failures with per-object backoff and records
//! metrics. An operand kind's controller hands the pure functions that build what it runs to
//! [`operand::Operand`]. The project's `main` hands its name, its controllers and its webhooks
//! to a [`Manager`], which runs them with logging, health and metrics servers, leader election
//! and a graceful shutdown.
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::ConfigMap as Backup;
//! use kube::runtime::controller::Action;
//! use opgen_runtime::{Context, Error, Reconcile};
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
//! The crate is laid out by job, as kube-runtime and controller-runtime are:
//!
//! | module | what it holds |
//! |---|---|
//! | [`controller`](mod@controller) | the [`Reconcile`] trait and the driver around it: the watches, the finalizer, backoff, references to other kinds |
//! | [`client`] | [`Context`] and what a reconcile writes through it: apply, status, events, the cached copies of what it watches |
//! | [`operand`] | the reconcilers of kinds that run an application: workloads, pods, Services, budgets, autoscalers, Jobs and CronJobs |
//! | [`metrics`] | the Prometheus registry of the controllers |
//! | [`manager`] | the manager's life and its settings: servers, leader election, shutdown, logs and traces |
//! | [`webhook`] | admission and conversion webhooks, served over HTTPS with their certificates |
//! | [`testing`], [`envtest`] | a mocked API server for unit tests; a real one for integration tests |
//! | [`object`], [`conditions`], [`identity`] | what the others share: kinds and the objects made for them, conditions, the manager's name |
//!
//! Nothing in the crate is specific to a project: the project's name comes through
//! [`Manager::new`] (see [`field_manager`]). Two features serve the project's tests and are
//! never compiled into its manager: `testing`, a mocked API server for unit tests
//! ([`testing`]), and `envtest`, a real etcd and kube-apiserver for integration tests
//! ([`envtest`]). A third, `otel`, exports the manager's traces over OTLP (off by default).

#![warn(missing_docs)]

pub mod client;
pub mod conditions;
pub mod controller;
#[cfg(feature = "envtest")]
pub mod envtest;
mod error;
pub mod identity;
pub mod manager;
pub mod metrics;
pub mod object;
pub mod operand;
#[cfg(feature = "testing")]
pub mod testing;
pub mod webhook;

#[cfg(test)]
mod test_kinds;

pub use self::client::Context;
pub use self::conditions::Conditions;
pub use self::controller::{RESYNC_PERIOD, Reconcile, controller, run};
pub use self::error::Error;
pub use self::identity::field_manager;
pub use self::manager::Manager;
pub use self::object::{ApiObject, AppLabels, KindScope, made_for, owned_by};
