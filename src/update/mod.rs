//! What `opgen update` changes in a project made by an older opgen, planned before anything
//! is written.
//!
//! Generated files are opgen's, so they are rewritten with this opgen's templates (the
//! vendored opgen-runtime among them), `PROJECT` records this release, `Cargo.toml` depends
//! on this release's runtime, and the machinery opgen 0.1.0 generated into the project is
//! removed. Scaffolded files are the user's: they are only compared with what this opgen
//! would scaffold for the project today, for the user to bring over what they want by hand.

pub mod kubernetes;
mod leftovers;
pub mod patch;

use std::path::Path;

use self::kubernetes::Move;
use crate::{
    bundle::kustomize::Renderer,
    helm,
    interrupt::Interrupt,
    model::OpgenVersion,
    plan::{Action, FileChange, OnConflict, Owner, Plan, PlannedFile},
    project::Project,
    scaffold,
};

/// What `update` does to a project, computed before anything is written.
#[derive(Debug)]
pub struct Update {
    /// The generated files, `PROJECT` among them, rewritten with this opgen's templates; a
    /// generated file whose header the user removed is theirs, and kept.
    pub generated: Plan,
    /// The scaffolded files that differ from what this opgen would scaffold today (kept) or
    /// that are missing; never written.
    pub scaffolded: Vec<FileChange>,
    /// False when rustfmt is not installed, so today's Rust files were compared unformatted.
    pub formatted: bool,
    /// Files with opgen's generated header that this opgen does not generate.
    pub leftovers: Vec<String>,
    /// What a move to another Kubernetes release leaves for the user to look at.
    pub kubernetes_notes: Vec<String>,
}

impl Update {
    /// Plans the update of the project at `root`, read from its `PROJECT` as `project`, and
    /// its move to another Kubernetes release when `kubernetes` asks for one.
    pub fn plan(
        root: &Path,
        project: &Project,
        kubernetes: Option<Move>,
        interrupt: &Interrupt,
    ) -> anyhow::Result<Update> {
        let mut updated = project.clone();
        updated.opgen_version = OpgenVersion::running();
        let mut kubernetes_notes = Vec::new();
        if let Some(change) = kubernetes {
            change.check_kinds(project)?;
            updated.kubernetes_version = change.to;
            kubernetes_notes = change.rbac_notes(root, project)?;
        }

        // Refused before anything else is planned: a taken-over file of the retired machinery
        // stops the update.
        let retired = scaffold::retired_runtime::present(root)?;
        let mut files = scaffold::generated_files(&updated, root, interrupt)?;
        files.push(cargo_manifest(root, kubernetes)?);
        if let Some(workflow) = kubernetes.and_then(|change| ci_workflow(root, change)) {
            files.push(workflow?);
        }
        let mut generated = Plan::new(root, files, OnConflict::Keep)?;
        for (path, text) in retired {
            generated.delete(path, text);
        }
        let (today, formatted) = scaffold::scaffolded_files(&updated, root, interrupt)?;
        let scaffolded = Plan::new(root, today, OnConflict::Keep)?
            .changes
            .into_iter()
            .filter(|change| change.action != Action::Unchanged)
            .collect();
        // The runtime's copy is opgen's as a whole: a file of an older release's copy that this
        // release's does not have goes (0.3.0 moved the crate's modules into folders).
        let runtime_dir = format!("{}/", scaffold::vendored_runtime::DIR);
        let (old_runtime, leftovers): (Vec<String>, Vec<String>) =
            leftovers::leftover_generated(root, &generated)?
                .into_iter()
                .partition(|path| path.starts_with(&runtime_dir));
        for path in old_runtime {
            let text = crate::files::read_to_string(&root.join(&path))?;
            generated.delete(path, text);
        }
        Ok(Update {
            generated,
            scaffolded,
            formatted,
            leftovers,
            kubernetes_notes,
        })
    }
}

