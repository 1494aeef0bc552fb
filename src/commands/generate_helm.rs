//! `opgen generate helm`: the Helm chart of the operator in `dist/chart`, from the rendered
//! `config/default`.

use std::{path::Path, process::ExitCode};

use anyhow::bail;

use crate::{
    bundle::kustomize::Renderer,
    cli::HelmArgs,
    helm,
    interrupt::Interrupt,
    plan::{Action, OnConflict, Owner, Plan},
    project::Project,
    shell::Shell,
};

pub fn run(args: HelmArgs, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let (root, _lock, project) = super::find_project(shell)?;
    let interrupt = Interrupt::catch_signals()?;
    generate(
        &root,
        &project,
        &args,
        &Renderer::from_env(),
        shell,
        &interrupt,
    )
}

fn generate(
    root: &Path,
    project: &Project,
    args: &HelmArgs,
    renderer: &Renderer,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<ExitCode> {
    let chart = helm::project_chart(root, project, renderer)?;
    let stale = helm::stale_files(root, &chart.files)?;
    if !stale.is_empty() {
        bail!(
            "opgen generated {} and no longer would, and Helm would still install {}: {}\n\nDelete {}, then run this again",
            if stale.len() == 1 {
                "this template"
            } else {
                "these templates"
            },
            if stale.len() == 1 { "it" } else { "them" },
            stale.join(", "),
            if stale.len() == 1 { "it" } else { "them" },
        );
    }
    let headed: Vec<String> = chart
        .files
        .iter()
        .filter(|file| matches!(file.owner, Owner::GeneratedWith(_)))
        .map(|file| file.path.clone())
        .collect();
    // Chart.yaml and values.yaml are the user's once written, and so is a template whose
    // header the user removed.
    let plan = Plan::new(root, chart.files, OnConflict::Keep)?;
    for change in &plan.changes {
        if change.action == Action::Keep && headed.contains(&change.path) {
            shell.note(&format!(
                "{} lost its `{}` header, so it is yours and was left as it is; put the header back to let opgen rewrite it",
                change.path,
                helm::HEADER
            ));
        }
    }
    for note in &chart.notes {
        shell.note(note);
    }
    if args.check {
        return super::check(
            &plan,
            "the Helm chart is",
            "run `opgen generate helm` (or `make helm`)",
            shell,
        );
    }
    if !args.dry_run && plan.is_noop() {
        shell.note("the Helm chart is up to date; nothing changed");
        return Ok(ExitCode::SUCCESS);
    }
    super::write(&plan, args.dry_run, shell, interrupt)?;
    Ok(ExitCode::SUCCESS)
}
