//! What OLM's bundle validation (`operator-sdk bundle validate`) checks, run on the files about
//! to be written, so that opgen never writes a bundle OLM would refuse. Every problem names its
//! file and field.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{
    ANNOTATIONS_FILE, DOCKERFILE, MANIFESTS_DIR,
    base::INSTALL_MODES,
    metadata::{self, CHANNELS, DEFAULT_CHANNEL, MANIFESTS, MEDIATYPE, METADATA, PACKAGE},
    object::Object,
};
use crate::{
    model::{ImageRef, dns},
    plan::PlannedFile,
    project::Scope,
};

/// One thing OLM would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// The field at fault, as a path (`spec.installModes[3].supported`); empty for the file.
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.field, self.message)
        }
    }
}

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn add(&mut self, file: &str, field: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            file: file.to_owned(),
            field: field.into(),
            message: message.into(),
        });
    }
}

/// Checks the bundle `files` (every file under `bundle/` and `bundle.Dockerfile`).
pub fn validate(files: &[PlannedFile], scope: Scope) -> Vec<Problem> {
    let mut checker = Checker {
        problems: Vec::new(),
    };
    let mut csvs = Vec::new();
    let mut crds = Vec::new();
    let mut others = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.path.starts_with(&format!("{MANIFESTS_DIR}/")))
    {
        match serde_saphyr::from_str::<Value>(&file.contents) {
            Ok(value) => {
                let object = Object(value);
                match object.kind() {
                    "ClusterServiceVersion" => csvs.push((file.path.as_str(), object)),
                    "CustomResourceDefinition" => crds.push((file.path.as_str(), object)),
                    _ => others.push((file.path.as_str(), object)),
                }
            }
            Err(err) => checker.add(&file.path, "", format!("not YAML: {err}")),
        }
    }
    let text_of = |path: &str| {
        files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.contents.as_str())
    };
    let annotations = check_metadata(&mut checker, text_of(ANNOTATIONS_FILE), text_of(DOCKERFILE));
    match csvs.as_slice() {
        [(path, csv)] => check_csv(
            &mut checker,
            path,
            csv,
            &crds,
            &others,
            annotations.as_ref(),
            scope,
        ),
        [] => checker.add(MANIFESTS_DIR, "", "the bundle has no ClusterServiceVersion"),
        _ => checker.add(
            MANIFESTS_DIR,
            "",
            "the bundle has more than one ClusterServiceVersion",
        ),
    }
    checker.problems
}

/// The problem with `name` as a CSV name (a DNS-1123 subdomain that is also a label value).
fn csv_name_problem(name: &str) -> Option<String> {
    if name.len() > 63 {
        return Some(format!(
            "`{name}` is {} characters long; a CSV name is at most 63",
            name.len()
        ));
    }
    dns::subdomain_problem(name).map(|problem| {
        format!("`{name}` is not a valid CSV name: {problem} (a semantic version with `+build` or capitals cannot be part of one)")
    })
}

