//! The generated operator on a real control plane (etcd, kube-apiserver and
//! kube-controller-manager): its CRDs, samples and RBAC installed as a user installs them, and
//! its manager binary run with nothing but the generated role.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    batch,
    common::{
        Project,
        control_plane::ControlPlane,
        control_plane::free_ports,
        kubectl::Kubectl,
        operator::{Launch, Operator, WebhookServing},
        otlp::Collector,
        wait::wait_for,
    },
    manifests::{Crd, Sample, without_kind},
    object_metrics, steady_state, traces, webhooks,
};

/// How long a reconcile, or a controller of kube-controller-manager, may take to show.
pub(crate) const SETTLE: Duration = Duration::from_secs(60);
/// Slack over the Lease's duration for a standby to notice and take it.
const HANDOVER_SLACK: Duration = Duration::from_secs(10);

/// What the checks need to know of the project.
pub struct Setup<'a> {
    pub project: &'a Project,
    /// The project's name: its package, and the prefix of its namespace and service account.
    pub name: &'a str,
    /// The shared Cargo target directory the manager was built in.
    pub target_dir: &'a Path,
    /// The operator watches its own namespace only (`init --namespaced`).
    pub namespaced_operator: bool,
    /// The Kubernetes release the project targets (`1.35`): the control plane's.
    pub kubernetes: &'a str,
    /// Also show that the check for refused requests fails when a rule is missing.
    pub check_missing_rule: bool,
    /// The project has webhooks (`webhooks::add`): serve them and prove them.
    pub webhooks: bool,
    /// The manager serves /metrics over HTTPS to tokens allowed by the metrics-reader role
    /// (every project made since secure metrics); false: plain HTTP.
    pub secure_metrics: bool,
    /// The operand controllers keep a PodDisruptionBudget above one replica
    /// (`Operand::available`, every project made since 0.2.0).
    pub disruption_budgets: bool,
    /// The operand kinds made with `create api --autoscale` keep a HorizontalPodAutoscaler
    /// while `spec.autoscaling` is set: check it on the control plane's HPA controller.
    pub autoscaling: bool,
    /// The manager counts each kind's objects and those not ready on /metrics, in a body
    /// promtool's linter accepts (every project made since 0.2.0).
    pub object_metrics: bool,
    /// The manager binary was built with the `otel` feature: run it with a collector, and
    /// check each kind's reconciles arrive as spans.
    pub traces: bool,
}

impl Setup<'_> {
    fn root(&self) -> &Path {
        &self.project.root
    }

    /// Where kustomize puts the manager, its service account and its Lease.
    pub(crate) fn system_namespace(&self) -> String {
        format!("{}-system", self.name)
    }

    /// Where the tests create custom resources: any namespace for a cluster-wide operator, its
    /// own for a namespaced one.
    pub(crate) fn namespace(&self) -> String {
        if self.namespaced_operator {
            self.system_namespace()
        } else {
            "e2e-apps".to_owned()
        }
    }

    fn service_account(&self) -> String {
        format!("{}-controller-manager", self.name)
    }

    fn lease(&self) -> String {
        format!("{}-leader", self.name)
    }

    fn log(&self, step: &str, since: Instant) {
        eprintln!(
            "[e2e {}] cluster: {step} ({:.0?})",
            self.name,
            since.elapsed()
        );
    }
}

