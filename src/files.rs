//! Reading the project's files: what a plan compares with, and the inputs commands read.
//! A leaf: it knows paths and text, nothing of opgen's model.

use std::{fs, io::ErrorKind, path::Path};

use anyhow::Context as _;

/// A file's text, or `None` when there is no file.
pub fn read_existing(path: &Path) -> std::io::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        // A file standing where a parent directory should be surfaces when writing.
        Err(err) if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// Reads a file that a plan needs as input, with the path in the error.
pub fn read_to_string(path: &Path) -> anyhow::Result<String> {
    fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Every `.rs` file under `dir` (which is under `root`), in path order so that messages come
/// out the same on every run: its path relative to `root`, with `/` separators, and its text.
pub fn rust_files(root: &Path, dir: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let text = read_to_string(path)?;
        let file = path
            .strip_prefix(root)
            .expect("walkdir yields paths under its root")
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        files.push((file, text));
    }
    Ok(files)
}
