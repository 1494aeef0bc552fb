//! `opgen update`: brings a project made by an older opgen up to this one. What changes is
//! planned by [`crate::update`]; this module writes the generated files and reports what the
//! user may want to bring over by hand.

mod report;

use std::path::Path;

use anyhow::{Context as _, bail};

use crate::{
    apply::{self, Transaction},
    cli::UpdateArgs,
    interrupt::Interrupt,
    plan::{OnConflict, Owner, Plan, PlannedFile},
    project::Project,
    prompt::Prompter,
    shell::Shell,
    update::{self, kubernetes::Move, patch::Patch},
};

pub fn run(args: UpdateArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (root, _lock, project) = Project::open(&cwd)?;
    if let Some(file) = &args.patch
        && cwd.join(file).exists()
    {
        bail!(
            "{} already exists; opgen will not overwrite it with the patch\n\nName another file with --patch, or move this one away",
            file.display()
        );
    }
    let kubernetes = match &args.kubernetes_version {
        Some(version) => Move::of(&project, version.parse()?),
        None => None,
    };
    if let Some(change) = kubernetes {
        confirm_downgrade(change, args.yes)?;
    }
    let overrides = crate::overrides::install(&root)?;
    let interrupt = Interrupt::catch_signals()?;
    let update = update::Update::plan(&root, &project, kubernetes, &interrupt)?;
    let patch = args.patch.as_ref().map(|_| Patch::of(&update.scaffolded));
    let patch_plan = match (&args.patch, &patch) {
        (Some(file), Some(patch)) if !patch.is_empty() => Some(patch_plan(&cwd.join(file), patch)?),
        _ => None,
    };

    if args.dry_run {
        apply::print_changes(&update.generated, shell);
    } else {
        // The update and the patch are written together, or neither.
        let mut transaction = Transaction::new(interrupt.clone());
        transaction.apply(&update.generated, shell)?;
        if let Some(plan) = &patch_plan {
            transaction.apply(plan, shell)?;
        }
        transaction.commit()?;
    }
    report::generated(&update, shell);
    if let Some(change) = kubernetes {
        report::kubernetes(change, &update, shell);
    }
    report::scaffolded(&update, args.diff, shell);
    if let Some(problem) = project.project_name.deploy_problem() {
        shell.warn(&problem);
    }
    if let (Some(file), Some(patch)) = (&args.patch, &patch) {
        report::patch(file, patch, shell);
    }
    if let Some(stale) = crate::overrides::stale_report(&overrides, args.diff) {
        shell.warn(&stale);
    }
    let has_chart = root.join(crate::helm::VALUES_FILE).is_file();
    if has_chart {
        for note in update::chart_values_notes(&root, &project) {
            shell.note(&note);
        }
    }
    if args.dry_run {
        shell.note("dry run: nothing was written");
    } else {
        shell.hint(&report::next_steps(
            &project.opgen_version,
            update.generated.is_noop(),
            has_chart,
        ));
    }
    Ok(())
}

/// Goes on with a move to an older Kubernetes release only when the user agrees to what it
/// loses: `--yes`, or a yes on the terminal.
fn confirm_downgrade(change: Move, yes: bool) -> anyhow::Result<()> {
    if !change.is_downgrade() || yes {
        return Ok(());
    }
    let losses = change.losses();
    if Prompter::new(false).confirm(&format!("{losses}. Move to {}?", change.to))? {
        return Ok(());
    }
    bail!(
        "{losses}; nothing was changed\n\nPass --yes to move to Kubernetes {} anyway, or run the command on a terminal to be asked",
        change.to
    )
}

/// The plan that writes `patch` to `file` (a new file, in a directory that may not exist yet).
fn patch_plan(file: &Path, patch: &Patch) -> anyhow::Result<Plan> {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        bail!("--patch names {}, which is no file", file.display());
    };
    let planned = PlannedFile::new(
        name.to_string_lossy(),
        patch.text.clone(),
        Owner::Scaffolded,
    );
    Ok(Plan::new(dir, vec![planned], OnConflict::Refuse)?)
}
