//! The operator as users deploy it: its image built by buildah from the project's Dockerfile,
//! `make deploy`ed onto a one-node cluster (`scripts/cluster.sh`: containerd, a kubelet and
//! kube-proxy beside the control plane), its manager and operands running as pods.
//!
//! The project has a plain two-version kind with defaulting, validating and conversion
//! webhooks (self-managed certificates), a Deployment operand with a port and a StatefulSet
//! operand. First its own end-to-end test runs (`make test-e2e`: deploy, `/metrics` through the
//! metrics Service, every sample `Ready`, undeploy), then this scenario deploys it again and
//! proves what only running pods show: the manager runs as 65532 on a read-only root and talks
//! to the API server through the `kubernetes` Service; operands become `Available` from their
//! workloads' real status, roll over to a new image and get a PodDisruptionBudget over three
//! running pods; the webhooks answer through their Service, again after the manager's pod is
//! replaced; a standby takes the Lease when the leader's pod is deleted; a new operator image
//! rolls out without a failed reconcile or a second workload; `make undeploy` leaves nothing.
//!
//! It needs root and Linux (the node); elsewhere it says why and returns.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    common::{self, Project, generated_build_env, kubectl::Kubectl, wait::wait_for},
    node_images, run, webhooks,
};

const NAME: &str = "node-op";
const NAMESPACE: &str = "node-op-system";
const MANAGER: &str = "node-op-controller-manager";
const LEASE: &str = "node-op-leader";
const MANAGER_SELECTOR: &str = "control-plane=controller-manager";
/// The manager's image before and after the upgrade, and the operand's.
const MANAGER_V1: &str = "node-op-controller:e2e-v1";
const MANAGER_V2: &str = "node-op-controller:e2e-v2";
const OPERAND_V1: &str = "operand:v1";
const OPERAND_V2: &str = "operand:v2";
const CURL: &str = "opgen-e2e-curl:local";
/// Where the scenario's own objects go.
const APPS: &str = "e2e-apps";
/// Long enough for a pod to start, its probes to pass and a rollout to finish on two busy
/// cores.
const POD_TIMEOUT: Duration = Duration::from_secs(180);

