//! One module per command: each turns its arguments into the model, builds a plan and
//! applies it.

pub mod create_api;
pub mod generate_manifests;
pub mod init;

use crate::{apply, interrupt::Interrupt, plan::Plan, shell::Shell};

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
