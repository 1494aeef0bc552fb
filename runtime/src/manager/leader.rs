//! Leader election on a `coordination.k8s.io/v1` Lease, so that several replicas can run and
//! only one of them reconciles.
//!
//! Like controller-runtime, a replica that loses the lease does not try to become a standby
//! again: it cancels the shutdown token and exits non-zero, and its restart campaigns anew.
//! Stopping controllers mid-flight is the only safe move once another replica may be
//! reconciling the same objects.

use ::std::{
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use ::anyhow::{Context as _, anyhow};
use ::axum::http::{Method, Request, Response};
use ::kube::{Client, client::Body};
use ::kube_lease_manager::{DurationSeconds, LeaseCreateMode, LeaseManager, LeaseParams};
use ::tokio::time::Instant;
use ::tokio_util::sync::CancellationToken;
use ::tracing::{info, warn};

use super::settings::LeaderElection;

/// How long a lease stays valid without renewal: the longest a dead leader blocks a standby.
const LEASE_DURATION: DurationSeconds = 15;
/// The leader renews this long before the lease expires, i.e. every 5 seconds.
const RENEW_GRACE: DurationSeconds = 10;
/// How long after its last renewal the leader keeps retrying a renewal that fails, before it
/// gives up and stops: controller-runtime's renew deadline. The 5 seconds left of the lease
/// cover the controllers' stop and some clock skew between the replicas.
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// Per-request timeout of the elector's client. A renewal (a PATCH and a GET) fails within
/// twice this, so that a slow API server leaves time for a second attempt before
/// `RENEW_DEADLINE`, instead of one request hanging past the lease's expiry.
const API_TIMEOUT: Duration = Duration::from_secs(2);
/// Pause between attempts: of a standby that cannot read the lease, of a leader whose renewal
/// failed.
const RETRY_PERIOD: Duration = Duration::from_secs(1);

// LeaseParams::new panics otherwise.
const _: () = assert!(RENEW_GRACE < LEASE_DURATION);
// A renewal's PATCH, sent `LEASE_DURATION - RENEW_GRACE` after the last one, fails early
// enough to be tried again.
const _: () = assert!(
    (LEASE_DURATION - RENEW_GRACE) + API_TIMEOUT.as_secs() + RETRY_PERIOD.as_secs()
        < RENEW_DEADLINE.as_secs()
);
const _: () = assert!(RENEW_DEADLINE.as_secs() < LEASE_DURATION);

/// Where the lease lives and who campaigns for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeaderElectionConfig {
    /// The Lease's name.
    pub lease_name: String,
    /// The Lease's namespace.
    pub namespace: String,
    /// Holder identity written to the lease; unique per replica.
    pub identity: String,
}

impl LeaderElectionConfig {
    /// The election on `lease_name` in `namespace` (else the manager's own), as `identity`
    /// (else a unique one).
    pub fn new(
        lease_name: &str,
        namespace: Option<String>,
        identity: Option<String>,
    ) -> ::anyhow::Result<Self> {
        if lease_name.trim().is_empty() {
            ::anyhow::bail!(
                "--leader-election-id is empty: name the Lease used for leader election"
            );
        }
        let namespace = namespace.context(
            "leader election needs the Lease's namespace: set --leader-election-namespace \
             (or LEADER_ELECTION_NAMESPACE), or POD_NAMESPACE from the downward API",
        )?;
        let identity = identity.context(
            "leader election needs a unique holder identity: set POD_NAME from the downward API",
        )?;
        Ok(Self {
            lease_name: lease_name.to_owned(),
            namespace,
            identity,
        })
    }

    /// The flags, completed by the Pod's downward-API variables.
    pub fn from_options(options: &LeaderElection) -> ::anyhow::Result<Self> {
        let pod_namespace = ::std::env::var("POD_NAMESPACE").ok();
        Self::new(
            &options.lease_name,
            lease_namespace(options.namespace.as_deref(), pod_namespace.as_deref()),
            holder_identity(),
        )
    }
}

/// The Lease's namespace: the flag, else the Pod's own namespace. An empty value counts as
/// unset, because a Deployment cannot unset an inherited variable.
fn lease_namespace(flag: Option<&str>, pod_namespace: Option<&str>) -> Option<String> {
    [flag, pod_namespace]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|namespace| !namespace.is_empty())
        .map(str::to_owned)
}