fn check_metadata(
    checker: &mut Checker,
    annotations: Option<&str>,
    dockerfile: Option<&str>,
) -> Option<BTreeMap<String, String>> {
    let Some(annotations) = annotations else {
        checker.add(ANNOTATIONS_FILE, "", "the bundle has no annotations file");
        return None;
    };
    let annotations = match metadata::parse_annotations(annotations) {
        Ok(annotations) => annotations,
        Err(err) => {
            checker.add(ANNOTATIONS_FILE, "annotations", err);
            return None;
        }
    };
    let field = |key: &str| format!("annotations.{key}");
    for (key, expected) in [
        (MEDIATYPE, Some("registry+v1")),
        (MANIFESTS, Some("manifests/")),
        (METADATA, Some("metadata/")),
        (PACKAGE, None),
        (CHANNELS, None),
        (DEFAULT_CHANNEL, None),
    ] {
        match (annotations.get(key), expected) {
            (None, _) => checker.add(ANNOTATIONS_FILE, field(key), "missing"),
            (Some(found), Some(expected)) if found != expected => checker.add(
                ANNOTATIONS_FILE,
                field(key),
                format!("`{found}`, but OLM reads `{expected}`"),
            ),
            _ => {}
        }
    }
    if let Some(package) = annotations.get(PACKAGE)
        && let Some(problem) = dns::label_problem(package)
    {
        checker.add(
            ANNOTATIONS_FILE,
            field(PACKAGE),
            format!("`{package}` is not a DNS-1123 label: {problem}"),
        );
    }
    if let (Some(channels), Some(default)) =
        (annotations.get(CHANNELS), annotations.get(DEFAULT_CHANNEL))
        && !channels.split(',').any(|c| c == default)
    {
        checker.add(
            ANNOTATIONS_FILE,
            field(DEFAULT_CHANNEL),
            format!("`{default}` is not among the channels `{channels}`"),
        );
    }
    match dockerfile {
        None => checker.add(DOCKERFILE, "", "the bundle has no Dockerfile"),
        Some(dockerfile) => {
            let labels = metadata::parse_labels(dockerfile);
            let keys: BTreeSet<&String> = labels.keys().chain(annotations.keys()).collect();
            for key in keys {
                match (annotations.get(key), labels.get(key)) {
                    (Some(a), Some(l)) if a == l => {}
                    (Some(a), Some(l)) => checker.add(
                        DOCKERFILE,
                        format!("LABEL {key}"),
                        format!("`{l}`, but {ANNOTATIONS_FILE} says `{a}`"),
                    ),
                    (Some(_), None) => checker.add(
                        DOCKERFILE,
                        format!("LABEL {key}"),
                        format!("missing, but {ANNOTATIONS_FILE} has it"),
                    ),
                    (None, _) => checker.add(
                        DOCKERFILE,
                        format!("LABEL {key}"),
                        format!("{ANNOTATIONS_FILE} does not have it"),
                    ),
                }
            }
        }
    }
    Some(annotations)
}