/// `scripts/cluster.sh <args>`; panics unless it succeeds, and returns its stdout.
fn cluster(args: &[&str]) -> String {
    let output = common::cluster::cluster(args);
    assert!(
        output.status.success(),
        "scripts/cluster.sh {args:?} failed"
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn log(step: &str, since: Instant) {
    eprintln!("[e2e {NAME}] node: {step} ({:.0?})", since.elapsed());
}

pub fn scenario() {
    if let Some(why) = common::cluster::cannot_run_here() {
        eprintln!("[e2e {NAME}] SKIPPED, not run: {why}");
        return;
    }
    let started = Instant::now();
    let project = Project::init(NAME, "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    project.create_api("--group db --version v1 --kind MySQLCluster");
    webhooks::add(&project);
    project.create_api(&format!(
        "--group web --version v1 --kind Frontend --image {OPERAND_V1} --port {}",
        node_images::OPERAND_PORT
    ));
    project.create_api(&format!(
        "--group data --version v1 --kind Store --image {OPERAND_V1} --workload statefulset --port {}",
        node_images::OPERAND_PORT
    ));
    let root = &project.root;
    // Every other scenario builds, tests and lints its project, the generated e2e test
    // included; this one runs it.
    run(root, "opgen generate manifests", true);
    log("project generated", started);

    // First the node: `up` also installs what the images are built with (buildah, busybox).
    let kubeconfig = PathBuf::from(cluster(&["up"]));
    let _down = Down;
    let kubectl = Kubectl::new(&kubeconfig);
    log("cluster up", started);

    let binary = release_build(root);
    log("manager built (release, static)", started);
    let scratch = project.temp.path().join("images");
    node_images::static_base(&scratch);
    let dockerfile = project.read("Dockerfile");
    for tag in [MANAGER_V1, MANAGER_V2] {
        node_images::manager(&scratch, &dockerfile, NAME, &binary, tag);
    }
    node_images::operand(&scratch, "v1", OPERAND_V1);
    node_images::operand(&scratch, "v2", OPERAND_V2);
    node_images::curl(&scratch, CURL);
    // MANAGER_V1 is loaded by the project's e2e test, through E2E_LOAD_IMAGE.
    for image in [MANAGER_V2, OPERAND_V1, OPERAND_V2, CURL] {
        cluster(&["load", image]);
    }
    // The StatefulSet's claims, one in each deployment below: the node has no provisioner, so
    // volumes wait for them.
    for round in ["samples", "scenario"] {
        kubectl
            .apply(&volume(project.temp.path(), round), &[])
            .unwrap_or_else(|err| panic!("{err}"));
    }
    log("images built and loaded", started);

    // The project's own end-to-end test, as a user runs it; it loads MANAGER_V1 itself.
    let e2e = project_e2e(&project, &kubeconfig);
    log("the project's `make test-e2e` passed", started);
    assert!(e2e.contains("test result: ok. "), "{e2e}");

    make_on_node(
        &project,
        &format!("deploy IMG={MANAGER_V1}"),
        &kubeconfig,
        &[],
    );
    let manager = wait_for_managers(&kubectl, 1).remove(0);
    check_manager_pod(&kubectl, &manager);
    log(
        "manager runs as 65532, read-only root, probes pass",
        started,
    );

    kubectl.ok(&["create", "namespace", APPS]);
    operands(&kubectl);
    log("operands ready, rolled over and scaled", started);

    webhooks_answer(&kubectl, "before");
    let replaced = Instant::now();
    kubectl.ok(&["delete", "pod", "-n", NAMESPACE, &manager, "--wait=false"]);
    let manager = wait_for_new_manager(&kubectl, &manager);
    webhooks_answer(&kubectl, "after");
    log(
        &format!(
            "webhooks answered by {manager} {:.1?} after its predecessor was deleted",
            replaced.elapsed()
        ),
        started,
    );

    handover(&kubectl);
    log("the Lease handed over", started);

    upgrade(&kubectl, &project, &kubeconfig);
    log("upgraded to a new image", started);

    // The objects go first, while the manager runs to remove their finalizers: `make undeploy`
    // deletes the manager and the CRDs at once, and a CRD whose objects keep a finalizer that
    // nobody removes any more is never deleted (as with Kubebuilder's `undeploy`).
    kubectl.ok(&["delete", "namespace", APPS, "--wait=true", "--timeout=120s"]);
    make_on_node(&project, "undeploy", &kubeconfig, &[]);
    nothing_left(&kubectl);
    // Every build of the scenario went to the shared target directory.
    assert!(
        !root.join("target").exists(),
        "something built into {}/target instead of the shared target directory",
        root.display()
    );
    log("undeployed, nothing left", started);
}

/// Takes the node down when the scenario ends, failed or not, and removes the images it built.
struct Down;

impl Drop for Down {
    fn drop(&mut self) {
        let _ = common::cluster::cluster(&["down"]);
        node_images::remove(&[MANAGER_V1, MANAGER_V2, OPERAND_V1, OPERAND_V2, CURL]);
    }
}

/// The manager as the Dockerfile's builder stage builds it, `cargo build --release --locked`,
/// statically linked (`+crt-static` on the GNU target, for the target only: build scripts
/// and proc-macros stay as the host builds them). Without the project's LTO and single
/// codegen unit, and without optimizations: they make it smaller and faster, which nothing
/// here measures, and the build of every dependency for it several minutes longer on a machine
/// without them cached.
fn release_build(root: &Path) -> PathBuf {
    let target = "x86_64-unknown-linux-gnu";
    let status = Command::new("cargo")
        .args([
            "build",
            "--release",
            "--locked",
            "--bin",
            NAME,
            "--target",
            target,
        ])
        .current_dir(root)
        .envs(generated_build_env())
        .env(
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS",
            "-C target-feature=+crt-static",
        )
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the release build of the manager failed");
    crate::common::shared_target_dir()
        .join(target)
        .join("release")
        .join(NAME)
}

/// A volume a StatefulSet's claim (1 GiB, no storage class) binds to.
fn volume(dir: &Path, round: &str) -> String {
    let path = dir.join(format!("volume-{round}"));
    std::fs::create_dir_all(&path).unwrap();
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": format!("{NAME}-{round}")},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "persistentVolumeReclaimPolicy": "Retain",
            "hostPath": {"path": path, "type": "Directory"},
        },
    })
    .to_string()
}

