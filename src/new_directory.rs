//! A new project's directory, built beside where it goes and renamed into place: it appears
//! whole or not at all (`opgen init` into a directory that does not exist yet).
//!
//! The directory it is built in, `.<name>.opgen-XXXXXX`, is locked while it is built (`flock`,
//! as a project is): an `opgen init` killed by SIGKILL leaves it unlocked, and the next `opgen
//! init` beside it removes it, while one that another init is still building stays.

use std::{
    fs::{self, File},
    path::{Path, PathBuf},
};

use anyhow::Context as _;

use crate::{
    apply,
    interrupt::Interrupt,
    plan::{OnConflict, Plan, PlannedFile},
    shell::Shell,
};

/// Writes a project into a temporary directory next to `dir` and renames it to `dir`, so that
/// `dir` appears complete or not at all, whatever stops the command. Missing parents of `dir`
/// are created, and removed again if the command fails.
pub fn build_beside(
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
    remove_abandoned_builds(parent);
    let result = (|| {
        let prefix = format!(".{name}{BUILD_MARK}");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
        // A temporary directory is private; the project gets what `mkdir` gives (the umask
        // applies to this mode).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o777));
        let temp = builder
            .tempdir_in(parent)
            .with_context(|| format!("cannot create a directory in {}", parent.display()))?;
        let _building =
            lock(temp.path()).with_context(|| format!("cannot lock {}", temp.path().display()))?;
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

/// What the name of a directory being built holds between the project's name and the random
/// part that `tempfile` gives it.
const BUILD_MARK: &str = ".opgen-";
/// The length of that random part.
const RANDOM_LENGTH: usize = 6;

/// Takes the lock of the directory `dir`, held until dropped; an error when another process
/// holds it (or the platform cannot lock a directory).
fn lock(dir: &Path) -> std::io::Result<File> {
    let file = File::open(dir)?;
    file.try_lock().map_err(std::io::Error::from)?;
    Ok(file)
}

/// Removes the directories in `parent` that an `opgen init` was building when it was killed:
/// named `.<name>.opgen-XXXXXX`, and locked by no one.
fn remove_abandoned_builds(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_build = name
            .strip_prefix('.')
            .and_then(|rest| rest.rsplit_once(BUILD_MARK))
            .is_some_and(|(project, random)| {
                !project.is_empty()
                    && random.len() == RANDOM_LENGTH
                    && random.bytes().all(|b| b.is_ascii_alphanumeric())
            });
        // A symbolic link is never followed into: only a real directory is a build.
        if !is_build || !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        if let Ok(_abandoned) = lock(&entry.path()) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
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
