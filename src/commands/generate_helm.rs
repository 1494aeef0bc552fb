//! `opgen generate helm`: the Helm chart of the operator in `dist/chart`, from the rendered
//! `config/default`.

use std::{path::Path, process::ExitCode};

use anyhow::{Context as _, bail};

use crate::{
    bundle::kustomize::Renderer,
    cli::HelmArgs,
    helm,
    interrupt::Interrupt,
    manifests::crds,
    plan::{OnConflict, Plan},
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
    let chart = chart(root, project, renderer)?;
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
    // Chart.yaml and values.yaml are the user's once written.
    let plan = Plan::new(root, chart.files, OnConflict::Keep)?;
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

/// The chart of the project at `root`, from config/default as `renderer` renders it, the
/// ServiceMonitor of config/prometheus and the user's values.yaml; also what `update` reads
/// to name the values a newer opgen's chart adds.
pub fn chart(root: &Path, project: &Project, renderer: &Renderer) -> anyhow::Result<helm::Chart> {
    if project.kinds().next().is_none() {
        bail!(
            "PROJECT lists no kinds, and the chart exists to install an operator's APIs\n\nAdd one with `opgen create api`, then generate the chart"
        );
    }
    if !root.join(crds::BASES_DIR).is_dir() {
        bail!(
            "{} is missing: the chart installs the CRDs `generate manifests` writes there\n\nRun `make manifests` (or `opgen generate manifests`) first, then generate the chart",
            crds::BASES_DIR
        );
    }
    let stream = renderer.render(root, "config/default")?;
    let monitor = read_if_exists(root, helm::MONITOR_FILE)?;
    let values = read_if_exists(root, helm::VALUES_FILE)?;
    helm::chart(project, &stream, monitor.as_deref(), values.as_deref())
}

fn read_if_exists(root: &Path, path: &str) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(root.join(path)) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {path}")),
    }
}
