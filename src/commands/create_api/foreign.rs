//! `create api --resource=false` for a kind the project does not own: a built-in Kubernetes
//! kind, or (with `--external-crd`) a kind of another project's CRD. Only a controller is
//! scaffolded; `PROJECT` records the kind under `foreignKinds`.

use anyhow::bail;

use crate::{
    cli::CreateApiArgs,
    model::{BuiltInKind, ForeignKind, Group, Origin},
    plan::PlannedFile,
    project::Project,
};

/// The project after the change, the kind added to it, and the files that come with it
/// besides the controller (the stored CRD of an external kind).
#[derive(Debug)]
pub struct ForeignChange {
    pub project: Project,
    pub foreign: ForeignKind,
    pub stored: Vec<PlannedFile>,
}

/// Whether `create api` is asked for a kind the project does not own: `--resource=false` with
/// `--external-crd`, or for a kind that is not the project's.
pub fn is_foreign(project: &Project, group: &str, kind: &str, args: &CreateApiArgs) -> bool {
    if args.resource != Some(false) {
        return false;
    }
    args.external_crd.is_some()
        || !project
            .resources
            .iter()
            .any(|r| r.group.as_str() == group && r.kind.as_str() == kind)
}

/// Adds the built-in kind `group`/`version` `kind`, refusing flags that describe types and
/// anything `PROJECT`'s rules refuse.
pub fn plan_built_in(
    project: &Project,
    group: &str,
    version: &str,
    kind: &str,
    args: &CreateApiArgs,
) -> anyhow::Result<ForeignChange> {
    refuse_type_flags(args)?;
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
    add(project, foreign, Vec::new())
}

/// The project with `foreign` added, checked against `PROJECT`'s rules.
pub fn add(
    project: &Project,
    foreign: ForeignKind,
    stored: Vec<PlannedFile>,
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
    updated
        .check()
        .map_err(|violation| anyhow::anyhow!("{}", violation.message))?;
    Ok(ForeignChange {
        project: updated,
        foreign,
        stored,
    })
}

fn owns_group(project: &Project, group: &Group) -> bool {
    project.resources.iter().any(|r| &r.group == group)
}

/// The flags that describe a kind's types or its operand, which a kind the project does not
/// own has not here.
pub fn refuse_type_flags(args: &CreateApiArgs) -> anyhow::Result<()> {
    let given = [
        ("--plural", args.plural.is_some()),
        ("--short-name", args.short_name.is_some()),
        ("--namespaced", args.namespaced.is_some()),
        ("--storage", args.storage.is_some()),
        ("--image", args.image.is_some()),
        ("--controller=false", args.controller == Some(false)),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} does not apply to a kind this project does not own: its names and scope are its owner's, and it gets only a controller\n\nDrop {flag}"
        );
    }
    Ok(())
}
