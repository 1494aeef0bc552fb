//! The operand's workload cache on a real control plane (etcd and kube-apiserver from
//! `KUBEBUILDER_ASSETS`): someone else's edit of a workload is repaired, and a manager that
//! starts over workloads and Services that are up to date reads each workload once and writes
//! nothing (no Service either: its reconciles wait until the Services' watch has listed). Ignored by a
//! plain `cargo test`; run with
//! `cargo test -p opgen-runtime --all-features on_control_plane -- --ignored --nocapture`.

use ::std::sync::{Arc, Mutex};
use ::std::time::{Duration, Instant};

use ::http::{Method, Request};
use ::k8s_openapi::api::apps::v1::Deployment;
use ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use ::kube::api::{Patch, PatchParams, PostParams};
use ::kube::client::{Body, ClientBuilder};
use ::kube::config::{KubeConfigOptions, Kubeconfig};
use ::kube::{Api, CustomResourceExt as _};
use ::serde_json::json;
use ::tower::util::MapRequestLayer;

use crate::client::Context;
use crate::conditions::Conditions;
use crate::envtest::{ControlPlane, NAMESPACE, Options};
use crate::identity::set_field_manager;
use crate::object::{AppLabels, owned_by};
use crate::operand::{Operand, RestrictedPods, Workload as _, serving};
use crate::test_kinds::{Widget, WidgetStatus};

const WIDGETS: usize = 3;
const WITHIN: Duration = Duration::from_secs(30);

/// The requests a manager sent: method and path.
type Sent = Arc<Mutex<Vec<(Method, String)>>>;

fn desired_workload(widget: &Widget) -> Deployment {
    let labels = AppLabels::new("widget", "server", widget);
    let container = ::k8s_openapi::api::core::v1::Container {
        name: "widget".to_owned(),
        image: Some("example.com/widget:1".to_owned()),
        ..Default::default()
    };
    let spec = ::k8s_openapi::api::apps::v1::DeploymentSpec {
        replicas: Some(widget.spec.size),
        selector: labels.label_selector(),
        template: RestrictedPods::new(labels.all(), container).template(),
        ..Default::default()
    };
    Deployment::with_spec(owned_by(widget, labels.all()), spec)
}

fn desired_service(widget: &Widget) -> ::k8s_openapi::api::core::v1::Service {
    serving::service::<Deployment, _>(
        widget,
        &AppLabels::new("widget", "server", widget),
        "http",
        80,
    )
}

fn desired_status(widget: &Widget, workload: &Deployment, conditions: &Conditions) -> WidgetStatus {
    WidgetStatus {
        conditions: vec![workload.progress().available(conditions, widget.spec.size)],
        observed_generation: widget.metadata.generation,
    }
}

/// The widgets' CRD: no schema of their own (their Rust types have none), any field kept.
fn widget_crd() -> CustomResourceDefinition {
    let mut crd = Widget::crd();
    for version in &mut crd.spec.versions {
        version.schema = Some(
            ::serde_json::from_value(json!({
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }))
            .expect("a schema"),
        );
    }
    crd
}

/// A manager running the widgets' operand, whose client notes every request it sends.
struct Manager {
    ctx: Context,
    sent: Sent,
    running: ::tokio::task::JoinHandle<::anyhow::Result<()>>,
}

impl Manager {
    async fn start(control_plane: &ControlPlane) -> Self {
        let kubeconfig = Kubeconfig::read_from(control_plane.dir().join("kubeconfig"))
            .expect("the control plane's kubeconfig");
        let config =
            ::kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .expect("a client configuration");
        let sent: Sent = Arc::default();
        let noted = Arc::clone(&sent);
        let client = ClientBuilder::try_from(config)
            .expect("a client")
            .with_layer(&MapRequestLayer::new(move |request: Request<Body>| {
                let path = request.uri().path().to_owned();
                noted
                    .lock()
                    .expect("not poisoned")
                    .push((request.method().clone(), path));
                request
            }))
            .build();
        let ctx = Context::new(client, Some(NAMESPACE.to_owned()));
        let operand =
            Operand::new("widget", desired_workload, desired_status).with_service(desired_service);
        let running = ::tokio::spawn(operand.controller(ctx.clone()).run());
        Self { ctx, sent, running }
    }

