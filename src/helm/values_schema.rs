//! `values.schema.json`: every value of the chart with its type, so that `helm install`,
//! `upgrade`, `template` and `lint` refuse a misspelt or mistyped value and name it. Maps the
//! chart passes on to Kubernetes as they are (resources, affinity, …) are objects of any shape.

use serde_json::{Value, json};

/// What decides which keys the chart has.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub watch_namespace: bool,
    pub webhooks: bool,
}

/// A map of the chart's own: only the listed keys.
fn closed(properties: Value) -> Value {
    json!({"type": "object", "additionalProperties": false, "properties": properties})
}

fn of_strings() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}

pub fn schema(shape: Shape) -> Value {
    let string = json!({"type": "string"});
    let boolean = json!({"type": "boolean"});
    let object = json!({"type": "object"});
    let list = json!({"type": "array"});
    let mut properties = json!({
        // Helm gives a subchart its parent's `global` values.
        "global": object,
        "nameOverride": string,
        "fullnameOverride": string,
        "image": closed(json!({
            "repository": {"type": "string", "minLength": 1},
            "tag": string,
            "digest": {"type": "string", "pattern": "^(|[a-z0-9]+:[a-f0-9]{32,})$"},
            "pullPolicy": {"enum": ["", "Always", "IfNotPresent", "Never"]},
        })),
        "imagePullSecrets": {"type": "array", "items": closed(json!({"name": string}))},
        "replicaCount": {"type": "integer", "minimum": 0},
        "leaderElection": closed(json!({"enabled": boolean})),
        "logging": closed(json!({"format": {"enum": ["text", "json"]}, "level": string})),
        "resources": object,
        "podSecurityContext": object,
        "securityContext": object,
        "nodeSelector": of_strings(),
        "tolerations": list,
        "affinity": object,
        "topologySpreadConstraints": list,
        "priorityClassName": string,
        "podAnnotations": of_strings(),
        "podLabels": of_strings(),
        "env": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {"name": string}}},
        "serviceAccount": closed(json!({"create": boolean, "name": string, "annotations": of_strings()})),
        "rbac": closed(json!({"helpers": boolean})),
        "metrics": closed(json!({
            "enabled": boolean,
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "serviceMonitor": closed(json!({"enabled": boolean})),
        })),
        "networkPolicy": closed(json!({"enabled": boolean})),
        "crds": closed(json!({"install": boolean, "keep": boolean})),
        // The values of the user's own templates, whatever their shape.
        "custom": object,
    });
    if shape.watch_namespace {
        properties["watchNamespace"] = string.clone();
    }
    if shape.webhooks {
        properties["webhooks"] = closed(json!({
            "certificate": closed(json!({"mode": {"enum": ["self-managed", "cert-manager"]}})),
        }));
    }
    let mut schema = closed(properties);
    schema["$schema"] = json!("https://json-schema.org/draft-07/schema#");
    schema
}

/// The dotted paths of the chart's own maps (`metrics`, `metrics.serviceMonitor`): those whose
/// keys the schema lists, and whose missing keys take their defaults one by one.
pub fn own_maps(schema: &Value) -> Vec<String> {
    let mut maps = Vec::new();
    collect_own_maps(schema, "", &mut maps);
    maps
}

fn collect_own_maps(schema: &Value, path: &str, maps: &mut Vec<String>) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    for (key, inner) in properties {
        if inner["additionalProperties"] == false {
            let key_path = child(path, key);
            maps.push(key_path.clone());
            collect_own_maps(inner, &key_path, maps);
        }
    }
}

/// The keys of `defaults` that `values` lacks, as dotted paths (`metrics.serviceMonitor`),
/// looking into the chart's own maps only.
pub fn missing_keys(schema: &Value, defaults: &Value, values: &Value) -> Vec<String> {
    let mut missing = Vec::new();
    collect_missing(schema, defaults, values, "", &mut missing);
    missing
}

fn collect_missing(
    schema: &Value,
    defaults: &Value,
    values: &Value,
    path: &str,
    missing: &mut Vec<String>,
) {
    let (Some(defaults), Some(values)) = (defaults.as_object(), values.as_object()) else {
        return;
    };
    for (key, default) in defaults {
        let key_path = child(path, key);
        let Some(value) = values.get(key) else {
            missing.push(key_path);
            continue;
        };
        let inner = &schema["properties"][key];
        if inner["additionalProperties"] == false {
            collect_missing(inner, default, value, &key_path, missing);
        }
    }
}

/// The dotted path of `key` in the map at `path` (the top when empty).
fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_new_keys_of_the_chart_only() {
        let schema = schema(Shape {
            watch_namespace: false,
            webhooks: false,
        });
        let defaults = json!({
            "metrics": {"enabled": true, "serviceMonitor": {"enabled": false}},
            "resources": {"limits": {"cpu": "1"}},
            "crds": {"install": true},
        });
        let values = json!({"metrics": {"enabled": false}, "resources": {}});
        assert_eq!(
            missing_keys(&schema, &defaults, &values),
            ["crds", "metrics.serviceMonitor"]
        );
    }

    #[test]
    fn has_the_keys_of_the_project() {
        let plain = schema(Shape {
            watch_namespace: false,
            webhooks: false,
        });
        assert!(plain["properties"].get("webhooks").is_none());
        assert!(plain["properties"].get("watchNamespace").is_none());
        let full = schema(Shape {
            watch_namespace: true,
            webhooks: true,
        });
        assert_eq!(
            full["properties"]["webhooks"]["properties"]["certificate"]["properties"]["mode"]["enum"],
            json!(["self-managed", "cert-manager"])
        );
        assert_eq!(full["additionalProperties"], false);
        let maps = own_maps(&full);
        for map in [
            "crds",
            "metrics",
            "metrics.serviceMonitor",
            "webhooks.certificate",
        ] {
            assert!(maps.iter().any(|m| m == map), "{map} in {maps:?}");
        }
        for open in ["resources", "custom", "global", "podLabels"] {
            assert!(!maps.iter().any(|m| m == open), "{open} in {maps:?}");
        }
    }
}