/// Everything the issue asks of a generated operator on a control plane.
pub fn run(setup: &Setup) {
    let started = Instant::now();
    let binary = manager_binary(setup);
    let cluster = ControlPlane::start(setup.kubernetes).unwrap_or_else(|err| panic!("{err:#}"));
    let kubectl = cluster.admin();
    setup.log("control plane ready", started);

    let crds = Crd::read_all(setup.root());
    install_crds(kubectl, setup, &crds);
    setup.log("CRDs accepted and discovered", started);

    install_rbac(kubectl, setup);
    let namespace = setup.namespace();
    if !setup.namespaced_operator {
        kubectl.ok(&["create", "namespace", &namespace]);
    }
    // The webhooks are called at the standby's port: it serves them to the end of the test.
    let [leader_port, standby_port] = free_ports();
    if setup.webhooks {
        webhooks::deploy(kubectl, setup);
        setup.log(
            "make deploy: webhook configurations call the Service",
            started,
        );
        webhooks::point_at(kubectl, setup, standby_port);
        setup.log(
            "make dev-webhooks: the same configurations call this machine",
            started,
        );
    }

    let collector = setup.traces.then(Collector::start);
    let manager = Launch {
        otlp_endpoint: collector.as_ref().map(|c| c.endpoint().to_owned()),
        ..manager_identity(&cluster, setup, &binary, standby_port)
    };
    check_least_privilege(&Kubectl::new(&manager.kubeconfig), setup);
    if setup.webhooks && !setup.namespaced_operator {
        webhooks::check_injection_is_confined(kubectl, &Kubectl::new(&manager.kubeconfig), setup);
        setup.log(
            "the manager may patch its own webhook objects only",
            started,
        );
    }

    // Two replicas: the first takes the Lease, the second stands by. They run before the
    // samples are applied, since the webhooks of a project that has them must answer.
    let mut leader = start_manager(
        &Launch {
            webhooks: manager.webhooks.clone().map(|serving| WebhookServing {
                port: leader_port,
                ..serving
            }),
            ..manager.clone()
        },
        "manager-a",
        setup,
    );
    wait_for_holder(kubectl, setup, "manager-a", SETTLE);
    let mut standby = start_manager(&manager, "manager-b", setup);
    setup.log("two managers running, manager-a leads", started);
    if setup.webhooks {
        let since = Instant::now();
        webhooks::beside_another_project(kubectl, setup, standby_port);
        setup.log(
            &format!(
                "a second project in development mode keeps its own configurations ({:.0?})",
                since.elapsed()
            ),
            started,
        );
        webhooks::check(kubectl, setup);
        setup.log("webhooks called over TLS with the injected CA", started);
    }

    let all_samples = Sample::read_all(setup.root());
    apply_samples(kubectl, setup, &crds, &all_samples);
    let samples = Sample::distinct(&all_samples);
    reject_invalid_objects(kubectl, &namespace, &crds, &samples);
    setup.log("samples accepted, invalid objects rejected", started);

    for &sample in &samples {
        let crd = Crd::of(&crds, sample);
        if crd.scale {
            check_operand(kubectl, setup, crd, sample);
        } else if batch::runs_to_completion(sample) {
            // These end with the object's deletion.
            batch::check(kubectl, setup, crd, sample);
        } else {
            check_plain_reconciled(kubectl, &namespace, crd, sample);
        }
    }
    setup.log("every sample reconciled", started);
    let operands: Vec<(&Crd, &Sample)> = samples
        .iter()
        .map(|&sample| (Crd::of(&crds, sample), sample))
        .filter(|(crd, _)| crd.scale)
        .collect();
    steady_state::check(kubectl, &leader, &namespace, &operands);
    setup.log("steady reconciles of the operands sent no request", started);

    check_endpoints(&leader, &crds, true);
    check_endpoints(&standby, &crds, false);
    if setup.object_metrics {
        object_metrics::check(kubectl, setup, &leader, &crds);
        setup.log(
            "/metrics passes promtool's lint and counts objects and the not ready",
            started,
        );
    }
    if let Some(collector) = &collector {
        traces::check(collector, setup, &crds);
        setup.log(
            "every kind's reconciles arrived as spans over OTLP",
            started,
        );
    }
    if setup.secure_metrics {
        check_metrics_access(kubectl, setup, &leader);
        setup.log(
            "/metrics: 200 for the metrics-reader, 403 for another account, 401 without a token",
            started,
        );
    }
    assert_eq!(holder(kubectl, setup).as_deref(), Some("manager-a"));

    // Handover: the standby takes the Lease within its duration, and reconciles.
    let lease_duration = lease_duration(kubectl, setup);
    let stopped = Instant::now();
    let status = leader.stop().unwrap_or_else(|err| panic!("{err:#}"));
    assert!(status.success(), "manager-a stopped with {status}");
    wait_for_holder(kubectl, setup, "manager-b", lease_duration + HANDOVER_SLACK);
    eprintln!(
        "[e2e {}] cluster: manager-b took over {:.1?} after manager-a stopped (lease: {lease_duration:?})",
        setup.name,
        stopped.elapsed()
    );
    wait_for("manager-b to reconcile after the handover", SETTLE, || {
        standby.check_running().map_err(|err| format!("{err:#}"))?;
        let counts = standby.reconciliations();
        if counts.values().sum::<u64>() > 0 {
            Ok(())
        } else {
            Err(format!("{counts:?}"))
        }
    });

    // Deleting a plain object runs its cleanup; the operator removes the finalizer.
    let plain = |s: &&&Sample| !Crd::of(&crds, s).scale && !batch::runs_to_completion(s);
    for &sample in samples.iter().filter(plain) {
        delete_plain(kubectl, &namespace, Crd::of(&crds, sample), sample);
    }
    setup.log("plain objects cleaned up and deleted", started);

    // Stopping the operator deletes nothing it manages.
    let operands: Vec<&Sample> = samples
        .iter()
        .copied()
        .filter(|s| Crd::of(&crds, s).scale)
        .collect();
    let before: Vec<Value> = operands
        .iter()
        .map(|s| workload_identity(kubectl, &namespace, s))
        .collect();
    let status = standby.stop().unwrap_or_else(|err| panic!("{err:#}"));
    assert!(status.success(), "manager-b stopped with {status}");
    std::thread::sleep(Duration::from_secs(2));
    let after: Vec<Value> = operands
        .iter()
        .map(|s| workload_identity(kubectl, &namespace, s))
        .collect();
    assert_eq!(before, after, "stopping the operator changed its workloads");

    // Kubernetes' garbage collector deletes what an operand owned. No manager serves the
    // webhooks now, and a validating webhook is called for deletes too (an operand kind may
    // have one): their configurations go first, and `make deploy` below puts them back.
    if setup.webhooks {
        webhooks::remove_configurations(kubectl, setup);
    }
    for sample in &operands {
        delete_operand(kubectl, &namespace, Crd::of(&crds, sample), sample);
    }
    setup.log(
        "workloads kept when the operator stopped, collected with their owner",
        started,
    );

    // The generated role was enough: no request was refused.
    for manager in [&leader, &standby] {
        let denied = manager.forbidden();
        assert!(
            denied.is_empty(),
            "{} was refused requests: the generated RBAC lacks a rule:\n{}",
            manager.name(),
            denied.join("\n")
        );
    }
    if setup.webhooks {
        webhooks::deploy(kubectl, setup);
        setup.log(
            "make deploy: the configurations call the Service again",
            started,
        );
    }
    crashing_manager_fails_clearly(&cluster, &binary);
    if setup.check_missing_rule {
        if setup.webhooks {
            // No manager serves the webhooks any more.
            webhooks::remove(kubectl, setup);
        }
        missing_rbac_rule_is_reported(&cluster, setup, &binary);
    }
    setup.log("done", started);
}

