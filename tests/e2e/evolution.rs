//! A project changed after day one: three kinds with webhooks (a two-version plain kind
//! converting through its hub, an operand, a second plain kind), then one version deleted
//! (the version the controller watches, so the controller moves to the storage version), one
//! kind deleted (its controller edited, so only --force removes it), one webhook type deleted,
//! and the scope edited to namespaced. After each command the project builds, passes its tests,
//! lints and is formatted, its manifests are up to date, and its operator runs on one control
//! plane with nothing but the generated RBAC: the CRDs apply, and the remaining samples
//! reconcile.

use std::{path::Path, time::Instant};

use serde_json::json;

use crate::{
    build_test_lint,
    common::{
        Project,
        control_plane::{ControlPlane, DEFAULT_KUBERNETES},
        kubectl::Kubectl,
        operator::{Launch, Operator},
        shared_target_dir,
        wait::wait_for,
    },
    manifests::{Crd, Sample},
    on_cluster::{self, SETTLE, Setup},
    run,
};

/// The scenario's project: its package, and the prefix of its namespace and service account.
const NAME: &str = "evolution-op";

#[test]
fn a_project_changed_after_day_one_builds_and_runs_after_every_command() {
    let started = Instant::now();
    let project = Project::init(NAME, "");
    let root = &project.root;
    // The controller watches v1alpha1; v1, made later, is the storage version and the hub.
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    project.create_api("--group db --version v1 --kind MySQLCluster");
    project.create_api(
        "--group cache --version v1 --kind Memcached --image memcached:1.6 --port 11211",
    );
    project.create_api("--group ops --version v1 --kind Backup");
    for webhook in [
        "--group db --version v1 --kind MySQLCluster --defaulting --validation",
        "--group db --version v1 --kind MySQLCluster --conversion",
        // A second admission webhook added later, beside the first one's file.
        "--group cache --version v1 --kind Memcached --defaulting",
        "--group cache --version v1 --kind Memcached --validation",
        "--group ops --version v1 --kind Backup --defaulting",
    ] {
        run(root, &format!("opgen create webhook {webhook}"), true);
    }
    run(root, "opgen generate manifests", true);
    let cluster = ControlPlane::start(DEFAULT_KUBERNETES).unwrap_or_else(|err| panic!("{err:#}"));
    let mut step = Step {
        project: &project,
        cluster: &cluster,
        started,
        namespaced: false,
    };

    // The version the controller watches: it moves to v1, and the conversion goes.
    let said = step.run("opgen delete api --group db --version v1alpha1 --kind MySQLCluster");
    assert!(
        said.contains("src/controllers/db/my_sql_cluster.rs watches v1 now"),
        "{said}"
    );
    assert!(
        project
            .read("src/controllers/db/my_sql_cluster.rs")
            .contains(&format!(
                "use ::{}_api::db::v1 as api;",
                NAME.replace('-', "_")
            ))
    );
    step.check("a version deleted");

    // A kind whose controller holds the user's code: refused and kept, then removed with --force.
    let controller = "src/controllers/ops/backup.rs";
    project.write(
        controller,
        &format!("{}// The user's own line.\n", project.read(controller)),
    );
    let before = project.tree();
    let refused = run(
        root,
        "opgen delete api --group ops --version v1 --kind Backup",
        false,
    );
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(&format!("{controller}: differs")),
        "{refused:?}"
    );
    assert!(project.tree() == before, "the refused delete changed files");
    step.run("opgen delete api --group ops --version v1 --kind Backup --force");
    assert!(!root.join(controller).exists());
    step.check("a kind deleted");

    step.run("opgen delete webhook --group db --version v1 --kind MySQLCluster --validation");
    assert!(
        !root
            .join("src/webhooks/db/my_sql_cluster_v1_validation.rs")
            .exists()
    );
    step.check("a webhook type deleted");

    step.run("opgen edit --namespaced");
    assert!(
        project
            .read("config/rbac/role.yaml")
            .contains("\nkind: Role\n")
    );
    step.namespaced = true;
    step.check("the scope edited");
    eprintln!("[e2e {NAME}] scenario took {:.0?}", started.elapsed());
}

/// The project between its commands, on one control plane that keeps what the earlier steps
/// applied, as a cluster does between releases of an operator.
struct Step<'a> {
    project: &'a Project,
    cluster: &'a ControlPlane,
    started: Instant,
    namespaced: bool,
}

