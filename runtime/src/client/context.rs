//! [`Context`], what every controller shares: the client, the metrics, the events, the watched
//! namespace and the shutdown token, and how it reaches the objects of a kind whatever its
//! scope.

use ::std::sync::Arc;
use ::std::time::Duration;

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
    /// The statuses the controllers applied lately that their watches may not show yet.
    pub(crate) recent_statuses: Arc<RecentApplies>,
    /// How long one reconcile may run before it is cancelled and retried; `None`: no limit.
    pub(crate) reconcile_timeout: Option<Duration>,
    /// Whether this replica leads yet: a warm standby watches, but reconciles nothing.
    pub(crate) leadership: Leadership,
}

/// How long a reconcile may run, unless `--reconcile-timeout`
/// ([`Manager::reconcile_timeout`](crate::Manager::reconcile_timeout)) says otherwise. A
/// reconcile is a handful of API calls that take milliseconds each; one still running after a
/// minute waits on something that may never answer (a call without a timeout of its own, a
/// lock), and meanwhile it holds one of the controller's few concurrent reconciles and keeps
/// its object from being reconciled again. A minute leaves a slow API server, or a reconcile
/// that waits on purpose for a few seconds, ample room.
pub const DEFAULT_RECONCILE_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether this replica leads: elected at once without leader election or warm standby; a
/// warm standby's controllers watch while it waits to be elected (see
/// [`Manager::warm_standby`](crate::Manager::warm_standby)).
#[derive(Clone, Debug, Default)]
pub(crate) struct Leadership {
    /// Cancelled once the replica leads: it never stops leading while it runs (a replica
    /// that loses the lease exits).
    elected: CancellationToken,
}

impl Leadership {
    /// A replica that leads already.
    pub(crate) fn elected() -> Self {
        let leadership = Self::default();
        leadership.lead();
        leadership
    }

    /// A standby, until [`Leadership::lead`].
    pub(crate) fn standby() -> Self {
        Self::default()
    }

    /// This replica leads from now on.
    pub(crate) fn lead(&self) {
        self.elected.cancel();
    }

    fn leads(&self) -> bool {
        self.elected.is_cancelled()
    }

    async fn led(&self) {
        self.elected.cancelled().await;
    }
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
            recent_statuses: Arc::default(),
            reconcile_timeout: Some(DEFAULT_RECONCILE_TIMEOUT),
            leadership: Leadership::elected(),
        }
    }

    /// Whether this replica leads: always without leader election. A warm standby (see
    /// [`Manager::warm_standby`](crate::Manager::warm_standby)) runs its controllers' watches
    /// before it leads, and reconciles nothing until then.
    pub fn is_leader(&self) -> bool {
        self.leadership.leads()
    }

    /// Waits until this replica leads: at once without leader election. What code that a
    /// project runs beside its controllers awaits before it writes anything, since on a warm
    /// standby it starts before the replica leads.
    pub async fn elected(&self) {
        self.leadership.led().await;
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
