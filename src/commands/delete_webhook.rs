//! `opgen delete webhook`: the inverse of `create webhook`, the webhooks of a version of a
//! kind (or its conversion) and their files; with the project's last webhook, the webhook
//! server's kustomize files and wiring too.

use crate::{
    cli::DeleteWebhookArgs,
    interrupt::Interrupt,
    model::Webhooks,
    project::edit::{add_webhooks::AddWebhooks, remove_webhooks},
    prompt::Prompter,
    shell::Shell,
};

pub fn run(args: DeleteWebhookArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
    let prompter = Prompter::new(args.write.yes);
    let (group, version, kind) = super::kind_of(&prompter, &args.kind)?;
    let request = AddWebhooks {
        group,
        version,
        kind,
        webhooks: Webhooks::from(&args.webhooks),
        force: args.force,
    };
    let interrupt = Interrupt::catch_signals()?;
    let removal = remove_webhooks::remove_webhooks(&project, &request)?;
    let dry_run = args.write.dry_run;
    super::change_project(
        &root,
        &project,
        &removal.project,
        args.force,
        dry_run,
        shell,
        &interrupt,
    )?;
    if !dry_run {
        let last = !removal
            .project
            .resources
            .iter()
            .any(|r| r.webhooks.is_some());
        let mut steps = String::from("\nNext steps:\n  make test\n");
        steps.push_str(&super::regenerate_packaging(&root));
        if last {
            steps.push_str("  make deploy      # a cluster keeps the webhook configurations until you delete them\n");
            shell.note("the project has no webhooks left; the webhook server's crates stay in Cargo.toml's [dependencies]: remove those you do not use");
        } else {
            steps.push_str("  make deploy\n");
        }
        shell.hint(&steps);
    }
    Ok(())
}
