//! Webhooks on the control plane: the two-version MySQLCluster with defaulting, validation and
//! conversion webhooks. `make deploy` installs them calling the Service; `make dev-webhooks`
//! then points the API server at the managers the test runs on this machine (this control
//! plane has no Service network), and the managers make their certificate and put its CA into
//! the configurations and the CRD themselves, as the self-managed mode does in a cluster; a
//! last `make deploy` points them at the Service again.

use serde_json::{Value, json};

use crate::{
    common::{Project, control_plane::free_ports, kubectl::Kubectl, wait::wait_for},
    on_cluster::{SETTLE, Setup},
};

/// The kind's webhook files, and the label its `default` sets.
const DEFAULTING_FILE: &str = "src/webhooks/db/my_sql_cluster_v1_defaulting.rs";
const VALIDATION_FILE: &str = "src/webhooks/db/my_sql_cluster_v1_validation.rs";
/// The one file of both admission webhooks that opgen 0.2.0 and earlier scaffolded.
const COMBINED_FILE: &str = "src/webhooks/db/my_sql_cluster_v1.rs";
const DEFAULTED: &str = "e2e.example.com/defaulted";
const CRD: &str = "mysqlclusters.db.example.com";

/// `create webhook` for db's MySQLCluster (v1, the hub; v1alpha1 converts through it), with a
/// default and a rule written in its files as a user writes them.
pub fn add(project: &Project) {
    create(project, "opgen");
    write_rules(project, DEFAULTING_FILE, VALIDATION_FILE);
}

/// [`add`] with an older opgen binary `opgen`, which scaffolds both admission webhooks of the
/// version into one file.
pub fn add_with_older(project: &Project, opgen: &str) {
    create(project, opgen);
    write_rules(project, COMBINED_FILE, COMBINED_FILE);
}

fn create(project: &Project, opgen: &str) {
    crate::run(
        &project.root,
        &format!(
            "{opgen} create webhook --group db --version v1 --kind MySQLCluster --defaulting --validation --conversion"
        ),
        true,
    );
}

/// The default (in `defaulting`) and the rule (in `validation`) that `check` proves.
pub fn write_rules(project: &Project, defaulting: &str, validation: &str) {
    let edits = [
        (
            defaulting,
            "    fn default(&self, obj: api::MySQLCluster) -> api::MySQLCluster {\n",
            format!(
                "    fn default(&self, mut obj: api::MySQLCluster) -> api::MySQLCluster {{\n        obj.metadata\n            .labels\n            .get_or_insert_with(Default::default)\n            .entry(\"{DEFAULTED}\".to_owned())\n            .or_insert_with(|| \"true\".to_owned());\n"
            ),
        ),
        (
            validation,
            "fn validate(_obj: &api::MySQLCluster) -> Verdict {\n",
            "fn validate(obj: &api::MySQLCluster) -> Verdict {\n    if obj.spec.size > 9 {\n        return Verdict::allow().error(\"spec.size\", \"must be at most 9\");\n    }\n".to_owned(),
        ),
        // The file's own test, told that `default` now sets a field.
        (
            defaulting,
            "        assert_eq!(answer.get(\"patch\"), None, \"{answer}\");\n        assert_eq!(answer.get(\"patchType\"), None, \"{answer}\");\n",
            "        assert_eq!(answer[\"patchType\"], \"JSONPatch\", \"{answer}\");\n".to_owned(),
        ),
    ];
    for (file, scaffolded, written) in edits {
        let text = project.read(file);
        assert!(
            text.contains(scaffolded),
            "{file} no longer has {scaffolded:?}: update this test"
        );
        project.write(file, &text.replace(scaffolded, &written));
    }
}

/// `make <target>` in `project`, with this opgen and the control plane's kubeconfig. (A
/// variable set on make's command line reaches the recipes' environment: kubectl finds the
/// control plane through `KUBECONFIG`.)
fn make(kubectl: &Kubectl, project: &Project, target: &str) {
    crate::run(
        &project.root,
        &format!(
            "make {target} OPGEN={} KUBECONFIG={}",
            env!("CARGO_BIN_EXE_opgen"),
            kubectl.kubeconfig().display()
        ),
        true,
    );
}

/// `make deploy`, all of config/default (no pod of the manager's Deployment runs here): the
/// webhook configurations and the CRD call the project's Service, whether they called it
/// already or the development overlay pointed them at this machine.
pub fn deploy(kubectl: &Kubectl, setup: &Setup) {
    make(kubectl, setup.project, "deploy");
    let service = json!({
        "name": format!("{}-webhook-service", setup.name),
        "namespace": setup.system_namespace(),
    });
    for config in client_configs(kubectl, setup) {
        assert!(config.get("url").is_none(), "{config}");
        for key in ["name", "namespace"] {
            assert_eq!(config["service"][key], service[key], "{config}");
        }
    }
    check_one_pair(kubectl, setup);
}

