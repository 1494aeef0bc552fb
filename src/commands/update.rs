//! `opgen update`: brings a project made by an older opgen up to this one.
//!
//! Generated files are opgen's, so they are rewritten with this opgen's templates, and
//! `PROJECT` records this release. Scaffolded files are the user's: they are only compared
//! with what this opgen would scaffold for the project today, and the ones that differ are
//! listed (with `--diff`, shown) for the user to bring over what they want by hand.

use std::{collections::BTreeSet, fs, io::Read as _, path::Path};

use anyhow::Context as _;

use crate::{
    apply,
    cli::UpdateArgs,
    interrupt::Interrupt,
    model::OpgenVersion,
    plan::{Action, FileChange, GENERATED_MARKER, OnConflict, Plan},
    project::Project,
    scaffold,
    shell::Shell,
};

pub fn run(args: UpdateArgs, shell: &mut Shell) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (root, _lock, project) = Project::open(&cwd)?;
    let overrides = crate::overrides::install(&root)?;
    let interrupt = Interrupt::catch_signals()?;
    let update = plan_update(&root, &project, &interrupt)?;

    if args.dry_run {
        apply::print_changes(&update.generated, shell);
    } else {
        apply::apply(&update.generated, shell, &interrupt)?;
    }
    report_generated(&update, shell);
    report_scaffolded(&update, args.diff, shell);
    if let Some(stale) = crate::overrides::stale_report(&overrides, args.diff) {
        shell.warn(&stale);
    }
    if args.dry_run {
        shell.note("dry run: nothing was written");
    } else {
        shell.hint(&next_steps(
            &project.opgen_version,
            update.generated.is_noop(),
            root.join(crate::helm::VALUES_FILE).is_file(),
        ));
    }
    Ok(())
}

/// What `update` does to a project, computed before anything is written.
#[derive(Debug)]
struct Update {
    /// The generated files, `PROJECT` among them, rewritten with this opgen's templates; a
    /// generated file whose header the user removed is theirs, and kept.
    generated: Plan,
    /// The scaffolded files that differ from what this opgen would scaffold today (kept) or
    /// that are missing; never written.
    scaffolded: Vec<FileChange>,
    /// False when rustfmt is not installed, so today's Rust files were compared unformatted.
    formatted: bool,
    /// Files with opgen's generated header that this opgen does not generate.
    leftovers: Vec<String>,
}

/// Plans the update of the project at `root`, read from its `PROJECT` as `project`.
fn plan_update(root: &Path, project: &Project, interrupt: &Interrupt) -> anyhow::Result<Update> {
    let mut updated = project.clone();
    updated.opgen_version = OpgenVersion::running();

    let generated = Plan::new(
        root,
        scaffold::generated_files(&updated, root, interrupt)?,
        OnConflict::Keep,
    )?;
    let (today, formatted) = scaffold::scaffolded_files(&updated, root, interrupt)?;
    let scaffolded = Plan::new(root, today, OnConflict::Keep)?
        .changes
        .into_iter()
        .filter(|change| change.action != Action::Unchanged)
        .collect();
    let leftovers = leftover_generated(root, &generated)?;
    Ok(Update {
        generated,
        scaffolded,
        formatted,
        leftovers,
    })
}

