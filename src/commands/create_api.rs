//! `opgen create api`: adds a kind (or a version of one) and its controller.

use anyhow::bail;

use crate::{
    cli::CreateApiArgs,
    interrupt::Interrupt,
    model::{Group, Kind, Operand, Resource, ResourceName, Version},
    plan::{OnConflict, Plan},
    project::Project,
    prompt::Prompter,
    scaffold::{self, ResourceParts},
    shell::Shell,
};

pub fn run(args: CreateApiArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    let prompter = Prompter::new(args.write.yes);
    let group: Group = prompter.value(
        args.group.clone(),
        "--group",
        "API group (without the domain)",
        None,
    )?;
    let version: Version =
        prompter.value(args.version.clone(), "--version", "API version", None)?;
    let kind: Kind = prompter.value(args.kind.clone(), "--kind", "Kind (PascalCase)", None)?;

    let interrupt = Interrupt::catch_signals()?;
    let change = plan_resource(&project, group, version, kind, &args)?;
    let (files, formatted) = scaffold::resource_files(
        &change.project,
        &change.resource,
        change.parts,
        &root,
        &interrupt,
    )?;
    if !formatted {
        shell.note("rustfmt was not found: run `cargo fmt` once it is installed");
    }
    let on_conflict = if args.force {
        OnConflict::Overwrite
    } else {
        OnConflict::Refuse
    };
    let plan = Plan::new(&root, files, on_conflict)?;
    super::write(&plan, args.write.dry_run, shell, &interrupt)?;
    if !args.write.dry_run {
        shell.hint(&next_steps(&change));
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
        (None, true) => new_resource(project, first, group, version, kind, args)?,
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
        (Some(image), None) => Some(operand(image, args)?),
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
    })
}

/// The application of an operand kind, from `--image` and its companion flags (clap has
/// range-checked `--port` and `--run-as-user`).
fn operand(image: &str, args: &CreateApiArgs) -> anyhow::Result<Operand> {
    let command = if args.command.is_empty() {
        args.command_args.clone()
    } else {
        args.command.clone()
    };
    if command.iter().any(String::is_empty) {
        bail!("invalid --command: an argument is empty");
    }
    Ok(Operand {
        image: image.parse()?,
        workload: args.workload.unwrap_or_default(),
        port: args.port,
        run_as_user: args.run_as_user,
        command,
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
