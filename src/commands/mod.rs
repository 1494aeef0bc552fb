//! One module per command: each turns its arguments into the model, builds a plan and
//! applies it.

pub mod create_api;
pub mod generate_bundle;
pub mod generate_manifests;
pub mod init;

use crate::{apply, plan::Plan, shell::Shell};

/// Prints the plan (`--dry-run`) or carries it out.
pub fn write(plan: &Plan, dry_run: bool, shell: &mut Shell) -> anyhow::Result<()> {
    if dry_run {
        apply::print_dry_run(plan, shell);
        Ok(())
    } else {
        apply::apply(plan, shell)
    }
}
