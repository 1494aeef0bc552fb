//! What every controller shares, and how it reaches the objects of a kind whatever its scope.

use ::std::fmt::Debug;
use ::std::sync::{Arc, OnceLock};

use ::k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use ::kube::{Api, Client, Resource, ResourceExt as _};
use ::serde::Serialize;
use ::serde::de::DeserializeOwned;
use ::tokio_util::sync::CancellationToken;

use crate::{Error, events::Events, metrics::Metrics, recent_applies::RecentApplies};

/// The manager's name until one is set: what the runtime's own tests, and a project's unit
/// tests, run under.
const UNNAMED_MANAGER: &str = "opgen-runtime";

static FIELD_MANAGER: OnceLock<String> = OnceLock::new();

/// The manager's name: field manager of every server-side apply, reporting controller of
/// events, `app.kubernetes.io/managed-by` label of the objects the controllers make, prefix of
/// the metrics and label of the webhook configurations whose CA the manager keeps. It is the
/// project's package name, which the project hands to
/// [`Manager::new`](crate::manager::Manager::new) (and the integration tests' harness).
///
/// It is one value for the process, not a field of [`Context`], because the builders of what
/// an operand runs are pure functions that have no context. Until it is set, it is
/// `opgen-runtime`.
pub fn field_manager() -> &'static str {
    FIELD_MANAGER.get().map_or(UNNAMED_MANAGER, String::as_str)
}

/// Names the manager for the rest of the process (see [`field_manager`]). A process runs one
/// manager: once a name is set, another one is refused, since what was already written under
/// the first name would no longer be recognised as this manager's.
pub fn set_field_manager(name: &str) -> ::anyhow::Result<()> {
    let set = FIELD_MANAGER.get_or_init(|| name.to_owned());
    if set != name {
        ::anyhow::bail!(
            "this process already runs the manager `{set}`, so it cannot also be `{name}`: run \
             one manager per process"
        );
    }
    Ok(())
}

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
    pub concurrency: u16,
    /// What the controllers applied lately that their watches may not show yet.
    pub recent_applies: Arc<RecentApplies>,
}

/// How many objects a controller reconciles at once unless `--max-concurrent-reconciles`
/// says otherwise: enough to keep a few requests in flight while others wait on the API
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

/// An object of a kind the machinery can read, write and watch: a typed kind (a custom kind,
/// or one of Kubernetes' own) of either scope. Every such kind is one.
pub trait ApiObject:
    Resource<DynamicType = (), Scope: KindScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> ApiObject for K where
    K: Resource<DynamicType = (), Scope: KindScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// How the objects of one scope are reached: namespaced kinds through their namespace,
/// cluster-scoped kinds cluster-wide. It lets the machinery serve kinds of either scope.
pub trait KindScope: Sized {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;

    /// The API to watch objects through, restricted to `namespace` where the scope allows.
    fn watched<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;

    /// The API that reads and writes `obj`.
    fn api_of<K>(client: Client, obj: &K) -> Result<Api<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl KindScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn watched<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }

    fn api_of<K>(client: Client, obj: &K) -> Result<Api<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        let namespace = obj.namespace().ok_or(Error::MissingNamespace)?;
        Ok(Api::namespaced(client, &namespace))
    }
}

impl KindScope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn watched<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }

    fn api_of<K>(client: Client, _obj: &K) -> Result<Api<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Ok(Api::all(client))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kinds::{self, Gadget, Widget};
    use crate::testing;

    fn context(watch_namespace: Option<&str>) -> Context {
        let (mut ctx, _server) = testing::context();
        ctx.watch_namespace = watch_namespace.map(str::to_owned);
        ctx
    }

    #[tokio::test]
    async fn namespaced_kinds_are_watched_in_the_watch_namespace_or_everywhere() {
        let everywhere = context(None).watched::<Widget>();
        assert_eq!(everywhere.resource_url(), "/apis/example.com/v1/widgets");
        let one = context(Some("team-a")).watched::<Widget>();
        assert_eq!(
            one.resource_url(),
            "/apis/example.com/v1/namespaces/team-a/widgets"
        );
    }

    #[tokio::test]
    async fn cluster_scoped_kinds_are_watched_cluster_wide() {
        let api = context(Some("team-a")).watched::<Gadget>();
        assert_eq!(api.resource_url(), "/apis/example.com/v1/gadgets");
    }

    #[tokio::test]
    async fn objects_are_written_in_their_own_namespace() {
        let ctx = context(None);
        let api = ctx
            .api_of(&test_kinds::widget())
            .expect("a namespaced widget");
        assert_eq!(
            api.resource_url(),
            "/apis/example.com/v1/namespaces/team-a/widgets"
        );
        let api = ctx.api_of(&test_kinds::gadget()).expect("a gadget");
        assert_eq!(api.resource_url(), "/apis/example.com/v1/gadgets");

        let mut homeless = test_kinds::widget();
        homeless.metadata.namespace = None;
        let error = ctx.api_of(&homeless).expect_err("no namespace");
        assert_eq!(error.reason(), "invalid_object");
        assert_eq!(error.to_string(), "object has no namespace");
    }
}