/// `kubectl apply --server-side` of every CRD: accepted, established, and discovered with
/// its short names, scope, status and (operands) scale subresources.
fn install_crds(kubectl: &Kubectl, setup: &Setup, crds: &[Crd]) {
    let bases = setup.root().join("config/crd/bases");
    kubectl.ok(&["apply", "--server-side", "-f", path(&bases)]);
    for crd in crds {
        kubectl.ok(&[
            "wait",
            "--for=condition=Established",
            &format!("crd/{}", crd.name),
            "--timeout=60s",
        ]);
        for version in &crd.versions {
            let discovery = kubectl.raw(&format!("/apis/{}/{version}", crd.group));
            let resources = discovery["resources"].as_array().unwrap();
            let find = |name: &str| resources.iter().find(|r| r["name"] == name);
            let resource = find(&crd.plural)
                .unwrap_or_else(|| panic!("{version} of {} not discovered: {discovery}", crd.name));
            assert_eq!(resource["kind"], crd.kind.as_str());
            assert_eq!(resource["namespaced"], crd.namespaced, "{}", crd.name);
            assert_eq!(
                resource["shortNames"],
                json!(crd.short_names),
                "short names of {}",
                crd.name
            );
            assert!(
                find(&format!("{}/status", crd.plural)).is_some(),
                "{discovery}"
            );
            assert_eq!(
                find(&format!("{}/scale", crd.plural)).is_some(),
                crd.scale,
                "scale subresource of {}: {discovery}",
                crd.name
            );
        }
    }
}

/// The rendered `config/default` but the manager's Deployment (no pod runs here: the test
/// runs the manager itself): namespace, service account, roles and bindings. With webhooks,
/// also without the webhook configurations and CRDs, which call a Service, and no Service
/// network is here: `webhooks::point_at` installs them.
pub(crate) fn install_rbac(kubectl: &Kubectl, setup: &Setup) {
    let rendered = kubectl.ok(&["kustomize", path(&setup.root().join("config/default"))]);
    let mut manifest = without_kind(&rendered, "Deployment");
    if setup.webhooks {
        for kind in [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
            "CustomResourceDefinition",
        ] {
            manifest = without_kind(&manifest, kind);
        }
    }
    kubectl
        .apply(&manifest, &[])
        .unwrap_or_else(|err| panic!("config/default does not apply: {err}"));
}

/// Every sample, applied as `kubectl apply -k config/samples`, is accepted, and `kubectl get`
/// shows the CRD's printer columns.
fn apply_samples(kubectl: &Kubectl, setup: &Setup, crds: &[Crd], samples: &[Sample]) {
    let namespace = setup.namespace();
    let dir = setup.root().join("config/samples");
    kubectl.ok(&["apply", "--server-side", "-k", path(&dir), "-n", &namespace]);
    for crd in crds {
        let listing = kubectl.ok(&["get", &crd.name, "-n", &namespace]);
        let header: Vec<&str> = listing
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let mut expected = vec!["NAME".to_owned()];
        expected.extend(crd.columns.iter().map(|c| c.to_uppercase()));
        assert_eq!(header, expected, "columns of `kubectl get {}`", crd.name);
    }
    for sample in samples {
        let crd = Crd::of(crds, sample);
        kubectl.ok(&["get", &crd.name, &sample.name, "-n", &namespace]);
    }
}

/// What the schema and its CEL rules forbid, the API server refuses.
fn reject_invalid_objects(kubectl: &Kubectl, namespace: &str, crds: &[Crd], samples: &[&Sample]) {
    let mut rules_checked = 0;
    for sample in samples.iter().filter(|s| Crd::of(crds, s).scale) {
        let mut negative = sample.object.clone();
        negative["metadata"]["name"] = json!("negative-replicas");
        negative["spec"]["replicas"] = json!(-1);
        let refused = kubectl
            .apply(&negative.to_string(), &["-n", namespace])
            .expect_err("negative replicas accepted");
        assert!(
            refused.contains("spec.replicas") && refused.contains("greater than or equal to 0"),
            "{refused}"
        );

        if sample.object["spec"]["storage"].is_object() {
            let mut resized = sample.object.clone();
            resized["spec"]["storage"]["size"] = json!("2Gi");
            let refused = kubectl
                .apply(&resized.to_string(), &["-n", namespace])
                .expect_err("a change of the immutable storage accepted");
            assert!(
                refused.contains("storage cannot be changed once set"),
                "{refused}"
            );
            rules_checked += 1;
        }
    }
    assert!(
        rules_checked > 0,
        "no operand with storage: the CEL rule went untested"
    );
}

/// The manager binary the scenario built (`cargo build --all-targets`), copied out of the shared
/// target directory, which another checkout's tests may rebuild at any moment with a project of
/// the same name. Not rebuilt with `cargo build --bin`: without the dev-dependencies, features
/// unify differently and half the dependencies would be compiled again.
pub(crate) fn manager_binary(setup: &Setup) -> PathBuf {
    let built = setup.target_dir.join("debug").join(setup.name);
    let copy = setup
        .project
        .temp
        .path()
        .join(format!("{}-manager", setup.name));
    std::fs::copy(&built, &copy)
        .unwrap_or_else(|err| panic!("cannot copy {}: {err}", built.display()));
    copy
}

