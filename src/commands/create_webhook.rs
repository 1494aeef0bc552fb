//! `opgen create webhook`: adds defaulting, validation or conversion webhooks to a kind that
//! `create api` made.

use std::path::Path;

use crate::{
    cli::CreateWebhookArgs,
    interrupt::Interrupt,
    manifests::{markers, webhooks},
    model::{AdmissionWebhook, Resource, Webhooks},
    plan::PlannedFile,
    project::{
        Project,
        edit::add_webhooks::{self, AddWebhooks, WebhookChange},
    },
    prompt::Prompter,
    scaffold::{self, combined_webhook_file, webhook_values::WebhookFiles},
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
        webhooks: Webhooks::from(&args.webhooks),
        force: args.force,
    };

    let interrupt = Interrupt::catch_signals()?;
    let change = add_webhooks::add_webhooks(&project, &request)?;
    let (mut files, formatted) = scaffold::webhook_files(
        &change.project,
        &change.resource,
        request.webhooks,
        root.as_path(),
        &interrupt,
        |planned| first_manifests(&root, &change.project, planned),
    )?;
    files.extend(combined_file_left(
        &root,
        &project,
        &change.resource,
        request.webhooks,
    )?);
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
        shell.hint(&next_steps(&change, request.webhooks));
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

/// A webhook asked again (`--force`) that the combined file of an older opgen serves moves to
/// a file of its own: the combined file, of `project` at `root`, without its marker.
fn combined_file_left(
    root: &Path,
    project: &Project,
    resource: &Resource,
    asked: Webhooks,
) -> anyhow::Result<Option<PlannedFile>> {
    let tree = scaffold::Tree { root, pending: &[] };
    let served = WebhookFiles::of(project, &tree);
    let moved: Vec<AdmissionWebhook> = asked
        .admission_webhooks()
        .filter(|webhook| served.in_combined_file(resource, *webhook))
        .collect();
    if moved.is_empty() {
        return Ok(None);
    }
    let text = tree.read(&resource.combined_webhook_file())?;
    Ok(combined_webhook_file::without_markers(
        &text,
        resource,
        &project.domain,
        &moved,
    ))
}

fn next_steps(change: &WebhookChange, asked: Webhooks) -> String {
    let resource = &change.resource;
    let mut steps = String::from("\nNext steps:\n");
    for webhook in asked.admission_webhooks() {
        let what = match webhook {
            AdmissionWebhook::Defaulting => "defaults",
            AdmissionWebhook::Validation => "validation rules",
        };
        steps.push_str(&format!(
            "  edit {} to write your {what}\n",
            resource.admission_file(webhook)
        ));
    }
    steps.push_str(
        "  make manifests   # regenerate the CRDs, RBAC and webhook configurations\n  make test\n",
    );
    steps
}
