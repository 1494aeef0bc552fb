//! Files an older opgen generated that this one generates nothing in place of.

use std::{collections::BTreeSet, fs, io::Read as _, path::Path};

use anyhow::Context as _;

use crate::plan::{GENERATED_MARKER, Plan};

/// The files under `root` whose first line is opgen's generated header but that `generated`
/// does not write: an older release generated them, and this one generates nothing there.
/// Build output and hidden directories (`.git`) are not searched.
pub fn leftover_generated(root: &Path, generated: &Plan) -> anyhow::Result<Vec<String>> {
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
