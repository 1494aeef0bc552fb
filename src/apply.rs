//! Carries out a plan: prints it as a diff (`--dry-run`) or writes it atomically. Every
//! write goes into a [`Transaction`]'s journal, so that a failure, or a signal, at any point
//! of a command puts back every file the command wrote, and says exactly which ones it could
//! not put back.
//!
//! A file that is a symbolic link is written through the link: the file it points at is
//! replaced (atomically, from a temporary file beside it) and the link stays. Temporary files
//! are named `.opgen-tmp-*`, a name no other program uses, so that those a killed opgen
//! leaves behind (SIGKILL gives no chance to clean up) are ignored by git and removed by the
//! next command (see [`remove_abandoned_temp_files`]).

use std::{
    fs,
    io::{ErrorKind, Write as _},
    path::{Path, PathBuf},
};

use anyhow::Context as _;
use similar::TextDiff;
use walkdir::WalkDir;

use crate::{
    files::read_existing,
    interrupt::Interrupt,
    plan::{Action, FileChange, Plan},
    shell::{Restored, Shell},
};

/// Writes every change of `plan` in a transaction of its own, committed at once.
pub fn apply(plan: &Plan, shell: &mut Shell, interrupt: &Interrupt) -> anyhow::Result<()> {
    let mut transaction = Transaction::new(interrupt.clone());
    transaction.apply(plan, shell)?;
    transaction.commit()
}

/// The files one command has written so far, and what they held before, so that they can all
/// be put back if the command cannot finish.
pub struct Transaction {
    journal: Journal,
    interrupt: Interrupt,
}

/// How every temporary file opgen writes is named.
pub const TEMP_PREFIX: &str = ".opgen-tmp-";

/// What could not be put back, file by file, when a transaction was undone.
#[derive(Debug, Default)]
pub struct RestoreReport {
    pub failed: Vec<(PathBuf, String)>,
    /// Whether anything had been written at all.
    pub wrote: bool,
}

impl RestoreReport {
    /// The sentence that ends the message of a failed command.
    fn summary(&self) -> String {
        if self.failed.is_empty() {
            return "nothing was changed: every file this command wrote was restored".to_owned();
        }
        let files: Vec<String> = self
            .failed
            .iter()
            .map(|(path, why)| format!("  {}: {why}", path.display()))
            .collect();
        format!(
            "{} of the files this command wrote could not be restored (every other file was):\n{}",
            self.failed.len(),
            files.join("\n")
        )
    }
}

impl Transaction {
    pub fn new(interrupt: Interrupt) -> Self {
        Self {
            journal: Journal::default(),
            interrupt,
        }
    }

