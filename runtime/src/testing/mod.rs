//! A mocked Kubernetes API server for tests of controllers. A test runs the code under test
//! against it while a script plays the server: it expects each request in turn (method, path,
//! query, body), checks it and answers it. A request the script did not expect, or one it
//! expects that never comes, fails the test with a message saying which.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::runtime::controller::Action;
//! use opgen_runtime::{Context, Error, Reconcile, testing};
//!
//! /// Says in an event that it saw each config map.
//! struct Reconciler;
//!
//! impl Reconcile for Reconciler {
//!     type Object = ConfigMap;
//!     const FINALIZER: bool = false;
//!
//!     async fn apply(&self, config_map: &ConfigMap, ctx: &Context) -> Result<Action, Error> {
//!         ctx.events.normal(config_map, "Seen", "Reconcile", "seen").await;
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let config_map: ConfigMap = testing::new_object();
//! let action = testing::apply(&Reconciler, &config_map, async |server| {
//!     let event = server.expect_event(&config_map, "Normal", "Seen").await;
//!     assert_eq!(event["note"], "seen");
//! })
//! .await;
//! assert_eq!(action.expect("apply succeeds"), Action::await_change());
//! # }
//! ```
//!
//! Scenario helpers cover the usual requests: `expect_created` and `expect_updated` (a child
//! read, then applied), `expect_applied`, `expect_status_applied` and
//! `expect_status_apply_failing` (the API server answers with an error, such as a 500 or a
//! 409), `expect_event`, `expect_finalizer_added` and `expect_finalizer_removed`; `expect` takes
//! any other request, to check and answer by hand.

mod api_server;

use ::std::sync::Arc;

use ::http::{Request, Response};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use ::kube::client::Body;
use ::kube::runtime::controller::Action;
use ::kube::{Client, Resource, ResourceExt as _};
use ::serde::Serialize;
use ::serde::de::DeserializeOwned;
use ::serde_json::json;
use ::tower_test::mock;

pub use self::api_server::{ApiServer, Received};
use crate::client::Context;
use crate::controller::{Driver, Reconcile};
use crate::error::Error;
use crate::object::KindScope;

/// The name of test objects.
pub const NAME: &str = "test";
/// The namespace of namespaced test objects: not the client's default namespace, to catch
/// requests sent to the wrong one.
pub const NAMESPACE: &str = "team-a";
/// The uid of test objects.
pub const UID: &str = "0b4e4a4a-2f6b-4c4e-9d0e-6f3c1f0c0a01";
/// The generation of test objects.
pub const GENERATION: i64 = 3;

/// A context whose client talks to the returned mock API server.
pub fn context() -> (Context, ApiServer) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    let client = Client::new(service, "default");
    (Context::new(client, None), ApiServer::new(handle))
}

/// Runs `reconciler.apply(obj)` against a mock API server whose side `script` plays (see
/// [`ApiServer::run`]).
pub async fn apply<R: Reconcile>(
    reconciler: &R,
    obj: &R::Object,
    script: impl AsyncFnOnce(&mut ApiServer),
) -> Result<Action, Error> {
    let (ctx, mut server) = context();
    server.run(reconciler.apply(obj, &ctx), script).await
}

/// Runs `reconciler.cleanup(obj)` against a mock API server whose side `script` plays (see
/// [`ApiServer::run`]).
pub async fn cleanup<R: Reconcile>(
    reconciler: &R,
    obj: &R::Object,
    script: impl AsyncFnOnce(&mut ApiServer),
) -> Result<Action, Error> {
    let (ctx, mut server) = context();
    server.run(reconciler.cleanup(obj, &ctx), script).await
}

/// Runs one reconcile of `obj` as its controller runs it, against a mock API server whose side
/// `script` plays (see [`ApiServer::run`]): through the finalizer with
/// [`Reconcile::FINALIZER`], [`Reconcile::cleanup`] once `obj` is being deleted, and without a
/// finalizer nothing at all for a deleted object, which the garbage collector takes.
pub async fn reconcile<R: Reconcile>(
    reconciler: R,
    obj: R::Object,
    script: impl AsyncFnOnce(&mut ApiServer),
) -> Result<Action, Error> {
    let (ctx, mut server) = context();
    let driver = Driver::new(reconciler, ctx);
    server.run(driver.reconcile(Arc::new(obj)), script).await
}

/// A new object of kind `K`, with the default spec, as the API server returns it before any
/// controller saw it: named [`NAME`], and [`stored`].
pub fn new_object<K>() -> K
where
    K: Resource<Scope: KindScope> + Default,
{
    let mut obj = K::default();
    obj.meta_mut().name = Some(NAME.to_owned());
    stored(obj)
}

/// `workload` (a Deployment or a StatefulSet) as the API server returns it, reporting that
/// `ready` of its `replicas` pods are ready, all of them running its current spec.
pub fn reporting<W: Serialize + DeserializeOwned>(workload: W, replicas: i32, ready: i32) -> W {
    let mut value = serde_json::to_value(workload).expect("the workload serializes");
    value["status"] = json!({
        "replicas": replicas,
        "readyReplicas": ready,
        "updatedReplicas": replicas,
    });
    serde_json::from_value(value).expect("a workload with a status")
}

/// `obj` as the API server returns it once created: in the namespace [`NAMESPACE`] (if its
/// kind is namespaced), with a uid, generation [`GENERATION`] and a resource version.
pub fn stored<K>(mut obj: K) -> K
where
    K: Resource<Scope: KindScope>,
{
    let metadata = obj.meta_mut();
    if <K::Scope as KindScope>::NAMESPACED {
        metadata.namespace = Some(NAMESPACE.to_owned());
    }
    metadata.uid = Some(UID.to_owned());
    metadata.generation = Some(GENERATION);
    metadata.resource_version = Some("100".to_owned());
    obj
}

/// `obj` with the finalizer `name`, as after the first reconcile of a controller that uses one.
pub fn with_finalizer<K: Resource>(mut obj: K, name: &str) -> K {
    obj.meta_mut().finalizers = Some(vec![name.to_owned()]);
    obj
}

/// The path of `obj` in the API: `/apis/<group>/<version>/[namespaces/<ns>/]<plural>/<name>`.
pub fn path_of<K: Resource<DynamicType = ()>>(obj: &K) -> String {
    let collection = K::url_path(&(), obj.namespace().as_deref());
    format!("{collection}/{}", obj.name_any())
}

/// Where events about an object in `namespace` go (`default` for cluster-scoped objects).
pub fn events_path(namespace: Option<&str>) -> String {
    let namespace = namespace.unwrap_or("default");
    format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events")
}

/// The condition `type_` of `conditions`; fails the test when there is none.
pub fn condition<'a>(conditions: &'a [Condition], type_: &str) -> &'a Condition {
    conditions
        .iter()
        .find(|c| c.type_ == type_)
        .unwrap_or_else(|| panic!("no {type_} condition in {conditions:#?}"))
}

/// The status, reason and message of the condition `type_` of `conditions`.
pub fn summary<'a>(conditions: &'a [Condition], type_: &str) -> (&'a str, &'a str, &'a str) {
    let c = condition(conditions, type_);
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

#[cfg(test)]
mod tests;
