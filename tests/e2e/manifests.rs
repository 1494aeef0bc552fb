//! What a generated project's manifests say about its kinds, read from its files, so that the
//! cluster checks follow whatever kinds a scenario added.

use std::path::Path;

use serde_json::Value;

/// One CRD of `config/crd/bases`.
#[derive(Clone, Debug)]
pub struct Crd {
    /// `<plural>.<group>`.
    pub name: String,
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub namespaced: bool,
    /// Every served version.
    pub versions: Vec<String>,
    /// The printer columns of the storage version, which `kubectl get` shows.
    pub columns: Vec<String>,
    /// Whether it has the scale subresource: an operand, run by a workload.
    pub scale: bool,
    /// Whether its spec has `autoscaling` (`create api --autoscale`).
    pub autoscaling: bool,
}

impl Crd {
    /// Every CRD file of the project.
    pub fn read_all(root: &Path) -> Vec<Crd> {
        let dir = root.join("config/crd/bases");
        let mut crds: Vec<Crd> = yaml_files(&dir)
            .iter()
            .map(|text| Crd::parse(&serde_saphyr::from_str(text).unwrap()))
            .collect();
        crds.sort_by(|a, b| a.name.cmp(&b.name));
        assert!(!crds.is_empty(), "no CRD in {}", dir.display());
        crds
    }

    fn parse(crd: &Value) -> Crd {
        let spec = &crd["spec"];
        let strings = |value: &Value| -> Vec<String> {
            value
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .map(|item| item.as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        let versions = spec["versions"].as_array().unwrap();
        let storage = versions
            .iter()
            .find(|version| version["storage"] == true)
            .expect("a storage version");
        Crd {
            name: crd["metadata"]["name"].as_str().unwrap().to_owned(),
            group: spec["group"].as_str().unwrap().to_owned(),
            kind: spec["names"]["kind"].as_str().unwrap().to_owned(),
            plural: spec["names"]["plural"].as_str().unwrap().to_owned(),
            singular: spec["names"]["singular"].as_str().unwrap().to_owned(),
            short_names: strings(&spec["names"]["shortNames"]),
            namespaced: spec["scope"] == "Namespaced",
            versions: versions
                .iter()
                .filter(|version| version["served"] == true)
                .map(|version| version["name"].as_str().unwrap().to_owned())
                .collect(),
            columns: storage["additionalPrinterColumns"]
                .as_array()
                .map(|columns| {
                    columns
                        .iter()
                        .filter(|column| column["priority"].as_i64().unwrap_or(0) == 0)
                        .map(|column| column["name"].as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default(),
            scale: storage["subresources"]["scale"].is_object(),
            autoscaling: storage["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
                ["autoscaling"]
                .is_object(),
        }
    }

    /// The CRD of `sample`.
    pub fn of<'a>(crds: &'a [Crd], sample: &Sample) -> &'a Crd {
        crds.iter()
            .find(|crd| crd.group == sample.group() && crd.kind == sample.kind)
            .unwrap_or_else(|| panic!("no CRD for the sample {}", sample.file))
    }

    /// The name of the kind's controller in the manager's metrics: `<singular>.<group>`, the
    /// group without the domain.
    pub fn controller(&self) -> String {
        let group = self.group.split('.').next().unwrap();
        format!("{}.{group}", self.singular)
    }

    /// The finalizer the controller of a plain kind adds.
    pub fn finalizer(&self) -> String {
        format!("{}/finalizer", self.group)
    }
}

/// One object of `config/samples`.
#[derive(Clone, Debug)]
pub struct Sample {
    pub file: String,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub object: Value,
}

impl Sample {
    /// Every sample of the project, one per kind and version.
    pub fn read_all(root: &Path) -> Vec<Sample> {
        let dir = root.join("config/samples");
        let mut samples = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            if file == "kustomization.yaml" || !file.ends_with(".yaml") {
                continue;
            }
            let object: Value =
                serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            samples.push(Sample {
                file,
                api_version: object["apiVersion"].as_str().unwrap().to_owned(),
                kind: object["kind"].as_str().unwrap().to_owned(),
                name: object["metadata"]["name"].as_str().unwrap().to_owned(),
                object,
            });
        }
        samples.sort_by(|a, b| a.file.cmp(&b.file));
        samples
    }

    /// One sample per object: a kind's samples in several versions are the same object.
    pub fn distinct(samples: &[Sample]) -> Vec<&Sample> {
        let mut seen = std::collections::BTreeSet::new();
        samples
            .iter()
            .filter(|s| seen.insert((s.group().to_owned(), s.kind.clone(), s.name.clone())))
            .collect()
    }

    pub fn group(&self) -> &str {
        self.api_version.split_once('/').unwrap().0
    }
}

/// The contents of every `*.yaml` file in `dir`.
fn yaml_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect()
}

/// The documents of a multi-document YAML text (as `kubectl kustomize` prints it) but those of
/// kind `kind`, as a YAML text again.
pub fn without_kind(rendered: &str, kind: &str) -> String {
    let documents: Vec<&str> = rendered
        .split("\n---\n")
        .filter(|doc| !doc.lines().any(|line| line == format!("kind: {kind}")))
        .collect();
    assert!(
        documents.len() < rendered.split("\n---\n").count(),
        "no {kind} in:\n{rendered}"
    );
    documents.join("\n---\n")
}
