//! The CSV's install strategy: the manager Deployment, and the RBAC bound to its
//! ServiceAccount as `clusterPermissions` and `permissions`. OLM creates the ServiceAccount,
//! the roles and the bindings from these, so the objects they come from leave the bundle.

use anyhow::bail;
use serde_json::{Map, Value, json};

use super::object::Object;
use crate::model::ImageRef;

/// The container of the manager Deployment that runs the manager.
const MANAGER_CONTAINER: &str = "manager";

/// The pod annotation OLM sets to the namespaces an operator serves, as a comma-separated list
/// (one namespace for OwnNamespace and SingleNamespace installs).
const TARGET_NAMESPACES_PATH: &str = "metadata.annotations['olm.targetNamespaces']";

/// The variable a namespaced manager reads the namespace it watches from.
const WATCH_NAMESPACE: &str = "WATCH_NAMESPACE";

#[derive(Debug)]
pub struct Install {
    /// The CSV's `spec.install`.
    pub strategy: Value,
    /// The image of the manager container, as the bundle installs it.
    pub manager_image: String,
    /// The rendered objects the strategy does not absorb.
    pub others: Vec<Object>,
}

/// Builds the install strategy from the manager `deployment` and the rendered `objects`.
/// `image` replaces the manager container's image; `namespaced` operators watch the namespace
/// OLM targets rather than their own.
pub fn install(
    deployment: &Object,
    objects: Vec<Object>,
    image: Option<&ImageRef>,
    namespaced: bool,
) -> anyhow::Result<Install> {
    let mut spec = deployment.0.get("spec").cloned().unwrap_or(json!({}));
    let manager_image = set_manager_image(&mut spec, deployment, image)?;
    if namespaced {
        watch_target_namespace(&mut spec);
    }
    serve_olms_webhook_certificate(&mut spec);
    let service_account = spec
        .pointer("/template/spec/serviceAccountName")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_owned();

    let (bindings, rest): (Vec<Object>, Vec<Object>) = objects.into_iter().partition(|object| {
        matches!(object.kind(), "RoleBinding" | "ClusterRoleBinding")
            && binds(object, &service_account)
    });
    let mut cluster_rules = Vec::new();
    let mut rules = Vec::new();
    let mut used_roles = Vec::new();
    for binding in &bindings {
        let role_kind = binding.str_at("/roleRef/kind");
        let role_name = binding.str_at("/roleRef/name");
        let Some(role) = rest
            .iter()
            .find(|o| o.kind() == role_kind && o.name() == role_name)
        else {
            bail!(
                "{} binds {role_kind} {role_name} to the manager's ServiceAccount {service_account}, but config/manifests renders no such {role_kind}",
                binding.describe()
            );
        };
        let target = if binding.kind() == "ClusterRoleBinding" {
            &mut cluster_rules
        } else {
            &mut rules
        };
        for rule in role
            .0
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !target.contains(rule) {
                target.push(rule.clone());
            }
        }
        used_roles.push((role_kind.to_owned(), role_name.to_owned()));
    }
    let others = rest
        .into_iter()
        .filter(|object| {
            let absorbed = used_roles
                .iter()
                .any(|(kind, name)| object.kind() == kind && object.name() == name)
                || (object.kind() == "ServiceAccount" && object.name() == service_account);
            !absorbed
        })
        .collect();

    let mut strategy_spec = Map::new();
    let permissions =
        |rules: Vec<Value>| json!([{"serviceAccountName": service_account, "rules": rules}]);
    if !cluster_rules.is_empty() {
        strategy_spec.insert("clusterPermissions".into(), permissions(cluster_rules));
    }
    if !rules.is_empty() {
        strategy_spec.insert("permissions".into(), permissions(rules));
    }
    let labels = deployment
        .0
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(json!({}));
    strategy_spec.insert(
        "deployments".into(),
        json!([{"name": deployment.name(), "label": labels, "spec": spec}]),
    );
    Ok(Install {
        strategy: json!({"strategy": "deployment", "spec": strategy_spec}),
        manager_image,
        others,
    })
}

/// Whether `binding` has the ServiceAccount `name` among its subjects.
fn binds(binding: &Object, name: &str) -> bool {
    binding
        .0
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|subject| subject["kind"] == "ServiceAccount" && subject["name"] == name)
}

/// Sets the image of the manager container (the one named `manager`, or the only one) to
/// `image`, and returns the image it ends up with.
fn set_manager_image(
    spec: &mut Value,
    deployment: &Object,
    image: Option<&ImageRef>,
) -> anyhow::Result<String> {
    let containers = spec
        .pointer_mut("/template/spec/containers")
        .and_then(Value::as_array_mut);
    let Some(containers) = containers.filter(|c| !c.is_empty()) else {
        bail!("the Deployment {} has no containers", deployment.name());
    };
    let index = match containers
        .iter()
        .position(|c| c["name"] == MANAGER_CONTAINER)
    {
        Some(index) => index,
        None if containers.len() == 1 => 0,
        None => bail!(
            "the Deployment {} has several containers and none named `{MANAGER_CONTAINER}`, so opgen cannot tell which one runs the manager",
            deployment.name()
        ),
    };
    let container = &mut containers[index];
    if let Some(image) = image {
        container["image"] = Value::String(image.to_string());
    }
    Ok(container["image"].as_str().unwrap_or_default().to_owned())
}

/// Points `WATCH_NAMESPACE`, which the rendered Deployment takes from the pod's own namespace,
/// at the namespace OLM targets, so that a SingleNamespace install watches its target.
fn watch_target_namespace(spec: &mut Value) {
    for variable in environment(spec) {
        if variable["name"] == WATCH_NAMESPACE
            && let Some(path) = variable.pointer_mut("/valueFrom/fieldRef/fieldPath")
        {
            *path = Value::String(TARGET_NAMESPACES_PATH.into());
        }
    }
}