/// `(group, version, kind)` of the CRD versions in the bundle, with the file of each CRD.
fn crd_versions<'a>(crds: &'a [(&'a str, Object)]) -> Vec<(String, String, String, &'a str)> {
    let mut keys = Vec::new();
    for (path, crd) in crds {
        let group = crd.str_at("/spec/group");
        let kind = crd.str_at("/spec/names/kind");
        let versions = crd.0.pointer("/spec/versions").and_then(Value::as_array);
        for version in versions.into_iter().flatten() {
            let version = version["name"].as_str().unwrap_or_default();
            keys.push((group.to_owned(), version.to_owned(), kind.to_owned(), *path));
        }
    }
    keys
}

fn check_csv(
    checker: &mut Checker,
    path: &str,
    csv: &Object,
    crds: &[(&str, Object)],
    others: &[(&str, Object)],
    annotations: Option<&BTreeMap<String, String>>,
    scope: Scope,
) {
    let value = &csv.0;
    let str_at = |pointer: &str| value.pointer(pointer).and_then(Value::as_str);

    // Name and version.
    let name = csv.name();
    if let Some(problem) = csv_name_problem(name) {
        checker.add(path, "metadata.name", problem);
    }
    match str_at("/spec/version").map(semver::Version::parse) {
        None => checker.add(path, "spec.version", "missing"),
        Some(Err(err)) => checker.add(
            path,
            "spec.version",
            format!("not a semantic version: {err}"),
        ),
        Some(Ok(version)) => {
            if let Some(package) = annotations.and_then(|a| a.get(PACKAGE)) {
                let expected = format!("{package}.v{version}");
                if name != expected {
                    checker.add(
                        path,
                        "metadata.name",
                        format!("`{name}` does not agree with spec.version {version} of package {package}: it must be `{expected}`"),
                    );
                }
            }
        }
    }
    if let Some(replaces) = str_at("/spec/replaces") {
        if let Some(problem) = csv_name_problem(replaces) {
            checker.add(path, "spec.replaces", problem);
        } else if replaces == name {
            checker.add(path, "spec.replaces", "a CSV cannot replace itself");
        }
    }
    let skips = value.pointer("/spec/skips").and_then(Value::as_array);
    for (i, skip) in skips.into_iter().flatten().enumerate() {
        if let Some(problem) = csv_name_problem(skip.as_str().unwrap_or_default()) {
            checker.add(path, format!("spec.skips[{i}]"), problem);
        }
    }
    if str_at("/spec/displayName")
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        checker.add(
            path,
            "spec.displayName",
            "missing: OLM requires a display name",
        );
    }
    if let Some(min) = str_at("/spec/minKubeVersion")
        && semver::Version::parse(min).is_err()
    {
        checker.add(
            path,
            "spec.minKubeVersion",
            format!("`{min}` is not a semantic version such as 1.33.0"),
        );
    }

    let conversion = value
        .pointer("/spec/webhookdefinitions")
        .and_then(Value::as_array)
        .is_some_and(|definitions| definitions.iter().any(|d| d["type"] == "ConversionWebhook"));
    check_install_modes(checker, path, value, scope, conversion);
    check_install(checker, path, value, others);

    // Images.
    let related = value
        .pointer("/spec/relatedImages")
        .and_then(Value::as_array);
    for (i, related) in related.into_iter().flatten().enumerate() {
        let image = related["image"].as_str().unwrap_or_default();
        if let Err(err) = image.parse::<ImageRef>() {
            checker.add(
                path,
                format!("spec.relatedImages[{i}].image"),
                err.to_string(),
            );
        }
    }

    // Owned CRDs.
    let in_bundle = crd_versions(crds);
    let owned = value
        .pointer("/spec/customresourcedefinitions/owned")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut owned_keys = BTreeSet::new();
    for (i, entry) in owned.iter().enumerate() {
        let field = format!("spec.customresourcedefinitions.owned[{i}]");
        let name = entry["name"].as_str().unwrap_or_default();
        let version = entry["version"].as_str().unwrap_or_default();
        let kind = entry["kind"].as_str().unwrap_or_default();
        let Some((_, group)) = name.split_once('.') else {
            checker.add(
                path,
                format!("{field}.name"),
                format!("`{name}` is not a CRD name `<plural>.<group>`"),
            );
            continue;
        };
        let found = in_bundle
            .iter()
            .any(|(g, v, k, _)| g == group && v == version && k == kind);
        if !found {
            checker.add(
                path,
                field,
                format!("the bundle has no CRD {name} with version {version} of kind {kind}: every owned CRD must be in bundle/manifests"),
            );
        }
        owned_keys.insert((group.to_owned(), kind.to_owned()));
    }
    for (group, version, kind, crd_path) in &in_bundle {
        if !owned_keys.contains(&(group.clone(), kind.clone())) {
            checker.add(
                crd_path,
                "",
                format!("the CRD of {kind} ({group}/{version}) is in the bundle, but no entry of spec.customresourcedefinitions.owned in {path} names it"),
            );
        }
    }

    // Examples.
    let provided: BTreeSet<(String, String)> = owned
        .iter()
        .filter_map(|entry| {
            let (_, group) = entry["name"].as_str()?.split_once('.')?;
            Some((
                format!("{group}/{}", entry["version"].as_str()?),
                entry["kind"].as_str()?.to_owned(),
            ))
        })
        .collect();
    if let Some(examples) = str_at("/metadata/annotations/alm-examples") {
        let field = "metadata.annotations.alm-examples";
        match serde_json::from_str::<Value>(examples) {
            Err(err) => checker.add(path, field, format!("not JSON: {err}")),
            Ok(Value::Array(examples)) => {
                for (i, example) in examples.iter().enumerate() {
                    let api_version = example["apiVersion"].as_str().unwrap_or_default();
                    let kind = example["kind"].as_str().unwrap_or_default();
                    if !provided.contains(&(api_version.to_owned(), kind.to_owned())) {
                        checker.add(
                            path,
                            format!("{field}[{i}]"),
                            format!("an example of {kind} ({api_version}), which is not an owned CRD version of the bundle"),
                        );
                    }
                }
            }
            Ok(_) => checker.add(path, field, "not a JSON array of example objects"),
        }
    }
}