/// The Pod name in a cluster; the host name when run locally.
fn holder_identity() -> Option<String> {
    let pod_name = ::std::env::var("POD_NAME").ok();
    let host_name = || {
        ::std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| ::std::env::var("HOSTNAME").ok())
    };
    pod_name
        .or_else(host_name)
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

/// The elector's own client, and when it last renewed the lease.
pub(crate) struct LeaseClient {
    client: Client,
    renewals: Renewals,
}

impl LeaseClient {
    /// A client with short timeouts and no retries of its own, so a renewal fails while the
    /// lease is still ours (see `API_TIMEOUT`) and the elector decides what to retry. The
    /// controllers' client keeps kube's defaults, which suit long watches.
    pub fn new(config: &::kube::Config) -> ::anyhow::Result<Self> {
        let mut config = config.clone();
        config.connect_timeout = Some(API_TIMEOUT);
        config.read_timeout = Some(API_TIMEOUT);
        config.write_timeout = Some(API_TIMEOUT);
        config.reset_reader_on_write = true;
        config.default_retry = false;
        let renewals = Renewals::default();
        let client = ::kube::client::ClientBuilder::try_from(config)
            .context("cannot build the Kubernetes client for leader election")?
            .with_layer(&renewals)
            .build();
        Ok(Self { client, renewals })
    }
}

/// When this replica last wrote the Lease: the moment its last successful PATCH was sent,
/// which is when the API server's copy was renewed at the latest. kube-lease-manager renews
/// inside `LeaseManager::changed` and reports only a change of holder, so the elector's client
/// notes each write as it passes.
#[derive(Clone, Debug, Default)]
struct Renewals(Arc<Mutex<Option<Instant>>>);

impl Renewals {
    /// How long ago the lease was last written; `None` before the first write.
    fn since_last(&self) -> Option<Duration> {
        self.0.lock().unwrap().map(|sent| sent.elapsed())
    }
}

impl<S> ::tower::Layer<S> for Renewals {
    type Service = RecordRenewals<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RecordRenewals {
            inner,
            renewals: self.clone(),
        }
    }
}

/// The service [`Renewals`] wraps around the elector's client.
struct RecordRenewals<S> {
    inner: S,
    renewals: Renewals,
}

impl<S, B> ::tower::Service<Request<Body>> for RecordRenewals<S>
where
    S: ::tower::Service<Request<Body>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let write = request.method() == Method::PATCH;
        let sent = Instant::now();
        let renewals = self.renewals.clone();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            if write && response.status().is_success() {
                *renewals.0.lock().unwrap() = Some(sent);
            }
            Ok(response)
        })
    }
}

/// A candidate for the Lease: runs the controllers while it leads.
pub(crate) struct LeaderElector {
    manager: LeaseManager,
    renewals: Renewals,
    config: LeaderElectionConfig,
}

impl LeaderElector {
    /// Creates the Lease when it does not exist yet, so RBAC problems show at start-up.
    pub async fn new(client: LeaseClient, config: LeaderElectionConfig) -> ::anyhow::Result<Self> {
        let LeaseClient { client, renewals } = client;
        let params = LeaseParams::new(config.identity.clone(), LEASE_DURATION, RENEW_GRACE);
        let manager = LeaseManager::new(
            client,
            &config.lease_name,
            &config.namespace,
            params,
            LeaseCreateMode::AutoCreate,
        )
        .await
        .with_context(|| {
            format!(
                "cannot read or create the leader-election Lease {}/{}: the manager's RBAC must allow \
                 get, create and patch on leases.coordination.k8s.io in that namespace",
                config.namespace, config.lease_name
            )
        })?;
        Ok(Self {
            manager,
            renewals,
            config,
        })
    }

    /// Waits for the lease, then runs `lead` while renewing it.
    ///
    /// Returns `Ok` without calling `lead` if `shutdown` is cancelled first. Once leading,
    /// returns what `lead` returns and releases the lease, so the next leader need not wait
    /// for it to expire. If the lease is lost, cancels `shutdown`, abandons `lead` at once and
    /// returns an error.
    pub async fn run<F, Fut>(self, shutdown: CancellationToken, lead: F) -> ::anyhow::Result<()>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ::anyhow::Result<()>>,
    {
        let Self {
            manager,
            renewals,
            config,
        } = self;
        info!(
            lease = %config.lease_name,
            namespace = %config.namespace,
            identity = %config.identity,
            "waiting to become the leader"
        );

        let led = campaign(&manager, &shutdown).await;
        let result = if led {
            info!(identity = %config.identity, "became the leader: starting controllers");
            ::tokio::select! {
                result = lead() => result,
                lost = hold(&manager, &renewals) => {
                    shutdown.cancel();
                    return Err(lost);
                }
            }
        } else {
            Ok(())
        };

        release(&manager, &config, led).await;
        result
    }

