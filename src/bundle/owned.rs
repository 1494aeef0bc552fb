//! The CSV's owned CRDs (`spec.customresourcedefinitions.owned`): one entry per version of every
//! CRD in the bundle, with its display name, the description of its type, the objects the kind
//! runs, and descriptors for the fields opgen scaffolds, when the type still has them.

use serde_json::{Map, Value, json};

use super::object::Object;
use crate::{model::Resource, project::Project};

/// Descriptors for the fields opgen scaffolds: where the field is (dots between properties),
/// and how OLM's consoles show it.
const SPEC_DESCRIPTORS: &[(&str, &[&str])] = &[
    ("size", &["urn:alm:descriptor:com.tectonic.ui:number"]),
    ("replicas", &["urn:alm:descriptor:com.tectonic.ui:podCount"]),
    ("image", &["urn:alm:descriptor:com.tectonic.ui:text"]),
    ("port", &["urn:alm:descriptor:com.tectonic.ui:number"]),
    ("env", &["urn:alm:descriptor:com.tectonic.ui:advanced"]),
    (
        "resources",
        &[
            "urn:alm:descriptor:com.tectonic.ui:resourceRequirements",
            "urn:alm:descriptor:com.tectonic.ui:advanced",
        ],
    ),
    ("storage.size", &["urn:alm:descriptor:com.tectonic.ui:text"]),
    (
        "storage.storageClassName",
        &["urn:alm:descriptor:io.kubernetes:StorageClass"],
    ),
];

const STATUS_DESCRIPTORS: &[(&str, &[&str])] = &[
    ("replicas", &["urn:alm:descriptor:com.tectonic.ui:podCount"]),
    (
        "readyReplicas",
        &["urn:alm:descriptor:com.tectonic.ui:podCount"],
    ),
    (
        "conditions",
        &["urn:alm:descriptor:io.kubernetes.conditions"],
    ),
];

/// The owned entries of every CRD in `crds`, sorted by CRD name, versions in the CRD's order.
pub fn owned_crds(crds: &[Object], project: &Project) -> Vec<Value> {
    let mut crds: Vec<&Object> = crds.iter().collect();
    crds.sort_by(|a, b| a.name().cmp(b.name()));
    let mut owned = Vec::new();
    for crd in crds {
        let kind = crd.str_at("/spec/names/kind");
        let resource = project
            .kinds()
            .find(|r| r.crd_name(&project.domain) == crd.name());
        let versions = crd.0.pointer("/spec/versions").and_then(Value::as_array);
        for version in versions.into_iter().flatten() {
            let schema = version
                .pointer("/schema/openAPIV3Schema")
                .unwrap_or(&Value::Null);
            let mut entry = Map::new();
            entry.insert("name".into(), json!(crd.name()));
            entry.insert("version".into(), version["name"].clone());
            entry.insert("kind".into(), json!(kind));
            entry.insert("displayName".into(), json!(display_name(kind)));
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                entry.insert("description".into(), json!(unwrap_lines(description)));
            }
            if let Some(resources) = resource.and_then(|r| owned_resources(project, r)) {
                entry.insert("resources".into(), resources);
            }
            for (field, table, root) in [
                ("specDescriptors", SPEC_DESCRIPTORS, "spec"),
                ("statusDescriptors", STATUS_DESCRIPTORS, "status"),
            ] {
                let descriptors = descriptors(schema, root, table);
                if !descriptors.is_empty() {
                    entry.insert(field.into(), Value::Array(descriptors));
                }
            }
            owned.push(Value::Object(entry));
        }
    }
    owned
}

/// The objects an operand kind runs: its workload, and a Service when it has a port.
fn owned_resources(project: &Project, resource: &Resource) -> Option<Value> {
    let operand = project
        .versions_of(resource)
        .find_map(|r| r.operand.as_ref())?;
    let workload = operand.workload.kind();
    let mut resources = vec![json!({"kind": workload, "version": "v1"})];
    if operand.port.is_some() {
        resources.push(json!({"kind": "Service", "version": "v1"}));
    }
    Some(Value::Array(resources))
}

/// The descriptors of `table` whose field the schema under `root` still has.
fn descriptors(schema: &Value, root: &str, table: &[(&str, &[&str])]) -> Vec<Value> {
    table
        .iter()
        .filter_map(|(path, x_descriptors)| {
            let mut property = schema.pointer(&format!("/properties/{root}"))?;
            for segment in path.split('.') {
                property = property.pointer(&format!("/properties/{segment}"))?;
            }
            let last = path.rsplit('.').next().unwrap_or(path);
            let mut descriptor = Map::new();
            descriptor.insert("path".into(), json!(path));
            descriptor.insert("displayName".into(), json!(display_name(last)));
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                descriptor.insert("description".into(), json!(unwrap_lines(description)));
            }
            descriptor.insert("x-descriptors".into(), json!(x_descriptors));
            Some(Value::Object(descriptor))
        })
        .collect()
}

