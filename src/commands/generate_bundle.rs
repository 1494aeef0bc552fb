//! `opgen generate bundle`: the Operator Lifecycle Manager bundle (`bundle/`,
//! `bundle.Dockerfile`) and the OLM install manifests (`config/olm`), from the rendered
//! `config/manifests` and the user's CSV base; or, with `--init-base`, that base.

use std::{path::Path, process::ExitCode};

use anyhow::bail;

use crate::{
    bundle::{
        self, PackageName, base, kustomize::Renderer, options, options::BundleRequest,
        previous::PreviousBundle,
    },
    cli::BundleArgs,
    interrupt::Interrupt,
    plan::{OnConflict, Plan},
    project::Project,
    shell::Shell,
};

pub fn run(args: BundleArgs, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let (root, _lock, project) = super::find_project(shell)?;
    let interrupt = Interrupt::catch_signals()?;
    if args.init_base {
        init_base(&root, &project, &args, shell, &interrupt)?;
        return Ok(ExitCode::SUCCESS);
    }
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
    args: &BundleArgs,
    renderer: &Renderer,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<ExitCode> {
    if project.kinds().next().is_none() {
        bail!(
            "PROJECT lists no kinds, and a bundle exists to install an operator's APIs\n\nAdd one with `opgen create api`, then generate the bundle"
        );
    }
    let previous = PreviousBundle::read(root)?;
    let (options, notes) = options::resolve(&request(args)?, project, previous.as_ref())?;
    let base = base::read(root, &options.package)?;
    base::check_inputs(root, &options.package)?;
    let stream = renderer.render(root, base::MANIFESTS_DIR)?;
    let files = bundle::files(project, &options, &base, &stream)?;
    let strays = bundle::stray_files_to_remove(root, &files)?;
    let mut plan = Plan::new(root, files, OnConflict::Refuse)?;
    for (path, text) in strays {
        plan.delete(path, text);
    }
    for note in notes {
        shell.note(&note);
    }
    if args.check {
        return super::check(
            &plan,
            "the bundle is",
            "run `opgen generate bundle` (or `make bundle`) with the same flags",
            shell,
        );
    }
    if !args.dry_run && plan.is_noop() {
        shell.note("the bundle is up to date; nothing changed");
        return Ok(ExitCode::SUCCESS);
    }
    super::write(&plan, args.dry_run, shell, interrupt)?;
    Ok(ExitCode::SUCCESS)
}

/// The flags, each parsed into the bundle's types; the bundle layer fills in the rest.
pub fn request(args: &BundleArgs) -> anyhow::Result<BundleRequest> {
    let parse_all = |list: &Vec<String>| list.iter().map(|c| c.parse()).collect();
    Ok(BundleRequest {
        version: args.version.as_deref().map(str::parse).transpose()?,
        package: args.package.as_deref().map(str::parse).transpose()?,
        channels: args.channels.as_ref().map(parse_all).transpose()?,
        default_channel: args
            .default_channel
            .as_deref()
            .map(str::parse)
            .transpose()?,
        replaces: args.replaces.clone(),
        image: args.image.as_deref().map(str::parse).transpose()?,
    })
}

/// `--init-base`: scaffolds `config/manifests` for a project made before bundles, or for
/// another package.
fn init_base(
    root: &Path,
    project: &Project,
    args: &BundleArgs,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    let package: PackageName = match &args.package {
        Some(package) => package.parse()?,
        None => match PreviousBundle::read(root)? {
            Some(previous) => previous.package,
            None => PackageName::of_project(&project.project_name),
        },
    };
    let base_path = base::base_path(&package);
    let kustomization = base::kustomization_path();
    if root.join(&base_path).exists() && root.join(&kustomization).exists() {
        bail!(
            "{base_path} and {kustomization} already exist and are yours; opgen will not overwrite them\n\nEdit them, or move the base away to scaffold a fresh one"
        );
    }
    // What exists is the user's and stays as it is.
    let plan = Plan::new(
        root,
        base::scaffold_files(project, &package)?,
        OnConflict::Keep,
    )?;
    super::write(&plan, args.dry_run, shell, interrupt)?;
    if !args.dry_run {
        shell.hint(&format!(
            "\nFill in {base_path} (display name, description, icon, maintainers), then generate the bundle:\n  make bundle IMG=<registry>/{}:<version>\n",
            project.project_name
        ));
    }
    Ok(())
}
