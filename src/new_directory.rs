//! A new project's directory, built beside where it goes and renamed into place: it appears
//! whole or not at all (`opgen init` into a directory that does not exist yet).

use std::{
    fs,
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