    /// The writes it sent (anything but GET), except to Events.
    fn writes(&self) -> Vec<(Method, String)> {
        self.sent
            .lock()
            .expect("not poisoned")
            .iter()
            .filter(|(method, path)| *method != Method::GET && !path.contains("/events"))
            .cloned()
            .collect()
    }

    /// The single reads of Deployments it sent.
    fn deployment_reads(&self) -> usize {
        self.sent
            .lock()
            .expect("not poisoned")
            .iter()
            .filter(|(method, path)| *method == Method::GET && path.contains("/deployments/"))
            .count()
    }

    async fn stop(self) {
        self.ctx.shutdown.cancel();
        self.running
            .await
            .expect("the controller does not panic")
            .expect("the controller stops cleanly");
    }
}

/// Waits until `check` holds, at most [`WITHIN`].
async fn wait_until(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + WITHIN;
    while !check().await {
        assert!(Instant::now() < deadline, "{what} within {WITHIN:?}");
        ::tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a control plane: KUBEBUILDER_ASSETS, and --ignored"]
async fn on_control_plane_an_edited_workload_is_repaired_and_a_restart_writes_nothing() {
    let Some(options) = Options::from_env_or_skip() else {
        return;
    };
    set_field_manager("opgen-runtime").expect("one manager name");
    let control_plane = ControlPlane::start(&options)
        .await
        .expect("a control plane starts");
    control_plane
        .install_crds(&[widget_crd()], WITHIN)
        .await
        .expect("the CRD is served");
    let widgets: Api<Widget> = Api::namespaced(control_plane.client(), NAMESPACE);
    let deployments: Api<Deployment> = Api::namespaced(control_plane.client(), NAMESPACE);

    let manager = Manager::start(&control_plane).await;
    for index in 0..WIDGETS {
        let mut widget = crate::test_kinds::widget();
        widget.metadata = ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(format!("widget-{index}")),
            namespace: Some(NAMESPACE.to_owned()),
            ..Default::default()
        };
        widget.spec.size = 2;
        widgets
            .create(&PostParams::default(), &widget)
            .await
            .expect("a widget is created");
    }
    wait_until("every widget has its status", async || {
        let listed = widgets.list(&Default::default()).await.expect("a list");
        listed.items.iter().all(|widget| widget.status.is_some())
            && deployments
                .list(&Default::default())
                .await
                .expect("a list")
                .items
                .len()
                == WIDGETS
    })
    .await;

    // Someone scales a Deployment by hand: a new generation, which the manager repairs.
    let edited = deployments
        .patch(
            "widget-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .expect("the Deployment is edited");
    let edited_at = edited.metadata.generation.expect("a generation");
    let started = Instant::now();
    wait_until("the edited Deployment is repaired", async || {
        let stored = deployments.get("widget-0").await.expect("the Deployment");
        stored.replicas() == 2 && stored.metadata.generation > Some(edited_at)
    })
    .await;
    println!(
        "an edited Deployment -> repaired in {} ms",
        started.elapsed().as_millis()
    );

    // Someone relabels one: no new generation, and the copy holds its labels as hashes only;
    // the label's hash no longer matches, so the manager applies it again.
    deployments
        .patch(
            "widget-1",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {"app.kubernetes.io/component": "edited"}}}),
            ),
        )
        .await
        .expect("the Deployment is relabelled");
    wait_until("the relabelled Deployment is repaired", async || {
        let stored = deployments.get("widget-1").await.expect("the Deployment");
        let labels = stored.metadata.labels.unwrap_or_default();
        labels
            .get("app.kubernetes.io/component")
            .map(String::as_str)
            == Some("server")
    })
    .await;
    manager.stop().await;

    // A new manager over workloads that are up to date: one read of each, no write.
    let restarted = Manager::start(&control_plane).await;
    wait_until(
        "the restarted manager has read every Deployment",
        async || restarted.deployment_reads() >= WIDGETS,
    )
    .await;
    // Time for any write its first reconciles would make after their reads.
    ::tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        restarted.writes(),
        [],
        "a restart over up-to-date workloads"
    );
    assert_eq!(restarted.deployment_reads(), WIDGETS, "one read each");
    println!(
        "a restart over {WIDGETS} up-to-date widgets -> {} reads of Deployments, 0 writes",
        restarted.deployment_reads()
    );
    restarted.stop().await;
}
