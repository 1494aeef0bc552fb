//! `opgen templates list|show|check`: the template overrides of a project or a team.

use std::process::ExitCode;

use anyhow::Context as _;

use crate::{cli::TemplatesCommand, interrupt::Interrupt, overrides, shell::Shell};

pub fn run(command: TemplatesCommand, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    match command {
        TemplatesCommand::List => shell.print(&overrides::list(&overrides::root_around(&cwd))?),
        TemplatesCommand::Show { name } => shell.print(&overrides::starting_text(&name)?),
        TemplatesCommand::Check => {
            let (root, _lock, project) = super::find_project(shell)?;
            let interrupt = Interrupt::catch_signals()?;
            let report = overrides::check(&root, &project, &interrupt)?;
            if let Some(problems) = report.problems {
                shell.print(&problems);
                anyhow::bail!(
                    "{} of {} template overrides need attention (above)",
                    report.failing,
                    report.checked
                );
            }
            shell.note(&format!(
                "{} template overrides render and are up to date",
                report.checked
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
