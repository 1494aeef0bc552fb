//! `opgen generate bundle`: the Operator Lifecycle Manager bundle (`bundle/`,
//! `bundle.Dockerfile`) and the OLM install manifests (`config/olm`), from the rendered
//! `config/manifests` and the user's CSV base; or, with `--init-base`, that base.

use std::{path::Path, process::ExitCode};

use anyhow::{Context as _, bail};

use crate::{
    apply,
    bundle::{self, PackageName, base, kustomize::Renderer, options, previous::PreviousBundle},
    cli::BundleArgs,
    plan::{Action, OnConflict, Plan},
    project::Project,
    shell::Shell,
};

pub fn run(args: BundleArgs, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (root, project) = Project::find(&cwd)?;
    if args.init_base {
        init_base(&root, &project, &args, shell)?;
        return Ok(ExitCode::SUCCESS);
    }
    generate(&root, &project, &args, &Renderer::from_env(), shell)
}

fn generate(
    root: &Path,
    project: &Project,
    args: &BundleArgs,
    renderer: &Renderer,
    shell: &mut Shell,
) -> anyhow::Result<ExitCode> {
    if project.kinds().next().is_none() {
        bail!(
            "PROJECT lists no kinds, and a bundle exists to install an operator's APIs\n\nAdd one with `opgen create api`, then generate the bundle"
        );
    }
    let previous = PreviousBundle::read(root)?;
    let (options, notes) = options::resolve(args, project, previous.as_ref())?;
    let base = base::read(root, &options.package)?;
    let kustomization = base::kustomization_path();
    if !root.join(&kustomization).is_file() {
        bail!(
            "{kustomization} is missing: it lists what goes into the bundle (../default and ../samples)\n\nScaffold it with `opgen generate bundle --init-base --package {}` (your CSV base is kept)",
            options.package
        );
    }
    let stream = renderer.render(root, base::MANIFESTS_DIR)?;
    let files = bundle::files(project, &options, &base, &stream)?;
    let stray = bundle::stray_files(root, &files)?;
    if !stray.is_empty() {
        bail!(
            "{} not part of the bundle opgen generates, and would be packed into the bundle image: {}\n\nDelete {}, then run this again (a kind removed from PROJECT, or another --package, leaves such files)",
            if stray.len() == 1 {
                "this file is"
            } else {
                "these files are"
            },
            stray.join(", "),
            if stray.len() == 1 { "it" } else { "them" }
        );
    }
    let plan = Plan::new(root, files, OnConflict::Refuse)?;
    for note in notes {
        shell.note(&note);
    }
    if args.check {
        return check(&plan, shell);
    }
    if !args.dry_run && plan.is_noop() {
        shell.note("the bundle is up to date; nothing changed");
        return Ok(ExitCode::SUCCESS);
    }
    super::write(&plan, args.dry_run, shell)?;
    Ok(ExitCode::SUCCESS)
}

/// `--check`: a diff of every file that would change on stdout, their paths on stderr, and an
/// error if there is any.
fn check(plan: &Plan, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let outdated: Vec<_> = plan.changes.iter().filter(|c| c.writes()).collect();
    if outdated.is_empty() {
        shell.note("the bundle is up to date");
        return Ok(ExitCode::SUCCESS);
    }
    for change in &outdated {
        let old = change.old.as_deref().unwrap_or_default();
        shell.print(&apply::unified_diff(&change.path, old, &change.new));
    }
    for change in &outdated {
        let verb = if change.action == Action::Create {
            "Missing"
        } else {
            "Outdated"
        };
        shell.status(verb, &change.path);
    }
    bail!(
        "the bundle is out of date: run `opgen generate bundle` (or `make bundle`) with the same flags and commit the result"
    )
}

/// `--init-base`: scaffolds `config/manifests` for a project made before bundles, or for
/// another package.
fn init_base(
    root: &Path,
    project: &Project,
    args: &BundleArgs,
    shell: &mut Shell,
) -> anyhow::Result<()> {
    let package: PackageName = match &args.package {
        Some(package) => package.parse()?,
        None => match PreviousBundle::read(root)? {
            Some(previous) => previous.package,
            None => PackageName::of_project(&project.project_name),
        },
    };
    let base_path = base::base_path(&package);
    if root.join(&base_path).exists() {
        bail!(
            "{base_path} already exists and is yours; opgen will not overwrite it\n\nEdit it, or move it away to scaffold a fresh one"
        );
    }
    // An existing kustomization is the user's and stays as it is.
    let plan = Plan::new(
        root,
        base::scaffold_files(project, &package)?,
        OnConflict::Keep,
    )?;
    super::write(&plan, args.dry_run, shell)?;
    if !args.dry_run {
        shell.hint(&format!(
            "\nFill in {base_path} (display name, description, icon, maintainers), then generate the bundle:\n  make bundle IMG=<registry>/{}:<version>\n",
            project.project_name
        ));
    }
    Ok(())
}
