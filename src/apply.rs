//! Carries out a plan: prints it as a diff (`--dry-run`) or writes it atomically, restoring
//! every touched file if any write fails, so a failed command leaves the tree as it was.

use std::{
    fs,
    io::Write as _,
    path::{Path, PathBuf},
};

use anyhow::Context as _;
use similar::TextDiff;

use crate::{
    plan::{Action, FileChange, Plan},
    shell::Shell,
};

/// Writes every change of `plan`; on failure, undoes the ones already made.
pub fn apply(plan: &Plan, shell: &mut Shell) -> anyhow::Result<()> {
    apply_reversibly(plan, shell).map(drop)
}

/// What [`apply_reversibly`] changed, kept so that a later step that fails can put it back.
pub struct Applied {
    journal: Journal,
}

impl Applied {
    /// Restores every file the plan wrote and removes the directories it created.
    pub fn undo(self) {
        self.journal.roll_back();
    }
}

/// [`apply`], returning what it did so that the caller can undo it.
pub fn apply_reversibly(plan: &Plan, shell: &mut Shell) -> anyhow::Result<Applied> {
    let mut journal = Journal::default();
    for change in &plan.changes {
        if let Err(err) = write_change(&plan.root, change, &mut journal) {
            journal.roll_back();
            return Err(err.context("nothing was changed: every file written so far was restored"));
        }
    }
    // Files left as they were are listed by --dry-run only: here they would bury the changes.
    for change in plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Unchanged)
    {
        shell.status(verb(change.action), &change.path);
    }
    Ok(Applied { journal })
}

/// Prints what `apply` would do, and that nothing was written.
pub fn print_dry_run(plan: &Plan, shell: &mut Shell) {
    print_changes(plan, shell);
    shell.note("dry run: nothing was written");
}

/// One line per file of `plan`, and a unified diff for each changed file.
pub fn print_changes(plan: &Plan, shell: &mut Shell) {
    for change in &plan.changes {
        shell.status(verb(change.action), &change.path);
        if let (Action::Update, Some(old)) = (change.action, &change.old) {
            shell.print(&unified_diff(&change.path, old, &change.new));
        }
    }
}

/// A unified diff of one file, with `a/` and `b/` prefixes as git shows them.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

fn verb(action: Action) -> &'static str {
    match action {
        Action::Create => "Creating",
        Action::Update => "Updating",
        Action::Unchanged => "Unchanged",
        Action::Keep => "Skipping",
    }
}

fn write_change(root: &Path, change: &FileChange, journal: &mut Journal) -> anyhow::Result<()> {
    if !change.writes() {
        return Ok(());
    }
    let path = root.join(&change.path);
    let parent = path.parent().expect("planned paths are inside the root");
    journal.create_dirs(parent)?;
    journal.record(&path, change.old.clone());
    write_atomically(&path, &change.new).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes through a temporary file in the same directory and renames it into place, so a
/// crash never leaves a half-written file.
fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let dir = path.parent().expect("planned paths are inside the root");
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    // A temporary file is private (0600); the file it becomes keeps the permissions of the
    // one it replaces, or gets the usual ones for a new source file.
    let permissions = match fs::metadata(path) {
        Ok(existing) => Some(existing.permissions()),
        Err(_) => new_file_permissions(),
    };
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.write_all(contents.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

#[cfg(unix)]
fn new_file_permissions() -> Option<fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(fs::Permissions::from_mode(0o644))
}

/// Elsewhere a temporary file is not private, and its permissions are fine as they are.
#[cfg(not(unix))]
fn new_file_permissions() -> Option<fs::Permissions> {
    None
}

/// What was changed so far, to undo it in reverse order.
#[derive(Default)]
struct Journal {
    files: Vec<(PathBuf, Option<String>)>,
    dirs: Vec<PathBuf>,
}

impl Journal {
    fn record(&mut self, path: &Path, old: Option<String>) {
        self.files.push((path.to_path_buf(), old));
    }

    /// Creates the missing directories of `dir`, remembering each for the roll-back.
    fn create_dirs(&mut self, dir: &Path) -> anyhow::Result<()> {
        let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
        for dir in missing.into_iter().rev() {
            fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            self.dirs.push(dir.to_path_buf());
        }
        Ok(())
    }

    fn roll_back(self) {
        // Best effort: a restore that fails cannot be reported better than the first error.
        for (path, old) in self.files.into_iter().rev() {
            let _ = match old {
                Some(contents) => fs::write(&path, contents),
                None => fs::remove_file(&path),
            };
        }
        for dir in self.dirs.into_iter().rev() {
            let _ = fs::remove_dir(&dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{OnConflict, Owner, PlannedFile};

    #[test]
    fn writes_new_and_changed_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("g.txt"),
            format!("{}\nold", crate::plan::GENERATED_MARKER),
        )
        .unwrap();
        let plan = Plan::new(
            dir.path(),
            vec![
                PlannedFile::new("a/b/c.txt", "c", Owner::Scaffolded),
                PlannedFile::new("g.txt", "new", Owner::Generated),
            ],
            OnConflict::Refuse,
        )
        .unwrap();
        apply(&plan, &mut Shell::captured()).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "c"
        );
        assert_eq!(fs::read_to_string(dir.path().join("g.txt")).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join("a/b/c.txt"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[test]
    fn failure_midway_restores_everything() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("m.yaml"), "old").unwrap();
        // A file where a directory must be created makes the last write fail.
        fs::write(dir.path().join("blocker"), "").unwrap();
        let plan = Plan::new(
            dir.path(),
            vec![
                PlannedFile::new("m.yaml", "new", Owner::Manifest),
                PlannedFile::new("new/dir/file", "x", Owner::Scaffolded),
                PlannedFile::new("blocker/file", "x", Owner::Scaffolded),
            ],
            OnConflict::Refuse,
        )
        .unwrap();
        let err = apply(&plan, &mut Shell::captured()).unwrap_err();
        assert!(format!("{err:#}").contains("nothing was changed"));
        assert_eq!(
            fs::read_to_string(dir.path().join("m.yaml")).unwrap(),
            "old"
        );
        assert!(!dir.path().join("new").exists());
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["blocker", "m.yaml"]);
    }

    #[test]
    fn undo_puts_back_what_was_applied() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("lib.rs"), "old").unwrap();
        let plan = Plan::new(
            dir.path(),
            vec![
                PlannedFile::new("lib.rs", "new", Owner::Manifest),
                PlannedFile::new("db/v1/mod.rs", "new", Owner::Manifest),
            ],
            OnConflict::Refuse,
        )
        .unwrap();
        apply_reversibly(&plan, &mut Shell::captured())
            .unwrap()
            .undo();
        assert_eq!(
            fs::read_to_string(dir.path().join("lib.rs")).unwrap(),
            "old"
        );
        assert!(!dir.path().join("db").exists());
    }

    #[test]
    fn diff_shows_changed_lines() {
        let diff = unified_diff("x.txt", "a\nb\n", "a\nc\n");
        assert!(
            diff.contains("--- a/x.txt") && diff.contains("+++ b/x.txt"),
            "{diff}"
        );
        assert!(diff.contains("-b\n+c\n"), "{diff}");
    }
}
