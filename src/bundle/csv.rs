//! The bundle's ClusterServiceVersion: the user's base, with the fields that follow from the
//! project set on top. Everything the base holds is kept, except the fields opgen generates.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{CsvName, options::BundleOptions};

/// What the project contributes to the CSV.
#[derive(Debug)]
pub struct Generated {
    /// `spec.install`.
    pub install: Value,
    /// Owned CRD entries, before the base's own entries are merged in.
    pub owned: Vec<Value>,
    /// The samples, for `alm-examples`.
    pub examples: Vec<Value>,
    /// `(name, image)` of the manager and the operands.
    pub related_images: Vec<(String, String)>,
    pub webhook_definitions: Vec<Value>,
    /// `spec.minKubeVersion`.
    pub min_kube_version: String,
}

/// The CSV, and which of its fields come from the base (so that a problem with one can send the
/// user to the file they wrote).
#[derive(Debug)]
pub struct Csv {
    pub value: Value,
    from_base: BTreeSet<String>,
}

impl Csv {
    /// Whether the field at `path` (as validation names it) came from the base.
    pub fn is_from_base(&self, path: &str) -> bool {
        self.from_base.iter().any(|field| {
            path == field
                || path
                    .strip_prefix(field.as_str())
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
    }
}

/// Fields a user writes in the base that validation looks at.
const BASE_FIELDS: &[&str] = &["spec.displayName", "spec.installModes"];

pub fn build(base: &Value, options: &BundleOptions, generated: Generated) -> Csv {
    let mut csv = base.clone();
    let mut from_base: BTreeSet<String> = BASE_FIELDS
        .iter()
        .filter(|field| lookup(base, field).is_some())
        .map(|field| (*field).to_owned())
        .collect();

    let metadata = object_at(&mut csv, "metadata");
    metadata.insert(
        "name".into(),
        json!(CsvName::new(&options.package, &options.version).to_string()),
    );
    let annotations = object_at_map(metadata, "annotations");
    if annotations.contains_key("alm-examples") {
        from_base.insert("metadata.annotations.alm-examples".into());
    } else {
        let examples = serde_json::to_string_pretty(&generated.examples)
            .expect("JSON values always serialize");
        annotations.insert("alm-examples".into(), json!(examples));
    }

    let spec = object_at(&mut csv, "spec");
    spec.insert("version".into(), json!(options.version.to_string()));
    spec.insert("minKubeVersion".into(), json!(generated.min_kube_version));
    spec.insert("install".into(), generated.install);
    match &options.replaces {
        Some(replaces) => spec.insert("replaces".into(), json!(replaces.to_string())),
        None => spec.remove("replaces"),
    };
    let mut skips: Vec<Value> = spec
        .get("skips")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !skips.is_empty() {
        from_base.insert("spec.skips".into());
    }
    for skip in &options.skips {
        if !skips.iter().any(|s| s == skip) {
            skips.push(json!(skip));
        }
    }
    if skips.is_empty() {
        spec.remove("skips");
    } else {
        spec.insert("skips".into(), Value::Array(skips));
    }
    if generated.webhook_definitions.is_empty() {
        spec.remove("webhookdefinitions");
    } else {
        spec.insert(
            "webhookdefinitions".into(),
            Value::Array(generated.webhook_definitions),
        );
    }

    let mut related: Vec<Value> = generated
        .related_images
        .iter()
        .map(|(name, image)| json!({"name": name, "image": image}))
        .collect();
    let base_related = spec
        .get("relatedImages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for extra in base_related {
        if !related.iter().any(|r| r["image"] == extra["image"]) {
            from_base.insert(format!("spec.relatedImages[{}]", related.len()));
            related.push(extra);
        }
    }
    spec.insert("relatedImages".into(), Value::Array(related));

    let crds = object_at_map(spec, "customresourcedefinitions");
    let base_owned = crds
        .get("owned")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut owned = generated.owned;
    for entry in base_owned {
        let same = |o: &&mut Value| o["name"] == entry["name"] && o["version"] == entry["version"];
        match owned.iter_mut().find(same) {
            // The user's fields win over the generated ones.
            Some(generated) => {
                if let (Some(generated), Some(fields)) =
                    (generated.as_object_mut(), entry.as_object())
                {
                    generated.extend(fields.clone());
                }
            }
            None => {
                from_base.insert(format!(
                    "spec.customresourcedefinitions.owned[{}]",
                    owned.len()
                ));
                owned.push(entry);
            }
        }
    }
    crds.insert("owned".into(), Value::Array(owned));

    Csv {
        value: csv,
        from_base,
    }
}

/// The value at a dotted path such as `spec.displayName`.
fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |value, key| value.get(key))
}

/// The object at `key` of the object `value`, created (or made an object) if need be.
fn object_at<'a>(value: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !value.is_object() {
        *value = json!({});
    }
    object_at_map(value.as_object_mut().expect("made an object above"), key)
}

