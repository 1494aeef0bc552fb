//! `opgen generate bundle`: the Operator Lifecycle Manager bundle (`bundle/`,
//! `bundle.Dockerfile`) and the OLM install manifests (`config/olm`), from the rendered
//! `config/manifests` and the user's CSV base; or, with `--init-base`, that base.

use std::{path::Path, process::ExitCode};

use anyhow::bail;

use crate::{
    apply::Transaction,
    bundle::{
        self, PackageName, base, kustomize::Renderer, options::BundleRequest,
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
    let (plan, notes) = bundle::plan(&root, &project, &request(&args)?, &Renderer::from_env())?;
    for note in notes {
        shell.note(&note);
    }
    super::finish(
        &plan,
        args.output.output(),
        (
            "the bundle is",
            "run `opgen generate bundle` (or `make bundle`) with the same flags",
        ),
        Transaction::new(interrupt),
        shell,
    )
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
    let dry_run = args.output.dry_run;
    super::write(&plan, dry_run, shell, interrupt)?;
    if !dry_run {
        shell.hint(&format!(
            "\nFill in {base_path} (display name, description, icon, maintainers), then generate the bundle:\n  make bundle IMG=<registry>/{}:<version>\n",
            project.project_name
        ));
    }
    Ok(())
}
