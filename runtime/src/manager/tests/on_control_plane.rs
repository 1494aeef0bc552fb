//! The manager's leader handover and reconcile timeout on a real control plane (etcd and
//! kube-apiserver from `KUBEBUILDER_ASSETS`): ignored by a plain `cargo test`, run with
//! `cargo test -p opgen-runtime --all-features on_control_plane -- --ignored --nocapture`.
//! They print what they measure (see docs/performance.md).

use ::std::collections::BTreeMap;
use ::std::sync::Arc;
use ::std::time::{Duration, Instant};

use ::k8s_openapi::api::core::v1::ConfigMap;
use ::k8s_openapi::api::events::v1::Event;
use ::kube::api::{ListParams, Patch, PatchParams, PostParams};
use ::kube::config::{KubeConfigOptions, Kubeconfig};
use ::kube::runtime::controller::Action;
use ::kube::{Api, Client};
use ::tokio::sync::mpsc;
use ::tokio_util::sync::CancellationToken;

use super::super::leader::{LeaderElectionConfig, LeaderElector, LeaseClient};
use super::super::run_elected;
use crate::client::Context;
use crate::client::context::DEFAULT_CONCURRENCY;
use crate::controller::{RESYNC_PERIOD, Reconcile};
use crate::envtest::{ControlPlane, NAMESPACE, Options as EnvOptions};
use crate::error::Error;
use crate::identity::set_field_manager;

/// Objects the new leader finds in its initial list, besides the one changed.
const BACKLOG: usize = 400;
/// What one reconcile costs besides its API call: a few more calls, on a real operator.
const WORK: Duration = Duration::from_millis(20);
/// Handovers measured of each kind.
const ROUNDS: usize = 3;
/// The object changed after the old leader's exit. Listed last (names sort `cm-…` first).
const CHANGED: &str = "changed";

/// A reconcile seen: its replica, the object, its `step` and when it began.
#[derive(Debug)]
struct Seen {
    replica: &'static str,
    name: String,
    step: String,
    at: Instant,
}

/// Reconciles config maps: a GET of each and some work; `slow: "yes"` ones never finish.
struct Recorder {
    replica: &'static str,
    seen: mpsc::UnboundedSender<Seen>,
}

impl Reconcile for Recorder {
    type Object = ConfigMap;
    const FINALIZER: bool = false;

    async fn apply(&self, config_map: &ConfigMap, ctx: &Context) -> Result<Action, Error> {
        let data = config_map.data.clone().unwrap_or_default();
        let name = config_map.metadata.name.clone().unwrap_or_default();
        let _ = self.seen.send(Seen {
            replica: self.replica,
            name: name.clone(),
            step: data.get("step").cloned().unwrap_or_default(),
            at: Instant::now(),
        });
        let api: Api<ConfigMap> = ctx.namespaced(NAMESPACE);
        api.get(&name).await?;
        if data.get("slow").is_some_and(|slow| slow == "yes") {
            ::std::future::pending::<()>().await;
        }
        ::tokio::time::sleep(WORK).await;
        Ok(Action::requeue(RESYNC_PERIOD))
    }
}

async fn kube_config(control_plane: &ControlPlane) -> ::kube::Config {
    let kubeconfig = Kubeconfig::read_from(control_plane.dir().join("kubeconfig"))
        .expect("the control plane's kubeconfig");
    ::kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("a client configuration")
}

/// A replica of a manager: its controllers, its shutdown, and when it led.
struct Replica {
    running: ::tokio::task::JoinHandle<::anyhow::Result<()>>,
    shutdown: CancellationToken,
    led: Arc<::std::sync::Mutex<Option<Instant>>>,
}

async fn replica(
    control_plane: &ControlPlane,
    lease: &str,
    identity: &'static str,
    warm: bool,
    seen: &mpsc::UnboundedSender<Seen>,
) -> Replica {
    let config = kube_config(control_plane).await;
    let client = Client::try_from(config.clone()).expect("a client");
    let ctx = Context::new(client, Some(NAMESPACE.to_owned()));
    let election =
        LeaderElectionConfig::new(lease, Some(NAMESPACE.to_owned()), Some(identity.to_owned()))
            .expect("an election");
    let elector = LeaderElector::new(LeaseClient::new(&config).expect("a lease client"), election)
        .await
        .expect("an elector");
    let shutdown = ctx.shutdown.clone();
    let led = Arc::new(::std::sync::Mutex::new(None));
    let reconciler = Recorder {
        replica: identity,
        seen: seen.clone(),
    };
    let leading = Arc::clone(&led);
    let running = ::tokio::spawn(run_elected(elector, ctx, warm, move |ctx| {
        // Called at the election, or at once on a warm standby, which is elected later.
        let elected = ctx.clone();
        ::tokio::spawn(async move {
            elected.elected().await;
            *leading.lock().unwrap() = Some(Instant::now());
        });
        crate::controller::run(ctx, reconciler)
    }));
    Replica {
        running,
        shutdown,
        led,
    }
}

