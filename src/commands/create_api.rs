//! `opgen create api`: adds a kind (or a version of one) and its controller, or a controller
//! for a kind the project does not own (`foreign`).

mod external;
mod foreign;

use anyhow::bail;

use crate::{
    cli::CreateApiArgs,
    interrupt::Interrupt,
    model::{Group, ImageRef, Kind, Operand, Resource, ResourceName, Version},
    project::Project,
    prompt::Prompter,
    scaffold::{self, ResourceParts},
    shell::Shell,
};

pub fn run(args: CreateApiArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    let prompter = Prompter::new(args.write.yes);
    // Words as given: a kind the project does not own may be in a group such as `core`.
    let (group, version, kind): (String, String, String) = super::kind_of(&prompter, &args.kind)?;

    if args.external_crd.is_some() && args.resource != Some(false) {
        bail!(
            "--external-crd describes a kind of another project, whose types opgen generates from that CRD\n\nAdd --resource=false"
        );
    }
    let interrupt = Interrupt::catch_signals()?;
    if foreign::is_foreign(&project, &group, &kind, &args) {
        // An external kind with `--external-crd`, else a built-in one.
        let change = match &args.external_crd {
            Some(crd) => external::plan(&project, crd, &group, &version, &kind, &args)?,
            None => foreign::plan_built_in(&project, &group, &version, &kind, &args)?,
        };
        let (files, formatted) = scaffold::foreign_files(
            &change.project,
            &change.foreign,
            change.stored,
            &root,
            &interrupt,
        )?;
        let next_steps = format!(
            "\nNext steps:\n  edit {} to write your reconcile logic\n  make manifests   # regenerate the RBAC from the code\n  make test\n",
            change.foreign.controller_file()
        );
        return finish(
            (&root, files),
            formatted,
            &args,
            shell,
            &interrupt,
            Vec::new(),
            &next_steps,
        );
    }
    let group: Group = group.parse()?;
    let version: Version = version.parse()?;
    let kind: Kind = kind.parse()?;
    let change = plan_resource(&project, group, version, kind, &args, &prompter)?;
    let (files, formatted) = scaffold::resource_files(
        &change.project,
        &change.resource,
        change.parts,
        &root,
        &interrupt,
    )?;
    // Said once, when `--image` makes the kind an operand; later versions share its operand.
    let warnings = change
        .resource
        .operand
        .as_ref()
        .filter(|_| args.image.is_some())
        .map(|operand| operand.warnings(&change.resource.controller_file()))
        .unwrap_or_default();
    finish(
        (&root, files),
        formatted,
        &args,
        shell,
        &interrupt,
        warnings,
        &next_steps(&change),
    )
}

/// Writes the planned files in the project at `root` (or shows them, with `--dry-run`), then
/// the warnings and the next steps.
fn finish(
    (root, files): (&std::path::Path, Vec<crate::plan::PlannedFile>),
    formatted: bool,
    args: &CreateApiArgs,
    shell: &mut Shell,
    interrupt: &Interrupt,
    warnings: Vec<String>,
    next_steps: &str,
) -> anyhow::Result<()> {
    super::write_scaffold(
        root,
        files,
        formatted,
        args.force,
        args.write.dry_run,
        shell,
        interrupt,
    )?;
    for warning in &warnings {
        shell.warn(warning);
    }
    if !args.write.dry_run {
        shell.hint(next_steps);
    }
    Ok(())
}

/// The project after the change, and what to scaffold for it.
#[derive(Debug)]
pub struct ResourceChange {
    pub project: Project,
    pub resource: Resource,
    pub parts: ResourceParts,
}

