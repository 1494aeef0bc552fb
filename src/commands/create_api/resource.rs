//! `create api` for a kind of the project (or a new version of one): the request from the flags,
//! and the files the edit of `PROJECT` ([`add_resource`]) scaffolds.

use std::path::Path;

use anyhow::bail;

use super::Outcome;
use crate::{
    cli::CreateApiArgs,
    interrupt::Interrupt,
    model::{ImageRef, Operand},
    project::{
        Project,
        edit::add_resource::{self, AddResource, RequestedReference, ResourceChange},
    },
    prompt::Prompter,
    scaffold::{self, ResourceParts},
};

/// The edit of `PROJECT` for `request`, and the files it scaffolds.
pub(super) fn scaffold(
    project: &Project,
    request: AddResource,
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<Outcome> {
    let given_operand = request.operand.is_some();
    let change = add_resource::add_resource(project, request)?;
    let parts = ResourceParts {
        types: change.types,
        controller: change.controller,
        roles: change.first_of_kind,
    };
    let (files, formatted) =
        scaffold::resource_files(&change.project, &change.resource, parts, root, interrupt)?;
    // Said once, when `--image` makes the kind an operand; later versions share its operand.
    let warnings = change
        .resource
        .operand
        .as_ref()
        .filter(|_| given_operand)
        .map(|operand| operand.warnings(&change.resource.controller_file()))
        .unwrap_or_default();
    let next_steps = next_steps(&change);
    Ok(Outcome {
        files,
        formatted,
        warnings,
        next_steps,
    })
}

/// The request for a kind of the project, from the flags.
pub(super) fn request(
    args: &CreateApiArgs,
    (group, version, kind): (&str, &str, &str),
    prompter: &Prompter,
) -> anyhow::Result<AddResource> {
    Ok(AddResource {
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
            .map(|image| operand(image, args, prompter))
            .transpose()?,
        references: args.references.as_deref().map(reference).transpose()?,
    })
}

/// `--references`' value: a kind, after its group when the project has it in several.
fn reference(value: &str) -> anyhow::Result<RequestedReference> {
    let (group, kind) = match value.split_once('/') {
        Some((group, kind)) => (Some(group.parse()?), kind),
        None => (None, value),
    };
    let kind = kind
        .parse()
        .map_err(|err| anyhow::anyhow!("invalid --references {value}: {err}"))?;
    Ok(RequestedReference { group, kind })
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
    let workload = args.workload.unwrap_or_default();
    if let (true, Some(port)) = (workload.runs_to_completion(), args.port) {
        bail!(
            "--port {port} with --workload {}: a {} runs to completion and serves nothing, so it has no Service\n\nDrop --port, or use --workload deployment or statefulset for a server",
            workload.flag(),
            workload.kind()
        );
    }
    if workload.runs_to_completion() && args.autoscale {
        bail!(
            "--autoscale with --workload {}: a {} runs to completion and has no replicas to scale\n\nDrop --autoscale, or use --workload deployment or statefulset for a server",
            workload.flag(),
            workload.kind()
        );
    }
    let mut operand = Operand {
        image,
        workload,
        port: args.port,
        run_as_user: args.run_as_user,
        command,
        references: None,
        autoscale: args.autoscale,
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
