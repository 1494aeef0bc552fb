//! The rules that turn an object of the rendered `config/default` into a Helm template: its
//! names, namespaces and labels through the chart's helpers, and the manager's settings
//! through values. Everything these rules do not name stays as kustomize rendered it.

use serde_json::{Map, Value};

use super::holes::Holes;
use crate::bundle::object::Object;

/// What the rules need to know of the rendered tree.
#[derive(Debug, Clone)]
pub struct Names {
    /// The chart's name: the project's.
    pub chart: String,
    /// `namePrefix` of config/default: `<project>-`.
    pub prefix: String,
    /// The namespace config/default installs into.
    pub namespace: String,
    /// The manager's ServiceAccount as rendered.
    pub service_account: String,
}

const NAME_LABEL: &str = "app.kubernetes.io/name";
const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// The label `generate manifests` puts on a CRD that converts through the webhook.
const WEBHOOK_CA_LABEL: &str = "opgen.io/webhook-ca";

/// `object` as the text of a Helm template.
pub fn template(object: &Object, names: &Names) -> anyhow::Result<String> {
    let mut holes = Holes::new(&names.chart);
    let mut value = object.0.clone();
    match object.kind() {
        "Deployment" => manager(&mut value, names, &mut holes),
        "ServiceAccount" => service_account(&mut value, &mut holes),
        "RoleBinding" | "ClusterRoleBinding" => subjects(&mut value, names, &mut holes),
        "Service" => {
            metrics_port(&mut value, &mut holes);
            selector(
                value.pointer_mut("/spec/selector"),
                "selectorLabels",
                names,
                &mut holes,
            );
        }
        "NetworkPolicy" => selector(
            value.pointer_mut("/spec/podSelector/matchLabels"),
            "selectorLabels",
            names,
            &mut holes,
        ),
        "ServiceMonitor" => selector(
            value.pointer_mut("/spec/selector/matchLabels"),
            "selectorLabels",
            names,
            &mut holes,
        ),
        "CustomResourceDefinition" => {
            let converting = value
                .pointer(&format!(
                    "/metadata/labels/{}",
                    WEBHOOK_CA_LABEL.replace('/', "~1")
                ))
                .is_some();
            let helper = if converting {
                "convertingCrdAnnotations"
            } else {
                "crdAnnotations"
            };
            annotations(&mut value, helper, &mut holes);
        }
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            annotations(&mut value, "webhookAnnotations", &mut holes)
        }
        _ => {}
    }
    labels(&mut value, names, &mut holes);
    if object.kind() == "CustomResourceDefinition" {
        // A CRD's schemas are the user's API: only its conversion webhook names objects.
        if let Some(conversion) = value.pointer_mut("/spec/conversion") {
            rename(conversion, None, names, &mut holes);
        }
        if let Some(metadata) = value.get_mut("metadata") {
            rename(metadata, None, names, &mut holes);
        }
    } else {
        rename(&mut value, None, names, &mut holes);
    }
    holes.render(&value)
}

/// Every string that names an object of the project (it starts with the prefix) is named
/// after the release, and every namespace the kustomization set is the release's.
fn rename(value: &mut Value, key: Option<&str>, names: &Names, holes: &mut Holes) {
    match value {
        Value::String(text) => {
            if key == Some("namespace") && *text == names.namespace {
                *value = holes.value("namespace");
            } else if let Some(rest) = text.strip_prefix(&names.prefix) {
                *value = Value::String(format!("{}-{rest}", holes.inline("fullname")));
            }
        }
        Value::Array(items) => {
            for item in items {
                rename(item, None, names, holes);
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                // Labels are the helpers' (see `labels`), and their values are not names.
                if key != "labels" && key != "matchLabels" {
                    rename(item, Some(key), names, holes);
                }
            }
        }
        _ => {}
    }
}

