//! `opgen create webhook`: adds defaulting, validation or conversion webhooks to a kind that
//! `create api` made.

use std::path::Path;

use crate::{
    cli::CreateWebhookArgs,
    interrupt::Interrupt,
    manifests::{markers, webhooks},
    model::Webhooks,
    plan::PlannedFile,
    project::{
        Project,
        edit::add_webhooks::{self, AddWebhooks, WebhookChange},
    },
    prompt::Prompter,
    scaffold,
    shell::Shell,
};

pub fn run(args: CreateWebhookArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
    let prompter = Prompter::new(args.write.yes);
    let (group, version, kind): (String, String, String) = super::kind_of(&prompter, &args.kind)?;
    add_webhooks::refuse_foreign(&project, &group, &version, &kind)?;
    let request = AddWebhooks {
        group: group.parse()?,
        version: version.parse()?,
        kind: kind.parse()?,
        webhooks: Webhooks {
            defaulting: args.defaulting,
            validation: args.validation,
            conversion: args.conversion,
        },
        force: args.force,
    };

    let interrupt = Interrupt::catch_signals()?;
    let change = add_webhooks::add_webhooks(&project, &request)?;
    let (files, formatted) = scaffold::webhook_files(
        &change.project,
        &change.resource,
        root.as_path(),
        &interrupt,
        |planned| first_manifests(&root, &change.project, planned),
    )?;
    super::write_scaffold(
        &root,
        files,
        formatted,
        args.force,
        args.write.dry_run,
        shell,
        &interrupt,
    )?;
    if !args.write.dry_run {
        shell.hint(&next_steps(&change));
    }
    Ok(())
}

/// The webhook configurations and the development overlay of a project that has none yet,
/// from the markers of the webhook files `planned`, so that the first webhook deploys before
/// any `generate manifests` (which keeps them up to date after).
fn first_manifests(
    root: &Path,
    project: &Project,
    planned: &[PlannedFile],
) -> anyhow::Result<Vec<PlannedFile>> {
    if root.join(webhooks::MANIFESTS_FILE).exists() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for file in planned.iter().filter(|f| f.path.ends_with(".rs")) {
        found.extend(markers::webhook::parse_source(&file.path, &file.contents)?);
    }
    Ok(vec![
        webhooks::manifests_file(project, &found),
        webhooks::dev_file(project, &found),
    ])
}

fn next_steps(change: &WebhookChange) -> String {
    let resource = &change.resource;
    let mut steps = String::from("\nNext steps:\n");
    if resource
        .webhooks
        .is_some_and(|webhooks| webhooks.admission())
    {
        steps.push_str(&format!(
            "  edit {} to write your defaults and validation rules\n",
            resource.webhook_file()
        ));
    }
    steps.push_str(
        "  make manifests   # regenerate the CRDs, RBAC and webhook configurations\n  make test\n",
    );
    steps
}