    /// Like [`LeaderElector::run`] for a warm standby: `controllers` runs from the start,
    /// while this replica waits for the lease, and `promote` is called once it leads (the
    /// controllers then reconcile). Returns what `controllers` returns: before leading too,
    /// when they fail or the shutdown stops them.
    pub async fn run_warm<Fut>(
        self,
        shutdown: CancellationToken,
        controllers: Fut,
        promote: impl FnOnce(),
    ) -> ::anyhow::Result<()>
    where
        Fut: Future<Output = ::anyhow::Result<()>>,
    {
        let Self {
            manager,
            renewals,
            config,
        } = self;
        info!(
            lease = %config.lease_name,
            namespace = %config.namespace,
            identity = %config.identity,
            "waiting to become the leader, watching as a warm standby"
        );
        let mut controllers = ::std::pin::pin!(controllers);
        let led = ::tokio::select! {
            led = campaign(&manager, &shutdown) => led,
            result = &mut controllers => {
                release(&manager, &config, false).await;
                return result;
            }
        };
        let result = if led {
            info!(identity = %config.identity, "became the leader: reconciling");
            promote();
            ::tokio::select! {
                result = &mut controllers => result,
                lost = hold(&manager, &renewals) => {
                    shutdown.cancel();
                    return Err(lost);
                }
            }
        } else {
            // The shutdown came first; the controllers stop on it too.
            controllers.await
        };
        release(&manager, &config, led).await;
        result
    }
}

/// Releases the lease on the way out. A standby releases too: a campaign cut short by shutdown
/// may just have taken the lease. Releasing a lease that another replica holds leaves it
/// untouched.
async fn release(manager: &LeaseManager, config: &LeaderElectionConfig, led: bool) {
    match manager.release().await {
        Ok(()) if led => {
            info!(lease = %config.lease_name, "released the leader-election lease")
        }
        Ok(()) => {}
        Err(err) => {
            warn!(error = %err, "cannot release the leader-election lease; it expires on its own")
        }
    }
}

/// Returns `true` once this replica holds the lease, `false` if `shutdown` came first.
async fn campaign(manager: &LeaseManager, shutdown: &CancellationToken) -> bool {
    loop {
        let changed = ::tokio::select! {
            () = shutdown.cancelled() => return false,
            changed = manager.changed() => changed,
        };
        match changed {
            Ok(true) => return true,
            Ok(false) => {}
            Err(err) => {
                warn!(error = %err, "cannot acquire the leader-election lease; retrying");
                ::tokio::select! {
                    () = shutdown.cancelled() => return false,
                    () = ::tokio::time::sleep(RETRY_PERIOD) => {}
                }
            }
        }
    }
}

/// Renews the lease for as long as possible; returns why leadership ended.
///
/// A renewal that fails (a slow or briefly unreachable API server) is tried again every
/// `RETRY_PERIOD` until `RENEW_DEADLINE` after the last successful one; only then does the
/// leader give up, while the lease is still its own. Calling `changed()` again after an error
/// renews at once, since the lease is then within its grace period; if another replica has
/// taken it meanwhile, `changed()` says so.
async fn hold(manager: &LeaseManager, renewals: &Renewals) -> ::anyhow::Error {
    loop {
        let err = match manager.changed().await {
            Ok(true) => continue,
            Ok(false) => return anyhow!("lost the leader-election lease to another replica"),
            Err(err) => err,
        };
        match renewals.since_last() {
            Some(since) if since + RETRY_PERIOD < RENEW_DEADLINE => {
                warn!(error = %err, renewed_ago = ?since, "cannot renew the leader-election lease; retrying");
                ::tokio::time::sleep(RETRY_PERIOD).await;
            }
            Some(since) => {
                return anyhow!(err).context(format!(
                    "cannot renew the leader-election lease, last renewed {since:.1?} ago: \
                     stopping before it expires and another replica takes over"
                ));
            }
            None => return anyhow!(err).context("cannot renew the leader-election lease"),
        }
    }
}

#[cfg(test)]
mod tests;