/// A doc comment as one paragraph per paragraph: consoles wrap text themselves, so the line
/// breaks of the Rust source would only show as ragged lines.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| paragraph.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A kind or field name in words, keeping acronyms whole: `MySQLCluster` → `My SQL Cluster`,
/// `readyReplicas` → `Ready Replicas`.
pub fn display_name(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut words = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let starts_word = i > 0
            && c.is_ascii_uppercase()
            && (chars[i - 1].is_ascii_lowercase()
                || chars[i - 1].is_ascii_digit()
                || (chars[i - 1].is_ascii_uppercase()
                    && chars.get(i + 1).is_some_and(char::is_ascii_lowercase)));
        if starts_word {
            words.push(' ');
        }
        words.push(if i == 0 { c.to_ascii_uppercase() } else { c });
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        model::{Operand, Resource, Workload},
        project::Scope,
    };

    #[test]
    fn descriptions_lose_the_line_breaks_of_the_source() {
        assert_eq!(
            unwrap_lines("Replicas is the number\nof pods.\n\nSee `kubectl scale`."),
            "Replicas is the number of pods.\n\nSee `kubectl scale`."
        );
    }

    #[test]
    fn display_names_keep_acronyms() {
        assert_eq!(display_name("MySQLCluster"), "My SQL Cluster");
        assert_eq!(display_name("PostgresCluster"), "Postgres Cluster");
        assert_eq!(display_name("Memcached"), "Memcached");
        assert_eq!(display_name("readyReplicas"), "Ready Replicas");
        assert_eq!(display_name("storageClassName"), "Storage Class Name");
        assert_eq!(display_name("HTTPRoute"), "HTTP Route");
        assert_eq!(display_name("S3Bucket"), "S3 Bucket");
    }

    fn crd(kind: &str, plural: &str, versions: Value) -> Object {
        Object(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.db.example.com")},
            "spec": {"group": "db.example.com", "names": {"kind": kind, "plural": plural}, "versions": versions},
        }))
    }

    fn schema(spec: Value, status: Value) -> Value {
        json!({"openAPIV3Schema": {
            "description": "The type's doc.",
            "properties": {"spec": {"properties": spec}, "status": {"properties": status}},
        }})
    }

    #[test]
    fn one_entry_per_version_with_descriptors_of_remaining_fields() {
        let mut project = Project::for_test("demo", Scope::Cluster);
        let mut operand = Resource::for_test("db", "v1", "Cache");
        operand.operand = Some(Operand {
            image: "memcached:1.6".parse().unwrap(),
            workload: Workload::StatefulSet,
            port: Some(11211),
            run_as_user: None,
            command: vec![],
            references: None,
            autoscale: false,
        });
        project.resources = vec![Resource::for_test("db", "v1", "Backup"), operand];
        let crds = [
            crd(
                "Cache",
                "caches",
                json!([{"name": "v1", "schema": schema(
                    json!({"replicas": {"description": "Pods."}, "storage": {"properties": {"size": {}}}}),
                    json!({"conditions": {"description": "State."}})
                )}]),
            ),
            crd(
                "Backup",
                "backups",
                json!([
                    {"name": "v1", "schema": schema(json!({"size": {}}), json!({}))},
                    // The example field was removed from this version.
                    {"name": "v1alpha1", "schema": schema(json!({"target": {}}), json!({}))},
                ]),
            ),
        ];
        let owned = owned_crds(&crds, &project);
        let names: Vec<(String, String)> = owned
            .iter()
            .map(|o| {
                (
                    o["name"].as_str().unwrap().into(),
                    o["version"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("backups.db.example.com".into(), "v1".into()),
                ("backups.db.example.com".into(), "v1alpha1".into()),
                ("caches.db.example.com".into(), "v1".into()),
            ]
        );
        assert_eq!(owned[0]["description"], "The type's doc.");
        assert_eq!(owned[0]["specDescriptors"][0]["path"], "size");
        assert!(
            owned[0].get("resources").is_none(),
            "a plain kind runs nothing"
        );
        assert!(owned[1].get("specDescriptors").is_none());
        let cache = &owned[2];
        assert_eq!(cache["displayName"], "Cache");
        assert_eq!(
            cache["resources"],
            json!([{"kind": "StatefulSet", "version": "v1"}, {"kind": "Service", "version": "v1"}])
        );
        assert_eq!(
            cache["specDescriptors"],
            json!([
                {"path": "replicas", "displayName": "Replicas", "description": "Pods.",
                 "x-descriptors": ["urn:alm:descriptor:com.tectonic.ui:podCount"]},
                {"path": "storage.size", "displayName": "Size",
                 "x-descriptors": ["urn:alm:descriptor:com.tectonic.ui:text"]},
            ])
        );
        assert_eq!(cache["statusDescriptors"][0]["path"], "conditions");
    }
}