    /// Writes every change of `plan`. If one fails, or a signal arrives between two writes,
    /// every file of the transaction (this plan's and earlier ones') is put back, and the
    /// error says so.
    pub fn apply(&mut self, plan: &Plan, shell: &mut Shell) -> anyhow::Result<()> {
        for change in &plan.changes {
            let step = self
                .interrupt
                .check()
                .map_err(anyhow::Error::from)
                .and_then(|()| write_change(&plan.root, change, &mut self.journal));
            if let Err(err) = step {
                return Err(self.undo(err));
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
        Ok(())
    }

    /// Gives up on `error`'s account: puts back every file written so far and returns the
    /// error with what was restored, or what could not be.
    pub fn undo(&mut self, error: anyhow::Error) -> anyhow::Error {
        let report = std::mem::take(&mut self.journal).roll_back();
        if report.wrote {
            error.context(Restored::new(report.summary()))
        } else {
            error
        }
    }

    /// Whether the transaction has written nothing yet.
    pub fn is_empty(&self) -> bool {
        self.journal.is_empty()
    }

    /// Checks for a signal between two steps of a command; on one, undoes the transaction.
    pub fn check_interrupt(&mut self) -> anyhow::Result<()> {
        self.interrupt
            .check()
            .map_err(|interrupted| self.undo(interrupted.into()))
    }

    /// Ends the transaction, keeping what it wrote, unless a signal arrived: then the files
    /// are put back, so that an interrupted command never ends half done.
    pub fn commit(mut self) -> anyhow::Result<()> {
        self.check_interrupt()
    }

    #[cfg(test)]
    fn roll_back(self) -> RestoreReport {
        self.journal.roll_back()
    }
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
        Action::Delete => "Removing",
    }
}

fn write_change(root: &Path, change: &FileChange, journal: &mut Journal) -> anyhow::Result<()> {
    if !change.writes() {
        return Ok(());
    }
    let path = root.join(&change.path);
    check_unchanged(&path, change.old.as_deref())?;
    if change.action == Action::Delete {
        journal.record(&path, change.old.clone(), None);
        fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        remove_empty_parents(root, &path);
        return Ok(());
    }
    let parent = path.parent().expect("planned paths are inside the root");
    journal.create_dirs(parent)?;
    journal.record(&path, change.old.clone(), Some(change.new.clone()));
    write_atomically(&path, &change.new).with_context(|| format!("cannot write {}", path.display()))
}

/// Removes the directories between `path`'s and `root` that the removal of `path` left empty, so
/// that a deleted kind leaves no empty group folders behind. Restoring the file makes its
/// directory again ([`restore`]).
fn remove_empty_parents(root: &Path, path: &Path) {
    for dir in path.ancestors().skip(1) {
        if dir == root || !dir.starts_with(root) || fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// Refuses to replace a file that no longer holds what the plan read from it: another program
/// wrote it while opgen was working, and overwriting would lose that.
fn check_unchanged(path: &Path, read: Option<&str>) -> anyhow::Result<()> {
    let now = read_existing(path).with_context(|| format!("cannot read {}", path.display()))?;
    if now.as_deref() != read {
        anyhow::bail!(
            "{} changed while opgen was working (another program wrote it); opgen stopped rather than overwrite it\n\nRun the command again",
            path.display()
        );
    }
    Ok(())
}

/// Writes through a temporary file in the same directory and renames it into place, so a
/// crash never leaves a half-written file. A symbolic link is written through: the file it
/// points at is the one replaced.
fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let path = &through_links(path)?;
    let dir = path.parent().expect("planned paths are inside the root");
    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)?;
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

/// The file that writing `path` must replace: `path` itself, or the file a symbolic link at
/// `path` points at (through every link of a chain). A link to nothing is refused, since what
/// it should point at is the user's to say.
fn through_links(path: &Path) -> std::io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).map_err(|err| {
            let target = fs::read_link(path).unwrap_or_default();
            std::io::Error::new(
                err.kind(),
                format!(
                    "it is a symbolic link to {}, which cannot be followed ({err}); opgen writes through a link, never over it: point the link at a file, or replace it with one",
                    target.display()
                ),
            )
        }),
        _ => Ok(path.to_path_buf()),
    }
}

/// Removes the temporary files that an opgen stopped by SIGKILL (or a crash) left under
/// `root`, skipping build output and git's directory. Call it only while holding the
/// project's lock: then no other opgen is writing them. What cannot be removed stays, to be
/// tried again by the next command.
pub fn remove_abandoned_temp_files(root: &Path) {
    let entries = WalkDir::new(root)
        .into_iter()
        .filter_entry(|entry| {
            entry.depth() == 0
                || !(entry.file_type().is_dir()
                    && matches!(entry.file_name().to_str(), Some("target" | ".git")))
        })
        .filter_map(Result::ok);
    for entry in entries {
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(TEMP_PREFIX));
        if ours && entry.file_type().is_file() {
            let _ = fs::remove_file(entry.path());
        }
    }
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

/// A file written: where, what it held before (nothing if it was new) and what opgen wrote
/// (nothing if it removed it).
struct Written {
    path: PathBuf,
    old: Option<String>,
    new: Option<String>,
}

/// What was changed so far, to undo it in reverse order.
#[derive(Default)]
struct Journal {
    files: Vec<Written>,
    dirs: Vec<PathBuf>,
}

impl Journal {
    fn is_empty(&self) -> bool {
        self.files.is_empty() && self.dirs.is_empty()
    }

