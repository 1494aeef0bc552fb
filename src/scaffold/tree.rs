//! The project's files as a command sees them while planning: the files it is about to write
//! (`pending`: a CRD `create api` stores, the webhook files `create webhook` scaffolds), else
//! what is on disk under `root`. Generated files that follow the user's files (the types of
//! an external CRD, the module of each webhook file) are rendered from it.

use std::path::Path;

use crate::plan::PlannedFile;

pub struct Tree<'a> {
    pub root: &'a Path,
    pub pending: &'a [PlannedFile],
}

impl Tree<'_> {
    /// The text of `path`, planned or on disk.
    pub fn read(&self, path: &str) -> anyhow::Result<String> {
        if let Some(file) = self.pending.iter().find(|f| f.path == path) {
            return Ok(file.contents.clone());
        }
        crate::files::read_to_string(&self.root.join(path))
    }

    /// Whether `path` is planned or on disk.
    pub fn has(&self, path: &str) -> bool {
        self.pending.iter().any(|f| f.path == path) || self.root.join(path).is_file()
    }
}