/// The manager's service account, as its Deployment would give it: a kubeconfig with a
/// token of `kubectl create token`.
/// With webhooks, it serves them at `webhook_port` with the self-managed certificate.
pub(crate) fn manager_identity(
    cluster: &ControlPlane,
    setup: &Setup,
    binary: &Path,
    webhook_port: u16,
) -> Launch {
    let token = cluster.admin().ok(&[
        "create",
        "token",
        &setup.service_account(),
        "-n",
        &setup.system_namespace(),
        "--duration=2h",
    ]);
    let kubeconfig = cluster.kubeconfig_with_token("manager", &token);
    Launch {
        binary: binary.to_owned(),
        kubeconfig,
        log_dir: cluster.dir().to_owned(),
        identity: String::new(),
        leader_election_namespace: Some(setup.system_namespace()),
        watch_namespace: setup.namespaced_operator.then(|| setup.system_namespace()),
        webhooks: setup.webhooks.then(|| WebhookServing {
            port: webhook_port,
            cert_secret: format!("{}-webhook-cert", setup.name),
            namespace: setup.system_namespace(),
        }),
        metrics_token: setup
            .secure_metrics
            .then(|| scraper_token(cluster.admin(), setup, METRICS_SCRAPER, true)),
        otlp_endpoint: None,
    }
}

/// The service account that scrapes /metrics, bound to the project's metrics-reader role.
const METRICS_SCRAPER: &str = "metrics-scraper";

/// A token of the service account `name` in the system namespace, made (again) if need be,
/// and bound to the project's metrics-reader ClusterRole when `reader`: what a user does for
/// their Prometheus.
fn scraper_token(kubectl: &Kubectl, setup: &Setup, name: &str, reader: bool) -> String {
    let namespace = setup.system_namespace();
    let mut manifest = format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
    );
    if reader {
        manifest.push_str(&format!(
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {namespace}-{name}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {}-metrics-reader\nsubjects:\n- kind: ServiceAccount\n  name: {name}\n  namespace: {namespace}\n",
            setup.name
        ));
    }
    kubectl
        .apply(&manifest, &[])
        .unwrap_or_else(|err| panic!("cannot make the scraper {name}: {err}"));
    kubectl.ok(&["create", "token", name, "-n", &namespace, "--duration=2h"])
}

/// The manager reviews every scrape's token: the metrics-reader's is served, another valid
/// account's is forbidden, and a request without a token (or with a made-up one) is not
/// authenticated.
fn check_metrics_access(kubectl: &Kubectl, setup: &Setup, manager: &Operator) {
    let reader = scraper_token(kubectl, setup, METRICS_SCRAPER, true);
    let (status, body) = manager.scrape(Some(&reader));
    assert_eq!(status, 200, "{}: {body}", manager.name());
    assert!(body.contains("_reconciliations_total{"), "{body}");
    let other = scraper_token(kubectl, setup, "not-a-scraper", false);
    let (status, body) = manager.scrape(Some(&other));
    assert_eq!(status, 403, "{}: {body}", manager.name());
    assert!(body.contains("metrics-reader"), "{body}");
    for token in [None, Some("made-up")] {
        let (status, body) = manager.scrape(token);
        assert_eq!(status, 401, "{} with {token:?}: {body}", manager.name());
    }
}

pub(crate) fn start_manager(manager: &Launch, identity: &str, setup: &Setup) -> Operator {
    let launch = Launch {
        identity: identity.to_owned(),
        ..manager.clone()
    };
    let mut operator = Operator::start(&launch);
    operator
        .wait_ready()
        .unwrap_or_else(|err| panic!("[{}] {err:#}", setup.name));
    operator
}

/// The role grants what the operator needs, and not what it does not.
fn check_least_privilege(manager: &Kubectl, setup: &Setup) {
    let namespace = setup.namespace();
    let can = |args: &[&str]| {
        let mut all = vec!["auth", "can-i"];
        all.extend_from_slice(args);
        let output = manager.run(&all, None);
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    };
    // The check can say yes: the operator's own work.
    assert_eq!(can(&["list", "statefulsets.apps", "-n", &namespace]), "yes");
    assert_eq!(can(&["patch", "deployments.apps", "-n", &namespace]), "yes");
    for denied in [
        vec!["get", "secrets", "-n", &namespace],
        vec!["list", "pods", "-n", &namespace],
        vec!["delete", "statefulsets.apps", "-n", &namespace],
        vec!["create", "clusterrolebindings.rbac.authorization.k8s.io"],
        vec!["list", "nodes"],
        vec!["get", "widgets.other.example.org", "-n", &namespace],
    ] {
        assert_eq!(can(&denied), "no", "the manager may {denied:?}");
    }
    if setup.namespaced_operator {
        // A Role: nothing outside its own namespace.
        assert_eq!(can(&["list", "statefulsets.apps", "-n", "default"]), "no");
        assert_eq!(
            can(&["list", "statefulsets.apps", "--all-namespaces"]),
            "no"
        );
    }
}

