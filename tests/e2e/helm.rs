//! The Helm chart on a real control plane: `helm install` into a namespace, the manager run
//! with the chart's ServiceAccount token and only the chart's RBAC (no kubelet runs its pod
//! here), a second release beside the first, `helm upgrade` after a kind and a field were
//! added, and `helm uninstall` keeping the CRDs or not as `crds.keep` says (its default when
//! values.yaml lacks it).
//!
//! One project and one build of its manager serve the whole scenario.

use std::{
    path::{Path, PathBuf},
    time::Instant,
};

use serde_json::Value;

use crate::{
    common::{
        Project,
        control_plane::{ControlPlane, DEFAULT_KUBERNETES},
        helm,
        kubectl::Kubectl,
        operator::{Launch, Operator},
        wait::wait_for,
    },
    on_cluster::SETTLE,
    run,
};

const NAME: &str = "helm-op";
const CART_CRD: &str = "carts.shop.example.com";
const ORDER_CRD: &str = "orders.shop.example.com";

struct Cluster<'a> {
    helm: &'a Path,
    plane: &'a ControlPlane,
    project: &'a Project,
}

impl Cluster<'_> {
    /// `helm <args> --kubeconfig <admin>` in the project; it must succeed.
    fn helm(&self, args: &[&str]) -> String {
        let kubeconfig = self
            .plane
            .admin()
            .kubeconfig()
            .to_string_lossy()
            .into_owned();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--kubeconfig", &kubeconfig]);
        let output = helm::run(self.helm, &self.project.root, &all);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "helm {args:?} failed:\n{text}");
        text
    }

    fn kubectl(&self) -> &Kubectl {
        self.plane.admin()
    }

    /// The release's manager, run as its Deployment would run it: with a token of the
    /// ServiceAccount the chart made, leader election in the release's namespace.
    fn manager(&self, binary: &Path, release: &str, namespace: &str) -> Operator {
        let service_account = format!("{release}-{NAME}-controller-manager");
        let token = self.kubectl().ok(&[
            "create",
            "token",
            &service_account,
            "-n",
            namespace,
            "--duration=1h",
        ]);
        let launch = Launch {
            binary: binary.to_owned(),
            kubeconfig: self.plane.kubeconfig_with_token(release, &token),
            log_dir: self.plane.dir().to_owned(),
            identity: format!("{release}-manager"),
            leader_election_namespace: Some(namespace.to_owned()),
            watch_namespace: None,
            webhooks: None,
            metrics_token: None,
            otlp_endpoint: None,
        };
        let mut operator = Operator::start(&launch);
        operator
            .wait_ready()
            .unwrap_or_else(|err| panic!("[{release}] {err:#}"));
        operator
    }

    fn crd_exists(&self, name: &str) -> bool {
        self.kubectl().try_ok(&["get", "crd", name]).is_ok()
    }
}