/// `make <args>` on the node's cluster, with `env` besides. What it builds (`make deploy`
/// runs `make manifests`, which runs the crdgen binary) goes into the shared target
/// directory, like every build here: its own would build the dependencies again.
fn make_on_node(
    project: &Project,
    args: &str,
    kubeconfig: &Path,
    env: &[(&str, &std::ffi::OsStr)],
) -> String {
    let build_env = generated_build_env();
    let all: Vec<(&str, &std::ffi::OsStr)> = build_env
        .iter()
        .map(|(name, value)| (*name, value.as_os_str()))
        .chain([("KUBECONFIG", kubeconfig.as_os_str())])
        .chain(env.iter().copied())
        .collect();
    project.make_with(args, &all)
}

/// `make test-e2e` with the images this scenario built: the build is skipped (the harness
/// built MANAGER_V1), the load step is the node's, curl is the local stand-in.
fn project_e2e(project: &Project, kubeconfig: &Path) -> String {
    let load = format!("{} load", common::cluster::script().display());
    make_on_node(
        project,
        "test-e2e",
        kubeconfig,
        &[
            ("E2E_IMG", MANAGER_V1.as_ref()),
            ("E2E_SKIP_BUILD", "true".as_ref()),
            ("E2E_LOAD_IMAGE", load.as_ref()),
            ("E2E_CURL_IMAGE", CURL.as_ref()),
            ("E2E_TIMEOUT", "240".as_ref()),
        ],
    )
}

/// The manager's pods, as a List.
fn manager_pods(kubectl: &Kubectl) -> Result<Value, String> {
    kubectl.try_json(&[
        "get",
        "pods",
        "-n",
        NAMESPACE,
        "-l",
        MANAGER_SELECTOR,
        "-o",
        "json",
    ])
}

