//! `opgen update`: brings a project made by an older opgen up to this one. What changes is
//! planned by [`crate::update`]; this module writes the generated files and reports what the
//! user may want to bring over by hand.

mod report;

use anyhow::Context as _;

use crate::{apply, cli::UpdateArgs, interrupt::Interrupt, project::Project, shell::Shell, update};

pub fn run(args: UpdateArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (root, _lock, project) = Project::open(&cwd)?;
    let overrides = crate::overrides::install(&root)?;
    let interrupt = Interrupt::catch_signals()?;
    let update = update::Update::plan(&root, &project, &interrupt)?;

    if args.dry_run {
        apply::print_changes(&update.generated, shell);
    } else {
        apply::apply(&update.generated, shell, &interrupt)?;
    }
    report::generated(&update, shell);
    report::scaffolded(&update, args.diff, shell);
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
