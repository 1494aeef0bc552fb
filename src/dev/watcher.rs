//! Changes to the project's sources, found by comparing snapshots of their modification times
//! and sizes. A project has a few hundred source files, so a look every half second costs
//! little, works on every file system and needs no event crate.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::SystemTime,
};

/// What the manager is built from; `config/` is left out, since `generate manifests` writes it.
const WATCHED: [&str; 5] = ["src", "api", "Cargo.toml", "build.rs", "PROJECT"];

type Snapshot = BTreeMap<PathBuf, (SystemTime, u64)>;

pub struct Watcher {
    root: PathBuf,
    last: Snapshot,
}

impl Watcher {
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            last: snapshot(root),
        }
    }

    /// The files changed, added or removed since the last call, relative to the root.
    pub fn changes(&mut self) -> Vec<PathBuf> {
        let now = snapshot(&self.root);
        let mut changed: Vec<PathBuf> = now
            .iter()
            .filter(|(path, stamp)| self.last.get(*path) != Some(stamp))
            .map(|(path, _)| path.clone())
            .chain(
                self.last
                    .keys()
                    .filter(|path| !now.contains_key(*path))
                    .cloned(),
            )
            .collect();
        changed.sort();
        changed.dedup();
        self.last = now;
        changed
            .into_iter()
            .map(|path| {
                path.strip_prefix(&self.root)
                    .map(Path::to_path_buf)
                    .unwrap_or(path)
            })
            .collect()
    }
}

fn snapshot(root: &Path) -> Snapshot {
    WATCHED
        .iter()
        .flat_map(|entry| {
            walkdir::WalkDir::new(root.join(entry))
                .into_iter()
                // Build output and editors' hidden files are not sources.
                .filter_entry(|e| {
                    let name = e.file_name().to_string_lossy();
                    name != "target" && !name.starts_with('.')
                })
                .filter_map(Result::ok)
        })
        .filter(|e| e.file_type().is_file())
        .filter(|e| !e.file_name().to_string_lossy().ends_with('~'))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((e.into_path(), (meta.modified().ok()?, meta.len())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_a_changed_source_but_not_manifests_or_build_output() {
        let dir = tempfile::tempdir().unwrap();
        for path in ["src/main.rs", "config/rbac/role.yaml", "target/debug/x"] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "a").unwrap();
        }
        let mut watcher = Watcher::new(dir.path());
        assert!(watcher.changes().is_empty());
        std::fs::write(dir.path().join("config/rbac/role.yaml"), "bb").unwrap();
        std::fs::write(dir.path().join("target/debug/x"), "bb").unwrap();
        assert!(watcher.changes().is_empty());
        std::fs::write(dir.path().join("src/main.rs"), "bb").unwrap();
        assert_eq!(watcher.changes(), [PathBuf::from("src/main.rs")]);
        std::fs::remove_file(dir.path().join("src/main.rs")).unwrap();
        assert_eq!(watcher.changes(), [PathBuf::from("src/main.rs")]);
    }
}
