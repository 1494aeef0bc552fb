//! `create api`'s edit of `PROJECT` for a kind the project owns: a new kind, a new version
//! of one, or the controller of a version that has only types. Every version of a kind
//! agrees on its names, scope and operand, one version is stored, and a converting kind
//! keeps its hub.

use anyhow::bail;

use crate::{
    model::{Group, Kind, Operand, Resource, ResourceName, Version},
    project::Project,
};

/// What `create api` asks of `PROJECT` for a kind of its own: the model's types, and the flags
/// left out as `None`.
#[derive(Debug, Clone)]
pub struct AddResource {
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    /// The version's Rust types (`--resource`, default true).
    pub types: bool,
    pub controller: Option<bool>,
    pub plural: Option<ResourceName>,
    pub short_name: Option<ResourceName>,
    pub namespaced: Option<bool>,
    pub storage: Option<bool>,
    /// The application the kind runs (`--image` and its companion flags).
    pub operand: Option<Operand>,
}

/// The project after the change, the resource added or given a controller, and what of it
/// is new.
#[derive(Debug)]
pub struct ResourceChange {
    pub project: Project,
    pub resource: Resource,
    /// The version's types are new.
    pub types: bool,
    /// The kind's controller is new.
    pub controller: bool,
    /// The version is the kind's first.
    pub first_of_kind: bool,
}

/// Adds the resource `request` asks for, refusing anything that would leave `PROJECT`
/// inconsistent.
pub fn add_resource(project: &Project, request: AddResource) -> anyhow::Result<ResourceChange> {
    let (group, version, kind) = (
        request.group.clone(),
        request.version.clone(),
        request.kind.clone(),
    );
    let versions: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| r.group == group && r.kind == kind)
        .collect();
    let existing = versions.iter().find(|r| r.version == version).copied();
    let first = versions.first().copied();
    let with_types = request.types;
    if !with_types && request.operand.is_some() {
        bail!("--image describes new types, so it cannot go with --resource=false");
    }
    let other_controller = versions
        .iter()
        .find(|r| r.controller && r.version != version)
        .map(|r| r.version.clone());
    let with_controller = request.controller.unwrap_or(other_controller.is_none());

    if let Some(watching) = &other_controller.filter(|_| with_controller) {
        bail!(
            "{kind} already has a controller (it watches {group}/{watching}); one controller runs per kind\n\nPass --controller=false to add only the types of {version}"
        );
    }
    let mut resource = match (existing, with_types) {
        (Some(_), true) => bail!(
            "{kind} {group}/{version} already exists in PROJECT\n\nUse another --version to add a version, or --resource=false --controller to add its controller"
        ),
        (Some(existing), false) if existing.controller => {
            bail!("{kind} {group}/{version} has a controller already; there is nothing to add")
        }
        (Some(_), false) if !with_controller => {
            bail!("--resource=false --controller=false asks for nothing; drop one of them")
        }
        (Some(existing), false) => existing.clone(),
        (None, false) => bail!(
            "--resource=false needs the types of {kind} {group}/{version} to exist, and PROJECT has none\n\nCreate them first: opgen create api --group {group} --version {version} --kind {kind}"
        ),
        (None, true) => new_resource(project, first, &request)?,
    };
    resource.controller = resource.controller || with_controller;

    let mut updated = project.clone();
    match updated
        .resources
        .iter_mut()
        .find(|r| r.same_kind(&resource) && r.version == resource.version)
    {
        Some(slot) => *slot = resource.clone(),
        None => updated.resources.push(resource.clone()),
    }
    if existing.is_none() {
        choose_storage(&mut updated, &resource, request.storage);
        check_hub_kept(project, &updated, &resource)?;
    }
    // The flags were checked above with messages that name them; this is the rule book every
    // PROJECT follows (names Kubernetes refuses, Rust types two kinds would share, …).
    updated.check()?;
    let resource = updated
        .resources
        .iter()
        .find(|r| r.same_kind(&resource) && r.version == resource.version)
        .cloned()
        .expect("the resource was just added");
    Ok(ResourceChange {
        types: existing.is_none(),
        controller: with_controller,
        first_of_kind: first.is_none(),
        project: updated,
        resource,
    })
}