/// The project's `Cargo.toml` depending on this release's opgen-runtime, and built against
/// the release `kubernetes` moves it to.
fn cargo_manifest(root: &Path, kubernetes: Option<Move>) -> anyhow::Result<PlannedFile> {
    let manifest = crate::files::read_to_string(&root.join("Cargo.toml"))?;
    let mut amended = scaffold::runtime_dependency::with_runtime_dependency(&manifest)?;
    if let Some(change) = kubernetes {
        amended = change.cargo_manifest(&amended)?;
    }
    Ok(PlannedFile::new("Cargo.toml", amended, Owner::Amended))
}

/// The CI workflow fetching the envtest binaries of the release `change` moves to; `None`
/// when the project has no workflow that names its release.
fn ci_workflow(root: &Path, change: Move) -> Option<anyhow::Result<PlannedFile>> {
    let path = root.join(kubernetes::CI_WORKFLOW);
    if !path.is_file() {
        return None;
    }
    match crate::files::read_to_string(&path) {
        Ok(workflow) => change.ci_workflow(&workflow).map(|moved| {
            Ok(PlannedFile::new(
                kubernetes::CI_WORKFLOW,
                moved,
                Owner::Amended,
            ))
        }),
        Err(err) => Some(Err(err)),
    }
}

/// The notes on the user's values.yaml, read once the update is written: the values this
/// opgen's Helm chart has and it lacks, or why they could not be compared. The chart itself
/// is regenerated by `make helm`, which needs the manifests of this opgen first.
pub fn chart_values_notes(root: &Path, project: &Project) -> Vec<String> {
    match helm::project_chart(root, project, &Renderer::from_env()) {
        Ok(chart) => chart.notes,
        Err(err) => vec![format!(
            "{} was not compared with this opgen's chart: {}",
            helm::VALUES_FILE,
            err.to_string().lines().next().unwrap_or_default()
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::{
        plan::{Action, GENERATED_MARKER, PlannedFile},
        project::Scope,
    };

    /// A project on disk as an older opgen left it: every generated and scaffolded file as
    /// this opgen writes them, then `PROJECT` stamped 0.0.1.
    fn older_project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let mut project = Project::for_test("demo", Scope::Cluster);
        project
            .resources
            .push(crate::model::Resource::for_test("db", "v1", "Thing"));
        let (scaffolded, _) =
            scaffold::scaffolded_files(&project, dir.path(), &Interrupt::never()).unwrap();
        project.opgen_version = "0.0.1".parse().unwrap();
        let generated =
            scaffold::generated_files(&project, dir.path(), &Interrupt::never()).unwrap();
        for PlannedFile { path, contents, .. } in scaffolded.into_iter().chain(generated) {
            write(dir.path(), &path, &contents);
        }
        (dir, project)
    }

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn action(plan: &Plan, path: &str) -> Action {
        plan.changes
            .iter()
            .find(|change| change.path == path)
            .unwrap_or_else(|| panic!("{path} is not planned"))
            .action
    }

    #[test]
    fn rewrites_stale_generated_files_and_stamps_project() {
        let (dir, project) = older_project();
        let stale = format!("// {GENERATED_MARKER}\n// stale\n");
        write(dir.path(), "src/controllers/mod.rs", &stale);
        let update = Update::plan(dir.path(), &project, None, &Interrupt::never()).unwrap();
        assert_eq!(action(&update.generated, "PROJECT"), Action::Update);
        assert_eq!(
            action(&update.generated, "src/controllers/mod.rs"),
            Action::Update
        );
        assert_eq!(
            action(&update.generated, "api/src/lib.rs"),
            Action::Unchanged
        );
        let record = update
            .generated
            .changes
            .iter()
            .find(|change| change.path == "PROJECT")
            .unwrap();
        assert!(
            record
                .new
                .contains(&format!("opgenVersion: \"{}\"", OpgenVersion::running())),
            "{}",
            record.new
        );
        assert!(update.scaffolded.is_empty(), "{:?}", update.scaffolded);
    }

    #[test]
    fn removes_the_runtime_of_the_previous_release_and_adds_the_dependency() {
        let (dir, project) = older_project();
        let header = format!("// {GENERATED_MARKER}\n");
        write(dir.path(), "src/runtime/mod.rs", &header);
        write(dir.path(), "tests/integration/envtest.rs", &header);
        let manifest = fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
        let previous: String = manifest
            .lines()
            .filter(|line| !line.contains("opgen-runtime") && !line.starts_with("exclude"))
            .map(|line| format!("{line}\n"))
            .collect();
        write(dir.path(), "Cargo.toml", &previous);

        let update = Update::plan(dir.path(), &project, None, &Interrupt::never()).unwrap();
        assert_eq!(
            action(&update.generated, "src/runtime/mod.rs"),
            Action::Delete
        );
        assert_eq!(
            action(&update.generated, "tests/integration/envtest.rs"),
            Action::Delete
        );
        assert_eq!(action(&update.generated, "Cargo.toml"), Action::Update);
        assert_eq!(
            action(&update.generated, "vendor/opgen-runtime/src/lib.rs"),
            Action::Unchanged
        );
        assert!(update.leftovers.is_empty(), "{:?}", update.leftovers);

        write(dir.path(), "src/runtime/status.rs", "// mine\n");
        let err = Update::plan(dir.path(), &project, None, &Interrupt::never()).unwrap_err();
        assert!(err.to_string().contains("src/runtime/status.rs"), "{err}");
    }

    #[test]
    fn keeps_a_generated_file_without_its_header() {
        let (dir, project) = older_project();
        write(dir.path(), "src/controllers/mod.rs", "// my own wiring\n");
        let update = Update::plan(dir.path(), &project, None, &Interrupt::never()).unwrap();
        assert_eq!(
            action(&update.generated, "src/controllers/mod.rs"),
            Action::Keep
        );
    }

    #[test]
    fn finds_generated_files_this_opgen_no_longer_generates() {
        let (dir, project) = older_project();
        let header = format!("// {GENERATED_MARKER}\n");
        write(dir.path(), "src/runtime/retired.rs", &header);
        write(dir.path(), "target/debug/build/out.rs", &header);
        write(dir.path(), ".git/notes.rs", &header);
        write(dir.path(), "src/mine.rs", &format!("// mine\n{header}"));
        let update = Update::plan(dir.path(), &project, None, &Interrupt::never()).unwrap();
        assert_eq!(update.leftovers, ["src/runtime/retired.rs"]);
    }

    #[test]
    fn removes_the_files_of_an_older_runtime_copy() {
        let (dir, project) = older_project();
        let header = format!("// {GENERATED_MARKER}\n");
        write(dir.path(), "vendor/opgen-runtime/src/reconcile.rs", &header);
        write(dir.path(), "vendor/opgen-runtime/src/mine.rs", "// mine\n");
        let update = Update::plan(dir.path(), &project, None, &Interrupt::never()).unwrap();
        assert_eq!(
            action(&update.generated, "vendor/opgen-runtime/src/reconcile.rs"),
            Action::Delete
        );
        assert!(update.leftovers.is_empty(), "{:?}", update.leftovers);
        assert!(
            update
                .generated
                .changes
                .iter()
                .all(|change| change.path != "vendor/opgen-runtime/src/mine.rs"),
            "a file without opgen's header is not opgen's"
        );
    }

    #[test]
    fn lists_edited_and_missing_scaffolded_files() {
        let (dir, project) = older_project();
        write(dir.path(), "Makefile", "# mine\n");
        fs::remove_file(dir.path().join(".dockerignore")).unwrap();
        let update = Update::plan(dir.path(), &project, None, &Interrupt::never()).unwrap();
        let listed: Vec<(&str, Action)> = update
            .scaffolded
            .iter()
            .map(|change| (change.path.as_str(), change.action))
            .collect();
        assert_eq!(
            listed,
            [
                (".dockerignore", Action::Create),
                ("Makefile", Action::Keep)
            ]
        );
        assert!(update.formatted, "the test machine has rustfmt");
    }
}
