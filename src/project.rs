//! The `PROJECT` file: opgen's record of a project, read and rewritten by every command.
//!
//! It plays the part of Kubebuilder's `PROJECT`: the domain, the operator's scope and every
//! resource added with `create api`. The generated files are a function of it.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};

use crate::model::{Domain, KubernetesVersion, License, ProjectName, Resource};

/// The name of the file, at the root of every opgen project.
pub const FILE_NAME: &str = "PROJECT";

/// The layout version of `PROJECT`; bumped when its shape changes incompatibly.
const SCHEMA_VERSION: &str = "1";

const HEADER: &str = "\
# opgen project file: the record opgen keeps of this project (domain, scope, resources).
# opgen rewrites it on `create api`; edit it only to fix a mistake, then re-run a command.
";

/// Whether the operator watches the whole cluster or only its own namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Cluster,
    Namespace,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Project {
    pub version: String,
    pub project_name: ProjectName,
    pub domain: Domain,
    pub operator_scope: Scope,
    pub kubernetes_version: KubernetesVersion,
    pub license: License,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The opgen release that last wrote the file.
    pub opgen_version: String,
    #[serde(default)]
    pub resources: Vec<Resource>,
}

impl Project {
    pub fn new(
        project_name: ProjectName,
        domain: Domain,
        operator_scope: Scope,
        kubernetes_version: KubernetesVersion,
        license: License,
        owner: Option<String>,
    ) -> Self {
        Self {
            version: SCHEMA_VERSION.to_owned(),
            project_name,
            domain,
            operator_scope,
            kubernetes_version,
            license,
            owner,
            opgen_version: env!("CARGO_PKG_VERSION").to_owned(),
            resources: Vec::new(),
        }
    }

    /// Parses `PROJECT`'s text; `path` is only for messages.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Self> {
        let project: Project = serde_saphyr::from_str(text).map_err(|err| {
            let place = err
                .location()
                .map(|at| format!("{}:{}:{}", path.display(), at.line(), at.column()))
                .unwrap_or_else(|| path.display().to_string());
            anyhow::anyhow!("{place}: {}", first_line(&err.to_string()))
        })?;
        if project.version != SCHEMA_VERSION {
            bail!(
                "{}: layout version {:?} is not one this opgen reads (it reads {SCHEMA_VERSION:?}); use the opgen release that wrote it",
                path.display(),
                project.version
            );
        }
        project
            .check_resources()
            .with_context(|| format!("{} is inconsistent", path.display()))?;
        Ok(project)
    }

    /// The file's text, as written to disk.
    pub fn render(&self) -> String {
        let mut project = self.clone();
        project.opgen_version = env!("CARGO_PKG_VERSION").to_owned();
        let yaml = serde_saphyr::to_string(&project).expect("PROJECT always serializes");
        format!("{HEADER}{yaml}")
    }

    /// Finds the project that `dir` is in: `dir` or its nearest parent holding `PROJECT`.
    pub fn find(dir: &Path) -> anyhow::Result<(PathBuf, Project)> {
        for root in dir.ancestors() {
            let path = root.join(FILE_NAME);
            if path.is_file() {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                return Ok((root.to_path_buf(), Project::parse(&text, &path)?));
            }
        }
        bail!(
            "{} is not inside an opgen project (no {FILE_NAME} file here or in a parent directory)\n\nStart one with `opgen init --domain example.com`, or run this from the project's directory",
            dir.display()
        )
    }

    /// The rules every later command relies on: no resource twice, one storage version and
    /// at most one controller per kind, one plural per kind.
    fn check_resources(&self) -> anyhow::Result<()> {
        for (i, resource) in self.resources.iter().enumerate() {
            let earlier = &self.resources[..i];
            if earlier
                .iter()
                .any(|r| r.same_kind(resource) && r.version == resource.version)
            {
                bail!(
                    "{} {}/{} is listed twice",
                    resource.kind,
                    resource.group,
                    resource.version
                );
            }
            if let Some(other) = earlier.iter().find(|r| {
                r.same_kind(resource)
                    && (r.plural != resource.plural || r.namespaced != resource.namespaced)
            }) {
                bail!(
                    "the versions {} and {} of {} disagree on plural or scope",
                    other.version,
                    resource.version,
                    resource.kind
                );
            }
        }
        for kind in self.kinds() {
            let versions: Vec<&Resource> = self.versions_of(kind).collect();
            let stored = versions.iter().filter(|r| r.storage).count();
            if stored != 1 {
                bail!(
                    "{} {} has {stored} storage versions; exactly one must have `storage: true`",
                    kind.kind,
                    kind.group
                );
            }
            if versions.iter().filter(|r| r.controller).count() > 1 {
                bail!(
                    "{} {} has more than one version with `controller: true`; one controller runs per kind",
                    kind.kind,
                    kind.group
                );
            }
        }
        Ok(())
    }

    /// One resource per kind (its first version), in the order they were added.
    pub fn kinds(&self) -> impl Iterator<Item = &Resource> {
        self.resources
            .iter()
            .enumerate()
            .filter(|(i, r)| !self.resources[..*i].iter().any(|e| e.same_kind(r)))
            .map(|(_, r)| r)
    }

    /// Every version of the kind of `resource`.
    pub fn versions_of<'a>(&'a self, resource: &'a Resource) -> impl Iterator<Item = &'a Resource> {
        self.resources.iter().filter(move |r| r.same_kind(resource))
    }

    pub fn namespaced(&self) -> bool {
        self.operator_scope == Scope::Namespace
    }
}

fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Project {
        Project::new(
            "demo".parse().unwrap(),
            "example.com".parse().unwrap(),
            Scope::Cluster,
            KubernetesVersion::default(),
            License::Apache2,
            None,
        )
    }

    fn resource(kind: &str, version: &str, storage: bool) -> Resource {
        let kind: crate::model::Kind = kind.parse().unwrap();
        Resource {
            group: "db".parse().unwrap(),
            version: version.parse().unwrap(),
            plural: crate::model::ResourceName::plural_of(&kind),
            short_name: kind.default_short_name().parse().unwrap(),
            kind,
            namespaced: true,
            controller: storage,
            storage,
        }
    }

    #[test]
    fn round_trips() {
        let mut project = sample();
        project.resources.push(resource("MySQLCluster", "v1", true));
        let text = project.render();
        assert!(text.starts_with("# opgen project file"));
        assert_eq!(
            Project::parse(&text, Path::new("PROJECT")).unwrap(),
            project
        );
    }

    #[test]
    fn malformed_file_names_file_line_and_problem() {
        let text = "version: \"1\"\nprojectName: demo\ndomain: Example.com\n";
        let err = Project::parse(text, Path::new("PROJECT"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("PROJECT:3:"), "{err}");
        assert!(err.contains("invalid domain `Example.com`"), "{err}");
    }

    #[test]
    fn unknown_keys_are_errors() {
        let mut text = sample().render();
        text.push_str("colour: blue\n");
        let err = Project::parse(&text, Path::new("PROJECT"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("colour"), "{err}");
    }

    #[test]
    fn refuses_two_storage_versions() {
        let mut project = sample();
        project
            .resources
            .push(resource("MySQLCluster", "v1alpha1", true));
        project.resources.push(resource("MySQLCluster", "v1", true));
        let err = format!(
            "{:#}",
            Project::parse(&project.render(), Path::new("PROJECT")).unwrap_err()
        );
        assert!(err.contains("2 storage versions"), "{err}");
    }

    #[test]
    fn kinds_lists_each_kind_once() {
        let mut project = sample();
        project
            .resources
            .push(resource("MySQLCluster", "v1alpha1", false));
        project.resources.push(resource("Backup", "v1", true));
        project.resources.push(resource("MySQLCluster", "v1", true));
        let kinds: Vec<&str> = project.kinds().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["MySQLCluster", "Backup"]);
        assert_eq!(project.versions_of(&project.resources[0]).count(), 2);
    }
}