    fn record(&mut self, path: &Path, old: Option<String>, new: Option<String>) {
        self.files.push(Written {
            path: path.to_path_buf(),
            old,
            new,
        });
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

    /// Puts every file back, newest first. A file that no longer holds what opgen wrote was
    /// changed by someone else since: it is left alone and reported, as is any file or
    /// directory that cannot be restored.
    fn roll_back(self) -> RestoreReport {
        let mut report = RestoreReport {
            failed: Vec::new(),
            wrote: !self.files.is_empty() || !self.dirs.is_empty(),
        };
        for written in self.files.into_iter().rev() {
            if let Err(why) = restore(&written) {
                report.failed.push((written.path, why));
            }
        }
        for dir in self.dirs.into_iter().rev() {
            match fs::remove_dir(&dir) {
                Ok(()) => {}
                Err(err) if err.kind() == ErrorKind::NotFound => {}
                Err(err) => report.failed.push((
                    dir,
                    format!(
                        "this directory was created by the command and cannot be removed: {err}"
                    ),
                )),
            }
        }
        report
    }
}

fn restore(written: &Written) -> Result<(), String> {
    let path = &written.path;
    match read_existing(path) {
        Ok(now) if now == written.new => {}
        // Never written (the write itself failed) or already put back.
        Ok(now) if now == written.old => return Ok(()),
        Ok(_) => {
            return Err(
                "changed by another program after opgen wrote it; left as it is".to_owned(),
            );
        }
        Err(err) => return Err(format!("cannot read it: {err}")),
    }
    let result = match &written.old {
        // A removed file's directory may have gone with it.
        Some(contents) => path
            .parent()
            .map_or(Ok(()), fs::create_dir_all)
            .and_then(|()| write_atomically(path, contents)),
        None => fs::remove_file(path),
    };
    result.map_err(|err| format!("cannot restore it: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{OnConflict, Owner, PlannedFile};

    fn plan(root: &Path, files: &[(&str, &str)]) -> Plan {
        Plan::new(
            root,
            files
                .iter()
                .map(|(path, text)| PlannedFile::new(*path, *text, Owner::Manifest))
                .collect(),
            OnConflict::Refuse,
        )
        .unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

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
        apply(&plan, &mut Shell::captured(), &Interrupt::never()).unwrap();
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
        let plan = plan(
            dir.path(),
            &[
                ("m.yaml", "new"),
                ("new/dir/file", "x"),
                ("blocker/file", "x"),
            ],
        );
        let err = apply(&plan, &mut Shell::captured(), &Interrupt::never()).unwrap_err();
        assert!(
            format!("{err:#}").contains("nothing was changed"),
            "{err:#}"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("m.yaml")).unwrap(),
            "old"
        );
        assert_eq!(names(dir.path()), ["blocker", "m.yaml"]);
    }

    #[test]
    fn a_removed_file_comes_back_when_a_later_write_fails() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("retired.rs"), "old").unwrap();
        fs::write(dir.path().join("blocker"), "").unwrap();
        let mut removal = plan(dir.path(), &[("m.yaml", "new")]);
        removal.delete("retired.rs".to_owned(), "old".to_owned());
        apply(&removal, &mut Shell::captured(), &Interrupt::never()).unwrap();
        assert_eq!(names(dir.path()), ["blocker", "m.yaml"]);

        fs::write(dir.path().join("retired.rs"), "old").unwrap();
        let mut failing = plan(dir.path(), &[("blocker/file", "x")]);
        failing.delete("retired.rs".to_owned(), "old".to_owned());
        // Removals come first: the write that fails comes after the removal it undoes.
        assert_eq!(failing.changes[0].action, Action::Delete);
        apply(&failing, &mut Shell::captured(), &Interrupt::never()).unwrap_err();
        assert_eq!(
            fs::read_to_string(dir.path().join("retired.rs")).unwrap(),
            "old"
        );
    }

