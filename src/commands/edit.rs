//! `opgen edit`: changes a project-wide choice `init` made (the operator's scope, the license
//! and its owner), and what follows from it in opgen's files and the user's.

use crate::{
    cli::EditArgs,
    interrupt::Interrupt,
    project::{
        Scope,
        edit::change_settings::{self, ChangeSettings},
    },
    shell::Shell,
};

pub fn run(args: EditArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let (root, _lock, project) = super::find_project(shell)?;
    crate::overrides::install(&root)?;
    let request = ChangeSettings {
        scope: match (args.namespaced, args.cluster_wide) {
            (true, _) => Some(Scope::Namespace),
            (_, true) => Some(Scope::Cluster),
            _ => None,
        },
        license: args.license,
        owner: args.owner,
    };
    let change = change_settings::change_settings(&project, &request)?;
    if change.is_noop(&project) {
        shell.note("PROJECT has these settings already; nothing changed");
        return Ok(());
    }
    let interrupt = Interrupt::catch_signals()?;
    super::change_project(
        &root,
        &project,
        &change.project,
        args.force,
        args.dry_run,
        shell,
        &interrupt,
    )?;
    if !args.dry_run {
        let mut steps = String::from("\nNext steps:\n  make test\n");
        steps.push_str(&super::regenerate_packaging(&root));
        if project.operator_scope != change.project.operator_scope {
            let (old, new) = if change.project.namespaced() {
                ("ClusterRole", "Role")
            } else {
                ("Role", "ClusterRole")
            };
            let name = &change.project.project_name;
            steps.push_str(&format!(
                "  make deploy      # the manager gets a {new}; delete its old {old} and {old}Binding ({}, {}), which stay\n",
                name.deployed_name("manager-role"),
                name.deployed_name("manager-rolebinding")
            ));
            if change.project.namespaced() {
                shell.note("the manager role is a Role now: an +opgen:rbac marker of yours for cluster-scoped objects grants nothing there");
            }
        }
        shell.hint(&steps);
    }
    Ok(())
}
