//! `opgen generate manifests`: rebuilds the CRDs from the api crate, the manager role from
//! the controllers' `+opgen:rbac` markers and the webhook configurations from the webhook
//! files' `+opgen:webhook` markers, together with the generated files that list the CRDs, so
//! that `config/` always matches the Rust sources.

use std::{path::Path, process::ExitCode};

use crate::{
    apply::Transaction, cli::ManifestsArgs, interrupt::Interrupt, manifests, plan::Output,
    project::Project, scaffold, shell::Shell,
};

pub fn run(args: ManifestsArgs, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let (root, _lock, project) = super::find_project(shell)?;
    let interrupt = Interrupt::catch_signals()?;
    generate(&root, &project, args.output.output(), shell, &interrupt)
}

fn generate(
    root: &Path,
    project: &Project,
    output: Output,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> anyhow::Result<ExitCode> {
    let generated = scaffold::generated_files(project, root, interrupt)?;
    let mut transaction = Transaction::new(interrupt.clone());
    let plan = manifests::plan(
        root,
        project,
        generated,
        output,
        &mut transaction,
        shell,
        interrupt,
    )?;
    super::finish(
        &plan,
        output,
        (
            "manifests are",
            "run `opgen generate manifests` (or `make manifests`)",
        ),
        transaction,
        shell,
    )
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
        output: Output,
    ) -> (anyhow::Result<ExitCode>, String, String) {
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut shell = Shell::to_buffers(out.clone(), err.clone());
        let result = generate(root, project, output, &mut shell, &Interrupt::never());
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

        let (result, out, err) = run_in(root, &project, Output::Check);
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

        let (result, _, _) = run_in(root, &project, Output::DryRun);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(
            !root.join(manifests::ROLE_FILE).exists(),
            "--dry-run writes nothing"
        );

        let (result, _, _) = run_in(root, &project, Output::Write);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(role(root).contains("- deployments"), "{}", role(root));

        let (result, _, err) = run_in(root, &project, Output::Write);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(
            err.contains("manifests are up to date; nothing changed"),
            "{err}"
        );
        let (result, out, err) = run_in(root, &project, Output::Check);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(err.contains("manifests are up to date"), "{err}");
        assert_eq!(out, "");

        write(
            root,
            "src/controllers/apps.rs",
            "// +opgen:rbac:groups=apps,resources=deployments,verbs=get;list;watch\n",
        );
        let (result, out, err) = run_in(root, &project, Output::Check);
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
        let (result, _, _) = run_in(dir.path(), &project(Scope::Cluster), Output::Write);
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
        let (result, _, err) = run_in(dir.path(), &project, Output::Check);
        assert!(result.is_err());
        assert!(err.contains("the CRDs were not compared"), "{err}");
        assert!(err.contains("Missing api/src/lib.rs"), "{err}");
        let (result, _, _) = run_in(dir.path(), &project, Output::DryRun);
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        assert!(!dir.path().join("api").exists());
    }

    #[test]
    fn failed_build_puts_the_api_crate_back() {
        // No Cargo.toml: the build fails (or cargo is missing); either way nothing may stay.
        let dir = tempfile::tempdir().unwrap();
        let (result, _, err) = run_in(dir.path(), &project_with_a_kind(), Output::Write);
        assert!(err.contains("Creating api/src/lib.rs"), "{err}");
        let message = result.unwrap_err().to_string();
        assert!(message.contains("nothing was changed"), "{message}");
        assert!(!dir.path().join("api").exists());
        assert!(!dir.path().join("config").exists());
    }
}