/// The files under `root` whose first line is opgen's generated header but that `generated`
/// does not write: an older release generated them, and this one generates nothing there.
/// Build output and hidden directories (`.git`) are not searched.
fn leftover_generated(root: &Path, generated: &Plan) -> anyhow::Result<Vec<String>> {
    let known: BTreeSet<&str> = generated.changes.iter().map(|c| c.path.as_str()).collect();
    let searched = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            entry.depth() == 0
                || !entry.file_type().is_dir()
                || !(name == "target" || name.starts_with('.'))
        });
    let mut leftovers = Vec::new();
    for entry in searched {
        let entry = entry.with_context(|| format!("cannot search {}", root.display()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .strip_prefix(root)
            .expect("walkdir yields paths under its root")
            .to_string_lossy()
            .replace('\\', "/");
        if !known.contains(path.as_str()) && starts_with_header(entry.path())? {
            leftovers.push(path);
        }
    }
    Ok(leftovers)
}

/// Whether the first line of the file at `path` holds opgen's generated header.
fn starts_with_header(path: &Path) -> anyhow::Result<bool> {
    let mut start = Vec::with_capacity(128);
    fs::File::open(path)
        .and_then(|file| file.take(128).read_to_end(&mut start))
        .with_context(|| format!("cannot read {}", path.display()))?;
    let start = String::from_utf8_lossy(&start);
    Ok(start
        .lines()
        .next()
        .unwrap_or_default()
        .contains(GENERATED_MARKER))
}

/// Names the generated files left alone because their header is gone, and the files with a
/// header that this opgen no longer generates.
fn report_generated(update: &Update, shell: &mut Shell) {
    for change in update
        .generated
        .changes
        .iter()
        .filter(|change| change.action == Action::Keep)
    {
        shell.note(&format!(
            "{} lost its `{GENERATED_MARKER}` header, so it is yours and was left as it is; put the header back to let opgen rewrite it",
            change.path
        ));
    }
    for path in &update.leftovers {
        shell.note(&format!(
            "{path} carries opgen's generated header, but opgen {} does not generate it (an older release did): delete it if nothing uses it any more",
            OpgenVersion::running()
        ));
    }
}

/// Lists the scaffolded files that differ from today's scaffold, and with `diff` prints how.
fn report_scaffolded(update: &Update, diff: bool, shell: &mut Shell) {
    for change in &update.scaffolded {
        let (verb, old) = match &change.old {
            Some(old) => ("Differs", old.as_str()),
            None => ("Missing", ""),
        };
        shell.status(verb, &change.path);
        if diff {
            shell.print(&apply::unified_diff(&change.path, old, &change.new));
        }
    }
    if update.scaffolded.is_empty() {
        return;
    }
    let count = update.scaffolded.len();
    let (files, differ) = if count == 1 {
        ("file", "differs")
    } else {
        ("files", "differ")
    };
    let how = if diff {
        "the diffs printed show how (yours on the `-` side)"
    } else {
        "see how with `opgen update --diff`"
    };
    shell.note(&format!(
        "{count} scaffolded {files} {differ} from what opgen {} would scaffold for this project today. Scaffolded files are yours, so update leaves them alone: {how}, and bring over by hand what you want",
        OpgenVersion::running()
    ));
    if !update.formatted {
        shell.note(
            "rustfmt was not found, so today's Rust files were compared unformatted: Rust files may be listed for their layout alone",
        );
    }
}

/// `has_chart`: the project has a Helm chart, whose templates follow the manifests and whose
/// values.yaml (the user's) may lack values of this opgen's chart.
fn next_steps(from: &OpgenVersion, unchanged: bool, has_chart: bool) -> String {
    let running = OpgenVersion::running();
    if unchanged {
        return format!(
            "\nThe project's generated files are those of opgen {running} already; nothing changed.\n"
        );
    }
    let updated = if *from == running {
        format!(
            "The project was on opgen {running} already; its generated files that differed from this opgen's were rewritten."
        )
    } else {
        format!("Updated the project from opgen {from} to {running}.")
    };
    let chart = if has_chart {
        "  make helm        # regenerate dist/chart; it names values your values.yaml lacks\n"
    } else {
        ""
    };
    format!(
        "\n{updated} Next steps:\n  make manifests   # rebuild the CRDs and the role with this opgen\n{chart}  make test\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::{plan::PlannedFile, project::Scope};

    #[test]
    fn next_steps_regenerate_a_chart_the_project_has() {
        let older: OpgenVersion = "0.0.1".parse().unwrap();
        let with_chart = next_steps(&older, false, true);
        assert!(
            with_chart.contains("  make helm        # regenerate dist/chart; it names values your values.yaml lacks\n  make test\n"),
            "{with_chart}"
        );
        assert!(!next_steps(&older, false, false).contains("make helm"));
    }

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
        let update = plan_update(dir.path(), &project, &Interrupt::never()).unwrap();
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
    fn keeps_a_generated_file_without_its_header() {
        let (dir, project) = older_project();
        write(dir.path(), "src/controllers/mod.rs", "// my own wiring\n");
        let update = plan_update(dir.path(), &project, &Interrupt::never()).unwrap();
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
        let update = plan_update(dir.path(), &project, &Interrupt::never()).unwrap();
        assert_eq!(update.leftovers, ["src/runtime/retired.rs"]);
    }

    #[test]
    fn lists_edited_and_missing_scaffolded_files() {
        let (dir, project) = older_project();
        write(dir.path(), "Makefile", "# mine\n");
        fs::remove_file(dir.path().join(".dockerignore")).unwrap();
        let update = plan_update(dir.path(), &project, &Interrupt::never()).unwrap();
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
