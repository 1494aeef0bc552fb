//! `opgen generate manifests`: rebuilds the CRDs from the api crate, the manager role from
//! the controllers' `+opgen:rbac` markers and the webhook configurations from the webhook
//! files' `+opgen:webhook` markers, together with the generated files that list the CRDs, so
//! that `config/` always matches the Rust sources.

use std::{path::Path, process::ExitCode};

use crate::{
    apply::Transaction,
    cli::ManifestsArgs,
    interrupt::Interrupt,
    manifests::{self, crdgen, crds, markers},
    plan::{OnConflict, Plan, PlannedFile},
    project::Project,
    scaffold,
    shell::Shell,
};

/// What the command does with the files it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Write them.
    Write,
    /// Print what would change (`--dry-run`).
    DryRun,
    /// Fail if anything would change (`--check`).
    Check,
}

pub fn run(args: ManifestsArgs, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let (root, _lock, project) = super::find_project(shell)?;
    let mode = match (args.check, args.dry_run) {
        (true, _) => Mode::Check,
        (false, true) => Mode::DryRun,
        (false, false) => Mode::Write,
    };
    let interrupt = Interrupt::catch_signals()?;
    generate(&root, &project, mode, shell, &interrupt)
}

fn generate(
    root: &Path,
    project: &Project,
    mode: Mode,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<ExitCode> {
    // The markers are read in an instant and the build may take minutes: fail fast.
    let rules = markers::read_controllers(root, project)?;
    let webhooks = markers::webhook::read_webhooks(root)?;

    // crdgen is built from the api crate as it is on disk, but part of that crate (its module
    // tree and `all_crds()`) is generated from PROJECT. When those files are out of date
    // (PROJECT edited by hand, or a newer opgen), the CRDs must be built from the new ones:
    // they are written first, in the transaction that writes the manifests, so that a failed
    // build or a signal puts them back.
    let (api_files, other_files): (Vec<PlannedFile>, Vec<PlannedFile>) =
        scaffold::generated_files(project, root, interrupt)?
            .into_iter()
            .partition(|file| file.path.starts_with("api/"));
    let api_plan = Plan::new(root, api_files.clone(), OnConflict::Refuse)?;
    let api_stale = !api_plan.is_noop();
    let mut files = vec![manifests::role_file(&rules, project)];
    if project.resources.iter().any(|r| r.webhooks.is_some()) {
        files.push(manifests::webhooks::manifests_file(project, &webhooks));
        files.push(manifests::webhooks::dev_file(project, &webhooks));
    }
    files.extend(other_files);
    if mode == Mode::Write {
        let mut transaction = Transaction::new(interrupt.clone());
        if api_stale {
            transaction.apply(&api_plan, shell)?;
        }
        let plan = match plan_manifests(root, project, files, mode, api_stale, shell, interrupt) {
            Ok(plan) => plan,
            Err(err) => return Err(transaction.undo(err)),
        };
        if plan.is_noop() && !api_stale {
            shell.note("manifests are up to date; nothing changed");
        } else {
            transaction.apply(&plan, shell)?;
        }
        transaction.commit()?;
        return Ok(ExitCode::SUCCESS);
    }
    files.extend(api_files);
    let plan = plan_manifests(root, project, files, mode, api_stale, shell, interrupt)?;
    match mode {
        Mode::Check => super::check(
            &plan,
            "manifests are",
            "run `opgen generate manifests` (or `make manifests`)",
            shell,
        ),
        Mode::DryRun | Mode::Write => {
            super::write(&plan, true, shell, interrupt)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Builds the CRDs and plans them with `files`. `api_stale` tells that the api crate's
/// generated files were out of date (and, when writing, are written already).
fn plan_manifests(
    root: &Path,
    project: &Project,
    files: Vec<PlannedFile>,
    mode: Mode,
    api_stale: bool,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<Plan> {
    let mut all = if project.kinds().next().is_none() {
        // Nothing to build: the crdgen of a project without kinds prints nothing.
        Vec::new()
    } else if api_stale && mode != Mode::Write {
        shell.note(
            "the api crate's generated files are out of date with PROJECT, and the CRDs can only be built once they are written: the CRDs were not compared",
        );
        Vec::new()
    } else {
        let output = crdgen::run(root, project, shell, interrupt)?;
        crds::crd_files(&output, project)?
    };
    all.extend(files);
    for path in crds::stale_files(root, project)? {
        shell.note(&format!(
            "{path} is the CRD of no kind in PROJECT; opgen leaves it alone: delete it if it is left over"
        ));
    }
    Ok(Plan::new(root, all, OnConflict::Refuse)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::{project::Scope, shell::Buffer};

    fn project(scope: Scope) -> Project {
        Project::for_test("demo", scope)
    }

    fn run_in(
        root: &Path,
        project: &Project,
        mode: Mode,
    ) -> (anyhow::Result<ExitCode>, String, String) {
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut shell = Shell::to_buffers(out.clone(), err.clone());
        let result = generate(root, project, mode, &mut shell, &Interrupt::never());
        (result, out.text(), err.text())
    }

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn role(root: &Path) -> String {
        fs::read_to_string(root.join(manifests::ROLE_FILE)).unwrap()
    }

    /// A project without kinds, so that no crdgen is built.
    #[test]
    fn writes_checks_and_reports_up_to_date() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let project = project(Scope::Cluster);
        write(
            root,
            "src/controllers/apps.rs",
            "// +opgen:rbac:groups=apps,resources=deployments,verbs=get;list\n",
        );

        let (result, out, err) = run_in(root, &project, Mode::Check);
        let message = result.unwrap_err().to_string();
        assert!(
            message.starts_with("manifests are out of date: run `opgen generate manifests`"),
            "{message}"
        );
        assert!(out.contains("+++ b/config/rbac/role.yaml"), "{out}");
        assert!(err.contains("Missing config/rbac/role.yaml"), "{err}");
        assert!(
            !root.join(manifests::ROLE_FILE).exists(),
            "--check writes nothing"
        );

        let (result, _, _) = run_in(root, &project, Mode::DryRun);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(
            !root.join(manifests::ROLE_FILE).exists(),
            "--dry-run writes nothing"
        );

        let (result, _, _) = run_in(root, &project, Mode::Write);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(role(root).contains("- deployments"), "{}", role(root));

        let (result, _, err) = run_in(root, &project, Mode::Write);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(
            err.contains("manifests are up to date; nothing changed"),
            "{err}"
        );
        let (result, out, err) = run_in(root, &project, Mode::Check);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(err.contains("manifests are up to date"), "{err}");
        assert_eq!(out, "");

        write(
            root,
            "src/controllers/apps.rs",
            "// +opgen:rbac:groups=apps,resources=deployments,verbs=get;list;watch\n",
        );
        let (result, out, err) = run_in(root, &project, Mode::Check);
        assert!(result.is_err());
        assert!(out.contains("+  - watch"), "{out}");
        assert!(err.contains("Outdated config/rbac/role.yaml"), "{err}");
    }

    #[test]
    fn bad_marker_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "src/controllers/apps.rs",
            "\n// +opgen:rbac:groups=apps,resources=deployments,verb=get\n",
        );
        let (result, _, _) = run_in(dir.path(), &project(Scope::Cluster), Mode::Write);
        let message = result.unwrap_err().to_string();
        assert!(
            message.starts_with("src/controllers/apps.rs:2: unknown key `verb`"),
            "{message}"
        );
        assert!(!dir.path().join("config").exists());
    }

    /// PROJECT lists a kind whose generated api files do not exist yet.
    fn project_with_a_kind() -> Project {
        let mut project = project(Scope::Cluster);
        project
            .resources
            .push(crate::model::Resource::for_test("db", "v1", "MySQLCluster"));
        project
    }

    #[test]
    fn stale_api_crate_is_reported_without_building() {
        let dir = tempfile::tempdir().unwrap();
        let project = project_with_a_kind();
        let (result, _, err) = run_in(dir.path(), &project, Mode::Check);
        assert!(result.is_err());
        assert!(err.contains("the CRDs were not compared"), "{err}");
        assert!(err.contains("Missing api/src/lib.rs"), "{err}");
        let (result, _, _) = run_in(dir.path(), &project, Mode::DryRun);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(!dir.path().join("api").exists());
    }

    #[test]
    fn failed_build_puts_the_api_crate_back() {
        // No Cargo.toml: the build fails (or cargo is missing); either way nothing may stay.
        let dir = tempfile::tempdir().unwrap();
        let (result, _, err) = run_in(dir.path(), &project_with_a_kind(), Mode::Write);
        assert!(err.contains("Creating api/src/lib.rs"), "{err}");
        let message = result.unwrap_err().to_string();
        assert!(message.contains("nothing was changed"), "{message}");
        assert!(!dir.path().join("api").exists());
        assert!(!dir.path().join("config").exists());
    }
}
