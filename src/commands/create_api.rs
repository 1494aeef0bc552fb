//! `opgen create api`: adds a kind (or a version of one) and its controller, or a controller
//! for a kind the project does not own: each has its request and its edit (`resource`,
//! `foreign`); this module writes what they scaffold and reports.

mod foreign;
mod resource;

use anyhow::bail;

use crate::{
    cli::CreateApiArgs, interrupt::Interrupt, plan::PlannedFile, prompt::Prompter, shell::Shell,
};

/// What one `create api` writes, and what it tells the user afterwards.
struct Outcome {
    files: Vec<PlannedFile>,
    /// Whether rustfmt formatted the Rust files.
    formatted: bool,
    warnings: Vec<String>,
    next_steps: String,
}

pub fn run(args: CreateApiArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
    let prompter = Prompter::new(args.write.yes);
    // Words as given: a kind the project does not own may be in a group such as `core`.
    let (group, version, kind): (String, String, String) = super::kind_of(&prompter, &args.kind)?;

    if args.external_crd.is_some() && args.resource != Some(false) {
        bail!(
            "--external-crd describes a kind of another project, whose types opgen generates from that CRD\n\nAdd --resource=false"
        );
    }
    let interrupt = Interrupt::catch_signals()?;
    let outcome = if foreign::is_foreign(&project, &group, &kind, &args) {
        let request = foreign::request(&args, &group, &version, &kind)?;
        foreign::scaffold(&project, &request, &root, &interrupt)?
    } else {
        let request = resource::request(&args, (&group, &version, &kind), &prompter)?;
        resource::scaffold(&project, request, &root, &interrupt)?
    };
    let dry_run = args.write.dry_run;
    super::write_scaffold(
        &root,
        outcome.files,
        outcome.formatted,
        args.force,
        dry_run,
        shell,
        &interrupt,
    )?;
    for warning in &outcome.warnings {
        shell.warn(warning);
    }
    if !dry_run {
        shell.hint(&outcome.next_steps);
    }
    Ok(())
}
