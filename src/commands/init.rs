//! `opgen init`: scaffolds a new operator project.

use std::{
    fs,
    path::{Path, PathBuf},
};

use anyhow::{Context as _, bail};

use crate::{
    apply,
    cli::InitArgs,
    interrupt::Interrupt,
    lock::ProjectLock,
    model::{Domain, KubernetesVersion, ProjectName},
    plan::{OnConflict, Plan, PlannedFile},
    project::{self, Project, Scope},
    prompt::Prompter,
    scaffold,
    shell::Shell,
};

pub fn run(args: InitArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let dir = match &args.dir {
        Some(dir) => cwd.join(dir),
        None => cwd,
    };
    check_dir(&dir, args.force)?;
    crate::overrides::install(&dir)?;

    let prompter = Prompter::new(args.write.yes);
    let project_name: ProjectName = prompter.value(
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
    let scope = if args.namespaced {
        Scope::Namespace
    } else {
        Scope::Cluster
    };
    let project = Project::new(
        project_name,
        domain,
        scope,
        kubernetes_version,
        args.license.unwrap_or_default(),
        args.owner,
    );

    let mut files = scaffold::init_files(&project)?;
    files.extend(crate::manifests::initial_files(&project)?);
    files.extend(crate::bundle::base::initial_files(&project)?);
    let on_conflict = if args.force {
        OnConflict::Keep
    } else {
        OnConflict::Refuse
    };
    let interrupt = Interrupt::catch_signals()?;
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
        build_beside(&dir, files, shell, &interrupt)?;
    }
    shell.hint(&next_steps(args.dir.as_deref()));
    Ok(())
}

/// Writes a project into a temporary directory next to `dir` and renames it to `dir`, so that
/// `dir` appears complete or not at all, whatever stops the command. Missing parents of `dir`
/// are created, and removed again if the command fails.
fn build_beside(
    dir: &Path,
    files: Vec<PlannedFile>,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    let parent = dir
        .parent()
        .context("the project directory has no parent")?;
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let created_parents = create_parents(parent)?;
    let result = (|| {
        let prefix = format!(".{name}.opgen-");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
        // A temporary directory is private; the project gets what `mkdir` gives (the umask
        // applies to this mode).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o777));
        let temp = builder
            .tempdir_in(parent)
            .with_context(|| format!("cannot create a directory in {}", parent.display()))?;
        let plan = Plan::new(temp.path(), files, OnConflict::Refuse)?;
        apply::apply(&plan, shell, interrupt)?;
        interrupt.check()?;
        let building = temp.keep();
        fs::rename(&building, dir).map_err(|err| {
            let _ = fs::remove_dir_all(&building);
            if dir.exists() {
                anyhow::anyhow!(
                    "{} was created by another program while opgen was building the project; nothing was written",
                    dir.display()
                )
            } else {
                anyhow::Error::new(err).context(format!("cannot create {}", dir.display()))
            }
        })
    })();
    if result.is_err() {
        for created in created_parents.iter().rev() {
            let _ = fs::remove_dir(created);
        }
    }
    result
}

/// Creates the missing directories of `dir`, and returns them, outermost first.
fn create_parents(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    for (i, created) in missing.iter().enumerate() {
        if let Err(err) = fs::create_dir(created) {
            for earlier in missing[..i].iter().rev() {
                let _ = fs::remove_dir(earlier);
            }
            return Err(err).with_context(|| format!("cannot create {}", created.display()));
        }
    }
    Ok(missing)
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
