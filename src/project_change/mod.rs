//! What a change of `PROJECT` that takes something away or changes a project-wide choice does
//! to the files (`delete api`, `delete webhook`, `edit`), planned before anything is written.
//!
//! opgen's own files follow the record: every generated file is rendered again from the
//! project after the change, and one it no longer renders is removed; the manager role and
//! the webhook configurations are rebuilt from the markers of the files as they will be. The
//! user's files are compared with what this opgen scaffolds for them: one that opgen would
//! now remove or write differently is removed or rewritten when it is still exactly what
//! opgen scaffolds for the project before the change, and otherwise it is the user's work,
//! listed, and touched only with `--force` (see [`user_files`]).

mod amendments;
mod license_lines;
mod manifests;
mod outputs;
mod user_files;

use std::path::Path;

pub use user_files::{UserFile, UserFilesChanged};

use crate::{
    apply::{self, Transaction},
    files::read_existing,
    interrupt::Interrupt,
    manifests::{crdgen, crds},
    plan::{Action, FileChange, GENERATED_MARKER, OnConflict, Plan, PlannedFile},
    project::Project,
    scaffold,
    shell::Shell,
};

/// A change of the project at `root` from `before` to `after`.
pub struct ProjectChange<'a> {
    pub root: &'a Path,
    pub before: &'a Project,
    pub after: &'a Project,
}

/// The checked plan of a [`ProjectChange`].
#[derive(Debug)]
pub struct Changes {
    pub plan: Plan,
    /// The user's files that the plan removes or rewrites although they are not what opgen
    /// scaffolds for them: only with `--force`.
    pub forced: Vec<UserFile>,
    /// What the user must change in their own files, said once the change is written.
    pub notes: Vec<String>,
    /// The CRDs change (a version or a conversion went): crdgen builds them once the rest is
    /// written.
    rebuilds_crds: bool,
}

impl ProjectChange<'_> {
    /// Plans the change; refuses, naming them, to remove or rewrite files the user changed
    /// unless `force`.
    pub fn plan(self, force: bool, interrupt: &Interrupt) -> anyhow::Result<Changes> {
        let ProjectChange {
            root,
            before,
            after,
        } = self;
        let amendments = amendments::plan(root, before, after)?;
        let mut forced = Vec::new();
        let mut writes: Vec<PlannedFile> = scaffold::generated_files(after, root, interrupt)?;
        let mut removals: Vec<String> = Vec::new();
        for file in scaffold::generated_files(before, root, interrupt)? {
            if writes.iter().any(|w| w.path == file.path) {
                continue;
            }
            match read_existing(&root.join(&file.path))? {
                None => {}
                Some(text) if text.contains(GENERATED_MARKER) => removals.push(file.path),
                Some(_) => {
                    forced.push(UserFile::taken_over(&file.path));
                    removals.push(file.path);
                }
            }
        }
        let handled: Vec<&str> = amendments.handled.iter().map(String::as_str).collect();
        let scaffolded = user_files::compare(root, before, after, &handled, interrupt)?;
        writes.extend(scaffolded.writes);
        removals.extend(scaffolded.removals);
        forced.extend(scaffolded.changed);
        writes.extend(amendments.files);
        for (file, user_file) in amendments.forced {
            writes.push(file);
            forced.push(user_file);
        }
        for file in amendments.retired {
            if root.join(&file.path).is_file() {
                removals.push(file.path.clone());
                forced.push(file);
            }
        }
        removals.extend(outputs::retired(root, before, after));
        if !forced.is_empty() && !force {
            return Err(UserFilesChanged { files: forced }.into());
        }
        let manifests = manifests::from_markers(root, before, after, &writes, &mut removals)?;
        writes.extend(manifests);
        removals.sort();
        removals.dedup();
        writes.retain(|file| !removals.contains(&file.path));
        let on_conflict = if force {
            OnConflict::Overwrite
        } else {
            OnConflict::Refuse
        };
        let mut plan = Plan::new(root, writes, on_conflict)?;
        for path in removals {
            if let Some(old) = read_existing(&root.join(&path))? {
                plan.delete(path, old);
            }
        }
        Ok(Changes {
            plan,
            forced,
            notes: amendments.notes,
            rebuilds_crds: outputs::crds_change(before, after),
        })
    }
}

impl Changes {
    /// Prints the plan (`dry_run`) or carries it out in one transaction with the CRDs of
    /// `after` that crdgen then builds, restoring every file if anything fails or a signal
    /// arrives.
    pub fn write(
        &self,
        after: &Project,
        dry_run: bool,
        shell: &mut Shell,
        interrupt: &Interrupt,
    ) -> anyhow::Result<()> {
        for file in &self.forced {
            let removed = self
                .plan
                .changes
                .iter()
                .any(|change| change.path == file.path && change.action == Action::Delete);
            let verb = if removed { "removes" } else { "rewrites" };
            shell.warn(&format!("{} {}: --force {verb} it", file.path, file.why));
        }
        if dry_run {
            apply::print_changes(&self.plan, shell);
            if self.rebuilds_crds {
                shell.note(
                    "then crdgen builds the CRDs of config/crd/bases from the api crate as it will be (not shown: `opgen generate manifests --dry-run` shows them once the rest is written)",
                );
            }
            shell.note("dry run: nothing was written");
            return interrupt.check().map_err(Into::into);
        }
        let root = self.plan.root.as_path();
        // `PROJECT` last, after the CRDs too: it is the record of what the others hold.
        let (record, files): (Vec<FileChange>, Vec<FileChange>) = self
            .plan
            .changes
            .iter()
            .cloned()
            .partition(|change| change.path == crate::project::FILE_NAME);
        let part = |changes| Plan {
            root: root.to_path_buf(),
            changes,
        };
        let mut transaction = Transaction::new(interrupt.clone());
        transaction.apply(&part(files), shell)?;
        if self.rebuilds_crds && after.kinds().next().is_some() {
            let crds = crdgen::run(root, after, shell, interrupt)
                .map_err(anyhow::Error::from)
                .and_then(|output| Ok(crds::crd_files(&output, after)?))
                .and_then(|files| Ok(Plan::new(root, files, OnConflict::Refuse)?));
            match crds {
                Ok(plan) => transaction.apply(&plan, shell)?,
                Err(err) => return Err(transaction.undo(err)),
            }
        }
        transaction.apply(&part(record), shell)?;
        transaction.commit()
    }
}
