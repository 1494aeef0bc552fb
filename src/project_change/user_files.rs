//! The user's files in a change of `PROJECT`: what this opgen scaffolds for the project before
//! the change and after it, compared with what is on disk.
//!
//! opgen knows that a scaffolded file is still as it wrote it by rendering it again for the
//! project as it was: equal, the file holds nothing of the user's and follows the change;
//! different, it holds the user's work (or was scaffolded by another release of opgen, whose
//! text this one cannot know) and is listed. No fingerprint is recorded anywhere: the
//! comparison is the one `opgen update` makes, it needs no state that could go stale, and its
//! only error is the safe one, a file listed that the user never touched.

use std::path::Path;

use crate::{
    files::read_existing,
    interrupt::Interrupt,
    plan::{Owner, PlannedFile},
    project::Project,
    scaffold,
};

/// A file of the user's that a change would remove or rewrite, and why it counts as theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFile {
    pub path: String,
    pub why: String,
}

impl UserFile {
    pub fn new(path: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            why: why.into(),
        }
    }

    /// A scaffolded file that is not what opgen scaffolds for it.
    fn changed(path: &str) -> Self {
        Self::new(path, "differs from what opgen scaffolds for it")
    }

    /// A generated file whose header the user removed, which makes it theirs.
    pub fn taken_over(path: &str) -> Self {
        Self::new(path, "no longer carries opgen's generated header")
    }
}

/// The refusal to remove or rewrite the user's files without `--force`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} yours, so opgen will not remove or rewrite {} without --force:\n{}\n\nKeep what you need of {} (commit it, or copy it elsewhere), then pass --force (see what it does first with --dry-run --force)",
    if .files.len() == 1 { "this file is" } else { "these files are" },
    if .files.len() == 1 { "it" } else { "them" },
    .files.iter().map(|f| format!("  {}: {}", f.path, f.why)).collect::<Vec<_>>().join("\n"),
    if .files.len() == 1 { "it" } else { "them" },
)]
pub struct UserFilesChanged {
    pub files: Vec<UserFile>,
}

/// What the change does to the scaffolded files.
#[derive(Debug, Default)]
pub struct Scaffolded {
    /// Files to write: created, or rewritten from what opgen scaffolded before.
    pub writes: Vec<PlannedFile>,
    /// Files to remove.
    pub removals: Vec<String>,
    /// The user's files among those, which only `--force` lets the change touch.
    pub changed: Vec<UserFile>,
}

/// Compares what opgen scaffolds for `before` and for `after` with the files under `root`,
/// leaving out the files of `skip` (which the command amends itself).
pub fn compare(
    root: &Path,
    before: &Project,
    after: &Project,
    skip: &[&str],
    interrupt: &Interrupt,
) -> anyhow::Result<Scaffolded> {
    let old = scaffolded(before, root, interrupt)?;
    let new = scaffolded(after, root, interrupt)?;
    let mut result = Scaffolded::default();
    let mut paths: Vec<&str> = old.iter().chain(&new).map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    for path in paths.into_iter().filter(|path| !skip.contains(path)) {
        let was = old.iter().find(|f| f.path == path);
        let will = new.iter().find(|f| f.path == path);
        if let (Some(was), Some(will)) = (was, will)
            && was.contents == will.contents
        {
            continue;
        }
        let Some(disk) = read_existing(&root.join(path))? else {
            // Removed by the user, or never written: a file that is new is written; one the
            // user removed stays removed.
            if let (None, Some(will)) = (was, will) {
                result.writes.push(will.clone());
            }
            continue;
        };
        if will.is_some_and(|will| will.contents == disk) {
            continue;
        }
        let as_scaffolded = was.is_some_and(|was| was.contents == disk);
        if !as_scaffolded {
            result.changed.push(UserFile::changed(path));
        }
        match will {
            // Written over the file as it is: it holds nothing of the user's, or `--force`
            // was given for it.
            Some(will) => result.writes.push(PlannedFile {
                owner: Owner::Amended,
                ..will.clone()
            }),
            None => result.removals.push(path.to_owned()),
        }
    }
    Ok(result)
}

/// Every scaffolded file of `project` as this opgen writes it: the project's, each kind's, and
/// the webhooks' kustomize files of a project that has webhooks.
fn scaffolded(
    project: &Project,
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<Vec<PlannedFile>> {
    let (mut files, _) = scaffold::scaffolded_files(project, root, interrupt)?;
    if project.resources.iter().any(|r| r.webhooks.is_some()) {
        files.extend(scaffold::webhook_config_files(project)?);
    }
    Ok(files)
}
