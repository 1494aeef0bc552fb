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

/// What `--leader-elect` and its flags ask for: the Lease the replicas compete for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderElection {
    /// `--leader-election-id`
    pub lease_name: String,
    /// `--leader-election-namespace`; the Pod's own namespace (`POD_NAMESPACE`) when `None`.
    pub namespace: Option<String>,
}

/// Where the lease lives and who campaigns for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderElectionConfig {
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
pub struct LeaseClient {
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
pub struct LeaderElector {
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

        // A standby releases too: a campaign cut short by shutdown may just have taken the
        // lease. Releasing a lease that another replica holds leaves it untouched.
        match manager.release().await {
            Ok(()) if led => {
                info!(lease = %config.lease_name, "released the leader-election lease")
            }
            Ok(()) => {}
            Err(err) => {
                warn!(error = %err, "cannot release the leader-election lease; it expires on its own")
            }
        }
        result
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
mod tests {
    use ::std::sync::{Arc, Mutex};

    use ::http::{Method, Request, Response, StatusCode};
    use ::k8s_openapi::{apimachinery::pkg::apis::meta::v1::MicroTime, jiff::Timestamp};
    use ::kube::client::Body;
    use ::serde_json::{Value, json};
    use ::tokio::time::timeout;

    use super::*;

    fn some(s: &str) -> Option<String> {
        Some(s.to_owned())
    }

    #[test]
    fn valid_config() {
        let config =
            LeaderElectionConfig::new("operator-leader", some("operator-system"), some("pod-0"));
        assert_eq!(
            config.unwrap(),
            LeaderElectionConfig {
                lease_name: "operator-leader".to_owned(),
                namespace: "operator-system".to_owned(),
                identity: "pod-0".to_owned(),
            }
        );
    }

    #[test]
    fn missing_namespace_is_an_error_naming_the_fix() {
        let err = LeaderElectionConfig::new("operator-leader", None, some("pod-0")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("--leader-election-namespace"), "{message}");
        assert!(message.contains("POD_NAMESPACE"), "{message}");
    }

    #[test]
    fn the_lease_namespace_falls_back_to_the_pod_namespace() {
        assert_eq!(
            lease_namespace(None, Some("operator-system")).as_deref(),
            Some("operator-system")
        );
        assert_eq!(
            lease_namespace(Some("ops"), Some("operator-system")).as_deref(),
            Some("ops")
        );
        assert_eq!(
            lease_namespace(Some(" "), Some("operator-system")).as_deref(),
            Some("operator-system")
        );
        assert_eq!(lease_namespace(None, Some("")), None);
        assert_eq!(lease_namespace(None, None), None);
    }

    #[test]
    fn missing_identity_is_an_error() {
        let err = LeaderElectionConfig::new("operator-leader", some("ns"), None).unwrap_err();
        assert!(err.to_string().contains("POD_NAME"), "{err}");
    }

    #[test]
    fn empty_lease_name_is_an_error() {
        let err = LeaderElectionConfig::new(" ", some("ns"), some("pod-0")).unwrap_err();
        assert!(err.to_string().contains("--leader-election-id"), "{err}");
    }

    /// A one-Lease API server with just enough GET, POST and PATCH for kube-lease-manager, so
    /// the tests do not depend on the exact sequence of its calls.
    #[derive(Clone, Default)]
    struct FakeLease {
        stored: Arc<Mutex<Option<Value>>>,
        /// How many of the next PATCHes fail, as an overloaded API server's would.
        failing_patches: Arc<Mutex<usize>>,
        /// PATCHes answered 200 so far.
        patched: Arc<Mutex<usize>>,
    }

    impl FakeLease {
        fn held_by(identity: &str) -> Self {
            let lease = FakeLease {
                stored: Arc::new(Mutex::new(Some(json!({
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": { "name": "operator-leader", "namespace": "operator-system" },
                    "spec": {},
                })))),
                ..FakeLease::default()
            };
            lease.take_over(identity);
            lease
        }