/// `make dev-webhooks`: the CRDs and webhook configurations of config/dev, calling
/// `https://127.0.0.1:<port>`, in place of the deployed ones.
pub fn point_at(kubectl: &Kubectl, setup: &Setup, port: u16) {
    make(
        kubectl,
        setup.project,
        &format!("dev-webhooks WEBHOOK_HOST=127.0.0.1:{port}"),
    );
    check_called_at(kubectl, setup, port);
    check_one_pair(kubectl, setup);
}

fn check_called_at(kubectl: &Kubectl, setup: &Setup, port: u16) {
    let url = format!("https://127.0.0.1:{port}/");
    for config in client_configs(kubectl, setup) {
        let called = config["url"].as_str().unwrap_or_default();
        assert!(called.starts_with(&url), "not called at {url}: {config}");
        assert!(config.get("service").is_none(), "{config}");
    }
}

/// The project's webhook configurations, by the names the cluster has them under (the
/// project's prefix, in both modes).
fn configurations(name: &str) -> [String; 2] {
    [
        format!("mutatingwebhookconfiguration/{name}-mutating-webhook-configuration"),
        format!("validatingwebhookconfiguration/{name}-validating-webhook-configuration"),
    ]
}

/// The project has one webhook configuration of each kind: switching modes replaced the
/// pair rather than adding one beside it.
fn check_one_pair(kubectl: &Kubectl, setup: &Setup) {
    let label = format!("opgen.io/webhook-ca={}", setup.name);
    let mut found = Vec::new();
    for kind in [
        "mutatingwebhookconfiguration",
        "validatingwebhookconfiguration",
    ] {
        let listed = kubectl.json(&["get", kind, "-l", &label, "-o", "json"]);
        for item in listed["items"].as_array().unwrap() {
            found.push(format!(
                "{kind}/{}",
                item["metadata"]["name"].as_str().unwrap()
            ));
        }
    }
    assert_eq!(found, configurations(setup.name));
}

/// The client configurations of both webhook configurations and of the CRD.
fn client_configs(kubectl: &Kubectl, setup: &Setup) -> Vec<Value> {
    let mut configs = Vec::new();
    for configuration in configurations(setup.name) {
        let object = kubectl.json(&["get", &configuration, "-o", "json"]);
        for webhook in object["webhooks"].as_array().unwrap() {
            configs.push(webhook["clientConfig"].clone());
        }
    }
    let crd = kubectl.json(&["get", "crd", CRD, "-o", "json"]);
    configs.push(crd["spec"]["conversion"]["webhook"]["clientConfig"].clone());
    configs
}

/// The manager may patch its own configurations and converting CRD, and nothing else of
/// their kinds: another product's webhook configuration (made here as the admin) and the
/// project's own CRDs without a conversion webhook are refused to its token.
pub fn check_injection_is_confined(kubectl: &Kubectl, manager: &Kubectl, setup: &Setup) {
    let other = "other-product-validating-webhook-configuration";
    kubectl
        .apply(
            &json!({
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": other},
                "webhooks": [{
                    "name": "vwidget.other.example.org",
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "failurePolicy": "Ignore",
                    "clientConfig": {"url": "https://other.example.org/validate"},
                    "rules": [{
                        "apiGroups": ["other.example.org"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["widgets"],
                    }],
                }],
            })
            .to_string(),
            &[],
        )
        .unwrap_or_else(|err| panic!("the other product's configuration: {err}"));
    let redirect = r#"[{"op":"replace","path":"/webhooks/0/clientConfig","value":{"url":"https://attacker.example.org/"}}]"#;
    let refused = manager
        .try_ok(&[
            "patch",
            &format!("validatingwebhookconfiguration/{other}"),
            "--type=json",
            "-p",
            redirect,
        ])
        .expect_err("the manager patched another product's webhook configuration");
    assert!(
        refused.contains("Forbidden") || refused.contains("forbidden"),
        "{refused}"
    );
    let label = r#"{"metadata":{"labels":{"e2e.example.com/touched":"yes"}}}"#;
    let refused = manager
        .try_ok(&[
            "patch",
            "crd",
            "backuppolicies.ops.example.com",
            "--type=merge",
            "-p",
            label,
        ])
        .expect_err("the manager patched a CRD without a conversion webhook");
    assert!(refused.contains("forbidden"), "{refused}");

    let can = |verb: &str, object: &str| {
        let output = manager.run(&["auth", "can-i", verb, object], None);
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    };
    for own in configurations(setup.name) {
        assert_eq!(can("patch", &own), "yes", "{own}");
    }
    assert_eq!(
        can("patch", &format!("customresourcedefinition/{CRD}")),
        "yes"
    );
    for kind in [
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
        "customresourcedefinitions",
    ] {
        assert_eq!(can("list", kind), "yes", "{kind}");
        for verb in ["patch", "update", "create", "delete"] {
            assert_eq!(can(verb, kind), "no", "the manager may {verb} every {kind}");
        }
    }
}

/// A second project with a webhook, in development mode on the same cluster: each keeps its
/// own configurations, the first still called at its port (its webhooks are then used by
/// `check`), the second's at its own, with no CA of the first's manager in them.
pub fn beside_another_project(kubectl: &Kubectl, setup: &Setup, port: u16) {
    let other = Project::init("shop-op", "");
    other.create_api("--group shop --version v1 --kind Cart");
    crate::run(
        &other.root,
        "opgen create webhook --group shop --version v1 --kind Cart --validation",
        true,
    );
    let [other_port] = free_ports();
    make(
        kubectl,
        &other,
        &format!("dev-webhooks WEBHOOK_HOST=127.0.0.1:{other_port}"),
    );
    check_called_at(kubectl, setup, port);
    check_one_pair(kubectl, setup);
    let theirs = kubectl.json(&[
        "get",
        "validatingwebhookconfiguration/shop-op-validating-webhook-configuration",
        "-o",
        "json",
    ]);
    let config = &theirs["webhooks"][0]["clientConfig"];
    assert!(
        config["url"]
            .as_str()
            .is_some_and(|url| url.starts_with(&format!("https://127.0.0.1:{other_port}/"))),
        "{theirs}"
    );
    // Its own manager is not running, and the first project's leaves it alone.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let theirs = kubectl.json(&[
        "get",
        "validatingwebhookconfiguration/shop-op-validating-webhook-configuration",
        "-o",
        "json",
    ]);
    assert!(
        theirs["webhooks"][0]["clientConfig"]
            .get("caBundle")
            .is_none(),
        "{theirs}"
    );
}

