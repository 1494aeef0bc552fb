//! `// +opgen:` markers: instructions in comments of the generated project's Rust code, in
//! Kubebuilder's syntax with opgen's prefix. One grammar ([`syntax`]) and two readers:
//! [`rbac`] (the manager role, from the controllers and the runtime) and [`webhook`] (the
//! webhook configurations, from the webhook files). Every marker must parse, and an error
//! names its file and line and says what to write instead.

pub mod rbac;
pub mod syntax;
pub mod webhook;

use std::path::Path;

use anyhow::Context as _;

pub use rbac::{CONTROLLERS_DIR, Marker, RUNTIME_DIR, check_scope, parse_source, read_controllers};
pub use syntax::{InvalidMarkers, MarkerError, Place, Problem};

/// Every `.rs` file under `dir` (which is under `root`), in path order so that messages come
/// out the same on every run: its path relative to `root`, with `/` separators, and its text.
pub(crate) fn rust_files(root: &Path, dir: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let text = crate::plan::read_to_string(path)?;
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
