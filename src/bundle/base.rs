//! `config/manifests`: the user's ClusterServiceVersion base and the kustomization that lists
//! what goes into the bundle. Both are scaffolded (by `init`, or by `generate bundle
//! --init-base` for a project made before bundles) and then belong to the user.

use std::path::Path;

use anyhow::bail;
use serde::Serialize;
use serde_json::Value;

use super::PackageName;
use crate::{
    manifests::crds,
    plan::{Owner, PlannedFile},
    project::Project,
    templates::Templates,
};

/// The kustomize directory the bundle is rendered from.
pub const MANIFESTS_DIR: &str = "config/manifests";

/// Where the user's CSV base of `package` lives.
pub fn base_path(package: &PackageName) -> String {
    format!("{MANIFESTS_DIR}/bases/{package}.clusterserviceversion.yaml")
}

pub fn kustomization_path() -> String {
    format!("{MANIFESTS_DIR}/kustomization.yaml")
}

/// Refuses to build a bundle of `package` without what it is built from: the kustomization
/// of `config/manifests` and the CRDs `generate manifests` writes.
pub fn check_inputs(root: &Path, package: &PackageName) -> anyhow::Result<()> {
    let kustomization = kustomization_path();
    if !root.join(&kustomization).is_file() {
        bail!(
            "{kustomization} is missing: it lists what goes into the bundle (../default and ../samples)\n\nScaffold it with `opgen generate bundle --init-base --package {package}` (your CSV base is kept)"
        );
    }
    if !root.join(crds::BASES_DIR).is_dir() {
        bail!(
            "{} is missing: the bundle packs the CRDs `generate manifests` writes there\n\nRun `make manifests` (or `opgen generate manifests`) first, then generate the bundle",
            crds::BASES_DIR
        );
    }
    Ok(())
}

/// How OLM may install an operator of this scope, as the base declares it.
#[derive(Debug, Serialize)]
struct InstallMode {
    #[serde(rename = "type")]
    kind: &'static str,
    supported: bool,
}

#[derive(Debug, Serialize)]
struct BaseValues {
    name: String,
    package: String,
    domain: String,
    /// `Demo Operator` for `demo-operator`.
    display_name: String,
    /// The owner, as a YAML scalar.
    maintainer: String,
    scope_sentence: &'static str,
    supported_modes: &'static str,
    install_modes: Vec<InstallMode>,
}

/// The install modes an operator of the project's scope supports: a cluster-wide operator
/// watches every namespace (AllNamespaces); a namespaced one watches the one namespace OLM
/// targets (OwnNamespace, SingleNamespace).
pub fn supported_modes(project: &Project) -> &'static [&'static str] {
    if project.namespaced() {
        &["OwnNamespace", "SingleNamespace"]
    } else {
        &["AllNamespaces"]
    }
}

/// What the base's comment on its install modes says of the scope: what the operator watches,
/// and the modes that follows from.
fn scope_words(project: &Project) -> (&'static str, &'static str) {
    if project.namespaced() {
        (
            "watches only the namespace OLM targets",
            "OwnNamespace and SingleNamespace",
        )
    } else {
        ("watches every namespace", "AllNamespaces only")
    }
}