fn holder(kubectl: &Kubectl, setup: &Setup) -> Option<String> {
    let lease = kubectl
        .try_json(&[
            "get",
            "lease",
            &setup.lease(),
            "-n",
            &setup.system_namespace(),
        ])
        .ok()?;
    lease["spec"]["holderIdentity"]
        .as_str()
        .filter(|holder| !holder.is_empty())
        .map(str::to_owned)
}

fn wait_for_holder(kubectl: &Kubectl, setup: &Setup, identity: &str, timeout: Duration) {
    wait_for(
        &format!("{identity} to hold the Lease"),
        timeout,
        || match holder(kubectl, setup) {
            Some(holder) if holder == identity => Ok(()),
            other => Err(format!("holder: {other:?}")),
        },
    );
}

fn lease_duration(kubectl: &Kubectl, setup: &Setup) -> Duration {
    let lease = kubectl.json(&[
        "get",
        "lease",
        &setup.lease(),
        "-n",
        &setup.system_namespace(),
    ]);
    Duration::from_secs(
        lease["spec"]["leaseDurationSeconds"]
            .as_u64()
            .expect("lease duration"),
    )
}

/// A plain kind: finalizer, `Ready=True` for the current generation, and an event; again after
/// a change of its spec.
fn check_plain_reconciled(kubectl: &Kubectl, namespace: &str, crd: &Crd, sample: &Sample) {
    let ready = || {
        let object = kubectl.try_json(&["get", &crd.name, &sample.name, "-n", namespace])?;
        let generation = &object["metadata"]["generation"];
        if !object["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.contains(&json!(crd.finalizer())))
        {
            return Err(format!("no finalizer {}: {object}", crd.finalizer()));
        }
        let ready = condition(&object, "Ready").ok_or_else(|| format!("not Ready: {object}"))?;
        if ready["status"] == "True"
            && ready["observedGeneration"] == *generation
            && object["status"]["observedGeneration"] == *generation
        {
            Ok(())
        } else {
            Err(format!(
                "status for generation {generation}: {}",
                object["status"]
            ))
        }
    };
    let what = format!("{} {} to be Ready", crd.kind, sample.name);
    wait_for(&what, SETTLE, ready);
    wait_for_event(kubectl, crd, &sample.name, "Reconciled");

    // A new generation is reconciled and reported too.
    kubectl.ok(&[
        "patch",
        &crd.name,
        &sample.name,
        "-n",
        namespace,
        "--type=merge",
        "-p",
        r#"{"spec":{"size":2}}"#,
    ]);
    wait_for(&format!("{what} again after a spec change"), SETTLE, ready);
}

fn delete_plain(kubectl: &Kubectl, namespace: &str, crd: &Crd, sample: &Sample) {
    kubectl.ok(&[
        "delete",
        &crd.name,
        &sample.name,
        "-n",
        namespace,
        "--wait=false",
    ]);
    wait_for(
        &format!("{} {} to be cleaned up and deleted", crd.kind, sample.name),
        SETTLE,
        || match kubectl.try_json(&["get", &crd.name, &sample.name, "-n", namespace]) {
            Err(err) if err.contains("NotFound") => Ok(()),
            Err(err) => Err(err),
            Ok(object) => Err(format!("still there: {}", object["metadata"])),
        },
    );
    wait_for_event(kubectl, crd, &sample.name, "Deleting");
}

/// An operand: its workload and Service, owned and labelled; scaled through the scale
/// subresource; rolled to a new image; reported in the status.
fn check_operand(kubectl: &Kubectl, setup: &Setup, crd: &Crd, sample: &Sample) {
    let namespace = setup.namespace();
    let name = &sample.name;
    let workload = wait_for(&format!("the workload of {name}"), SETTLE, || {
        find_workload(kubectl, &namespace, name)
    });
    let owner = kubectl.json(&["get", &crd.name, name, "-n", &namespace]);
    check_owned(setup, &workload, &owner);
    let service = kubectl.try_json(&["get", "service", name, "-n", &namespace]);
    if sample.object["spec"]["port"].is_number() {
        let service = service.unwrap_or_else(|err| panic!("no Service for {name}: {err}"));
        check_owned(setup, &service, &owner);
    } else {
        assert!(service.is_err(), "{name} has no port, yet a Service");
    }
    wait_for_event(kubectl, crd, name, "Created");

    let resource = format!("{}/{name}", crd.name);
    // Above one replica a PodDisruptionBudget keeps all pods but one through a drain; at one
    // it would block the drain forever, and is deleted.
    let budget = ["get", "poddisruptionbudget", name, "-n", &namespace];
    scale(kubectl, &namespace, &resource, name, 3);
    wait_for_event(kubectl, crd, name, "Scaled");
    if setup.disruption_budgets {
        check_budget(kubectl, setup, &workload, &owner);
        scale(kubectl, &namespace, &resource, name, 1);
        wait_for(
            &format!("the PodDisruptionBudget of {name} deleted"),
            SETTLE,
            || match kubectl.try_ok(&budget) {
                Ok(_) => Err("still there".to_owned()),
                Err(_) => Ok(()),
            },
        );
        scale(kubectl, &namespace, &resource, name, 2);
        check_budget(kubectl, setup, &workload, &owner);
    } else {
        // `Operand::new`, which its controller calls, keeps none (its role grants none).
        assert!(
            kubectl.try_ok(&budget).is_err(),
            "{name} has a PodDisruptionBudget its controller did not ask for"
        );
        scale(kubectl, &namespace, &resource, name, 2);
    }

    let image = "registry.example/e2e/app:2";
    let patch = json!({"spec": {"image": image}}).to_string();
    kubectl.ok(&[
        "patch",
        &crd.name,
        name,
        "-n",
        &namespace,
        "--type=merge",
        "-p",
        &patch,
    ]);
    wait_for(&format!("{resource} rolled to {image}"), SETTLE, || {
        let workload = find_workload(kubectl, &namespace, name)?;
        let images: Vec<&Value> = workload["spec"]["template"]["spec"]["containers"]
            .as_array()
            .map(|containers| containers.iter().map(|c| &c["image"]).collect())
            .unwrap_or_default();
        if images == [image] {
            Ok(())
        } else {
            Err(format!("images: {images:?}"))
        }
    });

    // No pod runs here, so the object never becomes available: its status is written for the
    // new generation, with the workload's pod count of that moment, and not again for each
    // step of the rollout (see the runtime's `apply_operand`).
    wait_for(&format!("the status of {resource}"), SETTLE, || {
        let object = kubectl.try_json(&["get", &crd.name, name, "-n", &namespace])?;
        let status = &object["status"];
        let generation = &object["metadata"]["generation"];
        let problems: Vec<String> = [
            (status["observedGeneration"] != *generation).then(|| "observedGeneration".to_owned()),
            (!status["replicas"].is_i64()).then(|| "replicas".to_owned()),
            status["selector"]
                .as_str()
                .is_none_or(str::is_empty)
                .then(|| "selector".to_owned()),
        ]
        .into_iter()
        .flatten()
        .chain(
            ["Available", "Progressing", "Degraded"]
                .into_iter()
                .filter(|type_| condition(&object, type_).is_none())
                .map(|type_| format!("condition {type_}")),
        )
        .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("{problems:?} in {status}"))
        }
    });
    if setup.autoscaling && crd.autoscaling {
        check_autoscaling(kubectl, setup, crd, &owner);
    }
}

