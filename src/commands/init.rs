//! `opgen init`: scaffolds a new operator project.

use std::path::Path;

use anyhow::{Context as _, bail};

use crate::{
    cli::InitArgs,
    interrupt::Interrupt,
    lock::ProjectLock,
    model::{Domain, KubernetesVersion, NewProjectName},
    new_directory,
    plan::{OnConflict, Plan},
    project::{self, Project, Scope},
    prompt::Prompter,
    rustfmt, scaffold,
    shell::Shell,
};

pub fn run(args: InitArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let dir = match &args.dir {
        Some(dir) => cwd.join(dir),
        None => cwd,
    };
    check_dir(&dir, args.force)?;
    let overrides = crate::overrides::install(&dir)?;

    let prompter = Prompter::new(args.write.yes);
    let project_name: NewProjectName = prompter.value(
        args.project_name,
        "--project-name",
        "Project name",
        dir.file_name()
            .map(|name| name.to_string_lossy().into_owned()),
    )?;
    let domain: Domain =
        prompter.value(args.domain, "--domain", "Domain of the API groups", None)?;
    let kubernetes_version = match args.kubernetes_version {
        Some(version) => version.parse()?,
        None => KubernetesVersion::default(),
    };
    if let Some(warning) = kubernetes_version.end_of_life_warning() {
        shell.warn(&warning);
    }
    let scope = if args.namespaced {
        Scope::Namespace
    } else {
        Scope::Cluster
    };
    let project = Project::new(
        project_name.into(),
        domain,
        scope,
        kubernetes_version,
        args.license.unwrap_or_default(),
        args.owner,
    );

    let mut files = scaffold::init_files(&project)?;
    files.extend(crate::manifests::initial_files(&project)?);
    files.extend(crate::bundle::base::initial_files(&project)?);
    let interrupt = Interrupt::catch_signals()?;
    // The built-in templates are rustfmt-clean as rendered (see `scaffold::init_files`); what
    // an override renders goes through rustfmt, as in `create api`, which refuses invalid Rust.
    if !overrides.is_empty() && !rustfmt::format(&mut files, &dir, &interrupt)? {
        shell.note("rustfmt was not found: run `cargo fmt` once it is installed");
    }
    let on_conflict = if args.force {
        OnConflict::Keep
    } else {
        OnConflict::Refuse
    };
    if args.write.dry_run {
        let plan = Plan::new(&dir, files, on_conflict)?;
        return super::write(&plan, true, shell, &interrupt);
    }
    if dir.exists() {
        // Written in place, file by file, in a transaction: the directory may be the user's
        // shell's working directory, or hold a `.git`, so it is never replaced.
        let _lock = ProjectLock::acquire(&dir)?;
        check_dir(&dir, args.force)?;
        let plan = Plan::new(&dir, files, on_conflict)?;
        super::write(&plan, false, shell, &interrupt)?;
    } else {
        new_directory::build_beside(&dir, files, shell, &interrupt)?;
    }
    shell.hint(&next_steps(args.dir.as_deref()));
    Ok(())
}

/// Refuses a directory that is a project already, and one with other files unless `force`.
fn check_dir(dir: &Path, force: bool) -> anyhow::Result<()> {
    for marker in [project::FILE_NAME, "Cargo.toml"] {
        if dir.join(marker).exists() {
            bail!(
                "{} already holds a {marker}, so it is a project already; opgen init will not touch it\n\nAdd an API to an opgen project with `opgen create api`, or choose a new directory: `opgen init <DIR>`",
                dir.display()
            );
        }
    }
    if force || !dir.exists() {
        return Ok(());
    }
    let mut entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    // A fresh `git init` is the one thing expected in a new project's directory.
    if entries.any(|entry| entry.is_ok_and(|e| e.file_name() != ".git")) {
        bail!(
            "{} is not empty\n\nPass --force to scaffold into it anyway (files that exist are kept as they are), or choose an empty directory",
            dir.display()
        );
    }
    Ok(())
}

fn next_steps(given: Option<&Path>) -> String {
    let cd = match given {
        Some(given) => format!("  cd {}\n", given.display()),
        None => String::new(),
    };
    format!(
        "\nCreated an operator project. Next steps:\n{cd}  opgen create api --group <group> --version v1alpha1 --kind <Kind>\n  cargo build\n  make run      # runs the operator against your current kubeconfig context\n"
    )
}