/// The sample Cart in `namespace`, reconciled: Ready for its generation.
fn wait_reconciled(kubectl: &Kubectl, namespace: &str, name: &str) {
    wait_for(&format!("cart {name} to be Ready"), SETTLE, || {
        let cart = kubectl.try_json(&["get", "cart", name, "-n", namespace])?;
        let ready = cart["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .cloned()
            .unwrap_or(Value::Null);
        if ready["status"] == "True"
            && cart["status"]["observedGeneration"] == cart["metadata"]["generation"]
        {
            Ok(())
        } else {
            Err(format!("{}", cart["status"]))
        }
    });
}

/// The manager binary, copied out of the shared target directory (see on_cluster's).
fn manager_binary(project: &Project, target_dir: &Path) -> PathBuf {
    let copy = project.temp.path().join(format!("{NAME}-manager"));
    std::fs::copy(target_dir.join("debug").join(NAME), &copy).unwrap();
    copy
}

pub fn scenario(target_dir: &Path) {
    let Some(helm) = helm::helm() else { return };
    let started = Instant::now();
    let log = |step: &str| eprintln!("[e2e {NAME}] helm: {step} ({:.0?})", started.elapsed());
    let project = Project::init(NAME, "");
    let root = &project.root;
    project.create_api("--group shop --version v1 --kind Cart");
    run(root, "opgen generate manifests", true);
    run(root, "cargo build --all-targets", true);
    run(root, "opgen generate helm", true);
    // A values.yaml without `crds.keep`, as an older opgen's lacks a newer value: its default
    // must hold, and keep the CRDs on uninstall below.
    let values = project.read("dist/chart/values.yaml");
    assert!(values.contains("  keep: true\n"), "{values}");
    std::fs::write(
        root.join("dist/chart/values.yaml"),
        values.replace("  keep: true\n", ""),
    )
    .unwrap();
    let binary = manager_binary(&project, target_dir);
    log("project built, chart generated (its values.yaml without crds.keep)");

    let plane = ControlPlane::start(DEFAULT_KUBERNETES).unwrap_or_else(|err| panic!("{err:#}"));
    let cluster = Cluster {
        helm,
        plane: &plane,
        project: &project,
    };
    let kubectl = cluster.kubectl();
    cluster.helm(&[
        "install",
        "shop",
        "dist/chart",
        "--namespace",
        "shop-a",
        "--create-namespace",
    ]);
    assert!(cluster.crd_exists(CART_CRD));
    kubectl.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/{CART_CRD}"),
        "--timeout=60s",
    ]);
    let deployment = kubectl.json(&[
        "get",
        "deployment",
        &format!("shop-{NAME}-controller-manager"),
        "-n",
        "shop-a",
    ]);
    assert_eq!(
        deployment["spec"]["template"]["spec"]["serviceAccountName"],
        format!("shop-{NAME}-controller-manager")
    );
    log("helm install: CRDs established, Deployment and RBAC in shop-a");

    // A second release in another namespace; the first owns the cluster-wide CRDs.
    cluster.helm(&[
        "install",
        "other",
        "dist/chart",
        "--namespace",
        "shop-b",
        "--create-namespace",
        "--set",
        "crds.install=false",
    ]);
    let mut first = cluster.manager(&binary, "shop", "shop-a");
    let mut second = cluster.manager(&binary, "other", "shop-b");
    log("two releases' managers ready, each with its own ServiceAccount and Lease");

    kubectl.ok(&["create", "namespace", "apps"]);
    let sample_file = root.join("config/samples/shop_v1_cart.yaml");
    kubectl.ok(&["apply", "-n", "apps", "-f", &sample_file.to_string_lossy()]);
    let sample: Value =
        serde_saphyr::from_str(&project.read("config/samples/shop_v1_cart.yaml")).unwrap();
    let sample_name = sample["metadata"]["name"].as_str().unwrap().to_owned();
    wait_reconciled(kubectl, "apps", &sample_name);
    for manager in [&mut first, &mut second] {
        manager
            .check_running()
            .unwrap_or_else(|err| panic!("{err:#}"));
        let denied = manager.forbidden();
        assert!(
            denied.is_empty(),
            "{} was refused requests: the chart's RBAC lacks a rule:\n{}",
            manager.name(),
            denied.join("\n")
        );
    }
    for (namespace, release) in [("shop-a", "shop"), ("shop-b", "other")] {
        let lease = kubectl.json(&["get", "lease", &format!("{NAME}-leader"), "-n", namespace]);
        assert_eq!(
            lease["spec"]["holderIdentity"],
            format!("{release}-manager")
        );
    }
    log("the sample reconciled under the chart's RBAC, no request refused, both releases lead");
    first.stop().unwrap();
    second.stop().unwrap();

    // A new kind and a new field reach the cluster with `helm upgrade`.
    project.create_api("--group shop --version v1 --kind Order");
    let types = "api/src/shop/v1/cart.rs";
    let edited = project.read(types).replace(
        "    pub size: i32,\n",
        "    pub size: i32,\n    /// Coupon is a code that lowers the price.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub coupon: Option<String>,\n",
    );
    std::fs::write(root.join(types), edited).unwrap();
    run(root, "opgen generate manifests", true);
    run(root, "opgen generate helm", true);
    assert!(!cluster.crd_exists(ORDER_CRD));
    cluster.helm(&[
        "upgrade",
        "shop",
        "dist/chart",
        "--namespace",
        "shop-a",
        "--reuse-values",
    ]);
    assert!(
        cluster.crd_exists(ORDER_CRD),
        "helm upgrade did not install the new CRD"
    );
    let cart = kubectl.json(&["get", "crd", CART_CRD]);
    assert!(
        cart["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["coupon"].is_object(),
        "helm upgrade did not update the CRD: {}",
        cart["spec"]["versions"][0]["schema"]
    );
    log("helm upgrade: the new CRD installed, the new field in the old one");

    // crds.keep, missing from values.yaml, takes its default: uninstall leaves the CRDs, and
    // the custom resources.
    cluster.helm(&["uninstall", "other", "--namespace", "shop-b"]);
    cluster.helm(&["uninstall", "shop", "--namespace", "shop-a"]);
    assert!(cluster.crd_exists(CART_CRD) && cluster.crd_exists(ORDER_CRD));
    kubectl.ok(&["get", "cart", &sample_name, "-n", "apps"]);
    assert!(
        kubectl
            .try_ok(&[
                "get",
                "serviceaccount",
                &format!("shop-{NAME}-controller-manager"),
                "-n",
                "shop-a"
            ])
            .is_err(),
        "uninstall left the ServiceAccount"
    );
    // The same release again takes the kept CRDs back; with crds.keep=false its uninstall
    // deletes them. The sample's finalizer is the operator's, and no operator runs now.
    kubectl.ok(&[
        "patch",
        "cart",
        &sample_name,
        "-n",
        "apps",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    cluster.helm(&[
        "install",
        "shop",
        "dist/chart",
        "--namespace",
        "shop-a",
        "--set",
        "crds.keep=false",
    ]);
    cluster.helm(&["uninstall", "shop", "--namespace", "shop-a", "--wait"]);
    wait_for("the CRDs to be deleted", SETTLE, || {
        match (cluster.crd_exists(CART_CRD), cluster.crd_exists(ORDER_CRD)) {
            (false, false) => Ok(()),
            left => Err(format!("{left:?}")),
        }
    });
    log("helm uninstall: CRDs kept with crds.keep, deleted without");
}
