//! `opgen create api`: adds a kind (or a version of one) and its controller, or a controller
//! for a kind the project does not own (`foreign`).

mod foreign;

use anyhow::bail;

use crate::{
    cli::CreateApiArgs,
    interrupt::Interrupt,
    model::{ImageRef, Operand},
    plan::{Owner, PlannedFile},
    project::edit::{
        add_foreign,
        add_resource::{self, AddResource, ResourceChange},
    },
    prompt::Prompter,
    scaffold::{self, ResourceParts},
    shell::Shell,
};

pub fn run(args: CreateApiArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
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
        let request = foreign::request(&args, &group, &version, &kind)?;
        let change = add_foreign::add_foreign(&project, &request)?;
        let stored = change
            .stored
            .iter()
            .map(|(path, text)| PlannedFile::new(path, text, Owner::Scaffolded))
            .collect();
        let (files, formatted) =
            scaffold::foreign_files(&change.project, &change.foreign, stored, &root, &interrupt)?;
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
    let request = AddResource {
        group: group.parse()?,
        version: version.parse()?,
        kind: kind.parse()?,
        types: args.resource.unwrap_or(true),
        controller: args.controller,
        plural: args.plural.as_deref().map(str::parse).transpose()?,
        short_name: args.short_name.as_deref().map(str::parse).transpose()?,
        namespaced: args.namespaced,
        storage: args.storage,
        operand: args
            .image
            .as_deref()
            .map(|image| operand(image, &args, &prompter))
            .transpose()?,
    };
    let change = add_resource::add_resource(&project, request)?;
    let parts = ResourceParts {
        types: change.types,
        controller: change.controller,
        roles: change.first_of_kind,
    };
    let (files, formatted) =
        scaffold::resource_files(&change.project, &change.resource, parts, &root, &interrupt)?;
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
    (root, files): (&std::path::Path, Vec<PlannedFile>),
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

fn next_steps(change: &ResourceChange) -> String {
    let resource = &change.resource;
    let mut steps = String::from("\nNext steps:\n");
    if change.types {
        steps.push_str(&format!(
            "  edit {} to describe your resource\n",
            resource.api_file()
        ));
    }
    if change.controller {
        steps.push_str(&format!(
            "  edit {} to write your reconcile logic\n",
            resource.controller_file()
        ));
    }
    steps
        .push_str("  make manifests   # regenerate the CRDs and RBAC from the code\n  make test\n");
    steps
}
