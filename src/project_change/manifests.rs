//! The manifests that follow from the markers (the manager role, the webhook configurations
//! and their development overlay), built from the source files as the change leaves them, so
//! that they are part of the plan (and of `--dry-run`) before anything is written.

use std::path::Path;

use crate::{
    files::rust_files,
    manifests::{
        self,
        markers::{self, rbac, webhook::WEBHOOKS_DIR},
        webhooks,
    },
    plan::PlannedFile,
    project::Project,
};

/// The manifests of `after` from the markers of the `.rs` files under `root`, with `writes`
/// written and `removals` removed; and the removal of the webhook manifests when the change
/// takes the last webhook away.
pub fn from_markers(
    root: &Path,
    before: &Project,
    after: &Project,
    writes: &[PlannedFile],
    removals: &mut Vec<String>,
) -> anyhow::Result<Vec<PlannedFile>> {
    let controllers = sources(root, &rbac::SOURCE_DIRS, writes, removals)?;
    let mut files = vec![manifests::role_file(
        &markers::rbac::rules_of(&controllers, after)?,
        after,
    )];
    if has_webhooks(after) {
        let found =
            markers::webhook::webhooks_of(&sources(root, &[WEBHOOKS_DIR], writes, removals)?)?;
        files.push(webhooks::manifests_file(after, &found));
        files.push(webhooks::dev_file(after, &found));
    } else if has_webhooks(before) {
        for path in [webhooks::MANIFESTS_FILE, webhooks::DEV_FILE] {
            if root.join(path).is_file() {
                removals.push(path.to_owned());
            }
        }
    }
    Ok(files)
}

fn has_webhooks(project: &Project) -> bool {
    project.resources.iter().any(|r| r.webhooks.is_some())
}

/// The `.rs` files under `dirs` as the change leaves them, in path order.
fn sources(
    root: &Path,
    dirs: &[&str],
    writes: &[PlannedFile],
    removals: &[String],
) -> anyhow::Result<Vec<(String, String)>> {
    let under = |path: &str| {
        path.ends_with(".rs") && dirs.iter().any(|dir| path.starts_with(&format!("{dir}/")))
    };
    let mut files = Vec::new();
    for dir in dirs {
        let dir = root.join(dir);
        if dir.exists() {
            files.extend(rust_files(root, &dir)?);
        }
    }
    files.retain(|(path, _)| !removals.contains(path));
    for file in writes.iter().filter(|file| under(&file.path)) {
        match files.iter_mut().find(|(path, _)| *path == file.path) {
            Some((_, text)) => text.clone_from(&file.contents),
            None => files.push((file.path.clone(), file.contents.clone())),
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}