fn check_install_modes(
    checker: &mut Checker,
    path: &str,
    csv: &Value,
    scope: Scope,
    conversion: bool,
) {
    let field = "spec.installModes";
    let modes = csv.pointer("/spec/installModes").and_then(Value::as_array);
    let Some(modes) = modes.filter(|m| !m.is_empty()) else {
        checker.add(path, field, "missing: list the install modes OLM may use (OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces)");
        return;
    };
    let mut seen = BTreeSet::new();
    let mut supported = BTreeSet::new();
    for (i, mode) in modes.iter().enumerate() {
        let kind = mode["type"].as_str().unwrap_or_default();
        if !INSTALL_MODES.contains(&kind) {
            checker.add(
                path,
                format!("{field}[{i}].type"),
                format!("`{kind}` is not one of {}", INSTALL_MODES.join(", ")),
            );
        } else if !seen.insert(kind) {
            checker.add(
                path,
                format!("{field}[{i}].type"),
                format!("{kind} is listed twice"),
            );
        }
        if mode["supported"] == true {
            supported.insert(kind);
        }
    }
    if supported.is_empty() {
        checker.add(
            path,
            field,
            "no install mode is supported, so OLM could never install the operator",
        );
        return;
    }
    let (allowed, why): (&[&str], &str) = match (scope, conversion) {
        (_, true) => (
            &["AllNamespaces"],
            "its CRDs convert through a webhook, and OLM supports only AllNamespaces then",
        ),
        (Scope::Cluster, false) => (
            &["AllNamespaces"],
            "the operator is cluster-wide: it watches every namespace whatever OLM targets",
        ),
        (Scope::Namespace, false) => (
            &["OwnNamespace", "SingleNamespace"],
            "the operator is namespaced: it watches the one namespace OLM targets",
        ),
    };
    for kind in &supported {
        if !allowed.contains(kind) {
            checker.add(
                path,
                field,
                format!("{kind} is supported, but {why}; set it to `supported: false`"),
            );
        }
    }
    if scope == Scope::Cluster && !supported.contains("AllNamespaces") {
        checker.add(
            path,
            field,
            format!("AllNamespaces is not supported, but {why}"),
        );
    }
}