/// OLM issues the webhook server's certificate itself and mounts it where controller-runtime
/// looks, injecting its CA into the webhook definitions: the manager reads it there
/// (`WEBHOOK_CERT_DIR`) instead of making its own (`WEBHOOK_CERT_SECRET`, config/default's).
fn serve_olms_webhook_certificate(spec: &mut Value) {
    for variable in environment(spec) {
        if variable["name"] == "WEBHOOK_CERT_SECRET" {
            *variable = json!({
                "name": "WEBHOOK_CERT_DIR",
                "value": "/tmp/k8s-webhook-server/serving-certs",
            });
        }
    }
}

/// Every environment variable of every container of the pod template of `spec`.
fn environment(spec: &mut Value) -> impl Iterator<Item = &mut Value> {
    spec.pointer_mut("/template/spec/containers")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(|container| container.get_mut("env").and_then(Value::as_array_mut))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Object {
        Object(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "demo-controller-manager", "namespace": "demo-system",
                         "labels": {"control-plane": "controller-manager"}},
            "spec": {"template": {"spec": {
                "serviceAccountName": "demo-controller-manager",
                "containers": [{"name": "manager", "image": "controller:latest", "env": [
                    {"name": "WATCH_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
                ]}],
            }}},
        }))
    }

    fn object(value: Value) -> Object {
        Object(value)
    }

    fn rbac() -> Vec<Object> {
        let rule =
            |resource: &str| json!({"apiGroups": [""], "resources": [resource], "verbs": ["get"]});
        let subject = json!([{"kind": "ServiceAccount", "name": "demo-controller-manager", "namespace": "demo-system"}]);
        vec![
            object(
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "demo-controller-manager"}}),
            ),
            object(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                          "metadata": {"name": "demo-manager-role"}, "rules": [rule("pods")]}),
            ),
            object(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                          "metadata": {"name": "demo-manager-rolebinding"}, "subjects": subject,
                          "roleRef": {"kind": "ClusterRole", "name": "demo-manager-role"}}),
            ),
            object(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                          "metadata": {"name": "demo-leader-election-role"}, "rules": [rule("leases")]}),
            ),
            object(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                          "metadata": {"name": "demo-leader-election-rolebinding"}, "subjects": subject,
                          "roleRef": {"kind": "Role", "name": "demo-leader-election-role"}}),
            ),
            object(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                          "metadata": {"name": "demo-metrics-reader"}, "rules": [rule("nodes")]}),
            ),
        ]
    }

    #[test]
    fn absorbs_the_managers_rbac() {
        let image: ImageRef = "registry.example.com/demo:v1".parse().unwrap();
        let install = install(&deployment(), rbac(), Some(&image), false).unwrap();
        let spec = &install.strategy["spec"];
        assert_eq!(install.strategy["strategy"], "deployment");
        assert_eq!(
            spec["clusterPermissions"][0]["serviceAccountName"],
            "demo-controller-manager"
        );
        assert_eq!(
            spec["clusterPermissions"][0]["rules"][0]["resources"],
            json!(["pods"])
        );
        assert_eq!(
            spec["permissions"][0]["rules"][0]["resources"],
            json!(["leases"])
        );
        let deployment = &spec["deployments"][0];
        assert_eq!(deployment["name"], "demo-controller-manager");
        assert_eq!(
            deployment["label"],
            json!({"control-plane": "controller-manager"})
        );
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "registry.example.com/demo:v1");
        assert_eq!(install.manager_image, "registry.example.com/demo:v1");
        assert_eq!(
            container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "metadata.namespace",
            "a cluster-wide manager keeps its environment"
        );
        let left: Vec<String> = install.others.iter().map(Object::describe).collect();
        assert_eq!(left, ["ClusterRole demo-metrics-reader"]);
    }

    #[test]
    fn a_namespaced_manager_watches_the_target_namespace() {
        let install = install(&deployment(), rbac(), None, true).unwrap();
        let container = &install.strategy["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
            [0];
        assert_eq!(
            container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.annotations['olm.targetNamespaces']"
        );
        assert_eq!(install.manager_image, "controller:latest");
    }

    #[test]
    fn the_manager_serves_the_certificate_olm_mounts() {
        let mut value = deployment().0;
        value["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "WEBHOOK_CERT_SECRET", "value": "op-webhook-cert"}));
        let install = install(&Object(value), rbac(), None, false).unwrap();
        let env = &install.strategy["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
            [0]["env"];
        let names: Vec<&str> = env
            .as_array()
            .unwrap()
            .iter()
            .map(|variable| variable["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"WEBHOOK_CERT_DIR"), "{env}");
        assert!(!names.contains(&"WEBHOOK_CERT_SECRET"), "{env}");
    }

    #[test]
    fn a_binding_to_a_missing_role_is_an_error() {
        let mut objects = rbac();
        objects.remove(1);
        let err = install(&deployment(), objects, None, false)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "ClusterRoleBinding demo-manager-rolebinding binds ClusterRole demo-manager-role"
            ),
            "{err}"
        );
    }

    #[test]
    fn the_manager_container_must_be_found() {
        let mut deployment = deployment();
        deployment.0["spec"]["template"]["spec"]["containers"] =
            json!([{"name": "a", "image": "a"}, {"name": "b", "image": "b"}]);
        let err = install(&deployment, vec![], None, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("none named `manager`"), "{err}");
    }
}