        fn client(&self) -> LeaseClient {
            let (service, mut handle) = ::tower_test::mock::pair::<Request<Body>, Response<Body>>();
            let lease = self.clone();
            ::tokio::spawn(async move {
                while let Some((request, send)) = handle.next_request().await {
                    send.send_response(lease.answer(request).await);
                }
            });
            let renewals = Renewals::default();
            LeaseClient {
                client: Client::new(::tower::Layer::layer(&renewals, service), "default"),
                renewals,
            }
        }

        fn fail_patches(&self, count: usize) {
            *self.failing_patches.lock().unwrap() = count;
        }

        fn patched(&self) -> usize {
            *self.patched.lock().unwrap()
        }

        async fn answer(&self, request: Request<Body>) -> Response<Body> {
            let (parts, body) = request.into_parts();
            assert!(
                parts
                    .uri
                    .path()
                    .starts_with("/apis/coordination.k8s.io/v1/namespaces/operator-system/leases"),
                "unexpected request {} {}",
                parts.method,
                parts.uri
            );
            let body = body.collect_bytes().await.unwrap();
            if parts.method == Method::PATCH {
                let mut failing = self.failing_patches.lock().unwrap();
                if *failing > 0 {
                    *failing -= 1;
                    let status = json!({
                        "apiVersion": "v1", "kind": "Status", "status": "Failure",
                        "reason": "Timeout", "code": 504, "message": "etcd request timed out",
                    });
                    return respond(StatusCode::GATEWAY_TIMEOUT, &status);
                }
            }
            let mut stored = self.stored.lock().unwrap();
            match (parts.method, stored.as_mut()) {
                (Method::GET, Some(lease)) => respond(StatusCode::OK, lease),
                (Method::POST, None) => {
                    let lease = stored.insert(::serde_json::from_slice(&body).unwrap());
                    respond(StatusCode::CREATED, lease)
                }
                (Method::PATCH, Some(lease)) => {
                    // Apply and strategic-merge patches of flat spec fields: null deletes.
                    let patch: Value = ::serde_json::from_slice(&body).unwrap();
                    if lease["spec"].is_null() {
                        lease["spec"] = json!({});
                    }
                    let spec = lease["spec"].as_object_mut().unwrap();
                    for (field, value) in patch["spec"].as_object().unwrap() {
                        match value {
                            Value::Null => spec.remove(field),
                            value => spec.insert(field.clone(), value.clone()),
                        };
                    }
                    *self.patched.lock().unwrap() += 1;
                    respond(StatusCode::OK, lease)
                }
                (method, _) => {
                    let status = json!({
                        "apiVersion": "v1", "kind": "Status", "status": "Failure",
                        "reason": "NotFound", "code": 404, "message": format!("{method}: lease not found"),
                    });
                    respond(StatusCode::NOT_FOUND, &status)
                }
            }
        }

        fn holder(&self) -> Option<String> {
            let stored = self.stored.lock().unwrap();
            stored.as_ref()?["spec"]["holderIdentity"]
                .as_str()
                .map(str::to_owned)
        }

        /// Another replica takes the lease (as it may once this one misses its renewals).
        fn take_over(&self, identity: &str) {
            let mut stored = self.stored.lock().unwrap();
            let spec = &mut stored.as_mut().unwrap()["spec"];
            spec["holderIdentity"] = json!(identity);
            spec["renewTime"] = ::serde_json::to_value(MicroTime(Timestamp::now())).unwrap();
            spec["leaseDurationSeconds"] = json!(LEASE_DURATION);
        }
    }

    fn respond(status: StatusCode, body: &Value) -> Response<Body> {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Body::from(::serde_json::to_vec(body).unwrap()))
            .unwrap()
    }

    fn config(identity: &str) -> LeaderElectionConfig {
        LeaderElectionConfig::new("operator-leader", some("operator-system"), some(identity))
            .unwrap()
    }

    /// Runs an elector for `pod-0` on `lease` with `lead` as its controllers, for at most
    /// `within`: what `run` returned, and the shutdown token it was given.
    async fn elect<F, Fut>(
        lease: &FakeLease,
        within: Duration,
        lead: F,
    ) -> (::anyhow::Result<()>, CancellationToken)
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = ::anyhow::Result<()>>,
    {
        let elector = LeaderElector::new(lease.client(), config("pod-0"))
            .await
            .unwrap();
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        let result = timeout(within, elector.run(shutdown.clone(), move || lead(stop)))
            .await
            .expect("the elector returns in time");
        (result, shutdown)
    }