/// The manager pods, once `count` of them run and are Ready, by name.
fn wait_for_managers(kubectl: &Kubectl, count: usize) -> Vec<String> {
    wait_for(
        &format!("{count} manager pod(s) to be Ready"),
        POD_TIMEOUT,
        || {
            let pods = manager_pods(kubectl)?;
            let ready: Vec<String> = pods["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|pod| pod["metadata"]["deletionTimestamp"].is_null() && is_ready(pod))
                .map(|pod| pod["metadata"]["name"].as_str().unwrap().to_owned())
                .collect();
            if ready.len() == count {
                Ok(ready)
            } else {
                Err(describe_pods(&pods))
            }
        },
    )
}

/// The Ready manager pod that replaced `old`.
fn wait_for_new_manager(kubectl: &Kubectl, old: &str) -> String {
    wait_for("a new manager pod to be Ready", POD_TIMEOUT, || {
        let pods = manager_pods(kubectl)?;
        pods["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|pod| pod["metadata"]["name"] != old && is_ready(pod))
            .map(|pod| pod["metadata"]["name"].as_str().unwrap().to_owned())
            .ok_or_else(|| describe_pods(&pods))
    })
}

fn is_ready(pod: &Value) -> bool {
    has_condition(&pod["status"], "Ready", "True")
}

fn has_condition(status: &Value, kind: &str, value: &str) -> bool {
    status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == value)
}

fn describe_pods(pods: &Value) -> String {
    pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pod| {
            format!(
                "{}: {} {}",
                pod["metadata"]["name"], pod["status"]["phase"], pod["status"]["containerStatuses"]
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The manager's process, seen from the node: user 65532, a read-only root, Ready (its
/// probes pass) without a restart, and connected to the API server at the `kubernetes`
/// Service's address (10.96.0.1:443, which kube-proxy forwards to the API server).
fn check_manager_pod(kubectl: &Kubectl, pod: &str) {
    let object = kubectl.json(&["get", "pod", "-n", NAMESPACE, pod, "-o", "json"]);
    let status = &object["status"]["containerStatuses"][0];
    assert_eq!(status["ready"], true, "{status}");
    assert_eq!(status["restartCount"], 0, "{status}");
    let pid = manager_process();
    let proc = Path::new("/proc").join(pid.to_string());
    let process_status = std::fs::read_to_string(proc.join("status")).unwrap();
    let uid_line = process_status
        .lines()
        .find(|line| line.starts_with("Uid:"))
        .unwrap();
    assert!(
        uid_line
            .split_whitespace()
            .skip(1)
            .all(|uid| uid == "65532"),
        "the manager runs as {uid_line}"
    );
    let mounts = std::fs::read_to_string(proc.join("mountinfo")).unwrap();
    let root_mount = mounts
        .lines()
        .find(|line| line.split_whitespace().nth(4) == Some("/"))
        .expect("the manager's root mount");
    let options = root_mount.split_whitespace().nth(5).unwrap();
    assert!(
        options.split(',').any(|option| option == "ro"),
        "the manager's root is not read-only: {root_mount}"
    );
    // /proc/<pid>/net/tcp lists the connections of the pod's network namespace: the remote
    // address 10.96.0.1:443 is written little-endian, as 0100600A:01BB, state 01 established.
    wait_for(
        "the manager to hold a connection to the kubernetes Service",
        Duration::from_secs(30),
        || {
            let tcp = std::fs::read_to_string(proc.join("net/tcp")).unwrap();
            tcp.lines()
                .skip(1)
                .any(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    fields[2] == "0100600A:01BB" && fields[3] == "01"
                })
                .then_some(())
                .ok_or(tcp)
        },
    );
}

/// The pid of the one manager process on the node (`/manager`, the image's entrypoint).
fn manager_process() -> u32 {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.split(|b| *b == 0).next() == Some(b"/manager") {
            found.push(pid);
        }
    }
    assert_eq!(found.len(), 1, "manager processes on the node: {found:?}");
    found[0]
}

/// The operands on real pods: `Available=True` from the workloads' status; an image change rolls
/// the Deployment over and the page the Service serves follows; three replicas get a
/// PodDisruptionBudget over three running pods.
fn operands(kubectl: &Kubectl) {
    for (kind, name) in [
        ("frontends.web.example.com", "web"),
        ("stores.data.example.com", "store"),
    ] {
        let object = json!({
            "apiVersion": if name == "web" { "web.example.com/v1" } else { "data.example.com/v1" },
            "kind": if name == "web" { "Frontend" } else { "Store" },
            "metadata": {"name": name, "namespace": APPS},
            "spec": {"replicas": 1, "image": OPERAND_V1, "port": node_images::OPERAND_PORT},
        });
        kubectl
            .apply(&object.to_string(), &[])
            .unwrap_or_else(|err| panic!("{err}"));
        wait_condition(kubectl, kind, name, "Available");
    }
    assert_eq!(served_page(kubectl, "web"), "operand v1\n");

    let rolled = Instant::now();
    set_spec(
        kubectl,
        "frontends.web.example.com",
        "web",
        json!({"image": OPERAND_V2}),
    );
    wait_for("the Frontend's pods to run operand v2", POD_TIMEOUT, || {
        let page = served_page_of_all(kubectl, "web")?;
        let deployment =
            kubectl.try_json(&["get", "deployment", "-n", APPS, "web", "-o", "json"])?;
        let status = &deployment["status"];
        let done = status["updatedReplicas"] == 1
            && status["replicas"] == 1
            && status["availableReplicas"] == 1
            && page == ["operand v2\n"];
        done.then_some(()).ok_or(format!("{status} {page:?}"))
    });
    wait_condition(kubectl, "frontends.web.example.com", "web", "Available");
    eprintln!(
        "[e2e {NAME}] node: Frontend rolled over to {OPERAND_V2} in {:.1?}",
        rolled.elapsed()
    );

    scale_frontend(kubectl, 3);
    wait_for(
        "a PodDisruptionBudget over three running pods",
        POD_TIMEOUT,
        || {
            let budget = kubectl.try_json(&["get", "pdb", "-n", APPS, "web", "-o", "json"])?;
            let status = &budget["status"];
            let owner = &budget["metadata"]["ownerReferences"][0];
            (status["expectedPods"] == 3
                && status["currentHealthy"] == 3
                && owner["kind"] == "Frontend")
                .then_some(())
                .ok_or(budget.to_string())
        },
    );
    // Pods of the old ReplicaSet may still be terminating: busybox's httpd, as the container's
    // first process, ignores SIGTERM and waits out its grace period.
    wait_for("three running pods of the Frontend", POD_TIMEOUT, || {
        let pods = kubectl.try_json(&[
            "get",
            "pods",
            "-n",
            APPS,
            "-l",
            "app.kubernetes.io/instance=web",
            "--field-selector=status.phase=Running",
            "-o",
            "json",
        ])?;
        let live = pods["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|pod| pod["metadata"]["deletionTimestamp"].is_null())
            .count();
        (live == 3)
            .then_some(())
            .ok_or_else(|| describe_pods(&pods))
    });
}

/// Scales the Frontend `web` to `replicas` and waits until it is Available again.
fn scale_frontend(kubectl: &Kubectl, replicas: u32) {
    set_spec(
        kubectl,
        "frontends.web.example.com",
        "web",
        json!({"replicas": replicas}),
    );
    wait_condition(kubectl, "frontends.web.example.com", "web", "Available");
}

fn set_spec(kubectl: &Kubectl, resource: &str, name: &str, spec: Value) {
    let patch = json!({"spec": spec}).to_string();
    kubectl.ok(&[
        "patch",
        resource,
        name,
        "-n",
        APPS,
        "--type=merge",
        "-p",
        &patch,
    ]);
}

/// Waits until `name` reports `condition=True` for its current generation: `Ready` for the
/// plain kind, `Available` (enough pods ready) for an operand.
fn wait_condition(kubectl: &Kubectl, resource: &str, name: &str, condition: &str) {
    wait_for(
        &format!("{resource} {name} to be {condition}"),
        POD_TIMEOUT,
        || {
            let object = kubectl.try_json(&["get", resource, name, "-n", APPS, "-o", "json"])?;
            let generation = &object["metadata"]["generation"];
            let ready = object["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| {
                    c["type"] == condition
                        && c["status"] == "True"
                        && &c["observedGeneration"] == generation
                });
            ready.then_some(()).ok_or(object["status"].to_string())
        },
    );
}

/// The page the operand's Service serves, fetched from the node through its ClusterIP.
fn served_page(kubectl: &Kubectl, service: &str) -> String {
    let pages = wait_for(
        &format!("the Service {service} to answer"),
        POD_TIMEOUT,
        || served_page_of_all(kubectl, service),
    );
    pages[0].clone()
}

/// What every pod behind the Service serves, one page per ready endpoint (fetched by pod IP).
fn served_page_of_all(kubectl: &Kubectl, service: &str) -> Result<Vec<String>, String> {
    let slices = kubectl.try_json(&[
        "get",
        "endpointslices",
        "-n",
        APPS,
        "-l",
        &format!("kubernetes.io/service-name={service}"),
        "-o",
        "json",
    ])?;
    let addresses: Vec<String> = slices["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|slice| slice["endpoints"].as_array().cloned().unwrap_or_default())
        .filter(|endpoint| endpoint["conditions"]["ready"] == true)
        .filter_map(|endpoint| endpoint["addresses"][0].as_str().map(str::to_owned))
        .collect();
    if addresses.is_empty() {
        return Err(format!("no ready endpoint: {slices}"));
    }
    addresses
        .iter()
        .map(|address| {
            match crate::common::http::http_get(&format!(
                "http://{address}:{}/",
                node_images::OPERAND_PORT
            )) {
                Ok((200, page)) => Ok(page),
                other => Err(format!("{address}: {other:?}")),
            }
        })
        .collect()
}

/// Admission and conversion answered by the manager pod through the webhook Service: a size
/// over 9 is refused, a valid object gets the default label, and the v1 object reads as
/// v1alpha1.
fn webhooks_answer(kubectl: &Kubectl, when: &str) {
    let name = format!("db-{when}");
    let object = |size: u32| {
        json!({
            "apiVersion": "db.example.com/v1",
            "kind": "MySQLCluster",
            "metadata": {"name": name, "namespace": APPS},
            "spec": {"size": size},
        })
        .to_string()
    };
    // The first call after a new pod may come before its certificate is in the
    // configurations: the API server then fails the call, which a user would retry too.
    wait_for(
        &format!("the validating webhook to refuse a size of 10 ({when})"),
        POD_TIMEOUT,
        || match kubectl.apply(&object(10), &[]) {
            Err(err) if err.contains("must be at most 9") => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    // A replaced pod's endpoint may linger a moment in kube-proxy's rules.
    wait_for(
        &format!("the API server to admit a valid object ({when})"),
        POD_TIMEOUT,
        || kubectl.apply(&object(3), &[]),
    );
    let stored = kubectl.json(&[
        "get",
        "mysqlclusters.v1.db.example.com",
        &name,
        "-n",
        APPS,
        "-o",
        "json",
    ]);
    assert_eq!(
        stored["metadata"]["labels"]["e2e.example.com/defaulted"], "true",
        "the defaulting webhook did not run: {stored}"
    );
    let old = kubectl.json(&[
        "get",
        "mysqlclusters.v1alpha1.db.example.com",
        &name,
        "-n",
        APPS,
        "-o",
        "json",
    ]);
    assert_eq!(old["apiVersion"], "db.example.com/v1alpha1", "{old}");
    assert_eq!(old["spec"]["size"], 3, "{old}");
    wait_condition(kubectl, "mysqlclusters.db.example.com", &name, "Ready");
}

fn holder(kubectl: &Kubectl) -> Option<String> {
    let lease = kubectl
        .try_json(&["get", "lease", LEASE, "-n", NAMESPACE, "-o", "json"])
        .ok()?;
    lease["spec"]["holderIdentity"]
        .as_str()
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
}

/// Two replicas: one holds the Lease; deleting its pod hands the Lease to another manager
/// (the standby, or the pod replacing the deleted one), which reconciles. Prints the gap.
fn handover(kubectl: &Kubectl) {
    kubectl.ok(&[
        "scale",
        "deployment",
        MANAGER,
        "-n",
        NAMESPACE,
        "--replicas=2",
    ]);
    let managers = wait_for_managers(kubectl, 2);
    let leader = wait_for("a manager to hold the Lease", POD_TIMEOUT, || {
        holder(kubectl)
            .filter(|holder| managers.iter().any(|pod| holder.starts_with(pod.as_str())))
            .ok_or(format!("{:?}", holder(kubectl)))
    });
    let standby = managers
        .iter()
        .find(|pod| !leader.starts_with(pod.as_str()))
        .unwrap()
        .clone();
    let deleted = Instant::now();
    kubectl.ok(&["delete", "pod", "-n", NAMESPACE, &leader, "--wait=false"]);
    // The standby, or the pod that replaces the deleted one if it asks first: the leader
    // releases the Lease as it stops, and whoever asks next takes it.
    let took =
        crate::common::wait::poll(
            "another manager to take the Lease",
            POD_TIMEOUT,
            || match holder(kubectl).filter(|holder| *holder != leader) {
                Some(_) => std::ops::ControlFlow::Break(Ok(())),
                None => std::ops::ControlFlow::Continue(format!("{:?}", holder(kubectl))),
            },
        );
    if let Err(err) = took {
        let lease = kubectl.try_ok(&["get", "lease", LEASE, "-n", NAMESPACE, "-o", "yaml"]);
        let logs = kubectl.try_ok(&[
            "logs",
            "-n",
            NAMESPACE,
            "-l",
            MANAGER_SELECTOR,
            "--tail=60",
            "--prefix",
        ]);
        panic!(
            "{err:#}\n{leader} was deleted; the Lease:\n{lease:?}\nthe managers' logs:\n{logs:?}"
        );
    }
    let gap = deleted.elapsed();
    let new_leader = holder(kubectl).unwrap();
    let which = if new_leader == standby {
        "the standby"
    } else {
        "the pod replacing it"
    };
    eprintln!(
        "[e2e {NAME}] node: {which}, {new_leader}, took the Lease {gap:.1?} after {leader}'s pod was deleted"
    );
    let object = json!({
        "apiVersion": "db.example.com/v1",
        "kind": "MySQLCluster",
        "metadata": {"name": "after-handover", "namespace": APPS},
        "spec": {"size": 1},
    })
    .to_string();
    // Until kube-proxy drops the deleted pod's endpoint, a webhook call may still go to it.
    wait_for(
        "the API server to admit an object after the handover",
        POD_TIMEOUT,
        || kubectl.apply(&object, &[]),
    );
    wait_condition(
        kubectl,
        "mysqlclusters.db.example.com",
        "after-handover",
        "Ready",
    );
    eprintln!(
        "[e2e {NAME}] node: and reconciles after it ({:.1?} after the deletion)",
        deleted.elapsed()
    );
}

/// `make deploy` of a new image: the manager rolls over, and no reconcile fails (no Warning
/// event on the scenario's objects) nor makes a second workload.
fn upgrade(kubectl: &Kubectl, project: &Project, kubeconfig: &Path) {
    let warnings_before = warnings(kubectl);
    make_on_node(
        project,
        &format!("deploy IMG={MANAGER_V2}"),
        kubeconfig,
        &[],
    );
    wait_for("the manager to run the new image", POD_TIMEOUT, || {
        let deployment =
            kubectl.try_json(&["get", "deployment", MANAGER, "-n", NAMESPACE, "-o", "json"])?;
        let status = &deployment["status"];
        let image = &deployment["spec"]["template"]["spec"]["containers"][0]["image"];
        (image == MANAGER_V2
            && status["updatedReplicas"] == status["replicas"]
            && status["availableReplicas"] == status["replicas"]
            && status["observedGeneration"] == deployment["metadata"]["generation"])
            .then_some(())
            .ok_or(format!("{image} {status}"))
    });
    scale_frontend(kubectl, 2);
    for (resource, name) in [("deployments", "web"), ("statefulsets", "store")] {
        let list = kubectl.json(&["get", resource, "-n", APPS, "-o", "json"]);
        let owned: Vec<&Value> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["metadata"]["ownerReferences"][0]["name"] == name)
            .collect();
        assert_eq!(owned.len(), 1, "{resource} owned by {name}: {list}");
    }
    assert_eq!(
        warnings(kubectl),
        warnings_before,
        "a reconcile failed during the upgrade"
    );
}

/// The Warning events of the scenario's namespace, as `reason: message` lines.
fn warnings(kubectl: &Kubectl) -> Vec<String> {
    let events = kubectl.json(&[
        "get",
        "events",
        "-n",
        APPS,
        "--field-selector=type=Warning",
        "-o",
        "json",
    ]);
    let mut lines: Vec<String> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| {
            format!(
                "{}: {}",
                event["reason"],
                event["note"]
                    .as_str()
                    .or(event["message"].as_str())
                    .unwrap_or("")
            )
        })
        .collect();
    lines.sort();
    lines
}

/// Nothing of the project is left: its namespace, CRDs, cluster roles and bindings, webhook
/// configurations.
fn nothing_left(kubectl: &Kubectl) {
    wait_for("undeploy to remove everything", POD_TIMEOUT, || {
        let mut left = Vec::new();
        for resource in [
            "namespaces",
            "customresourcedefinitions",
            "clusterroles",
            "clusterrolebindings",
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
        ] {
            let names = kubectl.try_ok(&["get", resource, "-o", "name"])?;
            left.extend(
                names
                    .lines()
                    .filter(|name| name.contains(NAME) || name.contains("example.com"))
                    .map(str::to_owned),
            );
        }
        left.is_empty().then_some(()).ok_or(format!("{left:?}"))
    });
}