/// `metadata.labels`: kustomize's name and managed-by labels become the chart's labels (Helm's
/// own added); an object kustomize did not label gets Helm's own only.
fn labels(value: &mut Value, names: &Names, holes: &mut Holes) {
    let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let labels = metadata
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(labels) = labels.as_object_mut() else {
        return;
    };
    labels.remove(MANAGED_BY_LABEL);
    let named = labels.get(NAME_LABEL).and_then(Value::as_str) == Some(names.chart.as_str());
    if named {
        labels.remove(NAME_LABEL);
    }
    holes.map_lines(labels, if named { "labels" } else { "helmLabels" });
}

/// A label selector (or the labels it selects) that picks the project's pods: this release's
/// pods instead.
fn selector(labels: Option<&mut Value>, helper: &str, names: &Names, holes: &mut Holes) {
    let Some(labels) = labels.and_then(Value::as_object_mut) else {
        return;
    };
    if labels.get(NAME_LABEL).and_then(Value::as_str) == Some(names.chart.as_str()) {
        labels.remove(NAME_LABEL);
        holes.map_lines(labels, helper);
    }
}

/// `metadata.annotations` with the lines of `helper` added; when the object has none, the
/// `<helper>Key` helper writes the `annotations:` key itself, so that nothing is rendered
/// when it has nothing to say.
fn annotations(value: &mut Value, helper: &str, holes: &mut Holes) {
    let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        Some(annotations) => holes.map_lines(annotations, helper),
        None => holes.map_lines(metadata, &format!("{helper}Key")),
    }
}

fn service_account(value: &mut Value, holes: &mut Holes) {
    value["metadata"]["name"] = holes.value("serviceAccountName");
    annotations(value, "serviceAccountAnnotations", holes);
}

/// The manager's ServiceAccount, where a binding names it: the one the chart creates or the
/// one `serviceAccount.name` names.
fn subjects(value: &mut Value, names: &Names, holes: &mut Holes) {
    let Some(subjects) = value.get_mut("subjects").and_then(Value::as_array_mut) else {
        return;
    };
    for subject in subjects {
        if subject["kind"] == "ServiceAccount" && subject["name"] == names.service_account {
            subject["name"] = holes.value("serviceAccountName");
        }
    }
}

/// The port named `http-metrics` of a Service (or a container) is `metrics.port`.
fn metrics_port(value: &mut Value, holes: &mut Holes) {
    let Some(ports) = value
        .pointer_mut("/spec/ports")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for port in ports {
        if port["name"] == "http-metrics" {
            port["port"] = holes.value("metricsPort");
        }
    }
}

/// The manager's Deployment: its replicas, pod and container settings come from values.
fn manager(value: &mut Value, names: &Names, holes: &mut Holes) {
    if value.pointer("/spec/replicas").is_some() {
        value["spec"]["replicas"] = holes.value("replicas");
    }
    selector(
        value.pointer_mut("/spec/selector/matchLabels"),
        "selectorLabels",
        names,
        holes,
    );
    let Some(template) = value.pointer_mut("/spec/template") else {
        return;
    };
    if let Some(metadata) = template.get_mut("metadata") {
        selector(metadata.get_mut("labels"), "podLabels", names, holes);
        annotations_of_pod(metadata, holes);
    }
    let Some(pod) = template.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if pod.contains_key("serviceAccountName") {
        pod.insert(
            "serviceAccountName".into(),
            holes.value("serviceAccountName"),
        );
    }
    if pod.contains_key("securityContext") {
        pod.insert("securityContext".into(), holes.block("podSecurityContext"));
    }
    if let Some(containers) = pod.get_mut("containers").and_then(Value::as_array_mut) {
        let manager = containers
            .iter()
            .position(|c| c["name"] == "manager")
            .unwrap_or(0);
        if let Some(container) = containers.get_mut(manager).and_then(Value::as_object_mut) {
            container_settings(container, holes);
        }
    }
    if !pod.contains_key("volumes") {
        holes.map_lines(pod, "volumes");
    }
    holes.map_lines(pod, "podPlacement");
}