    #[::tokio::test]
    async fn leads_then_hands_the_lease_over_on_shutdown() {
        let lease = FakeLease::default();
        let mut holder_while_leading = None;
        let holder = &mut holder_while_leading;
        let fake = lease.clone();
        let (result, _) = elect(&lease, Duration::from_secs(30), |stop| async move {
            *holder = fake.holder();
            stop.cancel();
            Ok(())
        })
        .await;

        result.unwrap();
        assert_eq!(holder_while_leading.as_deref(), Some("pod-0"));
        assert_eq!(lease.holder(), None, "the lease is released on the way out");
    }

    #[::tokio::test]
    async fn a_standby_stops_on_shutdown_without_leading() {
        // Another replica leads, so this one stays a standby.
        let lease = FakeLease::held_by("pod-1");
        let elector = LeaderElector::new(lease.client(), config("pod-0"))
            .await
            .unwrap();
        let shutdown = CancellationToken::new();

        let stop = shutdown.clone();
        ::tokio::spawn(async move {
            ::tokio::time::sleep(Duration::from_millis(200)).await;
            stop.cancel();
        });
        let result = timeout(
            Duration::from_secs(30),
            elector.run(shutdown.clone(), || async {
                panic!("a standby must not run controllers")
            }),
        )
        .await
        .expect("a standby stops on shutdown");

        result.unwrap();
        assert_eq!(
            lease.holder().as_deref(),
            Some("pod-1"),
            "the leader's lease is left alone"
        );
    }

    // Paused time: the elector's sleep until the next renewal passes at once.
    #[::tokio::test(start_paused = true)]
    async fn losing_the_lease_cancels_shutdown_and_fails() {
        let lease = FakeLease::default();
        let fake = lease.clone();
        let (result, shutdown) = elect(&lease, Duration::from_secs(60), |_| async move {
            fake.take_over("pod-1");
            // Controllers that would run forever: the elector must abandon them.
            ::std::future::pending().await
        })
        .await;

        let err = result.unwrap_err();
        assert!(
            err.to_string().contains("lost the leader-election lease"),
            "{err:#}"
        );
        assert!(shutdown.is_cancelled());
        assert_eq!(
            lease.holder().as_deref(),
            Some("pod-1"),
            "the new leader's lease is left alone"
        );
    }

    // Paused time, as above. A renewal answered 504 once: the leader tries again and leads on.
    #[::tokio::test(start_paused = true)]
    async fn a_failed_renewal_is_retried_and_the_leader_leads_on() {
        let lease = FakeLease::default();
        let fake = lease.clone();
        let (result, shutdown) = elect(&lease, Duration::from_secs(120), |_| async move {
            let taken = fake.patched();
            fake.fail_patches(1);
            // Three renewals after the failed one.
            while fake.patched() < taken + 3 {
                ::tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Ok(())
        })
        .await;

        result.unwrap();
        assert!(!shutdown.is_cancelled(), "the leader did not give up");
        assert_eq!(
            *lease.failing_patches.lock().unwrap(),
            0,
            "a renewal failed"
        );
    }

    // Paused time, as above. Renewals that keep failing: the leader stops within the deadline.
    #[::tokio::test(start_paused = true)]
    async fn renewals_failing_past_the_deadline_stop_the_leader() {
        let lease = FakeLease::default();
        let fake = lease.clone();
        let started = Instant::now();
        let (result, shutdown) = elect(&lease, Duration::from_secs(120), |_| async move {
            fake.fail_patches(usize::MAX);
            ::std::future::pending().await
        })
        .await;

        let err = format!("{:#}", result.unwrap_err());
        assert!(
            err.contains("cannot renew the leader-election lease"),
            "{err}"
        );
        assert!(err.contains("etcd request timed out"), "{err}");
        assert!(shutdown.is_cancelled());
        // It tried more than once, and stopped before the lease could expire.
        assert!(
            *lease.failing_patches.lock().unwrap() <= usize::MAX - 2,
            "one attempt only"
        );
        let held = started.elapsed();
        assert!(
            held < Duration::from_secs(LEASE_DURATION),
            "led {held:?} without a renewal"
        );
    }
}