fn object_at_map<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = map.entry(key).or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    entry.as_object_mut().expect("made an object above")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Channels;

    fn options(replaces: Option<&str>, skips: &[&str]) -> BundleOptions {
        BundleOptions {
            version: "0.2.0".parse().unwrap(),
            package: "demo".parse().unwrap(),
            channels: Channels::new(vec!["alpha".parse().unwrap()], None).unwrap(),
            replaces: replaces.map(|r| r.parse().unwrap()),
            skips: skips.iter().map(|s| (*s).to_owned()).collect(),
            image: None,
        }
    }

    fn generated() -> Generated {
        Generated {
            install: json!({"strategy": "deployment", "spec": {"deployments": []}}),
            owned: vec![
                json!({"name": "caches.db.example.com", "version": "v1", "kind": "Cache", "displayName": "Cache", "description": "Generated."}),
            ],
            examples: vec![
                json!({"apiVersion": "db.example.com/v1", "kind": "Cache", "metadata": {"name": "c"}}),
            ],
            related_images: vec![("manager".into(), "registry.example.com/demo:v1".into())],
            webhook_definitions: vec![],
            min_kube_version: "1.33.0".into(),
        }
    }

    fn base() -> Value {
        json!({
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"annotations": {"capabilities": "Basic Install"}},
            "spec": {
                "displayName": "Demo",
                "description": "Mine.",
                "installModes": [{"type": "AllNamespaces", "supported": true}],
                "version": "9.9.9",
                "replaces": "demo.v0.0.1",
                "skips": ["demo.v0.1.1"],
                "relatedImages": [{"name": "helper", "image": "busybox:1"}],
                "customresourcedefinitions": {
                    "owned": [
                        {"name": "caches.db.example.com", "version": "v1", "displayName": "Memory Cache"},
                        {"name": "gone.db.example.com", "version": "v1", "kind": "Gone"},
                    ],
                    "required": [{"name": "other.example.com", "version": "v1", "kind": "Other"}],
                },
            },
        })
    }

    #[test]
    fn the_base_is_kept_and_generated_fields_are_set() {
        let csv = build(
            &base(),
            &options(Some("demo.v0.1.0"), &["demo.v0.1.2"]),
            generated(),
        );
        let value = &csv.value;
        assert_eq!(value["metadata"]["name"], "demo.v0.2.0");
        assert_eq!(
            value["metadata"]["annotations"]["capabilities"],
            "Basic Install"
        );
        let examples: Value = serde_json::from_str(
            value["metadata"]["annotations"]["alm-examples"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(examples[0]["kind"], "Cache");
        let spec = &value["spec"];
        assert_eq!(spec["description"], "Mine.");
        assert_eq!(spec["version"], "0.2.0");
        assert_eq!(spec["replaces"], "demo.v0.1.0");
        assert_eq!(spec["skips"], json!(["demo.v0.1.1", "demo.v0.1.2"]));
        assert_eq!(spec["minKubeVersion"], "1.33.0");
        assert_eq!(spec["install"]["strategy"], "deployment");
        assert_eq!(
            spec["relatedImages"],
            json!([{"name": "manager", "image": "registry.example.com/demo:v1"}, {"name": "helper", "image": "busybox:1"}])
        );
        let owned = &spec["customresourcedefinitions"]["owned"];
        assert_eq!(
            owned[0]["displayName"], "Memory Cache",
            "the user's field wins"
        );
        assert_eq!(owned[0]["description"], "Generated.");
        assert_eq!(owned[1]["name"], "gone.db.example.com");
        assert_eq!(
            spec["customresourcedefinitions"]["required"][0]["kind"],
            "Other"
        );

        assert!(csv.is_from_base("spec.installModes"));
        assert!(csv.is_from_base("spec.installModes[0].type"));
        assert!(csv.is_from_base("spec.customresourcedefinitions.owned[1]"));
        assert!(!csv.is_from_base("spec.customresourcedefinitions.owned[0]"));
        assert!(csv.is_from_base("spec.relatedImages[1].image"));
        assert!(!csv.is_from_base("spec.relatedImages[0].image"));
        assert!(!csv.is_from_base("metadata.annotations.alm-examples"));
        assert!(!csv.is_from_base("spec.displayNameX"));
    }

    #[test]
    fn no_replaces_and_the_users_examples() {
        let mut base = base();
        base["metadata"]["annotations"]["alm-examples"] = json!("[]");
        base["spec"].as_object_mut().unwrap().remove("skips");
        let csv = build(&base, &options(None, &[]), generated());
        assert!(csv.value["spec"].get("replaces").is_none());
        assert!(csv.value["spec"].get("skips").is_none());
        assert_eq!(csv.value["metadata"]["annotations"]["alm-examples"], "[]");
        assert!(csv.is_from_base("metadata.annotations.alm-examples"));
    }
}
