//! The runtime crate, `opgen-runtime`, as a project carries it until the crate is published:
//! its source, embedded in opgen at build time from this repository's `runtime/`, written
//! into the project under [`DIR`] as generated files.
//!
//! The files are read through `runtime-source/`, links to the crate's manifest, README and
//! `src/`: `cargo package` leaves out every folder holding a `Cargo.toml` (another crate), so
//! opgen's published package carries the runtime's source only through links that hold none.

use include_dir::{Dir, include_dir};

use crate::plan::{GENERATED_MARKER, Owner, PlannedFile};

/// Where a project keeps its copy of the crate.
pub const DIR: &str = "vendor/opgen-runtime";

/// The version of the crate, which is opgen's own: a project of opgen X.Y.Z depends on
/// `opgen-runtime = "=X.Y.Z"` (a test checks that the two manifests agree).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

static SOURCE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/runtime-source/src");
const MANIFEST: &str = include_str!("../../runtime-source/manifest.toml");
const README: &str = include_str!("../../runtime-source/README.md");

/// Every file of the crate's copy, each beginning with opgen's generated header in the
/// comment syntax of its kind.
pub fn files() -> Vec<PlannedFile> {
    let mut files = vec![
        generated("Cargo.toml", &format!("# {GENERATED_MARKER}\n"), MANIFEST),
        generated(
            "README.md",
            &format!("<!-- {GENERATED_MARKER} -->\n\n"),
            README,
        ),
    ];
    let rust_header = format!("// {GENERATED_MARKER}\n\n");
    let mut sources: Vec<_> = SOURCE.files().collect();
    sources.sort_by_key(|file| file.path());
    for file in sources {
        let text = file
            .contents_utf8()
            .expect("the runtime's sources are UTF-8 (checked by tests)");
        let path = format!("src/{}", file.path().to_string_lossy());
        files.push(generated(&path, &rust_header, text));
    }
    files
}

fn generated(path: &str, header: &str, text: &str) -> PlannedFile {
    PlannedFile::new(
        format!("{DIR}/{path}"),
        format!("{header}{text}"),
        Owner::Generated,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_holds_the_whole_crate_with_headers() {
        let files = files();
        let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        assert!(paths.contains(&"vendor/opgen-runtime/Cargo.toml"));
        assert!(paths.contains(&"vendor/opgen-runtime/src/lib.rs"));
        assert!(paths.contains(&"vendor/opgen-runtime/src/envtest.rs"));
        assert!(
            files.iter().all(|file| {
                let first = file.contents.lines().next().unwrap_or_default();
                first.contains(GENERATED_MARKER)
            }),
            "every file says it is opgen's"
        );
    }

    #[test]
    fn the_crate_has_opgens_version() {
        let version = MANIFEST
            .lines()
            .find_map(|line| line.strip_prefix("version = "))
            .expect("the runtime's manifest has a version");
        assert_eq!(version, format!("\"{VERSION}\""));
    }
}