/// `spec.autoscaling` of an operand: its controller keeps a HorizontalPodAutoscaler that
/// targets the custom object, the control plane's HPA controller reads the object's scale
/// subresource and, below the minimum, scales the object (no metrics server runs, so that is
/// all it can do), and the workload follows; removing `spec.autoscaling` deletes the
/// autoscaler. It is turned on again to end with, so that the steady-state check and the
/// garbage collection include it.
fn check_autoscaling(kubectl: &Kubectl, setup: &Setup, crd: &Crd, owner: &Value) {
    let namespace = setup.namespace();
    let name = owner["metadata"]["name"].as_str().expect("a name");
    let patch = |autoscaling: Value| {
        let patch = json!({"spec": {"autoscaling": autoscaling}}).to_string();
        let args = [
            "patch",
            &crd.name,
            name,
            "-n",
            &namespace,
            "--type=merge",
            "-p",
            &patch,
        ];
        kubectl.ok(&args);
    };
    let autoscaler = ["get", "horizontalpodautoscaler", name, "-n", &namespace];
    let inverted = json!({"spec": {"autoscaling": {"minReplicas": 4, "maxReplicas": 2}}});
    let inverted = inverted.to_string();
    let refused = kubectl.try_ok(&[
        "patch",
        &crd.name,
        name,
        "-n",
        &namespace,
        "--type=merge",
        "-p",
        &inverted,
    ]);
    match refused {
        Err(message) if message.contains("minReplicas cannot be above maxReplicas") => {}
        other => panic!("{name}: an inverted autoscaling range was not refused: {other:?}"),
    }
    // Above the replicas the object runs (2, from `check_operand`): the HPA controller must
    // scale it up, whatever the (absent) metrics say.
    patch(json!({"minReplicas": 3, "maxReplicas": 5}));
    let hpa = wait_for(&format!("the autoscaler of {name}"), SETTLE, || {
        kubectl.try_json(&autoscaler)
    });
    check_owned(setup, &hpa, owner);
    let target = &hpa["spec"]["scaleTargetRef"];
    assert_eq!(target["kind"], owner["kind"], "{hpa}");
    assert_eq!(target["name"], name, "{hpa}");
    assert_eq!(target["apiVersion"], owner["apiVersion"], "{hpa}");
    assert_eq!(hpa["spec"]["minReplicas"], 3, "{hpa}");
    assert_eq!(
        hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );

    // The autoscaler sets `spec.replicas`; the controller gives it to the workload, and the
    // autoscaler reports the replicas it reads through the scale subresource.
    let resource = format!("{}/{name}", crd.name);
    wait_for(
        &format!("{resource} scaled by its autoscaler"),
        SETTLE,
        || {
            let scale =
                kubectl.try_json(&["get", &resource, "-n", &namespace, "--subresource=scale"])?;
            let hpa = kubectl.try_json(&autoscaler)?;
            let workload = find_workload(kubectl, &namespace, name)?;
            let object = kubectl.try_json(&["get", &resource, "-n", &namespace])?;
            let found = (
                scale["spec"]["replicas"].as_i64(),
                workload["spec"]["replicas"].as_i64(),
                hpa["status"]["currentReplicas"].as_i64(),
            );
            let selector = scale["status"]["selector"].as_str().unwrap_or_default();
            if found != (Some(3), Some(3), Some(3)) {
                return Err(format!(
                    "scale, workload and autoscaler replicas: {found:?}"
                ));
            }
            if scale["status"]["replicas"] != object["status"]["replicas"] || selector.is_empty() {
                return Err(format!(
                    "scale status {} of {}",
                    scale["status"], object["status"]
                ));
            }
            Ok(())
        },
    );

    patch(Value::Null);
    wait_for(
        &format!("the autoscaler of {name} deleted"),
        SETTLE,
        || match kubectl.try_ok(&autoscaler) {
            Ok(_) => Err("still there".to_owned()),
            Err(_) => Ok(()),
        },
    );
    scale(kubectl, &namespace, &resource, name, 2);
    patch(json!({"minReplicas": 1, "maxReplicas": 3}));
    wait_for(&format!("the autoscaler of {name} again"), SETTLE, || {
        kubectl.try_json(&autoscaler)
    });
}

