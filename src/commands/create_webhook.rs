//! `opgen create webhook`: adds defaulting, validation or conversion webhooks to a kind that
//! `create api` made.

use anyhow::bail;

use crate::{
    cli::CreateWebhookArgs,
    interrupt::Interrupt,
    model::{Group, Kind, Resource, Version, Webhooks},
    project::Project,
    prompt::Prompter,
    scaffold,
    shell::Shell,
};

pub fn run(args: CreateWebhookArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
    let prompter = Prompter::new(args.write.yes);
    let (group, version, kind) = super::kind_of(
        &prompter,
        args.group.clone(),
        args.version.clone(),
        args.kind.clone(),
    )?;
    let asked = Webhooks {
        defaulting: args.defaulting,
        validation: args.validation,
        conversion: args.conversion,
    };

    let interrupt = Interrupt::catch_signals()?;
    let change = plan_webhooks(&project, &group, &version, &kind, asked, args.force)?;
    let (files, formatted) = scaffold::webhook_files(
        &change.project,
        &change.resource,
        root.as_path(),
        &interrupt,
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

/// The project after the change, and the version whose webhooks changed.
#[derive(Debug)]
pub struct WebhookChange {
    pub project: Project,
    pub resource: Resource,
}

/// Decides what `create webhook` records, refusing anything that would leave `PROJECT`
/// inconsistent or ask for nothing new (unless `force`, which scaffolds again).
pub fn plan_webhooks(
    project: &Project,
    group: &Group,
    version: &Version,
    kind: &Kind,
    asked: Webhooks,
    force: bool,
) -> anyhow::Result<WebhookChange> {
    if asked.is_empty() {
        bail!(
            "no webhook asked for\n\nPass at least one of --defaulting, --validation and --conversion"
        );
    }
    let versions: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| &r.group == group && &r.kind == kind)
        .collect();
    let Some(existing) = versions.iter().find(|r| &r.version == version) else {
        let known = if versions.is_empty() {
            String::new()
        } else {
            let listed: Vec<String> = versions.iter().map(|r| r.version.to_string()).collect();
            format!(" (it has {})", listed.join(", "))
        };
        bail!(
            "{kind} {group}/{version} is not in PROJECT{known}: a webhook is added to a kind that exists\n\nCreate it first: opgen create api --group {group} --version {version} --kind {kind}"
        );
    };
    if asked.conversion && versions.len() < 2 {
        bail!(
            "--conversion needs a kind with two versions or more, and {kind} has only {version}: there is nothing to convert\n\nAdd a version first: opgen create api --group {group} --version <new> --kind {kind}"
        );
    }
    let recorded = existing.webhooks.unwrap_or_default();
    // Conversion is the kind's, whichever version recorded it.
    let kind_converts = versions
        .iter()
        .any(|r| r.webhooks.is_some_and(|webhooks| webhooks.conversion));
    let converts_elsewhere = kind_converts && !recorded.conversion;
    let mut already = asked.shared_flags(&recorded);
    if asked.conversion && converts_elsewhere {
        already.push("--conversion");
    }
    if !already.is_empty() && !force {
        bail!(
            "{kind} {group}/{version} has the webhooks of {} already\n\nDrop {}, or pass --force to scaffold them again (see the changes first with --dry-run)",
            already.join(" and "),
            if already.len() == 1 { "it" } else { "them" }
        );
    }

    let mut updated = project.clone();
    let slot = updated
        .resources
        .iter_mut()
        .find(|r| r.same_kind(existing) && &r.version == version)
        .expect("the version was found above");
    let mut webhooks = recorded.union(asked);
    // Forced again on another version, conversion stays where it was recorded.
    webhooks.conversion &= !converts_elsewhere;
    slot.webhooks = Some(webhooks).filter(|w| !w.is_empty());
    let resource = slot.clone();
    updated
        .check()
        .map_err(|violation| anyhow::anyhow!("{}", violation.message))?;
    Ok(WebhookChange {
        project: updated,
        resource,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    fn project() -> Project {
        let stored = Resource::for_test("db", "v1", "Thing");
        let older = Resource {
            storage: false,
            controller: false,
            ..Resource::for_test("db", "v1alpha1", "Thing")
        };
        let single = Resource::for_test("db", "v1", "Backup");
        Project {
            resources: vec![stored, older, single],
            ..Project::for_test("demo", Scope::Cluster)
        }
    }

    fn ask(defaulting: bool, validation: bool, conversion: bool) -> Webhooks {
        Webhooks {
            defaulting,
            validation,
            conversion,
        }
    }

    fn plan(
        project: &Project,
        version: &str,
        kind: &str,
        asked: Webhooks,
        force: bool,
    ) -> anyhow::Result<WebhookChange> {
        plan_webhooks(
            project,
            &"db".parse().unwrap(),
            &version.parse().unwrap(),
            &kind.parse().unwrap(),
            asked,
            force,
        )
    }

    fn error(project: &Project, version: &str, kind: &str, asked: Webhooks) -> String {
        plan(project, version, kind, asked, false)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn records_the_webhooks_on_the_version() {
        let change = plan(&project(), "v1", "Thing", ask(true, true, false), false).unwrap();
        assert_eq!(change.resource.webhooks, Some(ask(true, true, false)));
        let again = plan(
            &change.project,
            "v1",
            "Thing",
            ask(false, false, true),
            false,
        )
        .unwrap();
        assert_eq!(again.resource.webhooks, Some(ask(true, true, true)));
        assert_eq!(again.project.resources[1].webhooks, None);
    }

    #[test]
    fn refuses_what_cannot_be_added() {
        let project = project();
        let none = error(&project, "v1", "Thing", ask(false, false, false));
        assert!(
            none.contains("--defaulting, --validation and --conversion"),
            "{none}"
        );
        let missing = error(&project, "v2", "Thing", ask(true, false, false));
        assert!(
            missing.contains("Thing db/v2 is not in PROJECT (it has v1, v1alpha1)"),
            "{missing}"
        );
        assert!(missing.contains("opgen create api --group db --version v2 --kind Thing"));
        let single = error(&project, "v1", "Backup", ask(false, false, true));
        assert!(single.contains("Backup has only v1"), "{single}");
    }

    #[test]
    fn a_webhook_asked_twice_needs_force() {
        let first = plan(&project(), "v1", "Thing", ask(true, false, true), false).unwrap();
        let twice = error(&first.project, "v1", "Thing", ask(true, false, false));
        assert!(twice.contains("--defaulting already"), "{twice}");
        // Conversion is the kind's: asked again on its other version, it exists already.
        let other = error(&first.project, "v1alpha1", "Thing", ask(false, false, true));
        assert!(other.contains("--conversion already"), "{other}");
        let forced = plan(&first.project, "v1", "Thing", ask(true, false, false), true).unwrap();
        assert_eq!(forced.project, first.project);
    }
}
