//! `opgen create api`: adds a kind (or a version of one) and its controller, or a controller
//! for a kind the project does not own (`foreign`).

mod external;
mod foreign;

use anyhow::bail;

use crate::{
    cli::CreateApiArgs,
    interrupt::Interrupt,
    model::{Group, ImageRef, Kind, KnownImage, Operand, Resource, ResourceName, Version},
    project::Project,
    prompt::Prompter,
    scaffold::{self, ResourceParts},
    shell::Shell,
};

pub fn run(args: CreateApiArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
    let prompter = Prompter::new(args.write.yes);
    // Words as given: a kind the project does not own may be in a group such as `core`.
    let (group, version, kind): (String, String, String) = super::kind_of(
        &prompter,
        args.group.clone(),
        args.version.clone(),
        args.kind.clone(),
    )?;

    if args.external_crd.is_some() && args.resource != Some(false) {
        bail!(
            "--external-crd describes a kind of another project, whose types opgen generates from that CRD\n\nAdd --resource=false"
        );
    }
    let interrupt = Interrupt::catch_signals()?;
    if foreign::is_foreign(&project, &group, &kind, &args) {
        let change = foreign::plan(&project, &group, &version, &kind, &args)?;
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
        .map(|operand| operand_warnings(operand, &change.resource.controller_file()))
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

/// What the user should know of an operand that opgen scaffolds but cannot vouch for: its
/// pods run as a non-root number, with no capabilities and a read-only root filesystem.
fn operand_warnings(operand: &Operand, controller_file: &str) -> Vec<String> {
    let image = &operand.image;
    let Some(known) = operand.known_image() else {
        if operand.run_as().is_some() {
            return Vec::new();
        }
        return vec![format!(
            "opgen does not know which user `{image}` runs as. Its pods run with `runAsNonRoot`, so the kubelet refuses to start them if the image runs as root, or names its user rather than giving a number\n\nIf it does, set RUN_AS_USER and RUN_AS_GROUP in {controller_file} to a non-root user the image supports (`create api --run-as-user <UID>` sets them)"
        )];
    };
    let mut warnings = Vec::new();
    let repository = known.repository;
    if let Some(needs_root) = &known.needs_root {
        let instead = KnownImage::by_repository(needs_root.instead)
            .expect("the table names its own entries (tested)");
        warnings.push(format!(
            "`{repository}` does not run in the pods opgen scaffolds: {}\n\nUse `{}` instead, which listens on {} as UID {}: --image {}:<tag> --port {}",
            needs_root.why,
            instead.repository,
            instead.port,
            instead.user.uid,
            instead.repository,
            instead.port
        ));
    }
    let image_user = known.user_of(image);
    if let Some(uid) = operand.run_as_user.filter(|uid| *uid != image_user.uid()) {
        warnings.push(format!(
            "--run-as-user {uid} differs from the user of `{repository}`, `{}` (UID {}, GID {}): the pods run as {uid}, so the image must work as that user although its files belong to {}\n\nDrop --run-as-user to run as {}",
            image_user.name, image_user.uid, image_user.gid, image_user.uid, image_user.uid
        ));
    }
    if let Some(port) = operand.port.filter(|port| *port != known.port) {
        warnings.push(format!(
            "`{repository}` listens on port {}, not {port}: configure it to listen on {port}, or its readiness probe fails and the Service reaches nothing",
            known.port
        ));
    }
    warnings
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Workload;

    fn warnings(image: &str, port: Option<u16>, run_as_user: Option<i64>) -> Vec<String> {
        let operand = Operand {
            image: image.parse().unwrap(),
            workload: Workload::Deployment,
            port,
            run_as_user: run_as_user.map(|uid| uid.try_into().unwrap()),
            command: Vec::new(),
        };
        operand_warnings(&operand, "src/controllers/web/site.rs")
    }

    #[test]
    fn a_known_image_run_as_published_needs_no_warning() {
        assert!(warnings("mysql:8.0", Some(3306), None).is_empty());
        assert!(warnings("mysql:8.0", None, Some(999)).is_empty());
        assert!(warnings("redis:7-alpine", Some(6379), Some(999)).is_empty());
    }

    #[test]
    fn an_unknown_image_without_a_uid_is_warned_of_and_told_the_fix() {
        let warning = one_warning("ghcr.io/org/app:v1", None, None);
        for needle in [
            "`ghcr.io/org/app:v1`",
            "runAsNonRoot",
            "--run-as-user",
            "RUN_AS_GROUP in src/controllers/web/site.rs",
        ] {
            assert!(warning.contains(needle), "{needle}: {warning}");
        }
        assert!(warnings("ghcr.io/org/app:v1", None, Some(1000)).is_empty());
    }

    /// The one warning about an operand.
    fn one_warning(image: &str, port: Option<u16>, run_as_user: Option<i64>) -> String {
        let mut found = warnings(image, port, run_as_user);
        assert_eq!(found.len(), 1, "{found:?}");
        found.remove(0)
    }

    #[test]
    fn a_uid_that_contradicts_a_known_image_is_said() {
        let warning = one_warning("mysql:8.0", None, Some(1000));
        let expected = "--run-as-user 1000 differs from the user of `mysql`, `mysql` (UID 999";
        assert!(warning.contains(expected), "{warning}");
    }

    #[test]
    fn nginx_is_pointed_to_its_unprivileged_variant() {
        let warning = one_warning("nginx:1.27", Some(80), None);
        let expected = "--image nginxinc/nginx-unprivileged:<tag> --port 8080";
        assert!(warning.contains(expected), "{warning}");
        assert!(warnings("nginxinc/nginx-unprivileged:1.27", Some(8080), None).is_empty());
    }

    #[test]
    fn a_port_the_known_image_does_not_listen_on_is_said() {
        let warning = one_warning("nginxinc/nginx-unprivileged:1.27", Some(80), None);
        assert!(
            warning.contains("listens on port 8080, not 80"),
            "{warning}"
        );
    }
}