/// A new version of a kind, agreeing with the kind's other versions on names and scope.
fn new_resource(
    project: &Project,
    first: Option<&Resource>,
    request: &AddResource,
) -> anyhow::Result<Resource> {
    let (group, version, kind) = (
        request.group.clone(),
        request.version.clone(),
        request.kind.clone(),
    );
    let plural = match &request.plural {
        Some(plural) => plural.clone(),
        None => first.map_or_else(|| ResourceName::plural_of(&kind), |f| f.plural.clone()),
    };
    let short_name = match &request.short_name {
        Some(short) => short.clone(),
        None => first.map_or_else(
            || kind.default_short_name().parse(),
            |f| Ok(f.short_name.clone()),
        )?,
    };
    let namespaced = request
        .namespaced
        .unwrap_or(first.is_none_or(|f| f.namespaced));
    if !namespaced && request.operand.is_some() {
        bail!(
            "{kind} cannot be cluster-scoped: it runs its application (--image) in a workload in the namespace of each {kind} object\n\nDrop --namespaced=false"
        );
    }
    if !namespaced && project.namespaced() {
        bail!(
            "{kind} cannot be cluster-scoped in this project: its operator is namespaced (`opgen init --namespaced`), so it watches one namespace with a Role, and a Role cannot grant access to cluster-scoped objects\n\nDrop --namespaced=false, or keep cluster-scoped kinds in a cluster-wide operator"
        );
    }
    if let Some(first) = first {
        let differs = |what: &str, given: String, kept: String| {
            anyhow::anyhow!(
                "{what} `{given}` differs from `{kept}` of {kind} {group}/{}: every version of a kind shares it\n\nDrop the flag to keep `{kept}`",
                first.version
            )
        };
        if plural != first.plural {
            return Err(differs(
                "--plural",
                plural.to_string(),
                first.plural.to_string(),
            ));
        }
        if short_name != first.short_name {
            return Err(differs(
                "--short-name",
                short_name.to_string(),
                first.short_name.to_string(),
            ));
        }
        if namespaced != first.namespaced {
            return Err(differs(
                "--namespaced",
                namespaced.to_string(),
                first.namespaced.to_string(),
            ));
        }
    } else if let Some(clash) = project
        .resources
        .iter()
        .find(|r| r.group == group && (r.plural == plural || r.short_name == short_name))
    {
        bail!(
            "{kind} would share its plural `{plural}` or short name `{short_name}` with {} in group {group}\n\nChoose another with --plural or --short-name",
            clash.kind
        );
    }
    let operand = match (&request.operand, first) {
        (Some(_), Some(first)) => bail!(
            "--image is set by the first version of a kind, and {kind} {group}/{} has it already\n\nDrop --image and the other operand flags: the new version keeps the kind's operand",
            first.version
        ),
        (Some(operand), None) => Some(operand.clone()),
        (None, first) => first.and_then(|f| f.operand.clone()),
    };
    Ok(Resource {
        group,
        version,
        kind,
        plural,
        short_name,
        namespaced,
        controller: false,
        storage: false,
        operand,
        webhooks: None,
    })
}

/// Marks the storage version of the kind of `added`: `--storage` decides when given;
/// otherwise the newest version by Kubernetes priority is stored.
fn choose_storage(project: &mut Project, added: &Resource, storage: Option<bool>) {
    let newest = project
        .versions_of(added)
        .map(|r| r.version.clone())
        .max()
        .expect("the kind has the added version");
    let current = project
        .versions_of(added)
        .find(|r| r.storage)
        .map(|r| r.version.clone());
    let stored = match (storage, current) {
        (Some(true), _) | (None, None) => added.version.clone(),
        (Some(false), Some(current)) => current,
        (Some(false), None) => added.version.clone(),
        (None, Some(_)) => newest,
    };
    for resource in project.resources.iter_mut().filter(|r| r.same_kind(added)) {
        resource.storage = resource.version == stored;
    }
}

/// A kind that converts through a webhook keeps its hub, the storage version: the
/// conversions of its other versions are written against it.
fn check_hub_kept(before: &Project, after: &Project, added: &Resource) -> anyhow::Result<()> {
    if !before.converts(added) {
        return Ok(());
    }
    let stored = |project: &Project| {
        project
            .versions_of(added)
            .find(|r| r.storage)
            .map(|r| r.version.clone())
    };
    if let (Some(hub), Some(new)) = (stored(before), stored(after))
        && hub != new
    {
        bail!(
            "{} converts through {hub}, its hub (the storage version), and the conversions of its other versions are written against it: {new} cannot become the storage version\n\nPass --storage=false to add {new} as a version that converts through {hub}",
            added.kind
        );
    }
    Ok(())
}
