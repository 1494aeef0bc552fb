//! `generate manifests`' outputs: CRDs from the api crate's `crdgen`, and the manager role
//! from the controllers' `+opgen:rbac` markers.

pub mod cargo_metadata;
pub mod crdgen;
pub mod crds;
mod generate;
pub mod markers;
pub mod rbac;
pub mod target_lock;
pub mod webhooks;

use crate::{
    plan::{Owner, PlannedFile},
    project::Project,
};

pub use generate::plan;

/// Where the manager role lives.
pub const ROLE_FILE: &str = "config/rbac/role.yaml";

/// The manifests of a project with no kinds yet: a manager role without rules, so that
/// `kubectl kustomize config/default` renders before the first `generate manifests`.
pub fn initial_files(project: &Project) -> anyhow::Result<Vec<PlannedFile>> {
    Ok(vec![role_file(&[], project)])
}

/// The manager role granting `rules`.
pub fn role_file(rules: &[rbac::Rule], project: &Project) -> PlannedFile {
    PlannedFile::new(
        ROLE_FILE,
        rbac::render_role(rules, project),
        Owner::Manifest,
    )
}
