//! `create api --resource=false --external-crd <file>`: a controller for a kind of another
//! project's CRD. The CRD is checked, stored under `config/external/`, and its types are
//! generated into the api crate from that copy.

use std::path::Path;

use anyhow::{Context as _, bail};

use super::foreign::{self, ForeignChange};
use crate::{
    cli::CreateApiArgs,
    model::{ExternalCrd, ForeignKind, Origin},
    plan::{Owner, PlannedFile},
    project::Project,
};

pub fn plan(
    project: &Project,
    crd_file: &Path,
    group: &str,
    version: &str,
    kind: &str,
    args: &CreateApiArgs,
) -> anyhow::Result<ForeignChange> {
    foreign::refuse_type_flags(args)?;
    // A relative path is the user's, from where opgen runs.
    let text = std::fs::read_to_string(crd_file)
        .with_context(|| format!("cannot read --external-crd {}", crd_file.display()))?;
    let (crd, stored_text) = ExternalCrd::read(&text, group, kind).map_err(|problem| {
        anyhow::anyhow!(
            "--external-crd {} is not a CRD opgen can use: {problem}\n\nPass the file of an `apiextensions.k8s.io/v1` CustomResourceDefinition, as its project publishes it",
            crd_file.display()
        )
    })?;
    if crd.group != group {
        bail!(
            "{} defines group `{}`, not `{group}`\n\nPass --group {}",
            crd_file.display(),
            crd.group,
            crd.group
        );
    }
    if crd.kind != kind {
        bail!(
            "{} defines the kind {}, not {kind}\n\nPass --kind {}, or the CRD file that defines {kind}",
            crd_file.display(),
            crd.kind,
            crd.kind
        );
    }
    if crd.version(version).is_none() {
        bail!(
            "{} defines {} in version(s) {}, not {version}\n\nPass --version with one of them",
            crd_file.display(),
            crd.kind,
            crd.version_names()
        );
    }
    let stored_path = ForeignKind::stored_crd_file(&crd.plural, &crd.group);
    let foreign = ForeignKind {
        origin: Origin::External,
        group: crd.group.parse()?,
        version: version.parse()?,
        kind: crd.kind.parse()?,
        plural: crd.plural.clone(),
        namespaced: crd.namespaced,
        crd: Some(stored_path.clone()),
    };
    let stored = PlannedFile::new(stored_path, stored_text.to_owned(), Owner::Scaffolded);
    foreign::add(project, foreign, vec![stored])
}
