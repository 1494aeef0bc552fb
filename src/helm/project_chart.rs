//! The chart of a project on disk: the inputs [`super::chart`] takes, read from the project
//! tree, for `generate helm`, and for `update` to name the values a newer opgen's chart adds.

use std::path::Path;

use anyhow::{Context as _, bail};

use super::{Chart, HEADER, MONITOR_FILE, Prometheus, RULE_FILE, VALUES_FILE, stale_files};
use crate::{
    bundle::kustomize::Renderer,
    manifests::crds,
    plan::{Action, OnConflict, Owner, Plan},
    project::Project,
};

/// What `generate helm` writes in the project at `root`: the plan of its chart (Chart.yaml and
/// values.yaml kept once they are the user's), and the notes on the user's values. A template
/// opgen generated and no longer would is refused: Helm would still install it.
pub fn chart_plan(
    root: &Path,
    project: &Project,
    renderer: &Renderer,
) -> anyhow::Result<(Plan, Vec<String>)> {
    let chart = project_chart(root, project, renderer)?;
    let stale = stale_files(root, &chart.files)?;
    if !stale.is_empty() {
        let (these, them) = if stale.len() == 1 {
            ("this template", "it")
        } else {
            ("these templates", "them")
        };
        bail!(
            "opgen generated {these} and no longer would, and Helm would still install {them}: {}\n\nDelete {them}, then run this again",
            stale.join(", "),
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
    let mut notes: Vec<String> = plan
        .changes
        .iter()
        .filter(|change| change.action == Action::Keep && headed.contains(&change.path))
        .map(|change| {
            format!(
                "{} lost its `{}` header, so it is yours and was left as it is; put the header back to let opgen rewrite it",
                change.path, HEADER
            )
        })
        .collect();
    notes.extend(chart.notes);
    Ok((plan, notes))
}

/// The chart of the project at `root`, from config/default as `renderer` renders it, the
/// ServiceMonitor and the alerts of config/prometheus and the user's values.yaml.
pub fn project_chart(root: &Path, project: &Project, renderer: &Renderer) -> anyhow::Result<Chart> {
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
    let monitor = read_if_exists(root, MONITOR_FILE)?;
    let rules = read_if_exists(root, RULE_FILE)?;
    let values = read_if_exists(root, VALUES_FILE)?;
    let prometheus = Prometheus {
        monitor: monitor.as_deref(),
        rules: rules.as_deref(),
    };
    super::chart(project, &stream, prometheus, values.as_deref())
}

fn read_if_exists(root: &Path, path: &str) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(root.join(path)) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {path}")),
    }
}
