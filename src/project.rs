//! The `PROJECT` file: opgen's record of a project, read and rewritten by every command.
//!
//! It plays the part of Kubebuilder's `PROJECT`: the domain, the operator's scope and every
//! resource added with `create api`. The generated files are a function of it. It is the
//! user's to edit: every command checks it against the same rules (`rules`) before using it.

mod broken_rule;
pub mod edit;
mod foreign_rules;
mod rules;
mod scaffolded;

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde::{Deserialize, Serialize};

use crate::{
    lock::ProjectLock,
    model::{
        Domain, ForeignKind, KubernetesVersion, License, NewerProject, OpgenVersion, ProjectName,
        Resource,
    },
    yaml_error,
};

pub use rules::{BrokenRule, Violation};

/// The name of the file, at the root of every opgen project.
pub const FILE_NAME: &str = "PROJECT";

/// The layout version of `PROJECT`; bumped when its shape changes incompatibly.
const SCHEMA_VERSION: &str = "1";

const HEADER: &str = "\
# The record of this opgen project (domain, scope, resources): every opgen command reads it
# and writes it back (comments other than these lines are not kept). You may edit it: opgen
# checks every edit, and regenerates the files that follow from it on its next command.
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
    /// The opgen release that made the project or last brought it up to date: only `init`
    /// and `update` set it, so that a newer opgen's `generate manifests --check` does not
    /// find the project stale for its version alone.
    pub opgen_version: OpgenVersion,
    #[serde(default)]
    pub resources: Vec<Resource>,
    /// Kinds with a controller here whose types are Kubernetes' or another project's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_kinds: Vec<ForeignKind>,
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
            opgen_version: OpgenVersion::running(),
            resources: Vec::new(),
            foreign_kinds: Vec::new(),
        }
    }

    /// Parses `PROJECT`'s text; `path` is only for messages. A project made by a newer opgen
    /// is refused before anything else is read (see [`check_opgen_version`]).
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Self> {
        check_opgen_version(text)?;
        let project: Project = serde_saphyr::from_str(text).map_err(|err| {
            let place = match yaml_error::location(&err) {
                Some((line, column)) => format!("{}:{line}:{column}", path.display()),
                None => path.display().to_string(),
            };
            anyhow::anyhow!("{place}: {}", yaml_error::problem(&err))
        })?;
        if project.version != SCHEMA_VERSION {
            bail!(
                "{}: layout version {:?} is not one this opgen reads (it reads {SCHEMA_VERSION:?}); use the opgen release that wrote it",
                path.display(),
                project.version
            );
        }
        if let Err(violation) = project.check() {
            bail!("{}: {violation}", place(text, path, &violation));
        }
        Ok(project)
    }

    /// The file's text, as written to disk.
    pub fn render(&self) -> String {
        let yaml = serde_saphyr::to_string(self).expect("PROJECT always serializes");
        format!("{HEADER}{yaml}")
    }

    /// Finds the project that `dir` is in (`dir` or its nearest parent holding `PROJECT`),
    /// locks it for this command (see [`ProjectLock`]) and reads its `PROJECT`. The lock comes
    /// first, so that what is read is what no other command is changing.
    pub fn open(dir: &Path) -> anyhow::Result<(PathBuf, ProjectLock, Project)> {
        let root = find_root(dir)?;
        let lock = ProjectLock::acquire(&root)?;
        let path = root.join(FILE_NAME);
        let text = crate::files::read_to_string(&path)?;
        let project = Project::parse(&text, &path)?;
        if let Err(violation) = foreign_rules::check_stored_crds(&project, &root) {
            bail!("{}: {violation}", place(&text, &path, &violation));
        }
        if let Err(found) = scaffolded::check(&project, &root) {
            let line = text
                .lines()
                .position(|line| line.starts_with(&format!("{}:", found.field)))
                .map_or_else(String::new, |index| format!(":{}", index + 1));
            bail!("{}{line}: {}", path.display(), found.message);
        }
        Ok((root, lock, project))
    }

    /// The first of [`rules`] that the project breaks. `create api` checks the project it
    /// is about to write with these, and every command checks the one it reads.
    pub fn check(&self) -> Result<(), Violation> {
        rules::check(self)?;
        foreign_rules::check(self)
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

    /// Whether the kind of `resource` converts between its versions through a webhook.
    pub fn converts(&self, resource: &Resource) -> bool {
        self.versions_of(resource)
            .any(|r| r.webhooks.is_some_and(|webhooks| webhooks.conversion))
    }

    /// The versions of the kind of `resource` that convert through its hub, the storage
    /// version: none when the kind does not convert.
    pub fn spokes<'a>(&'a self, resource: &'a Resource) -> Vec<&'a Resource> {
        if !self.converts(resource) {
            return Vec::new();
        }
        self.versions_of(resource).filter(|r| !r.storage).collect()
    }

    pub fn namespaced(&self) -> bool {
        self.operator_scope == Scope::Namespace
    }
}

