//! [`Context`], what every controller shares: the client, the metrics, the events, the watched
//! namespace and the shutdown token, and how it reaches the objects of a kind whatever its
//! scope.

use ::std::sync::Arc;

use ::k8s_openapi::NamespaceResourceScope;
use ::kube::{Api, Client, Resource};
use ::tokio_util::sync::CancellationToken;

use super::events::Events;
use super::recent_applies::RecentApplies;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::object::KindScope;

/// What every controller shares: one per manager, cloned into each controller.
#[derive(Clone)]
pub struct Context {
    /// The client of the API server, with the manager's identity.
    pub client: Client,
    /// The manager's Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// Publishes events about the objects being reconciled.
    pub events: Events,
    /// Namespace to watch; `None` = the whole cluster.
    pub watch_namespace: Option<String>,
    /// Cancelled when the process must stop (signal, or leadership lost).
    pub shutdown: CancellationToken,
    /// How many objects each controller reconciles at once, at most.
    pub(crate) concurrency: u16,
    /// What the controllers applied lately that their watches may not show yet.
    pub(crate) recent_applies: Arc<RecentApplies>,
}

/// How many objects a controller reconciles at once unless `--max-concurrent-reconciles`
/// ([`Manager::max_concurrent_reconciles`](crate::Manager::max_concurrent_reconciles)) says
/// otherwise: enough to keep a few requests in flight while others wait on the API
/// server, few enough that a burst of new objects does not queue hundreds of writes on a small
/// control plane, which then answers everything else (leases, probes, other controllers) late.
pub const DEFAULT_CONCURRENCY: u16 = 4;

impl Context {
    /// A context with fresh metrics and a shutdown token nothing has cancelled yet.
    pub fn new(client: Client, watch_namespace: Option<String>) -> Self {
        Self {
            events: Events::new(client.clone()),
            client,
            metrics: Arc::new(Metrics::new()),
            watch_namespace,
            shutdown: CancellationToken::new(),
            concurrency: DEFAULT_CONCURRENCY,
            recent_applies: Arc::default(),
        }
    }

    /// The API the controllers watch objects of `K` through: the namespace given with
    /// `--watch-namespace`, else the whole cluster. A cluster-scoped kind is watched
    /// cluster-wide, whatever `--watch-namespace` says.
    pub fn watched<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope: KindScope>,
    {
        K::Scope::watched(self.client.clone(), self.watch_namespace.as_deref())
    }

    /// The API that reads and writes `obj`: in its namespace, unless its kind is
    /// cluster-scoped.
    pub fn api_of<K>(&self, obj: &K) -> Result<Api<K>, Error>
    where
        K: Resource<DynamicType = (), Scope: KindScope>,
    {
        K::Scope::api_of(self.client.clone(), obj)
    }

    /// The API of the `K` objects in `namespace`.
    pub fn namespaced<K>(&self, namespace: &str) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        Api::namespaced(self.client.clone(), namespace)
    }
}

#[cfg(test)]
mod tests;
