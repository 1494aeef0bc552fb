//! `opgen delete api`: removes a version of a kind (the kind, with its last version), or the
//! controller of a kind the project does not own, and what opgen made for it.

use crate::{
    cli::DeleteApiArgs,
    interrupt::Interrupt,
    project::edit::remove_resource::{self, Removal, RemoveResource, Removed},
    prompt::Prompter,
    shell::Shell,
};

pub fn run(args: DeleteApiArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
    let prompter = Prompter::new(args.write.yes);
    // Words as given: a kind the project does not own may be in a group such as `core`.
    let (group, version, kind): (String, String, String) = super::kind_of(&prompter, &args.kind)?;
    let interrupt = Interrupt::catch_signals()?;
    let removal = remove_resource::remove_resource(
        &project,
        &RemoveResource {
            group,
            version,
            kind,
        },
    )?;
    let dry_run = args.write.dry_run;
    super::change_project(
        &root,
        &project,
        &removal.project,
        args.force,
        dry_run,
        shell,
        &interrupt,
    )?;
    if !dry_run {
        shell.hint(&next_steps(&removal, &root));
    }
    Ok(())
}

fn next_steps(removal: &Removal, root: &std::path::Path) -> String {
    let domain = &removal.project.domain;
    let (what, cluster) = match &removal.removed {
        Removed::Version {
            resource,
            last: true,
            ..
        } => (
            format!("{} ({})", resource.kind, resource.group),
            format!(
                "  kubectl delete crd {}   # a cluster keeps the CRD and its objects until then\n",
                resource.crd_name(domain)
            ),
        ),
        Removed::Version { resource, .. } => (
            format!("{} {}/{}", resource.kind, resource.group, resource.version),
            format!(
                "  make install   # the CRD without {} (objects stored as {} need a migration first)\n",
                resource.version, resource.version
            ),
        ),
        Removed::Foreign(foreign) => (format!("the controller of {}", foreign.kind), String::new()),
    };
    format!(
        "\n{what} is gone from PROJECT, with its files; the manifests are up to date.\nNext steps:\n  make test\n{}{cluster}",
        super::regenerate_packaging(root)
    )
}
