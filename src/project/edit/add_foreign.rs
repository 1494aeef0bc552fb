//! `create api --resource=false`'s edit of `PROJECT` for a kind the project does not own: a
//! built-in Kubernetes kind, or a kind of another project's CRD, whose copy is stored under
//! `config/external/`. `PROJECT` records it under `foreignKinds`.

use anyhow::bail;

use crate::{
    model::{BuiltInKind, ExternalCrd, ForeignKind, Group, Origin},
    project::Project,
};

/// What `create api --resource=false` asks for a kind the project does not own: the words
/// as typed (the kind is looked up by them), and where its types come from.
#[derive(Debug, Clone)]
pub struct AddForeign {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub source: Source,
}

/// Where a foreign kind's types come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Kubernetes' own kinds.
    BuiltIn,
    /// Another project's CRD: the file as the user named it, and its text.
    External { file: String, text: String },
}

/// The project after the change, the kind added to it, and the copy of an external kind's
/// CRD to store with it (its path and text).
#[derive(Debug)]
pub struct ForeignChange {
    pub project: Project,
    pub foreign: ForeignKind,
    pub stored: Option<(String, String)>,
}

/// Adds the foreign kind `request` asks for, refusing anything `PROJECT`'s rules refuse.
pub fn add_foreign(project: &Project, request: &AddForeign) -> anyhow::Result<ForeignChange> {
    let AddForeign {
        group,
        version,
        kind,
        source,
    } = request;
    match source {
        Source::BuiltIn => add_built_in(project, group, version, kind),
        Source::External { file, text } => add_external(project, file, text, group, version, kind),
    }
}

/// Adds the built-in kind `group`/`version` `kind`.
fn add_built_in(
    project: &Project,
    group: &str,
    version: &str,
    kind: &str,
) -> anyhow::Result<ForeignChange> {
    let found = match BuiltInKind::find(group, version, kind, project.kubernetes_version) {
        Ok(found) => found,
        // A group of the project's own: the kind is one to create first.
        Err(_)
            if group
                .parse::<Group>()
                .is_ok_and(|g| owns_group(project, &g)) =>
        {
            bail!(
                "--resource=false needs the types of {kind} {group}/{version} to exist, and PROJECT has none\n\nCreate them first: opgen create api --group {group} --version {version} --kind {kind}"
            )
        }
        Err(unknown) => bail!(
            "{kind} is not a kind of this project, nor a built-in kind: {unknown}\n\nFor a kind of your own, drop --resource=false; for another project's CRD, add --external-crd <file>"
        ),
    };
    let foreign = ForeignKind {
        origin: Origin::BuiltIn,
        group: found.group.parse()?,
        version: found.version.parse()?,
        kind: found.kind.parse()?,
        plural: found.plural.to_owned(),
        namespaced: found.namespaced,
        crd: None,
    };
    add(project, foreign, None)
}

/// Adds the kind `kind` of the CRD `text` (read from `crd_file`), checked to define it in
/// `group` and `version`.
fn add_external(
    project: &Project,
    crd_file: &str,
    text: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> anyhow::Result<ForeignChange> {
    let (crd, stored_text) = ExternalCrd::read(text, group, kind).map_err(|problem| {
        anyhow::anyhow!(
            "--external-crd {} is not a CRD opgen can use: {problem}\n\nPass the file of an `apiextensions.k8s.io/v1` CustomResourceDefinition, as its project publishes it",
            crd_file
        )
    })?;
    if crd.group != group {
        bail!(
            "{} defines group `{}`, not `{group}`\n\nPass --group {}",
            crd_file,
            crd.group,
            crd.group
        );
    }
    if crd.kind != kind {
        bail!(
            "{} defines the kind {}, not {kind}\n\nPass --kind {}, or the CRD file that defines {kind}",
            crd_file,
            crd.kind,
            crd.kind
        );
    }
    if crd.version(version).is_none() {
        bail!(
            "{} defines {} in version(s) {}, not {version}\n\nPass --version with one of them",
            crd_file,
            crd.kind,
            crd.version_names()
        );
    }
    let stored_path = ForeignKind::stored_crd_file(&crd.plural, &crd.group);
    let foreign = ForeignKind {
        origin: Origin::External,
        group: crd.group.parse()?,
        version: version.parse()?,
        kind: crd.kind.parse()?,
        plural: crd.plural.clone(),
        namespaced: crd.namespaced,
        crd: Some(stored_path.clone()),
    };
    add(
        project,
        foreign,
        Some((stored_path, stored_text.to_owned())),
    )
}

/// The project with `foreign` added, checked against `PROJECT`'s rules.
fn add(
    project: &Project,
    foreign: ForeignKind,
    stored: Option<(String, String)>,
) -> anyhow::Result<ForeignChange> {
    if let Some(existing) = project.foreign_kinds.iter().find(|f| f.same_kind(&foreign)) {
        bail!(
            "{} of `{}` has a controller already (it watches {}); one controller runs per kind\n\nEdit {} instead",
            foreign.kind,
            foreign.group.shown(),
            existing.api_version(),
            existing.controller_file()
        );
    }
    let mut updated = project.clone();
    updated.foreign_kinds.push(foreign.clone());
    updated.check()?;
    Ok(ForeignChange {
        project: updated,
        foreign,
        stored,
    })
}

fn owns_group(project: &Project, group: &Group) -> bool {
    project.resources.iter().any(|r| &r.group == group)
}