#[cfg(test)]
impl Project {
    /// A project in domain example.com, on the default Kubernetes version, without kinds.
    pub fn for_test(name: &str, scope: Scope) -> Self {
        Self::new(
            name.parse().unwrap(),
            "example.com".parse().unwrap(),
            scope,
            KubernetesVersion::default(),
            License::Apache2,
            None,
        )
    }
}

/// `PROJECT:<line>` of the entry a violation is about.
fn place(text: &str, path: &Path, violation: &Violation) -> String {
    match resource_lines(text).get(violation.resource) {
        Some(line) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    }
}

/// The line of each entry of `resources`, then of `foreignKinds`, for messages; empty when
/// the text does not parse (the caller has parsed it already, so that does not happen).
fn resource_lines(text: &str) -> Vec<u64> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Lines {
        #[serde(default)]
        resources: Vec<serde_saphyr::Spanned<serde::de::IgnoredAny>>,
        #[serde(default)]
        foreign_kinds: Vec<serde_saphyr::Spanned<serde::de::IgnoredAny>>,
    }
    serde_saphyr::from_str::<Lines>(text)
        .map(|lines| {
            lines
                .resources
                .iter()
                .chain(&lines.foreign_kinds)
                .map(|entry| entry.referenced.line())
                .collect()
        })
        .unwrap_or_default()
}

/// `dir` or its nearest parent holding `PROJECT`.
fn find_root(dir: &Path) -> anyhow::Result<PathBuf> {
    match dir.ancestors().find(|root| root.join(FILE_NAME).is_file()) {
        Some(root) => Ok(root.to_path_buf()),
        None => bail!(
            "{} is not inside an opgen project (no {FILE_NAME} file here or in a parent directory)\n\nStart one with `opgen init --domain example.com`, or run this from the project's directory",
            dir.display()
        ),
    }
}

/// Refuses a `PROJECT` stamped by a newer opgen than this one. Only `opgenVersion` is read
/// here, leniently: a newer opgen may have added fields that this one does not know, and then
/// "install the newer opgen" is the useful message, not "unknown field". Anything malformed is
/// left for the full parse to report with its line.
fn check_opgen_version(text: &str) -> Result<(), NewerProject> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Stamp {
        opgen_version: Option<String>,
    }
    let recorded = serde_saphyr::from_str::<Stamp>(text)
        .ok()
        .and_then(|stamp| stamp.opgen_version?.parse::<OpgenVersion>().ok());
    match recorded {
        Some(recorded) => recorded.check_readable_by(&OpgenVersion::running()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Project {
        Project::for_test("demo", Scope::Cluster)
    }

    fn resource(kind: &str, version: &str, storage: bool) -> Resource {
        Resource {
            controller: storage,
            storage,
            ..Resource::for_test("db", version, kind)
        }
    }

    #[test]
    fn round_trips() {
        let mut project = sample();
        project.resources.push(resource("MySQLCluster", "v1", true));
        let text = project.render();
        assert!(text.starts_with("# The record of this opgen project"));
        assert!(!text.contains("DO NOT EDIT"));
        assert_eq!(
            Project::parse(&text, Path::new("PROJECT")).unwrap(),
            project
        );
    }

    #[test]
    fn render_keeps_the_recorded_opgen_version() {
        let mut project = sample();
        assert_eq!(project.opgen_version, OpgenVersion::running());
        project.opgen_version = "0.0.1".parse().unwrap();
        let text = project.render();
        assert!(text.contains("opgenVersion: \"0.0.1\"\n"), "{text}");
        assert_eq!(
            Project::parse(&text, Path::new("PROJECT"))
                .unwrap()
                .opgen_version,
            project.opgen_version
        );
    }

    #[test]
    fn a_project_of_a_newer_opgen_is_refused_before_its_fields_are_read() {
        let mut project = sample();
        project.opgen_version = "99.1.0".parse().unwrap();
        // A newer opgen may have changed the layout and added fields this one does not know.
        let text = project
            .render()
            .replace("version: \"1\"", "version: \"7\"")
            .replace("resources: []", "resources: []\nwebhooks: []");
        let err = Project::parse(&text, Path::new("PROJECT"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("this project was made by opgen 99.1.0; install 99.1.0 or newer"),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_opgen_version_is_reported_with_its_line() {
        let text = sample()
            .render()
            .replace(&format!("\"{}\"", OpgenVersion::running()), "\"0.1\"");
        let err = Project::parse(&text, Path::new("PROJECT"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("PROJECT:10:"), "{err}");
        assert!(err.contains("invalid opgen version `0.1`"), "{err}");
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
        let text = project.render();
        let err = Project::parse(&text, Path::new("PROJECT"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 storage versions"), "{err}");
        let line = text
            .lines()
            .position(|l| l.contains("version: v1") && !l.contains("alpha"))
            .unwrap();
        // The violation points at the entry of the second version, which starts a line
        // above its `version:`.
        assert!(
            err.starts_with(&format!("PROJECT:{line}: ")),
            "{err}\n{text}"
        );
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