/// Scales `resource` through its scale subresource, and waits for its workload to follow.
fn scale(kubectl: &Kubectl, namespace: &str, resource: &str, name: &str, replicas: i64) {
    let flag = format!("--replicas={replicas}");
    kubectl.ok(&["scale", resource, &flag, "-n", namespace]);
    wait_for(&format!("{resource} scaled to {replicas}"), SETTLE, || {
        let workload = find_workload(kubectl, namespace, name)?;
        match workload["spec"]["replicas"].as_i64() {
            Some(found) if found == replicas => Ok(()),
            other => Err(format!("replicas: {other:?}")),
        }
    });
}

/// The PodDisruptionBudget of `workload`: owned by `owner`, one pod unavailable at most, of
/// the pods the workload selects.
fn check_budget(kubectl: &Kubectl, setup: &Setup, workload: &Value, owner: &Value) {
    let namespace = setup.namespace();
    let name = workload["metadata"]["name"].as_str().expect("a name");
    let budget = wait_for(
        &format!("the PodDisruptionBudget of {name}"),
        SETTLE,
        || kubectl.try_json(&["get", "poddisruptionbudget", name, "-n", &namespace]),
    );
    check_owned(setup, &budget, owner);
    assert_eq!(budget["spec"]["maxUnavailable"], 1, "{budget}");
    assert_eq!(
        budget["spec"]["selector"], workload["spec"]["selector"],
        "{budget}"
    );
}

/// The Deployment or StatefulSet named `name`.
fn find_workload(kubectl: &Kubectl, namespace: &str, name: &str) -> Result<Value, String> {
    kubectl
        .try_json(&["get", "deployment", name, "-n", namespace])
        .or_else(|_| kubectl.try_json(&["get", "statefulset", name, "-n", namespace]))
}

/// `object` has `owner` as its controller, and the labels every object of the operator has.
pub(crate) fn check_owned(setup: &Setup, object: &Value, owner: &Value) {
    let what = format!(
        "{} {}",
        object["kind"],
        object["metadata"]["name"].as_str().unwrap_or("?")
    );
    let references = object["metadata"]["ownerReferences"]
        .as_array()
        .unwrap_or_else(|| panic!("{what} has no owner"));
    assert_eq!(references.len(), 1, "{what}: {references:?}");
    let reference = &references[0];
    assert_eq!(reference["uid"], owner["metadata"]["uid"], "{what}");
    assert_eq!(reference["kind"], owner["kind"], "{what}");
    assert_eq!(reference["controller"], true, "{what}");
    let labels = &object["metadata"]["labels"];
    assert_eq!(
        labels["app.kubernetes.io/instance"], owner["metadata"]["name"],
        "{what}"
    );
    assert_eq!(labels["app.kubernetes.io/managed-by"], setup.name, "{what}");
    for label in ["app.kubernetes.io/name", "app.kubernetes.io/component"] {
        assert!(
            labels[label].is_string(),
            "{what} lacks the label {label}: {labels}"
        );
    }
}

/// What must not change while no operator runs: the workload itself and its spec.
fn workload_identity(kubectl: &Kubectl, namespace: &str, sample: &Sample) -> Value {
    let workload = find_workload(kubectl, namespace, &sample.name).unwrap();
    json!({
        "uid": workload["metadata"]["uid"],
        "deletionTimestamp": workload["metadata"]["deletionTimestamp"],
        "spec": workload["spec"],
    })
}

fn delete_operand(kubectl: &Kubectl, namespace: &str, crd: &Crd, sample: &Sample) {
    let name = &sample.name;
    kubectl.ok(&["delete", &crd.name, name, "-n", namespace]);
    wait_for(
        &format!("the garbage collector to delete what {name} owned"),
        // It learns of a new kind by rediscovering the API every 30 seconds.
        SETTLE * 2,
        || {
            let left: Vec<&str> = ["deployment", "statefulset", "service", "pdb", "hpa"]
                .into_iter()
                .filter(|kind| {
                    kubectl
                        .try_ok(&["get", kind, name, "-n", namespace])
                        .is_ok()
                })
                .collect();
            if left.is_empty() {
                Ok(())
            } else {
                Err(format!("still there: {left:?}"))
            }
        },
    );
}

