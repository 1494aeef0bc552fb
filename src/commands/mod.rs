//! One module per command: each turns its arguments into the model, builds a plan and
//! applies it.

pub mod create_api;
pub mod generate_bundle;
pub mod generate_manifests;
pub mod init;

use std::process::ExitCode;

use crate::{
    apply,
    plan::{Action, Plan},
    shell::Shell,
};

/// Prints the plan (`--dry-run`) or carries it out.
pub fn write(plan: &Plan, dry_run: bool, shell: &mut Shell) -> anyhow::Result<()> {
    if dry_run {
        apply::print_dry_run(plan, shell);
        Ok(())
    } else {
        apply::apply(plan, shell)
    }
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
