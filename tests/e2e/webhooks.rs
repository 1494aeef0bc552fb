//! Webhooks on the control plane: the two-version MySQLCluster with defaulting, validation and
//! conversion webhooks. `make dev-webhooks` points the API server at the managers the test
//! runs on this machine (this control plane has no Service network), and the managers make
//! their certificate and put its CA into the configurations and the CRD themselves, as the
//! self-managed mode does in a cluster.

use serde_json::{Value, json};

use crate::{
    common::{Project, kubectl::Kubectl, wait::wait_for},
    on_cluster::{SETTLE, Setup},
};

/// The kind's webhook file, and the label its `default` sets.
const FILE: &str = "src/webhooks/db/my_sql_cluster_v1.rs";
const DEFAULTED: &str = "e2e.example.com/defaulted";
const CRD: &str = "mysqlclusters.db.example.com";

/// `create webhook` for db's MySQLCluster (v1, the hub; v1alpha1 converts through it), with a
/// default and a rule written in its file as a user writes them.
pub fn add(project: &Project) {
    add_with(project, "opgen");
}

/// [`add`] with the opgen binary `opgen` (a path, or `opgen` for the one under test).
pub fn add_with(project: &Project, opgen: &str) {
    crate::run(
        &project.root,
        &format!(
            "{opgen} create webhook --group db --version v1 --kind MySQLCluster --defaulting --validation --conversion"
        ),
        true,
    );
    let mut text = project.read(FILE);
    for (scaffolded, written) in [
        (
            "    fn default(&self, obj: api::MySQLCluster) -> api::MySQLCluster {\n",
            format!(
                "    fn default(&self, mut obj: api::MySQLCluster) -> api::MySQLCluster {{\n        obj.metadata\n            .labels\n            .get_or_insert_with(Default::default)\n            .entry(\"{DEFAULTED}\".to_owned())\n            .or_insert_with(|| \"true\".to_owned());\n"
            ),
        ),
        (
            "fn validate(_obj: &api::MySQLCluster) -> Verdict {\n",
            "fn validate(obj: &api::MySQLCluster) -> Verdict {\n    if obj.spec.size > 9 {\n        return Verdict::allow().error(\"spec.size\", \"must be at most 9\");\n    }\n".to_owned(),
        ),
        // The file's own test, told that `default` now sets a field.
        (
            "        assert_eq!(answer.get(\"patch\"), None, \"{answer}\");\n        assert_eq!(answer.get(\"patchType\"), None, \"{answer}\");\n",
            "        assert_eq!(answer[\"patchType\"], \"JSONPatch\", \"{answer}\");\n".to_owned(),
        ),
    ] {
        assert!(
            text.contains(scaffolded),
            "{FILE} no longer has {scaffolded:?}: update this test"
        );
        text = text.replace(scaffolded, &written);
    }
    project.write(FILE, &text);
}

/// `make dev-webhooks`: the CRDs and webhook configurations of config/dev, calling
/// `https://127.0.0.1:<port>`. (A variable set on make's command line reaches the recipes'
/// environment: kubectl finds the control plane through `KUBECONFIG`.)
pub fn point_at(kubectl: &Kubectl, setup: &Setup, port: u16) {
    crate::run(
        &setup.project.root,
        &format!(
            "make dev-webhooks WEBHOOK_HOST=127.0.0.1:{port} OPGEN={} KUBECONFIG={}",
            env!("CARGO_BIN_EXE_opgen"),
            kubectl.kubeconfig().display()
        ),
        true,
    );
    let url = format!("https://127.0.0.1:{port}/");
    for config in client_configs(kubectl) {
        let called = config["url"].as_str().unwrap_or_default();
        assert!(called.starts_with(&url), "not called at {url}: {config}");
        assert!(config.get("service").is_none(), "{config}");
    }
}

/// The client configurations of both webhook configurations and of the CRD.
fn client_configs(kubectl: &Kubectl) -> Vec<Value> {
    let mut configs = Vec::new();
    for kind in [
        "mutatingwebhookconfiguration/mutating-webhook-configuration",
        "validatingwebhookconfiguration/validating-webhook-configuration",
    ] {
        let object = kubectl.json(&["get", kind, "-o", "json"]);
        for webhook in object["webhooks"].as_array().unwrap() {
            configs.push(webhook["clientConfig"].clone());
        }
    }
    let crd = kubectl.json(&["get", "crd", CRD, "-o", "json"]);
    configs.push(crd["spec"]["conversion"]["webhook"]["clientConfig"].clone());
    configs
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
        let configs = client_configs(kubectl);
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

/// Deletes the webhook configurations and converts the CRD without the webhook (its versions
/// have the same fields): for what the test does once no manager serves the webhooks.
pub fn remove(kubectl: &Kubectl) {
    kubectl.ok(&[
        "delete",
        "mutatingwebhookconfiguration/mutating-webhook-configuration",
        "validatingwebhookconfiguration/validating-webhook-configuration",
    ]);
    kubectl.ok(&[
        "patch",
        "crd",
        CRD,
        "--type=merge",
        "-p",
        r#"{"spec":{"conversion":{"strategy":"None","webhook":null}}}"#,
    ]);
}