/// Both servers answer; the metrics count the reconciles of every controller on the leader,
/// and none on a standby.
fn check_endpoints(manager: &Operator, crds: &[Crd], leads: bool) {
    assert_eq!(
        manager.probe("/healthz"),
        (200, "ok".to_owned()),
        "{}",
        manager.name()
    );
    assert_eq!(manager.probe("/readyz").0, 200, "{}", manager.name());
    let counts = manager.reconciliations();
    if leads {
        for crd in crds {
            let reconciled = counts.get(&crd.controller()).copied().unwrap_or(0);
            assert!(
                reconciled > 0,
                "{} counted no reconcile of {}: {counts:?}",
                manager.name(),
                crd.controller()
            );
        }
    } else {
        assert_eq!(
            counts.values().sum::<u64>(),
            0,
            "{} reconciled without the Lease: {counts:?}",
            manager.name()
        );
    }
}

/// Waits for an event with `reason` about the object `name` of `crd`'s kind.
pub(crate) fn wait_for_event(kubectl: &Kubectl, crd: &Crd, name: &str, reason: &str) {
    wait_for(&format!("a {reason} event about {name}"), SETTLE, || {
        let events = kubectl.try_json(&["get", "events.events.k8s.io", "--all-namespaces"])?;
        let found = events["items"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|event| {
                event["reason"] == reason
                    && event["regarding"]["kind"] == crd.kind.as_str()
                    && event["regarding"]["name"] == name
            });
        if found {
            Ok(())
        } else {
            Err(format!(
                "{} events, none of them",
                events["items"].as_array().map_or(0, Vec::len)
            ))
        }
    });
}

pub(crate) fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|condition| condition["type"] == type_)
}

/// A manager that cannot reach its API server exits, and the test says why, quickly.
fn crashing_manager_fails_clearly(cluster: &ControlPlane, binary: &Path) {
    let [closed] = crate::common::control_plane::free_ports();
    let nowhere = cluster.kubeconfig_with_token("nowhere", "token");
    let text = std::fs::read_to_string(&nowhere)
        .unwrap()
        .replace(cluster.server(), &format!("https://127.0.0.1:{closed}"));
    std::fs::write(&nowhere, text).unwrap();
    let mut manager = Operator::start(&Launch {
        binary: binary.to_owned(),
        kubeconfig: nowhere,
        log_dir: cluster.dir().to_owned(),
        identity: "manager-nowhere".to_owned(),
        leader_election_namespace: None,
        watch_namespace: None,
        webhooks: None,
        metrics_token: None,
        otlp_endpoint: None,
    });
    let started = Instant::now();
    let err = manager
        .wait_ready()
        .expect_err("a manager without API server got ready");
    let message = format!("{err:#}");
    assert!(
        message.contains("exited") && message.contains("does not answer"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(60), "{message}");
}

/// The 403 check can fail: without the marker that grants `statefulsets`, the manager is
/// refused, and the check names the resource. The project is restored afterwards.
fn missing_rbac_rule_is_reported(cluster: &ControlPlane, setup: &Setup, binary: &Path) {
    let started = Instant::now();
    let controller = find_marker_file(setup.root(), "resources=statefulsets");
    let source = std::fs::read_to_string(&controller).unwrap();
    let role_file = setup.root().join("config/rbac/role.yaml");
    let role = std::fs::read_to_string(&role_file).unwrap();
    let without: String = source
        .lines()
        .filter(|line| !(line.contains("+opgen:rbac") && line.contains("resources=statefulsets")))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&controller, &without).unwrap();
    crate::run(setup.root(), "opgen generate manifests", true);
    let narrower = std::fs::read_to_string(&role_file).unwrap();
    assert!(!narrower.contains("statefulsets"), "{narrower}");

    // The narrower role replaces the applied one; the samples are back.
    let kubectl = cluster.admin();
    install_rbac(kubectl, setup);
    let namespace = setup.namespace();
    let samples_dir = setup.root().join("config/samples");
    kubectl.ok(&[
        "apply",
        "--server-side",
        "-k",
        path(&samples_dir),
        "-n",
        &namespace,
    ]);
    // Not waited for: what this step checks is the refusal in its log, not readiness.
    let manager = Operator::start(&Launch {
        leader_election_namespace: None,
        webhooks: None,
        identity: "manager-without-statefulsets".to_owned(),
        ..manager_identity(cluster, setup, binary, 0)
    });
    let denied = wait_for("the manager to be refused statefulsets", SETTLE, || {
        let denied = manager.forbidden();
        if denied.iter().any(|line| line.contains("statefulsets")) {
            Ok(denied)
        } else {
            Err(format!("refused so far: {denied:?}"))
        }
    });
    eprintln!(
        "[e2e {}] cluster: the 403 check reports, as it should:\n{}",
        setup.name,
        denied.join("\n")
    );
    // Killed, not stopped: a manager whose watch is refused does not always stop on SIGTERM.
    drop(manager);

    // The project as it was, without paying for another `generate manifests`.
    std::fs::write(&controller, source).unwrap();
    std::fs::write(&role_file, role).unwrap();
    setup.log("a missing RBAC rule is reported", started);
}

/// The controller source that holds an RBAC marker containing `needle`.
fn find_marker_file(root: &Path, needle: &str) -> PathBuf {
    walkdir::WalkDir::new(root.join("src/controllers"))
        .into_iter()
        .map(Result::unwrap)
        .map(|entry| entry.into_path())
        .find(|path| {
            path.extension().is_some_and(|ext| ext == "rs")
                && std::fs::read_to_string(path).unwrap().contains(needle)
        })
        .unwrap_or_else(|| panic!("no controller has a marker with {needle}"))
}

fn path(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}
