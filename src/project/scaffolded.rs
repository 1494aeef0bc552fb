//! `PROJECT` fields that were written into scaffolded files when the project was made, and
//! that opgen therefore cannot follow when they are edited: the project's name (its
//! packages), its Kubernetes version (k8s-openapi's feature), its license, and the domain
//! (in each kind's `#[kube(group = …)]`). An edit of one of these is refused with the way to
//! make the change; the scaffolded files are the truth.
//!
//! Files are read line by line: a file that no longer has the line looked for (restructured
//! by hand) is not held against `PROJECT`.

use std::path::Path;

use super::Project;

/// A field of `PROJECT` that disagrees with the scaffolded files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The top-level key in `PROJECT`.
    pub field: &'static str,
    pub message: String,
}

/// The first field of `project` that disagrees with the files under `root`.
pub fn check(project: &Project, root: &Path) -> Result<(), Disagreement> {
    let read = |path: &str| std::fs::read_to_string(root.join(path)).ok();
    if let Some(api) = read("api/Cargo.toml")
        && let Some(package) = value_of(&api, "package", "name").map(|v| unquote(&v).to_owned())
        && package != project.project_name.api_crate()
    {
        let name = package.strip_suffix("-api").unwrap_or(&package);
        return Err(Disagreement {
            field: "projectName",
            message: format!(
                "projectName is `{}`, but the project's packages are named after `{name}` (`{package}` in api/Cargo.toml); opgen does not rename a project\n\nPut back `projectName: {name}`",
                project.project_name
            ),
        });
    }
    for resource in &project.resources {
        let file = resource.api_file();
        let Some(declared) = read(&file).and_then(|text| kube_group(&text)) else {
            continue;
        };
        let expected = resource.qualified_group(&project.domain);
        if declared != expected {
            let field = if declared.starts_with(&format!("{}.", resource.group)) {
                "domain"
            } else {
                "resources"
            };
            return Err(Disagreement {
                field,
                message: format!(
                    "PROJECT puts {} in the API group `{expected}`, but {file} declares `group = \"{declared}\"`: opgen does not rewrite the kinds' files\n\nChange the group in the #[kube(...)] of every kind first, or put back the {field} that matches it",
                    resource.kind
                ),
            });
        }
    }
    let Some(workspace) = read("Cargo.toml") else {
        return Ok(());
    };
    if let Some(features) = value_of(&workspace, "workspace.dependencies", "k8s-openapi") {
        let feature = project.kubernetes_version.feature();
        if !features.contains(&format!("\"{feature}\"")) {
            return Err(Disagreement {
                field: "kubernetesVersion",
                message: format!(
                    "kubernetesVersion is {}, but Cargo.toml does not build against it (k8s-openapi's feature `{feature}`): opgen does not edit Cargo.toml\n\nSet the feature of k8s-openapi in Cargo.toml to `{feature}` (a v1_NN feature for 1.NN), or put back the kubernetesVersion it builds against",
                    project.kubernetes_version
                ),
            });
        }
    }
    let license = value_of(&workspace, "workspace.package", "license")
        .map(|value| unquote(&value).to_owned());
    let expected = project.license.spdx();
    if license.as_deref() != expected {
        return Err(Disagreement {
            field: "license",
            message: format!(
                "license is `{}`, but Cargo.toml says {}: opgen does not rewrite Cargo.toml or LICENSE\n\nChange the `license` of [workspace.package] in Cargo.toml (and the LICENSE file) first, or put back the license it has",
                serde_saphyr::to_string(&project.license)
                    .unwrap_or_default()
                    .trim(),
                license.map_or_else(|| "none".to_owned(), |l| format!("`{l}`"))
            ),
        });
    }
    Ok(())
}

/// The raw value of `key = …` in the `[section]` of a TOML text, when it is on one line.
fn value_of(toml: &str, section: &str, key: &str) -> Option<String> {
    let header = format!("[{section}]");
    let mut in_section = false;
    for line in toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_section = line == header;
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some((name, value)) = line.split_once('=')
            && name.trim() == key
        {
            return Some(value.trim().to_owned());
        }
    }
    None
}

/// The API group of a kind's file: the `group = "…"` of its `#[kube(...)]`.
fn kube_group(source: &str) -> Option<String> {
    source.lines().find_map(|line| {
        let value = line
            .trim()
            .strip_prefix("group")?
            .trim_start()
            .strip_prefix('=')?;
        Some(unquote(value.trim().trim_end_matches(',')).to_owned())
    })
}

fn unquote(value: &str) -> &str {
    value.trim().trim_matches('"')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{model::License, project::Scope};

    const CARGO_TOML: &str = r#"[workspace]
members = ["api"]

[workspace.package]
version = "0.1.0"
license = "Apache-2.0"

[workspace.dependencies]
demo-api = { path = "api" }
k8s-openapi = { version = "0.29.0", features = ["v1_35", "schemars"] }

[package]
name = "demo"
"#;

    fn project_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("api")).unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), CARGO_TOML).unwrap();
        std::fs::write(
            dir.path().join("api/Cargo.toml"),
            "[package]\nname = \"demo-api\"\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn agrees_with_the_files_it_was_made_with() {
        let dir = project_dir();
        check(&Project::for_test("demo", Scope::Cluster), dir.path()).unwrap();
        // A project whose files say nothing of these is not held back.
        let empty = tempfile::tempdir().unwrap();
        let mut unlicensed = Project::for_test("demo", Scope::Cluster);
        unlicensed.license = License::None;
        check(&unlicensed, empty.path()).unwrap();
    }

    #[test]
    fn refuses_an_edit_it_cannot_follow() {
        let dir = project_dir();
        let renamed = Project::for_test("other", Scope::Cluster);
        let found = check(&renamed, dir.path()).unwrap_err();
        assert_eq!(found.field, "projectName");
        assert!(
            found.message.contains("Put back `projectName: demo`"),
            "{found:?}"
        );

        let mut newer = Project::for_test("demo", Scope::Cluster);
        newer.kubernetes_version = "1.37".parse().unwrap();
        let found = check(&newer, dir.path()).unwrap_err();
        assert_eq!(found.field, "kubernetesVersion");
        assert!(found.message.contains("`v1_37`"), "{found:?}");

        let mut kind = Project::for_test("demo", Scope::Cluster);
        kind.resources
            .push(crate::model::Resource::for_test("db", "v1", "Thing"));
        std::fs::create_dir_all(dir.path().join("api/src/db/v1")).unwrap();
        std::fs::write(
            dir.path().join("api/src/db/v1/thing.rs"),
            "#[kube(\n    group = \"db.example.com\",\n    version = \"v1\",\n)]\n",
        )
        .unwrap();
        check(&kind, dir.path()).unwrap();
        kind.domain = "example.org".parse().unwrap();
        let found = check(&kind, dir.path()).unwrap_err();
        assert_eq!(found.field, "domain");
        assert!(
            found
                .message
                .contains("declares `group = \"db.example.com\"`"),
            "{found:?}"
        );

        let mut mit = Project::for_test("demo", Scope::Cluster);
        mit.license = License::Mit;
        let found = check(&mit, dir.path()).unwrap_err();
        assert_eq!(found.field, "license");
        assert!(
            found.message.contains("Cargo.toml says `Apache-2.0`"),
            "{found:?}"
        );
    }
}