/// Decides what `create api` adds, refusing anything that would leave `PROJECT` inconsistent.
pub fn plan_resource(
    project: &Project,
    group: Group,
    version: Version,
    kind: Kind,
    args: &CreateApiArgs,
    prompter: &Prompter,
) -> anyhow::Result<ResourceChange> {
    let versions: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| r.group == group && r.kind == kind)
        .collect();
    let existing = versions.iter().find(|r| r.version == version).copied();
    let first = versions.first().copied();
    let with_types = args.resource.unwrap_or(true);
    if !with_types && args.image.is_some() {
        bail!("--image describes new types, so it cannot go with --resource=false");
    }
    let other_controller = versions
        .iter()
        .find(|r| r.controller && r.version != version)
        .map(|r| r.version.clone());
    let with_controller = args.controller.unwrap_or(other_controller.is_none());

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
        (None, true) => new_resource(project, first, group, version, kind, args, prompter)?,
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
        choose_storage(&mut updated, &resource, args.storage);
        check_hub_kept(project, &updated, &resource)?;
    }
    // The flags were checked above with messages that name them; this is the rule book every
    // PROJECT follows (names Kubernetes refuses, Rust types two kinds would share, …).
    updated
        .check()
        .map_err(|violation| anyhow::anyhow!("{}", violation.message))?;
    let resource = updated
        .resources
        .iter()
        .find(|r| r.same_kind(&resource) && r.version == resource.version)
        .cloned()
        .expect("the resource was just added");
    Ok(ResourceChange {
        parts: ResourceParts {
            types: existing.is_none(),
            controller: with_controller,
            roles: first.is_none(),
        },
        project: updated,
        resource,
    })
}

/// A new version of a kind, agreeing with the kind's other versions on names and scope.
fn new_resource(
    project: &Project,
    first: Option<&Resource>,
    group: Group,
    version: Version,
    kind: Kind,
    args: &CreateApiArgs,
    prompter: &Prompter,
) -> anyhow::Result<Resource> {
    let plural = match &args.plural {
        Some(plural) => plural.parse()?,
        None => first.map_or_else(|| ResourceName::plural_of(&kind), |f| f.plural.clone()),
    };
    let short_name = match &args.short_name {
        Some(short) => short.parse()?,
        None => first.map_or_else(
            || kind.default_short_name().parse(),
            |f| Ok(f.short_name.clone()),
        )?,
    };
    let namespaced = args
        .namespaced
        .unwrap_or(first.is_none_or(|f| f.namespaced));
    if !namespaced && args.image.is_some() {
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
    let operand = match (&args.image, first) {
        (Some(_), Some(first)) => bail!(
            "--image is set by the first version of a kind, and {kind} {group}/{} has it already\n\nDrop --image and the other operand flags: the new version keeps the kind's operand",
            first.version
        ),
        (Some(image), None) => Some(operand(image, args, prompter)?),
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

/// The application of an operand kind, from `--image` and its companion flags (clap has
/// range-checked `--port` and `--run-as-user`). On a terminal, asks for the UID when neither
/// `--run-as-user` nor opgen's table of known images gives one.
fn operand(image: &str, args: &CreateApiArgs, prompter: &Prompter) -> anyhow::Result<Operand> {
    let image: ImageRef = image.parse()?;
    let command = if args.command.is_empty() {
        args.command_args.clone()
    } else {
        args.command.clone()
    };
    if command.iter().any(String::is_empty) {
        bail!("invalid --command: an argument is empty");
    }
    let mut operand = Operand {
        image,
        workload: args.workload.unwrap_or_default(),
        port: args.port,
        run_as_user: args.run_as_user,
        command,
    };
    if operand.run_as().is_none() {
        operand.run_as_user = prompter.optional(&format!(
            "UID of a non-root user {} runs as (empty: the image's own user)",
            operand.image
        ))?;
    }
    Ok(operand)
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

fn next_steps(change: &ResourceChange) -> String {
    let resource = &change.resource;
    let mut steps = String::from("\nNext steps:\n");
    if change.parts.types {
        steps.push_str(&format!(
            "  edit {} to describe your resource\n",
            resource.api_file()
        ));
    }
    if change.parts.controller {
        steps.push_str(&format!(
            "  edit {} to write your reconcile logic\n",
            resource.controller_file()
        ));
    }
    steps
        .push_str("  make manifests   # regenerate the CRDs and RBAC from the code\n  make test\n");
    steps
}