/// `base`, a CSV base's text, with each of its `installModes` supported as `project`'s scope
/// says (and its comment on them, when it is opgen's), the rest as it is; and whether it has
/// install modes to set. `opgen edit` calls it when the scope changes.
pub fn with_install_modes(base: &str, project: &Project) -> (String, bool) {
    let supported = supported_modes(project);
    let (watches, modes) = scope_words(project);
    let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
    let mut found = false;
    let mut mode: Option<String> = None;
    let mut modes_indent: Option<usize> = None;
    for index in 0..lines.len() {
        let line = lines[index].clone();
        let trimmed = line.trim();
        if trimmed.starts_with("# Which OperatorGroups may install the operator: it ")
            && lines
                .get(index + 1)
                .is_some_and(|next| next.contains("; `opgen generate bundle` refuses modes"))
        {
            let indent = &line[..line.len() - line.trim_start().len()];
            lines[index] = format!(
                "{indent}# Which OperatorGroups may install the operator: it {watches}, so it supports"
            );
            lines[index + 1] = format!(
                "{indent}# {modes}; `opgen generate bundle` refuses modes that contradict that."
            );
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if trimmed == "installModes:" {
            modes_indent = Some(indent);
            continue;
        }
        let Some(list_indent) = modes_indent else {
            continue;
        };
        if indent <= list_indent
            && !trimmed.is_empty()
            && !trimmed.starts_with('-')
            && !trimmed.starts_with('#')
        {
            modes_indent = None;
            continue;
        }
        if let Some(kind) = trimmed.strip_prefix("- type:") {
            mode = Some(kind.trim().to_owned());
        } else if let (Some(kind), Some(_)) = (&mode, trimmed.strip_prefix("supported:")) {
            lines[index] = format!(
                "{}supported: {}",
                &line[..indent],
                supported.contains(&kind.as_str())
            );
            found = true;
            mode = None;
        }
    }
    let mut text = lines.join("\n");
    if base.ends_with('\n') {
        text.push('\n');
    }
    (text, found)
}

/// Every install mode OLM knows, in its documentation's order.
pub const INSTALL_MODES: [&str; 4] = [
    "OwnNamespace",
    "SingleNamespace",
    "MultiNamespace",
    "AllNamespaces",
];

/// What `init` scaffolds: `config/manifests` for the package named after the project.
pub fn initial_files(project: &Project) -> anyhow::Result<Vec<PlannedFile>> {
    scaffold_files(project, &PackageName::of_project(&project.project_name))
}

/// The files `config/manifests` starts with.
pub fn scaffold_files(
    project: &Project,
    package: &PackageName,
) -> anyhow::Result<Vec<PlannedFile>> {
    let name = project.project_name.to_string();
    let holder = project
        .owner
        .clone()
        .unwrap_or_else(|| format!("The {name} Authors"));
    let supported = supported_modes(project);
    let values = BaseValues {
        display_name: name
            .split('-')
            .map(|word| {
                let mut chars = word.chars();
                chars
                    .next()
                    .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join(" "),
        maintainer: serde_json::to_string(&holder).expect("a string serializes"),
        package: package.to_string(),
        domain: project.domain.to_string(),
        scope_sentence: scope_words(project).0,
        supported_modes: scope_words(project).1,
        install_modes: INSTALL_MODES
            .iter()
            .map(|kind| InstallMode {
                kind,
                supported: supported.contains(kind),
            })
            .collect(),
        name,
    };
    let templates = Templates::get();
    Ok(vec![
        PlannedFile::new(
            kustomization_path(),
            templates.render("bundle/kustomization.yaml", &values)?,
            Owner::Scaffolded,
        ),
        PlannedFile::new(
            base_path(package),
            templates.render("bundle/base.clusterserviceversion.yaml", &values)?,
            Owner::Scaffolded,
        ),
    ])
}

/// Reads the CSV base of `package`, which must exist.
pub fn read(root: &Path, package: &PackageName) -> anyhow::Result<Value> {
    let relative = base_path(package);
    let path = root.join(&relative);
    if !path.is_file() {
        bail!(
            "{relative} is missing: the bundle's ClusterServiceVersion is built on this base of yours (display name, description, icon, maintainers, install modes)\n\nScaffold it with `opgen generate bundle --init-base --package {package}`, fill it in, then run this again"
        );
    }
    let text = crate::files::read_to_string(&path)?;
    let base: Value = serde_saphyr::from_str(&text).map_err(|err| {
        anyhow::anyhow!(
            "{relative} is not YAML: {}",
            crate::yaml_error::located(&err)
        )
    })?;
    let field = |name: &str| base.get(name).and_then(Value::as_str).unwrap_or_default();
    if field("apiVersion") != "operators.coreos.com/v1alpha1"
        || field("kind") != "ClusterServiceVersion"
    {
        bail!(
            "{relative} is not a ClusterServiceVersion: it must start with `apiVersion: operators.coreos.com/v1alpha1` and `kind: ClusterServiceVersion`"
        );
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    fn base_of(project: &Project) -> Value {
        let package = PackageName::of_project(&project.project_name);
        let files = scaffold_files(project, &package).unwrap();
        assert_eq!(files[0].path, "config/manifests/kustomization.yaml");
        assert_eq!(
            files[1].path,
            "config/manifests/bases/demo-operator.clusterserviceversion.yaml"
        );
        serde_saphyr::from_str(&files[1].contents).unwrap()
    }

    #[test]
    fn the_install_modes_follow_a_new_scope_and_nothing_else_changes() {
        let text = |project: &Project| {
            let package = PackageName::of_project(&project.project_name);
            scaffold_files(project, &package).unwrap()[1]
                .contents
                .clone()
        };
        let cluster = Project::for_test("demo-operator", Scope::Cluster);
        let namespaced = Project::for_test("demo-operator", Scope::Namespace);
        let mine = text(&cluster).replace("maturity: alpha", "maturity: beta");
        let (amended, found) = with_install_modes(&mine, &namespaced);
        assert!(found);
        assert_eq!(
            amended,
            text(&namespaced).replace("maturity: alpha", "maturity: beta")
        );
        let (back, _) = with_install_modes(&amended, &cluster);
        assert_eq!(back, mine);
        assert_eq!(
            with_install_modes("spec: {}\n", &cluster),
            ("spec: {}\n".to_owned(), false)
        );
    }

    fn supported(base: &Value) -> Vec<&str> {
        base["spec"]["installModes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["supported"] == true)
            .map(|m| m["type"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn the_scaffolded_base_follows_the_scope() {
        let cluster = base_of(&Project::for_test("demo-operator", Scope::Cluster));
        assert_eq!(supported(&cluster), ["AllNamespaces"]);
        assert_eq!(cluster["spec"]["installModes"].as_array().unwrap().len(), 4);
        assert_eq!(cluster["spec"]["displayName"], "Demo Operator");
        assert_eq!(
            cluster["spec"]["maintainers"][0]["name"],
            "The demo-operator Authors"
        );
        let mut namespaced = Project::for_test("demo-operator", Scope::Namespace);
        namespaced.owner = Some("Jane: Doe".into());
        let namespaced = base_of(&namespaced);
        assert_eq!(supported(&namespaced), ["OwnNamespace", "SingleNamespace"]);
        assert_eq!(namespaced["spec"]["provider"]["name"], "Jane: Doe");
    }

    #[test]
    fn read_requires_a_csv_base() {
        let dir = tempfile::tempdir().unwrap();
        let package: PackageName = "demo".parse().unwrap();
        let err = read(dir.path(), &package).unwrap_err().to_string();
        assert!(
            err.starts_with("config/manifests/bases/demo.clusterserviceversion.yaml is missing"),
            "{err}"
        );
        assert!(
            err.contains("opgen generate bundle --init-base --package demo"),
            "{err}"
        );
        let path = dir.path().join(base_path(&package));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "apiVersion: v1\nkind: ConfigMap\n").unwrap();
        let err = read(dir.path(), &package).unwrap_err().to_string();
        assert!(err.contains("is not a ClusterServiceVersion"), "{err}");
        std::fs::write(&path, "spec: [\n").unwrap();
        let err = read(dir.path(), &package).unwrap_err().to_string();
        assert!(err.contains("is not YAML"), "{err}");
    }
}