    #[test]
    fn a_removal_takes_the_folders_it_empties_and_gives_them_back() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src/db/v1")).unwrap();
        fs::write(dir.path().join("src/db/v1/kind.rs"), "old").unwrap();
        fs::write(dir.path().join("src/lib.rs"), "lib").unwrap();
        fs::write(dir.path().join("blocker"), "").unwrap();
        let mut removal = plan(dir.path(), &[("blocker/file", "x")]);
        removal.delete("src/db/v1/kind.rs".to_owned(), "old".to_owned());
        apply(&removal, &mut Shell::captured(), &Interrupt::never()).unwrap_err();
        assert_eq!(
            fs::read_to_string(dir.path().join("src/db/v1/kind.rs")).unwrap(),
            "old"
        );
        let mut removal = plan(dir.path(), &[]);
        removal.delete("src/db/v1/kind.rs".to_owned(), "old".to_owned());
        apply(&removal, &mut Shell::captured(), &Interrupt::never()).unwrap();
        assert_eq!(names(&dir.path().join("src")), ["lib.rs"]);
    }

    #[test]
    fn an_interrupt_between_writes_restores_everything() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a"), "old a").unwrap();
        let first = plan(dir.path(), &[("a", "new a"), ("d/b", "new b")]);
        let mut transaction = Transaction::new(Interrupt::after(4));
        transaction.apply(&first, &mut Shell::captured()).unwrap();
        let second = plan(dir.path(), &[("c", "new c"), ("d/e", "new e")]);
        // The fourth check comes before the second write of the second plan.
        let err = transaction
            .apply(&second, &mut Shell::captured())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "nothing was changed: every file this command wrote was restored"
        );
        assert!(
            err.chain()
                .any(|e| e.to_string() == "interrupted by SIGINT (Ctrl-C)"),
            "{err:#}"
        );
        assert_eq!(fs::read_to_string(dir.path().join("a")).unwrap(), "old a");
        assert_eq!(names(dir.path()), ["a"]);
    }

    #[test]
    fn commit_after_an_interrupt_restores_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut transaction = Transaction::new(Interrupt::after(2));
        transaction
            .apply(&plan(dir.path(), &[("a", "new")]), &mut Shell::captured())
            .unwrap();
        assert!(transaction.commit().is_err());
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_file_changed_behind_opgens_back_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("b"), "read").unwrap();
        let plan = plan(dir.path(), &[("a", "new a"), ("b", "new b")]);
        fs::write(dir.path().join("b"), "changed meanwhile").unwrap();
        let err = apply(&plan, &mut Shell::captured(), &Interrupt::never()).unwrap_err();
        let message = format!("{err:#}");
        assert!(
            message.contains("b changed while opgen was working"),
            "{message}"
        );
        assert!(message.contains("nothing was changed"), "{message}");
        assert_eq!(
            fs::read_to_string(dir.path().join("b")).unwrap(),
            "changed meanwhile"
        );
        assert_eq!(names(dir.path()), ["b"]);
    }

    #[test]
    fn a_failed_restore_names_exactly_the_files_not_restored() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("kept"), "old").unwrap();
        let mut transaction = Transaction::new(Interrupt::never());
        transaction
            .apply(
                &plan(
                    dir.path(),
                    &[("kept", "new"), ("edited", "new"), ("blocked", "new")],
                ),
                &mut Shell::captured(),
            )
            .unwrap();
        // Someone edits one file, and puts a directory where opgen must delete another.
        fs::write(dir.path().join("edited"), "theirs").unwrap();
        fs::remove_file(dir.path().join("blocked")).unwrap();
        fs::create_dir(dir.path().join("blocked")).unwrap();
        fs::write(dir.path().join("blocked/inside"), "").unwrap();
        let report = transaction.roll_back();
        let failed: Vec<String> = report
            .failed
            .iter()
            .map(|(path, _)| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(failed, ["blocked", "edited"]);
        let summary = report.summary();
        assert!(
            summary.starts_with(
                "2 of the files this command wrote could not be restored (every other file was):"
            ),
            "{summary}"
        );
        assert!(
            summary.contains("edited: changed by another program"),
            "{summary}"
        );
        assert_eq!(fs::read_to_string(dir.path().join("kept")).unwrap(), "old");
        assert_eq!(
            fs::read_to_string(dir.path().join("edited")).unwrap(),
            "theirs"
        );
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