impl Step<'_> {
    /// Runs the opgen command `command`, which must succeed; its stderr and stdout.
    fn run(&self, command: &str) -> String {
        let output = run(&self.project.root, command, true);
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        )
    }

    /// What a user runs before committing, then the operator on the control plane.
    fn check(&self, what: &str) {
        let root = &self.project.root;
        build_test_lint(root);
        run(root, "opgen generate manifests --check", true);
        let since = Instant::now();
        self.on_cluster();
        eprintln!(
            "[e2e {NAME}] {what}: builds, tests, lints; on the control plane in {:.0?} ({:.0?} so far)",
            since.elapsed(),
            self.started.elapsed()
        );
    }

    /// The CRDs applied and established, the manager run with the generated RBAC only, and
    /// every sample of `config/samples` reconciled.
    fn on_cluster(&self) {
        let setup = Setup {
            project: self.project,
            name: NAME,
            target_dir: &shared_target_dir(),
            namespaced_operator: self.namespaced,
            kubernetes: DEFAULT_KUBERNETES,
            check_missing_rule: false,
            webhooks: false,
            secure_metrics: true,
            disruption_budgets: true,
            autoscaling: false,
            object_metrics: true,
            traces: false,
        };
        let kubectl = self.cluster.admin();
        let root = &self.project.root;
        let crds = Crd::read_all(root);
        kubectl.ok(&[
            "apply",
            "--server-side",
            "-f",
            &root.join("config/crd/bases").to_string_lossy(),
        ]);
        for crd in &crds {
            kubectl.ok(&[
                "wait",
                "--for=condition=Established",
                &format!("crd/{}", crd.name),
                "--timeout=60s",
            ]);
        }
        install(kubectl, root);
        if self.namespaced {
            // What `opgen edit` says to do: the cluster-wide role and binding stay otherwise,
            // and would grant more than the Role.
            for object in [
                "clusterrolebinding/evolution-op-manager-rolebinding",
                "clusterrole/evolution-op-manager-role",
            ] {
                kubectl.ok(&["delete", object]);
            }
        }
        let namespace = setup.namespace();
        kubectl
            .apply(
                &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
                    .to_string(),
                &[],
            )
            .unwrap_or_else(|err| panic!("namespace {namespace}: {err}"));

        let token = kubectl.ok(&[
            "create",
            "token",
            &format!("{NAME}-controller-manager"),
            "-n",
            &setup.system_namespace(),
        ]);
        let mut manager = Operator::start(&Launch {
            binary: on_cluster::manager_binary(&setup),
            kubeconfig: self.cluster.kubeconfig_with_token("manager", token.trim()),
            log_dir: self.cluster.dir().to_owned(),
            identity: format!(
                "manager-{}",
                if self.namespaced {
                    "namespaced"
                } else {
                    "cluster"
                }
            ),
            leader_election_namespace: None,
            watch_namespace: self.namespaced.then(|| setup.system_namespace()),
            webhooks: None,
            metrics_token: None,
            otlp_endpoint: None,
        });
        manager.wait_ready().unwrap_or_else(|err| panic!("{err:#}"));
        kubectl.ok(&[
            "apply",
            "--server-side",
            "-k",
            &root.join("config/samples").to_string_lossy(),
            "-n",
            &namespace,
        ]);
        for sample in Sample::read_all(root) {
            let crd = Crd::of(&crds, &sample);
            reconciled(kubectl, &namespace, crd, &sample);
        }
        manager.stop_after_all_allowed();
    }
}

/// `config/default` but what this control plane cannot run or serve: the manager's
/// Deployment (the test runs the manager), the webhook configurations and CRDs that call a
/// Service (no Service network here; the CRDs are applied from their files), and
/// cert-manager's objects (a namespaced project's webhooks use its component).
fn install(kubectl: &Kubectl, root: &Path) {
    let rendered = kubectl.ok(&["kustomize", &root.join("config/default").to_string_lossy()]);
    let left_out = [
        "Deployment",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "CustomResourceDefinition",
        "Issuer",
        "Certificate",
    ];
    let kept: Vec<&str> = rendered
        .split("\n---\n")
        .filter(|doc| {
            !left_out
                .iter()
                .any(|kind| doc.lines().any(|line| line == format!("kind: {kind}")))
        })
        .collect();
    kubectl
        .apply(&kept.join("\n---\n"), &[])
        .unwrap_or_else(|err| panic!("config/default does not apply: {err}"));
}

/// A plain kind's sample `Ready` for its generation; an operand's workload made and its status
/// reported for its generation (no pod runs on this control plane).
fn reconciled(kubectl: &Kubectl, namespace: &str, crd: &Crd, sample: &Sample) {
    let what = format!("{} {} reconciled", crd.kind, sample.name);
    wait_for(&what, SETTLE, || {
        let object = kubectl.try_json(&["get", &crd.name, &sample.name, "-n", namespace])?;
        let generation = &object["metadata"]["generation"];
        let status = &object["status"];
        let ready = status["conditions"]
            .as_array()
            .and_then(|conditions| conditions.iter().find(|c| c["type"] == "Ready"));
        let done = if crd.scale {
            let workload = kubectl.try_json(&["get", "deployment", &sample.name, "-n", namespace]);
            workload.is_ok() && status["observedGeneration"] == *generation
        } else {
            ready.is_some_and(|ready| ready["status"] == "True")
                && status["observedGeneration"] == *generation
        };
        if done {
            Ok(())
        } else {
            Err(format!("status for generation {generation}: {status}"))
        }
    });
}
