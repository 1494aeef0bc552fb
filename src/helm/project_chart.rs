//! The chart of a project on disk: the inputs [`super::chart`] takes, read from the project
//! tree, for `generate helm`, and for `update` to name the values a newer opgen's chart adds.

use std::path::Path;

use anyhow::{Context as _, bail};

use super::{Chart, MONITOR_FILE, Prometheus, RULE_FILE, VALUES_FILE};
use crate::{bundle::kustomize::Renderer, manifests::crds, project::Project};

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