fn check_install(checker: &mut Checker, path: &str, csv: &Value, others: &[(&str, Object)]) {
    if csv
        .pointer("/spec/install/strategy")
        .and_then(Value::as_str)
        != Some("deployment")
    {
        checker.add(
            path,
            "spec.install.strategy",
            "OLM installs operators with the `deployment` strategy",
        );
    }
    let deployments = csv
        .pointer("/spec/install/spec/deployments")
        .and_then(Value::as_array);
    let Some(deployments) = deployments.filter(|d| !d.is_empty()) else {
        checker.add(
            path,
            "spec.install.spec.deployments",
            "missing: the bundle installs no manager",
        );
        return;
    };
    for (d, deployment) in deployments.iter().enumerate() {
        let field = format!("spec.install.spec.deployments[{d}]");
        let pod = deployment
            .pointer("/spec/template/spec")
            .unwrap_or(&Value::Null);
        let containers = pod["containers"].as_array();
        for (c, container) in containers.into_iter().flatten().enumerate() {
            let image = container["image"].as_str().unwrap_or_default();
            if let Err(err) = image.parse::<ImageRef>() {
                checker.add(
                    path,
                    format!("{field}.spec.template.spec.containers[{c}].image"),
                    err.to_string(),
                );
            }
        }
        let account = pod["serviceAccountName"].as_str().unwrap_or("default");
        for (other_path, other) in others {
            if other.kind() == "ServiceAccount" && other.name() == account {
                checker.add(
                    other_path,
                    "",
                    format!("the ServiceAccount {account} is in the bundle, but OLM creates it for the CSV's deployment; remove it"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::Owner;

    const CSV_PATH: &str = "bundle/manifests/demo.clusterserviceversion.yaml";
    const CRD_PATH: &str = "bundle/manifests/db.example.com_caches.yaml";

    fn csv() -> Value {
        json!({
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {
                "name": "demo.v0.1.0",
                "annotations": {"alm-examples": "[{\"apiVersion\": \"db.example.com/v1\", \"kind\": \"Cache\"}]"},
            },
            "spec": {
                "version": "0.1.0",
                "displayName": "Demo",
                "minKubeVersion": "1.33.0",
                "installModes": [
                    {"type": "OwnNamespace", "supported": false},
                    {"type": "SingleNamespace", "supported": false},
                    {"type": "MultiNamespace", "supported": false},
                    {"type": "AllNamespaces", "supported": true},
                ],
                "install": {"strategy": "deployment", "spec": {"deployments": [{
                    "name": "demo-controller-manager",
                    "spec": {"template": {"spec": {
                        "serviceAccountName": "demo-controller-manager",
                        "containers": [{"name": "manager", "image": "registry.example.com/demo:v0.1.0"}],
                    }}},
                }]}},
                "relatedImages": [{"name": "manager", "image": "registry.example.com/demo:v0.1.0"}],
                "customresourcedefinitions": {"owned": [
                    {"name": "caches.db.example.com", "version": "v1", "kind": "Cache"},
                ]},
            },
        })
    }

    fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "caches.db.example.com"},
            "spec": {"group": "db.example.com", "names": {"kind": "Cache", "plural": "caches"},
                     "versions": [{"name": "v1"}]},
        })
    }

    fn yaml(value: &Value) -> String {
        serde_saphyr::to_string(value).unwrap()
    }

    fn files(csv: &Value, extra: &[(&str, Value)]) -> Vec<PlannedFile> {
        let channels = crate::bundle::Channels::new(vec!["alpha".parse().unwrap()], None).unwrap();
        let (annotations, dockerfile) =
            metadata::render(&"demo".parse().unwrap(), &channels).unwrap();
        let mut files = vec![
            PlannedFile::new(CSV_PATH, yaml(csv), Owner::Manifest),
            PlannedFile::new(CRD_PATH, yaml(&crd()), Owner::Manifest),
            PlannedFile::new(ANNOTATIONS_FILE, annotations, Owner::Manifest),
            PlannedFile::new(DOCKERFILE, dockerfile, Owner::Manifest),
        ];
        for (path, value) in extra {
            files.push(PlannedFile::new(*path, yaml(value), Owner::Manifest));
        }
        files
    }

    /// The problems of the CSV `change` makes, as `field: message` lines.
    fn problems_of(change: impl FnOnce(&mut Value), scope: Scope) -> Vec<String> {
        let mut csv = csv();
        change(&mut csv);
        validate(&files(&csv, &[]), scope)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn assert_one_problem(problems: &[String], expected: &str) {
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with(expected),
            "{problems:#?}\nexpected: {expected}"
        );
    }

    #[test]
    fn a_valid_bundle_has_no_problems() {
        assert_eq!(validate(&files(&csv(), &[]), Scope::Cluster), []);
    }

    #[test]
    fn name_and_version_must_agree() {
        let problems = problems_of(
            |csv| csv["metadata"]["name"] = json!("demo.v0.2.0"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!(
                "{CSV_PATH}: metadata.name: `demo.v0.2.0` does not agree with spec.version 0.1.0 of package demo: it must be `demo.v0.1.0`"
            ),
        );
        let problems = problems_of(|csv| csv["spec"]["version"] = json!("0.1"), Scope::Cluster);
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.version: not a semantic version"),
        );
        let problems = problems_of(
            |csv| {
                csv["metadata"]["name"] = json!("demo.v0.1.0+build.1");
                csv["spec"]["version"] = json!("0.1.0+build.1");
            },
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: metadata.name: `demo.v0.1.0+build.1` is not a valid CSV name"),
        );
    }

    #[test]
    fn replaces_skips_display_name_and_kube_version() {
        let problems = problems_of(
            |csv| csv["spec"]["replaces"] = json!("demo.v0.1.0"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.replaces: a CSV cannot replace itself"),
        );
        let problems = problems_of(
            |csv| csv["spec"]["skips"] = json!(["Demo.v0.0.1"]),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.skips[0]: `Demo.v0.0.1` is not a valid CSV name"),
        );
        let problems = problems_of(|csv| csv["spec"]["displayName"] = json!(""), Scope::Cluster);
        assert_one_problem(&problems, &format!("{CSV_PATH}: spec.displayName: missing"));
        let problems = problems_of(
            |csv| csv["spec"]["minKubeVersion"] = json!("1.33"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.minKubeVersion: `1.33` is not a semantic version"),
        );
    }

    #[test]
    fn install_modes_must_exist_and_suit_the_scope() {
        let problems = problems_of(
            |csv| csv["spec"]["installModes"] = json!([]),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.installModes: missing"),
        );
        let problems = problems_of(
            |csv| csv["spec"]["installModes"][3]["supported"] = json!(false),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.installModes: no install mode is supported"),
        );
        let problems = problems_of(|_| {}, Scope::Namespace);
        assert_one_problem(
            &problems,
            &format!(
                "{CSV_PATH}: spec.installModes: AllNamespaces is supported, but the operator is namespaced"
            ),
        );
        let problems = problems_of(
            |csv| {
                csv["spec"]["installModes"][0]["supported"] = json!(true);
                csv["spec"]["installModes"][3]["supported"] = json!(false);
            },
            Scope::Cluster,
        );
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[0].contains("OwnNamespace is supported, but the operator is cluster-wide"),
            "{problems:#?}"
        );
        assert!(
            problems[1].contains("AllNamespaces is not supported"),
            "{problems:#?}"
        );
        let problems = problems_of(
            |csv| csv["spec"]["installModes"][1]["type"] = json!("AllNamespaces"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.installModes[3].type: AllNamespaces is listed twice"),
        );
        let problems = problems_of(
            |csv| csv["spec"]["installModes"][1]["type"] = json!("Everywhere"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.installModes[1].type: `Everywhere` is not one of"),
        );
        let problems = problems_of(
            |csv| csv["spec"]["webhookdefinitions"] = json!([{"type": "ConversionWebhook"}]),
            Scope::Namespace,
        );
        assert!(
            problems
                .iter()
                .all(|p| p.contains("convert through a webhook")),
            "{problems:#?}"
        );
    }

    #[test]
    fn owned_crds_must_be_in_the_bundle_and_the_other_way_round() {
        let problems = problems_of(
            |csv| csv["spec"]["customresourcedefinitions"]["owned"][0]["version"] = json!("v2"),
            Scope::Cluster,
        );
        // The kind stays owned through the v2 entry: the CRD itself is not reported.
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].starts_with(&format!("{CSV_PATH}: spec.customresourcedefinitions.owned[0]: the bundle has no CRD caches.db.example.com with version v2")), "{problems:#?}");
        assert!(problems[1].starts_with(&format!("{CSV_PATH}: metadata.annotations.alm-examples[0]: an example of Cache (db.example.com/v1)")), "{problems:#?}");
        let problems = problems_of(
            |csv| csv["spec"]["customresourcedefinitions"]["owned"] = json!([]),
            Scope::Cluster,
        );
        assert!(
            problems.iter().any(|p| p.starts_with(&format!(
                "{CRD_PATH}: the CRD of Cache (db.example.com/v1) is in the bundle, but no entry"
            ))),
            "{problems:#?}"
        );
    }

    #[test]
    fn examples_must_parse_and_name_owned_kinds() {
        let problems = problems_of(
            |csv| csv["metadata"]["annotations"]["alm-examples"] = json!("[{"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: metadata.annotations.alm-examples: not JSON"),
        );
        let problems = problems_of(
            |csv| csv["metadata"]["annotations"]["alm-examples"] = json!("{}"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: metadata.annotations.alm-examples: not a JSON array"),
        );
        let problems = problems_of(
            |csv| {
                csv["metadata"]["annotations"]["alm-examples"] =
                    json!("[{\"apiVersion\": \"db.example.com/v1\", \"kind\": \"Other\"}]")
            },
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: metadata.annotations.alm-examples[0]: an example of Other"),
        );
    }

    #[test]
    fn images_must_be_references() {
        let problems = problems_of(
            |csv| csv["spec"]["relatedImages"][0]["image"] = json!("Registry/Demo"),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.relatedImages[0].image: invalid image `Registry/Demo`"),
        );
        let problems = problems_of(
            |csv| {
                csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
                    [0]["image"] = json!("demo:")
            },
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!(
                "{CSV_PATH}: spec.install.spec.deployments[0].spec.template.spec.containers[0].image: invalid image `demo:`"
            ),
        );
        let problems = problems_of(
            |csv| csv["spec"]["install"]["spec"]["deployments"] = json!([]),
            Scope::Cluster,
        );
        assert_one_problem(
            &problems,
            &format!("{CSV_PATH}: spec.install.spec.deployments: missing"),
        );
    }

    #[test]
    fn the_managers_service_account_is_olms() {
        let account = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "demo-controller-manager"}});
        let path = "bundle/manifests/demo-controller-manager_v1_serviceaccount.yaml";
        let problems: Vec<String> = validate(&files(&csv(), &[(path, account)]), Scope::Cluster)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_one_problem(
            &problems,
            &format!("{path}: the ServiceAccount demo-controller-manager is in the bundle"),
        );
    }

    #[test]
    fn annotations_and_dockerfile_must_agree() {
        let mut files = files(&csv(), &[]);
        let dockerfile = files.iter_mut().find(|f| f.path == DOCKERFILE).unwrap();
        dockerfile.contents = dockerfile
            .contents
            .replace("channels.v1=alpha", "channels.v1=stable");
        dockerfile.contents.push_str("LABEL extra=1\n");
        let problems: Vec<String> = validate(&files, Scope::Cluster)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            problems,
            [
                format!("{DOCKERFILE}: LABEL extra: {ANNOTATIONS_FILE} does not have it"),
                format!(
                    "{DOCKERFILE}: LABEL {CHANNELS}: `stable`, but {ANNOTATIONS_FILE} says `alpha`"
                ),
            ]
        );
        let annotations = files
            .iter_mut()
            .find(|f| f.path == ANNOTATIONS_FILE)
            .unwrap();
        annotations.contents = annotations
            .contents
            .replace("registry+v1", "plain+v0")
            .replace("package.v1: demo", "package.v1: Demo_Op")
            .replace("default.v1: alpha", "default.v1: stable");
        let problems: Vec<String> = validate(&files, Scope::Cluster)
            .iter()
            .map(ToString::to_string)
            .collect();
        for expected in [
            format!(
                "{ANNOTATIONS_FILE}: annotations.{MEDIATYPE}: `plain+v0`, but OLM reads `registry+v1`"
            ),
            format!("{ANNOTATIONS_FILE}: annotations.{PACKAGE}: `Demo_Op` is not a DNS-1123 label"),
            format!(
                "{ANNOTATIONS_FILE}: annotations.{DEFAULT_CHANNEL}: `stable` is not among the channels `alpha`"
            ),
        ] {
            assert!(
                problems.iter().any(|p| p.starts_with(&expected)),
                "{problems:#?}\nexpected: {expected}"
            );
        }
    }
}
