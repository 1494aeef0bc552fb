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
    LeaderElectionConfig::new("operator-leader", some("operator-system"), some(identity)).unwrap()
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

#[::tokio::test]
async fn a_warm_standby_runs_its_controllers_before_it_leads() {
    // pod-1 leads, on a lease that expires within a second: it will not renew it. (Real time:
    // the elector reads the lease's expiry against the clock of the system.)
    let lease = FakeLease::held_by("pod-1");
    lease.stored.lock().unwrap().as_mut().unwrap()["spec"]["leaseDurationSeconds"] = json!(1);
    let elector = LeaderElector::new(lease.client(), config("pod-0"))
        .await
        .unwrap();
    let shutdown = CancellationToken::new();
    let promoted = Arc::new(Mutex::new(None));
    let (started, controllers_started) = ::tokio::sync::oneshot::channel();
    let stop = shutdown.clone();
    let controllers = async move {
        let _ = started.send(());
        stop.cancelled().await;
        Ok(())
    };
    let fake = lease.clone();
    let leading = Arc::clone(&promoted);
    let promote = move || *leading.lock().unwrap() = fake.holder();
    let running = ::tokio::spawn(elector.run_warm(shutdown.clone(), controllers, promote));

    controllers_started
        .await
        .expect("the controllers start at once");
    assert_eq!(lease.holder().as_deref(), Some("pod-1"), "still a standby");
    assert_eq!(*promoted.lock().unwrap(), None);
    timeout(Duration::from_secs(20), async {
        while promoted.lock().unwrap().is_none() {
            ::tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the standby is promoted");
    assert_eq!(promoted.lock().unwrap().as_deref(), Some("pod-0"));

    shutdown.cancel();
    running.await.unwrap().unwrap();
    assert_eq!(lease.holder(), None, "the lease is released on the way out");
}

#[::tokio::test]
async fn a_warm_standby_whose_controllers_fail_stops_without_leading() {
    let lease = FakeLease::held_by("pod-1");
    let elector = LeaderElector::new(lease.client(), config("pod-0"))
        .await
        .unwrap();
    let failing = async { Err(anyhow!("CRD widgets.example.com is not installed")) };
    let result = timeout(
        Duration::from_secs(30),
        elector.run_warm(CancellationToken::new(), failing, || {
            panic!("a failed standby must not lead")
        }),
    )
    .await
    .expect("the standby stops at once");
    assert!(result.unwrap_err().to_string().contains("not installed"));
    assert_eq!(lease.holder().as_deref(), Some("pod-1"));
}