async fn start_control_plane() -> Option<ControlPlane> {
    let options = EnvOptions::from_env_or_skip()?;
    set_field_manager("opgen-runtime").expect("one manager name");
    Some(
        ControlPlane::start(&options)
            .await
            .expect("a control plane starts"),
    )
}

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some(name.to_owned());
    config_map.data = Some(
        data.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    );
    config_map
}

/// Waits (at most `within`) for a reconcile that `wanted` picks.
async fn wait_seen(
    seen: &mut mpsc::UnboundedReceiver<Seen>,
    within: Duration,
    mut wanted: impl FnMut(&Seen) -> bool,
    before: &mut usize,
) -> Seen {
    ::tokio::time::timeout(within, async {
        loop {
            let next = seen.recv().await.expect("the recorders live");
            if wanted(&next) {
                return next;
            }
            *before += 1;
        }
    })
    .await
    .expect("the reconcile comes in time")
}

/// One handover: `a` leads and has reconciled everything, `b` waits (warm or not) for a few
/// seconds, `a` exits and releases the lease, then a user changes an object: how long until
/// `b` reconciles that change.
async fn handover(control_plane: &ControlPlane, warm: bool, round: usize) -> (String, usize) {
    let mode = if warm { "warm" } else { "cold" };
    let step = format!("{mode}-{round}");
    let lease = format!("handover-{step}");
    let (sender, mut seen) = mpsc::unbounded_channel();
    let (a_name, b_name) = if warm {
        ("warm-a", "warm-b")
    } else {
        ("cold-a", "cold-b")
    };
    let a = replica(control_plane, &lease, a_name, warm, &sender).await;
    let mut ignored = 0;
    // `a` leads and reconciles every object (the changed one too).
    let mut reconciled = 0;
    wait_seen(
        &mut seen,
        Duration::from_secs(120),
        |s| {
            reconciled += usize::from(s.replica == a_name);
            reconciled > BACKLOG
        },
        &mut ignored,
    )
    .await;
    let b = replica(control_plane, &lease, b_name, warm, &sender).await;
    // Long enough for a warm standby's watch to list everything.
    ::tokio::time::sleep(Duration::from_secs(5)).await;

    a.shutdown.cancel();
    a.running.await.expect("a joins").expect("a stops cleanly");
    let exited = Instant::now();
    let api: Api<ConfigMap> = Api::namespaced(control_plane.client(), NAMESPACE);
    let patch = ::serde_json::json!({ "data": { "step": step } });
    api.patch(CHANGED, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the change is made");

    // `b`'s reconciles that began before the change's; `a`'s until it exited (its resync's)
    // are not counted.
    let mut before = 0;
    let first = wait_seen(
        &mut seen,
        Duration::from_secs(60),
        |s| {
            let change = s.replica == b_name && s.name == CHANGED && s.step == step;
            before += usize::from(s.replica == b_name && !change);
            change
        },
        &mut ignored,
    )
    .await;
    let led = ::tokio::time::timeout(Duration::from_secs(1), async {
        loop {
            if let Some(led) = *b.led.lock().unwrap() {
                return led;
            }
            ::tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("b leads");
    b.shutdown.cancel();
    b.running.await.expect("b joins").expect("b stops cleanly");
    let report = format!(
        "{mode}: exit -> elected {:.2?}, elected -> change reconciled {:.0?}, exit -> change \
         reconciled {:.2?}, reconciles begun before it {before}",
        led - exited,
        first.at.saturating_duration_since(led),
        first.at - exited,
    );
    (report, before)
}

#[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a control plane: KUBEBUILDER_ASSETS, and --ignored"]
async fn on_control_plane_a_warm_standby_reconciles_a_change_sooner_after_a_handover() {
    let Some(control_plane) = start_control_plane().await else {
        return;
    };
    let api: Api<ConfigMap> = Api::namespaced(control_plane.client(), NAMESPACE);
    for index in 0..BACKLOG {
        let name = format!("cm-{index:03}");
        api.create(&PostParams::default(), &config_map(&name, &[("step", "0")]))
            .await
            .expect("a backlog object");
    }
    api.create(
        &PostParams::default(),
        &config_map(CHANGED, &[("step", "0")]),
    )
    .await
    .expect("the object to change");

    let mut reports = Vec::new();
    for round in 0..ROUNDS {
        reports.push(handover(&control_plane, false, round).await.0);
        let (warm, before) = handover(&control_plane, true, round).await;
        reports.push(warm);
        // Elected, the warm standby hands its first turns to the change: it begins with, not
        // after, the first reconciles.
        assert!(before < DEFAULT_CONCURRENCY.into(), "{reports:#?}");
    }
    println!(
        "handover with {BACKLOG} objects, {WORK:?} of work per reconcile:\n  {}",
        reports.join("\n  ")
    );
}

#[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a control plane: KUBEBUILDER_ASSETS, and --ignored"]
async fn on_control_plane_a_reconcile_past_its_timeout_is_cancelled_and_retried() {
    let Some(control_plane) = start_control_plane().await else {
        return;
    };
    let config = kube_config(&control_plane).await;
    let client = Client::try_from(config).expect("a client");
    let mut ctx = Context::new(client.clone(), Some(NAMESPACE.to_owned()));
    let limit = Duration::from_secs(2);
    ctx.reconcile_timeout = Some(limit);
    let metrics = ctx.metrics.clone();
    let shutdown = ctx.shutdown.clone();
    let (sender, mut seen) = mpsc::unbounded_channel();
    let reconciler = Recorder {
        replica: "timeouts",
        seen: sender,
    };
    let running = ::tokio::spawn(crate::controller::run(ctx, reconciler));

    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    api.create(
        &PostParams::default(),
        &config_map("slow", &[("slow", "yes"), ("step", "1")]),
    )
    .await
    .expect("a slow object");
    let mut ignored = 0;
    let is_slow = |s: &Seen| s.name == "slow";
    let first = wait_seen(&mut seen, Duration::from_secs(30), is_slow, &mut ignored).await;
    let second = wait_seen(&mut seen, Duration::from_secs(30), is_slow, &mut ignored).await;
    let timeouts = metrics.encode().expect("metrics encode");
    assert!(
        timeouts.contains(r#"_reconcile_timeouts_total{controller="configmap.core"} 1"#)
            || timeouts.contains(r#"_reconcile_timeouts_total{controller="configmap.core"} 2"#),
        "{timeouts}"
    );

    // The Warning event on the object.
    let events: Api<Event> = Api::namespaced(client, NAMESPACE);
    let timeout_events = async || {
        events
            .list(&ListParams::default())
            .await
            .expect("events list")
            .items
            .into_iter()
            .filter(|event| {
                event.reason.as_deref() == Some("ReconcileTimeout")
                    && event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("slow")
            })
            .collect::<Vec<_>>()
    };
    let found = timeout_events()
        .await
        .into_iter()
        .next()
        .expect("a ReconcileTimeout event about the object");
    assert_eq!(found.type_.as_deref(), Some("Warning"));

    // Fixed by its user: the change is reconciled at once, not after the backoff.
    let patch = ::serde_json::json!({ "data": { "slow": "no", "step": "2" } });
    api.patch("slow", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the fix");
    let fixed_at = Instant::now();
    let fixed = wait_seen(
        &mut seen,
        Duration::from_secs(30),
        |s| s.name == "slow" && s.step == "2",
        &mut ignored,
    )
    .await;
    shutdown.cancel();
    running.await.expect("joins").expect("stops cleanly");

    // The second attempt's timeout, before the fix was reconciled, is the same event: the API
    // server took it as a count on the first Event object.
    let repeated = timeout_events().await;
    let counts: Vec<_> = repeated
        .iter()
        .map(|event| event.series.as_ref().map(|series| series.count))
        .collect();
    assert_eq!(
        counts,
        [Some(2)],
        "one Event object, counted twice: {repeated:#?}"
    );
    println!(
        "timeout {limit:?}: first attempt -> retry {:?} (timeout + first backoff of 5s), fix -> reconciled {:?}, event note: {:?}",
        second.at - first.at,
        fixed.at - fixed_at,
        found.note,
    );
    assert!(second.at - first.at >= limit + Duration::from_secs(5));
}
