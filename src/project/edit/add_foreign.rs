//! `create api --resource=false`'s edit of `PROJECT` for a kind the project does not own: a
//! built-in Kubernetes kind, or a kind of another project's CRD, whose copy is stored under
//! `config/external/`. `PROJECT` records it under `foreignKinds`.

use super::{KindVersion, Refusal};
use crate::{
    model::{BuiltInKind, ExternalCrd, ForeignKind, Group, Origin},
    project::{BrokenRule, Project},
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
            return Err(Refusal::NoTypes(KindVersion::new(kind, group, version)).into());
        }
        Err(unknown) => {
            let kind = kind.to_owned();
            return Err(Refusal::UnknownKind { kind, unknown }.into());
        }
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
    let file = crd_file.to_owned();
    let (crd, stored_text) =
        ExternalCrd::read(text, group, kind).map_err(|problem| Refusal::NotACrd {
            file: file.clone(),
            problem,
        })?;
    if crd.group != group {
        let (defined, asked) = (crd.group.clone(), group.to_owned());
        return Err(Refusal::CrdGroup {
            file,
            defined,
            asked,
        }
        .into());
    }
    if crd.kind != kind {
        let (defined, asked) = (crd.kind.clone(), kind.to_owned());
        return Err(Refusal::CrdKind {
            file,
            defined,
            asked,
        }
        .into());
    }
    if crd.version(version).is_none() {
        return Err(Refusal::CrdVersion {
            file,
            kind: crd.kind.clone(),
            versions: crd.version_names(),
            asked: version.to_owned(),
        }
        .into());
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
        return Err(Refusal::Breaks(BrokenRule::SecondController {
            kind: foreign.kind.to_string(),
            group: foreign.group.shown().to_owned(),
            watched: existing.api_version(),
            file: existing.controller_file(),
        })
        .into());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    #[test]
    fn a_kind_watched_already_is_refused_by_the_rule_it_would_break() {
        let request = AddForeign {
            group: "apps".to_owned(),
            version: "v1".to_owned(),
            kind: "Deployment".to_owned(),
            source: Source::BuiltIn,
        };
        let first = add_foreign(&Project::for_test("demo", Scope::Cluster), &request).unwrap();
        let err = add_foreign(&first.project, &request).unwrap_err();
        assert!(
            matches!(
                err.downcast_ref::<Refusal>(),
                Some(Refusal::Breaks(BrokenRule::SecondController { watched, .. })) if watched == "apps/v1"
            ),
            "{err}"
        );
    }
}