/// With the managers running: the CA they made is in every bundle, and the API server calls
/// each webhook over TLS.
pub fn check(kubectl: &Kubectl, setup: &Setup) {
    let secret = kubectl.json(&[
        "get",
        "secret",
        &format!("{}-webhook-cert", setup.name),
        "-n",
        &setup.system_namespace(),
        "-o",
        "json",
    ]);
    let ca = secret["data"]["ca.crt"].clone();
    assert!(ca.is_string(), "the Secret holds no CA: {secret}");
    wait_for("the managers' CA in every caBundle", SETTLE, || {
        let configs = client_configs(kubectl, setup);
        match configs.iter().find(|config| config["caBundle"] != ca) {
            Some(other) => Err(format!("{other}")),
            None => Ok(()),
        }
    });

    let namespace = setup.namespace();
    let object = |version: &str, name: &str, size: i32| {
        json!({
            "apiVersion": format!("db.example.com/{version}"),
            "kind": "MySQLCluster",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"size": size},
        })
        .to_string()
    };
    let get = |version: &str, name: &str| {
        kubectl.json(&[
            "get",
            &format!("mysqlclusters.{version}.db.example.com"),
            name,
            "-n",
            &namespace,
            "-o",
            "json",
        ])
    };

    // Defaulting: the mutating webhook's label is on the stored object.
    kubectl
        .apply(&object("v1", "webhook-defaults", 1), &[])
        .unwrap_or_else(|err| panic!("a valid MySQLCluster refused: {err}"));
    let stored = get("v1", "webhook-defaults");
    assert_eq!(stored["metadata"]["labels"][DEFAULTED], "true", "{stored}");

    // Validation: refused with the webhook's message.
    let refused = kubectl
        .apply(&object("v1", "webhook-too-big", 10), &[])
        .expect_err("a MySQLCluster of size 10 accepted");
    assert!(
        refused.contains("denied the request")
            && refused.contains(
                r#"MySQLCluster "webhook-too-big" is invalid: spec.size: must be at most 9"#
            ),
        "{refused}"
    );

    // Conversion: an object written as the spoke reads as the hub, and the other way round;
    // the spoke's create is defaulted too, since the API server converts it for the webhook.
    kubectl
        .apply(&object("v1alpha1", "webhook-spoke", 2), &[])
        .unwrap_or_else(|err| panic!("a v1alpha1 MySQLCluster refused: {err}"));
    for (version, name, size) in [
        ("v1", "webhook-spoke", 2),
        ("v1alpha1", "webhook-spoke", 2),
        ("v1alpha1", "webhook-defaults", 1),
    ] {
        let read = get(version, name);
        assert_eq!(
            read["apiVersion"],
            format!("db.example.com/{version}"),
            "{read}"
        );
        assert_eq!(read["spec"]["size"], size, "{read}");
        assert_eq!(read["metadata"]["labels"][DEFAULTED], "true", "{read}");
    }
}

/// Deletes the admission webhook configurations alone (the CRD's conversion stays, so that a
/// later `make deploy` applies the CRD without a conflict).
pub fn remove_configurations(kubectl: &Kubectl, setup: &Setup) {
    let [mutating, validating] = configurations(setup.name);
    kubectl.ok(&["delete", &mutating, &validating]);
}

/// Deletes the webhook configurations and converts the CRD without the webhook (its versions
/// have the same fields): for what the test does once no manager serves the webhooks.
pub fn remove(kubectl: &Kubectl, setup: &Setup) {
    remove_configurations(kubectl, setup);
    kubectl.ok(&[
        "patch",
        "crd",
        CRD,
        "--type=merge",
        "-p",
        r#"{"spec":{"conversion":{"strategy":"None","webhook":null}}}"#,
    ]);
}
