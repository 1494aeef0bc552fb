//! The CSV's `webhookdefinitions`, from the rendered webhook configurations and the CRDs that
//! convert through a webhook. OLM creates the webhook configurations, the Service in front of
//! the manager and its certificate from these, so the objects they come from leave the bundle.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::object::Object;

/// What an admission webhook entry passes on to its definition as it is.
const ADMISSION_FIELDS: &[&str] = &[
    "admissionReviewVersions",
    "failurePolicy",
    "matchPolicy",
    "objectSelector",
    "reinvocationPolicy",
    "rules",
    "sideEffects",
    "timeoutSeconds",
];

/// The port a webhook Service listens on when its client configuration names none.
const DEFAULT_SERVICE_PORT: i64 = 443;

#[derive(Debug, Default)]
pub struct Webhooks {
    pub definitions: Vec<Value>,
    /// The rendered objects the definitions do not absorb.
    pub others: Vec<Object>,
}

/// The definitions of the webhooks served by the Deployment `deployment_name`.
pub fn webhook_definitions(
    configurations: &[Object],
    crds: &[Object],
    others: Vec<Object>,
    deployment_name: &str,
) -> Webhooks {
    let mut services_used: Vec<String> = Vec::new();
    let mut definitions = Vec::new();
    let mut endpoint = |service: &Value| -> (Value, Value, Value) {
        let name = service["name"].as_str().unwrap_or_default().to_owned();
        let port = service["port"].as_i64().unwrap_or(DEFAULT_SERVICE_PORT);
        let target = others
            .iter()
            .find(|o| o.kind() == "Service" && o.name() == name)
            .and_then(|svc| {
                svc.0
                    .pointer("/spec/ports")?
                    .as_array()?
                    .iter()
                    .find(|p| p["port"].as_i64() == Some(port))
                    .map(|p| p.get("targetPort").cloned().unwrap_or(json!(port)))
            })
            .unwrap_or(json!(port));
        services_used.push(name);
        (
            json!(port),
            target,
            service.get("path").cloned().unwrap_or(json!("/")),
        )
    };

    for configuration in configurations {
        let kind = if configuration.kind() == "MutatingWebhookConfiguration" {
            "MutatingAdmissionWebhook"
        } else {
            "ValidatingAdmissionWebhook"
        };
        let webhooks = configuration.0.get("webhooks").and_then(Value::as_array);
        for webhook in webhooks.into_iter().flatten() {
            let service = webhook
                .pointer("/clientConfig/service")
                .cloned()
                .unwrap_or(json!({}));
            let (port, target, path) = endpoint(&service);
            let mut definition = Map::new();
            definition.insert("type".into(), json!(kind));
            definition.insert("generateName".into(), webhook["name"].clone());
            definition.insert("deploymentName".into(), json!(deployment_name));
            definition.insert("containerPort".into(), port);
            definition.insert("targetPort".into(), target);
            definition.insert("webhookPath".into(), path);
            for field in ADMISSION_FIELDS {
                if let Some(value) = webhook.get(*field) {
                    definition.insert((*field).into(), value.clone());
                }
            }
            definitions.push(Value::Object(definition));
        }
    }

    // CRDs served by the same endpoint share one conversion definition.
    let mut conversions: BTreeMap<String, (Value, Vec<String>)> = BTreeMap::new();
    for crd in crds {
        let conversion = crd.0.pointer("/spec/conversion");
        if conversion.and_then(|c| c["strategy"].as_str()) != Some("Webhook") {
            continue;
        }
        let webhook = &conversion.expect("checked above")["webhook"];
        let service = webhook
            .pointer("/clientConfig/service")
            .cloned()
            .unwrap_or(json!({}));
        let key = service.to_string();
        let versions = webhook
            .get("conversionReviewVersions")
            .cloned()
            .unwrap_or(json!(["v1"]));
        conversions
            .entry(key)
            .or_insert_with(|| {
                (
                    json!({"service": service, "versions": versions}),
                    Vec::new(),
                )
            })
            .1
            .push(crd.name().to_owned());
    }
    for (service, mut names) in conversions.into_values() {
        names.sort();
        let (port, target, path) = endpoint(&service["service"]);
        definitions.push(json!({
            "type": "ConversionWebhook",
            "generateName": format!("c{}", names[0]),
            "deploymentName": deployment_name,
            "containerPort": port,
            "targetPort": target,
            "webhookPath": path,
            "admissionReviewVersions": service["versions"],
            "sideEffects": "None",
            "conversionCRDs": names,
        }));
    }

    let others = others
        .into_iter()
        .filter(|o| !(o.kind() == "Service" && services_used.iter().any(|s| s == o.name())))
        .collect();
    Webhooks {
        definitions,
        others,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service() -> Object {
        Object(json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "demo-webhook-service"},
            "spec": {"ports": [{"port": 443, "targetPort": 9443}]},
        }))
    }

    #[test]
    fn admission_webhooks_become_definitions() {
        let configuration = Object(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "demo-validating"},
            "webhooks": [{
                "name": "vmysqlcluster.kb.io",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "clientConfig": {"service": {"name": "demo-webhook-service", "namespace": "demo-system", "path": "/validate"}},
                "rules": [{"operations": ["CREATE"], "apiGroups": ["db.example.com"], "apiVersions": ["v1"], "resources": ["mysqlclusters"]}],
            }],
        }));
        let metrics =
            Object(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "metrics"}}));
        let webhooks = webhook_definitions(
            &[configuration],
            &[],
            vec![service(), metrics],
            "demo-controller-manager",
        );
        assert_eq!(
            webhooks.definitions,
            [json!({
                "type": "ValidatingAdmissionWebhook",
                "generateName": "vmysqlcluster.kb.io",
                "deploymentName": "demo-controller-manager",
                "containerPort": 443,
                "targetPort": 9443,
                "webhookPath": "/validate",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "rules": [{"operations": ["CREATE"], "apiGroups": ["db.example.com"], "apiVersions": ["v1"], "resources": ["mysqlclusters"]}],
            })]
        );
        let left: Vec<&str> = webhooks.others.iter().map(Object::name).collect();
        assert_eq!(left, ["metrics"], "OLM makes the webhook's Service");
    }

    #[test]
    fn conversion_webhooks_are_grouped_by_endpoint() {
        let crd = |name: &str| {
            Object(json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": name},
                "spec": {"conversion": {"strategy": "Webhook", "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"name": "demo-webhook-service", "namespace": "demo-system", "path": "/convert"}},
                }}},
            }))
        };
        let plain = Object(
            json!({"kind": "CustomResourceDefinition", "metadata": {"name": "plain.db.example.com"}, "spec": {}}),
        );
        let webhooks = webhook_definitions(
            &[],
            &[crd("b.db.example.com"), plain, crd("a.db.example.com")],
            vec![service()],
            "demo-controller-manager",
        );
        assert_eq!(webhooks.definitions.len(), 1);
        let definition = &webhooks.definitions[0];
        assert_eq!(definition["type"], "ConversionWebhook");
        assert_eq!(definition["generateName"], "ca.db.example.com");
        assert_eq!(
            definition["conversionCRDs"],
            json!(["a.db.example.com", "b.db.example.com"])
        );
        assert_eq!(definition["webhookPath"], "/convert");
        assert_eq!(definition["targetPort"], 9443);
        assert!(webhooks.others.is_empty());
    }
}
