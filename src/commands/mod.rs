//! One module per command: each turns its arguments into the model, builds a plan and
//! applies it.

pub mod create_api;
pub mod create_webhook;
pub mod delete_api;
pub mod delete_webhook;
pub mod dev;
pub mod edit;
pub mod generate_bundle;
pub mod generate_helm;
pub mod generate_manifests;
pub mod init;
pub mod templates;
pub mod update;

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::Context as _;

use crate::{
    apply::{self, Transaction},
    cli::KindArgs,
    interrupt::Interrupt,
    lock::ProjectLock,
    model::OpgenVersion,
    plan::{Action, OnConflict, Output, Plan, PlannedFile},
    project::Project,
    project_change::ProjectChange,
    shell::Shell,
};

/// The project around the current directory, locked for this command, for a command that adds
/// to it or regenerates it. Reading `PROJECT` refuses a project of a newer opgen; one of an
/// older opgen is worked on, with a note that `opgen update` brings it to this release.
pub fn find_project(shell: &mut Shell) -> anyhow::Result<(PathBuf, ProjectLock, Project)> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (root, lock, project) = Project::open(&cwd)?;
    let running = OpgenVersion::running();
    if project.opgen_version.compare(&running).is_lt() {
        shell.note(&format!(
            "this project was made by opgen {}; `opgen update` brings its generated files and PROJECT's `opgenVersion` to this opgen, {running}",
            project.opgen_version
        ));
    }
    Ok((root, lock, project))
}

/// The group, version and kind of `--group`, `--version` and `--kind`, asked for on a terminal
/// when missing, as `G`, `V` and `K`: the model's types, or the words as given when they may
/// name a kind the project does not own (`create api --resource=false`).
pub fn kind_of<G, V, K>(
    prompter: &crate::prompt::Prompter,
    args: &KindArgs,
) -> anyhow::Result<(G, V, K)>
where
    G: std::str::FromStr<Err: std::fmt::Display + std::error::Error + Send + Sync + 'static>,
    V: std::str::FromStr<Err: std::fmt::Display + std::error::Error + Send + Sync + 'static>,
    K: std::str::FromStr<Err: std::fmt::Display + std::error::Error + Send + Sync + 'static>,
{
    let group = prompter.value(
        args.group.clone(),
        "--group",
        "API group (without the domain)",
        None,
    )?;
    let version = prompter.value(args.version.clone(), "--version", "API version", None)?;
    let kind = prompter.value(args.kind.clone(), "--kind", "Kind (PascalCase)", None)?;
    Ok((group, version, kind))
}

/// Writes what `create api` or `create webhook` planned in the project at `root` (a scaffolded
/// file that exists is refused, or overwritten with `force`), or shows it with `dry_run`;
/// `formatted` says whether rustfmt could format the Rust files.
pub fn write_scaffold(
    root: &Path,
    files: Vec<PlannedFile>,
    formatted: bool,
    force: bool,
    dry_run: bool,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    if !formatted {
        shell.note("rustfmt was not found: run `cargo fmt` once it is installed");
    }
    let on_conflict = if force {
        OnConflict::Overwrite
    } else {
        OnConflict::Refuse
    };
    let plan = Plan::new(root, files, on_conflict)?;
    write(&plan, dry_run, shell, interrupt)
}

/// Changes the project at `root` from `before` to `after` (see [`ProjectChange`]): prints the
/// plan (`dry_run`) or writes it, and says what the user must change in their own files.
pub fn change_project(
    root: &Path,
    before: &Project,
    after: &Project,
    force: bool,
    dry_run: bool,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    let change = ProjectChange {
        root,
        before,
        after,
    };
    let changes = change.plan(force, interrupt)?;
    changes.write(after, dry_run, shell, interrupt)?;
    if !dry_run {
        for note in &changes.notes {
            shell.note(note);
        }
    }
    Ok(())
}

/// The commands that bring the project's OLM bundle and Helm chart up to date, when it has
/// them: a hint's lines.
pub fn regenerate_packaging(root: &Path) -> String {
    let mut steps = String::new();
    if root.join(crate::bundle::MANIFESTS_DIR).is_dir() {
        steps.push_str("  make bundle      # the OLM bundle\n");
    }
    if root.join(crate::helm::VALUES_FILE).is_file() {
        steps.push_str("  make helm        # the Helm chart\n");
    }
    steps
}

/// Prints the plan (`--dry-run`) or carries it out, restoring every file if a write fails or
/// a signal arrives before the end.
pub fn write(
    plan: &Plan,
    dry_run: bool,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    if dry_run {
        apply::print_dry_run(plan, shell);
        interrupt.check()?;
        Ok(())
    } else {
        apply::apply(plan, shell, interrupt)
    }
}

/// The ending the `generate` commands share: with `--check`, fail unless nothing would change
/// (see [`check`]); with `--dry-run`, show the plan; otherwise write it in `transaction` (which
/// may hold what the command wrote already), or note that `subject` (`manifests are`) up to
/// date when nothing was or would be written. `fix` says how to bring them up to date.
pub fn finish(
    plan: &Plan,
    output: Output,
    (subject, fix): (&str, &str),
    mut transaction: Transaction,
    shell: &mut Shell,
) -> anyhow::Result<ExitCode> {
    match output {
        Output::Check => return check(plan, subject, fix, shell),
        Output::DryRun => apply::print_dry_run(plan, shell),
        Output::Write if plan.is_noop() && transaction.is_empty() => {
            shell.note(&format!("{subject} up to date; nothing changed"));
        }
        Output::Write => transaction.apply(plan, shell)?,
    }
    transaction.commit()?;
    Ok(ExitCode::SUCCESS)
}

/// `--check`: when `plan` would change files, prints a diff of each on stdout and their paths on
/// stderr, and fails saying `subject` (`manifests are`) out of date and how to `fix` it;
/// otherwise notes that `subject` up to date.
pub fn check(plan: &Plan, subject: &str, fix: &str, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let outdated: Vec<_> = plan.changes.iter().filter(|c| c.writes()).collect();
    if outdated.is_empty() {
        shell.note(&format!("{subject} up to date"));
        return Ok(ExitCode::SUCCESS);
    }
    for change in &outdated {
        let old = change.old.as_deref().unwrap_or_default();
        shell.print(&apply::unified_diff(&change.path, old, &change.new));
    }
    for change in &outdated {
        let verb = if change.action == Action::Create {
            "Missing"
        } else {
            "Outdated"
        };
        shell.status(verb, &change.path);
    }
    anyhow::bail!("{subject} out of date: {fix} and commit the result")
}