fn annotations_of_pod(metadata: &mut Value, holes: &mut Holes) {
    let Some(metadata) = metadata.as_object_mut() else {
        return;
    };
    match metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        Some(annotations) => holes.map_lines(annotations, "podAnnotations"),
        None => holes.map_lines(metadata, "podAnnotationsKey"),
    }
}

fn container_settings(container: &mut Map<String, Value>, holes: &mut Holes) {
    container.insert("image".into(), holes.value("image"));
    holes.map_lines(container, "imagePullPolicy");
    for (key, helper) in [
        ("resources", "resources"),
        ("securityContext", "securityContext"),
    ] {
        if container.contains_key(key) {
            container.insert(key.into(), holes.block(helper));
        }
    }
    if let Some(args) = container.get_mut("args").and_then(Value::as_array_mut) {
        for arg in args.iter_mut() {
            let Some(text) = arg.as_str() else { continue };
            if text == "--leader-elect" {
                *arg = holes.item("leaderElectionArgs");
            } else if text.starts_with("--log-format=") {
                *arg = Value::String(format!("--log-format={}", holes.inline("logFormat")));
            } else if let Some(address) = text.strip_prefix("--metrics-bind-address=") {
                let host = address.rsplit_once(':').map_or("", |(host, _)| host);
                *arg = Value::String(format!(
                    "--metrics-bind-address={host}:{}",
                    holes.inline("metricsPort")
                ));
            }
        }
    }
    if let Some(ports) = container.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports {
            if port["name"] == "http-metrics" {
                port["containerPort"] = holes.value("metricsPort");
            }
        }
    }
    let env = container
        .entry("env")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(env) = env.as_array_mut() {
        for variable in env.iter_mut() {
            if variable["name"] == "WATCH_NAMESPACE" && variable.get("value").is_some() {
                variable["value"] = holes.value("watchNamespace");
            }
        }
        holes.list_lines(env, "env");
    }
    if !container.contains_key("volumeMounts") {
        holes.map_lines(container, "volumeMounts");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn names() -> Names {
        Names {
            chart: "demo".into(),
            prefix: "demo-".into(),
            namespace: "demo-system".into(),
            service_account: "demo-controller-manager".into(),
        }
    }

    #[test]
    fn names_namespaces_and_labels_go_through_the_helpers() {
        let binding = Object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {
                "name": "demo-leader-election-rolebinding",
                "namespace": "demo-system",
                "labels": {"app.kubernetes.io/name": "demo", "app.kubernetes.io/managed-by": "kustomize", "team": "a"},
            },
            "roleRef": {"kind": "Role", "name": "demo-leader-election-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "demo-controller-manager", "namespace": "demo-system"}],
        }));
        let text = template(&binding, &names()).unwrap();
        assert_eq!(
            text,
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  labels:\n    team: a\n    {{- include \"demo.labels\" . | nindent 4 }}\n  name: {{ include \"demo.fullname\" . }}-leader-election-rolebinding\n  namespace: {{ include \"demo.namespace\" . }}\nroleRef:\n  kind: Role\n  name: {{ include \"demo.fullname\" . }}-leader-election-role\nsubjects:\n- kind: ServiceAccount\n  name: {{ include \"demo.serviceAccountName\" . }}\n  namespace: {{ include \"demo.namespace\" . }}\n"
        );
    }

    #[test]
    fn a_crds_schema_is_left_as_it_is() {
        let crd = Object(json!({
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.demo.example.com"},
            "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
                "properties": {"namespace": {"description": "demo-system"}, "x": {"description": "demo-x"}},
            }}}]},
        }));
        let text = template(&crd, &names()).unwrap();
        assert!(text.contains("description: demo-system"), "{text}");
        assert!(text.contains("description: demo-x"), "{text}");
        assert!(
            text.contains("{{- include \"demo.crdAnnotationsKey\" . | nindent 2 }}"),
            "{text}"
        );
        assert!(
            text.contains("{{- include \"demo.helmLabels\" . | nindent 4 }}"),
            "{text}"
        );
    }
}
