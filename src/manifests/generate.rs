//! The pipeline of `generate manifests`: the markers read first (in an instant, while the
//! build may take minutes), the api crate's generated files brought up to date when they are
//! not (crdgen is built from the crate as it is on disk), the CRDs built, and every manifest
//! planned.

use std::path::Path;

use super::{crdgen, crds, markers, role_file, webhooks};
use crate::{
    apply::Transaction,
    interrupt::Interrupt,
    plan::{OnConflict, Output, Plan, PlannedFile},
    project::Project,
    shell::Shell,
};

/// The plan of the manifests of the project at `root`, with `generated`, the files opgen
/// generates from `PROJECT`, beside them.
///
/// Part of the api crate (its module tree and `all_crds()`) is among `generated`; when those
/// files are out of date (PROJECT edited by hand, or a newer opgen), the CRDs must be built
/// from the new ones. To write (`output` is [`Output::Write`]) they are written first, in
/// `transaction`, so that a failed build or a signal puts them back; otherwise they join the
/// plan, and the CRDs are not compared.
pub fn plan(
    root: &Path,
    project: &Project,
    generated: Vec<PlannedFile>,
    output: Output,
    transaction: &mut Transaction,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<Plan> {
    let rules = markers::read_controllers(root, project)?;
    let webhook_markers = markers::webhook::read_webhooks(root)?;

    let (api_files, other_files): (Vec<PlannedFile>, Vec<PlannedFile>) = generated
        .into_iter()
        .partition(|file| file.path.starts_with("api/"));
    let api_plan = Plan::new(root, api_files.clone(), OnConflict::Refuse)?;
    let api_stale = !api_plan.is_noop();
    let mut files = vec![role_file(&rules, project)];
    if project.resources.iter().any(|r| r.webhooks.is_some()) {
        files.push(webhooks::manifests_file(project, &webhook_markers));
        files.push(webhooks::dev_file(project, &webhook_markers));
    }
    files.extend(other_files);
    if output == Output::Write {
        if api_stale {
            transaction.apply(&api_plan, shell)?;
        }
        return match plan_with_crds(root, project, files, output, api_stale, shell, interrupt) {
            Ok(plan) => Ok(plan),
            Err(err) => Err(transaction.undo(err)),
        };
    }
    files.extend(api_files);
    plan_with_crds(root, project, files, output, api_stale, shell, interrupt)
}

/// Builds the CRDs and plans them with `files`. `api_stale` tells that the api crate's
/// generated files were out of date (and, when writing, are written already).
fn plan_with_crds(
    root: &Path,
    project: &Project,
    files: Vec<PlannedFile>,
    output: Output,
    api_stale: bool,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<Plan> {
    let mut all = if project.kinds().next().is_none() {
        // Nothing to build: the crdgen of a project without kinds prints nothing.
        Vec::new()
    } else if api_stale && output != Output::Write {
        shell.note(
            "the api crate's generated files are out of date with PROJECT, and the CRDs can only be built once they are written: the CRDs were not compared",
        );
        Vec::new()
    } else {
        let crdgen_output = crdgen::run(root, project, shell, interrupt)?;
        crds::crd_files(&crdgen_output, project)?
    };
    all.extend(files);
    for path in crds::stale_files(root, project)? {
        shell.note(&format!(
            "{path} is the CRD of no kind in PROJECT; opgen leaves it alone: delete it if it is left over"
        ));
    }
    Ok(Plan::new(root, all, OnConflict::Refuse)?)
}
