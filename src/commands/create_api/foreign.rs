//! `create api --resource=false` for a kind the project does not own: a built-in Kubernetes
//! kind, or (with `--external-crd`) a kind of another project's CRD. Only a controller is
//! scaffolded; the edit of `PROJECT` is [`add_foreign`](crate::project::edit::add_foreign).

use anyhow::{Context as _, bail};

use std::path::Path;

use super::Outcome;
use crate::{
    cli::CreateApiArgs,
    interrupt::Interrupt,
    plan::{Owner, PlannedFile},
    project::{
        Project,
        edit::add_foreign::{self, AddForeign, Source},
    },
    scaffold,
};

/// Whether `create api` is asked for a kind the project does not own: `--resource=false` with
/// `--external-crd`, or for a kind that is not the project's.
pub fn is_foreign(project: &Project, group: &str, kind: &str, args: &CreateApiArgs) -> bool {
    if args.resource != Some(false) {
        return false;
    }
    args.external_crd.is_some()
        || !project
            .resources
            .iter()
            .any(|r| r.group.as_str() == group && r.kind.as_str() == kind)
}

/// The request for the kind `group`/`version` `kind`, refusing flags that describe types; the
/// CRD of `--external-crd` is read here, a relative path from where opgen runs.
pub fn request(
    args: &CreateApiArgs,
    group: &str,
    version: &str,
    kind: &str,
) -> anyhow::Result<AddForeign> {
    refuse_type_flags(args)?;
    let source = match &args.external_crd {
        Some(crd_file) => Source::External {
            file: crd_file.display().to_string(),
            text: std::fs::read_to_string(crd_file)
                .with_context(|| format!("cannot read --external-crd {}", crd_file.display()))?,
        },
        None => Source::BuiltIn,
    };
    Ok(AddForeign {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
        source,
    })
}

/// The edit of `PROJECT` for `request`, and the controller it scaffolds.
pub(super) fn scaffold(
    project: &Project,
    request: &AddForeign,
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<Outcome> {
    let change = add_foreign::add_foreign(project, request)?;
    let stored = change
        .stored
        .iter()
        .map(|(path, text)| PlannedFile::new(path, text, Owner::Scaffolded))
        .collect();
    let (files, formatted) =
        scaffold::foreign_files(&change.project, &change.foreign, stored, root, interrupt)?;
    let next_steps = format!(
        "\nNext steps:\n  edit {} to write your reconcile logic\n  make manifests   # regenerate the RBAC from the code\n  make test\n",
        change.foreign.controller_file()
    );
    Ok(Outcome {
        files,
        formatted,
        warnings: Vec::new(),
        next_steps,
    })
}

/// The flags that describe a kind's types or its operand, which a kind the project does not
/// own has not here.
fn refuse_type_flags(args: &CreateApiArgs) -> anyhow::Result<()> {
    let given = [
        ("--plural", args.plural.is_some()),
        ("--short-name", args.short_name.is_some()),
        ("--namespaced", args.namespaced.is_some()),
        ("--storage", args.storage.is_some()),
        ("--image", args.image.is_some()),
        ("--controller=false", args.controller == Some(false)),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} does not apply to a kind this project does not own: its names and scope are its owner's, and it gets only a controller\n\nDrop {flag}"
        );
    }
    Ok(())
}
