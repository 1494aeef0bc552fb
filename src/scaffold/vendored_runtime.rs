//! The runtime crate, `opgen-runtime`, as a project carries it until the crate is published:
//! its source, embedded in opgen at build time from this repository's `runtime/`, written
//! into the project under [`DIR`] as generated files.
//!
//! The files are read through `runtime-source/`, links to the crate's manifest, README and
//! `src/`: `cargo package` leaves out every folder holding a `Cargo.toml` (another crate), so
//! opgen's published package carries the runtime's source only through links that hold none.
//!
//! The copy holds the library alone: a project never runs the crate's own tests, so the modules
//! declared under `#[cfg(test)]` (the unit tests, their fixtures and the test kinds), their
//! declarations and the manifest's `[dev-dependencies]` are left out.

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

/// Every file of the crate's copy (the library alone, see the module's documentation), each
/// beginning with opgen's generated header in the comment syntax of its kind.
pub fn files() -> Vec<PlannedFile> {
    let mut files = vec![
        generated(
            "Cargo.toml",
            &format!("# {GENERATED_MARKER}\n"),
            &without_dev_dependencies(MANIFEST),
        ),
        generated(
            "README.md",
            &format!("<!-- {GENERATED_MARKER} -->\n\n"),
            README,
        ),
    ];
    let rust_header = format!("// {GENERATED_MARKER}\n\n");
    let mut sources: Vec<(String, &str)> = Vec::new();
    collect(&SOURCE, &mut sources);
    sources.sort();
    let test_only: Vec<String> = sources
        .iter()
        .flat_map(|(path, text)| test_module_files(path, text))
        .collect();
    for (path, text) in &sources {
        if test_only
            .iter()
            .any(|test| path == test || path.starts_with(test))
        {
            continue;
        }
        let library = without_test_modules(text);
        files.push(generated(&format!("src/{path}"), &rust_header, &library));
    }
    files
}

/// Every file under `dir`, by its path below `src/`.
fn collect<'a>(dir: &'a Dir<'a>, into: &mut Vec<(String, &'a str)>) {
    for file in dir.files() {
        let text = file
            .contents_utf8()
            .expect("the runtime's sources are UTF-8 (checked by tests)");
        into.push((file.path().to_string_lossy().into_owned(), text));
    }
    for child in dir.dirs() {
        collect(child, into);
    }
}

/// The names of the modules `text` declares under `#[cfg(test)]`, with the line where each
/// declaration starts.
fn test_declarations(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .enumerate()
        .filter(|(_, pair)| pair[0].trim() == "#[cfg(test)]")
        .filter_map(|(index, pair)| {
            let declaration = pair[1].trim();
            let declaration = ["pub(crate) ", "pub(super) "]
                .iter()
                .find_map(|visibility| declaration.strip_prefix(visibility))
                .unwrap_or(declaration);
            let name = declaration.strip_prefix("mod ")?.strip_suffix(';')?;
            Some((index, name.to_owned()))
        })
        .collect()
}

/// Where the test modules that the file at `path` (below `src/`) declares live: `<name>.rs` and
/// `<name>/` beside it for `lib.rs` and `mod.rs`, below its own folder for other files.
fn test_module_files(path: &str, text: &str) -> Vec<String> {
    let folder = match path.rsplit_once('/') {
        Some((parent, "mod.rs")) => format!("{parent}/"),
        None if path == "lib.rs" => String::new(),
        _ => format!("{}/", path.trim_end_matches(".rs")),
    };
    test_declarations(text)
        .into_iter()
        .flat_map(|(_, name)| [format!("{folder}{name}.rs"), format!("{folder}{name}/")])
        .collect()
}

/// `text` without its declarations of test modules (the `#[cfg(test)]` line and the next, and
/// the blank line after them when one comes before: rustfmt keeps one blank line at most).
fn without_test_modules(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let blank = |index: usize| lines.get(index).is_some_and(|line| line.trim().is_empty());
    let skipped: Vec<usize> = test_declarations(text)
        .into_iter()
        .flat_map(|(line, _)| {
            let after = line + 2;
            let blank_around = (line == 0 || blank(line - 1)) && blank(after);
            [Some(line), Some(line + 1), blank_around.then_some(after)]
        })
        .flatten()
        .collect();
    let mut kept: String = text
        .lines()
        .enumerate()
        .filter(|(index, _)| !skipped.contains(index))
        .map(|(_, line)| format!("{line}\n"))
        .collect();
    // A declaration that closed the file leaves the blank line before it.
    while kept.ends_with("\n\n") {
        kept.pop();
    }
    kept
}

/// The manifest without its `[dev-dependencies]` table, which only the crate's own tests read.
fn without_dev_dependencies(manifest: &str) -> String {
    let mut kept = String::new();
    let mut in_dev_dependencies = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_dev_dependencies = line.trim() == "[dev-dependencies]";
        }
        if !in_dev_dependencies {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept.replace("\n\n\n", "\n\n")
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
    fn the_copy_holds_the_whole_library_with_headers() {
        let files = files();
        let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        assert!(paths.contains(&"vendor/opgen-runtime/Cargo.toml"));
        assert!(paths.contains(&"vendor/opgen-runtime/src/lib.rs"));
        assert!(paths.contains(&"vendor/opgen-runtime/src/envtest/mod.rs"));
        assert!(paths.contains(&"vendor/opgen-runtime/src/client/context.rs"));
        assert!(
            files.iter().all(|file| {
                let first = file.contents.lines().next().unwrap_or_default();
                first.contains(GENERATED_MARKER)
            }),
            "every file says it is opgen's"
        );
    }

    #[test]
    fn the_copy_holds_no_test_module_and_no_dev_dependency() {
        let files = files();
        let tests: Vec<&str> = files
            .iter()
            .map(|file| file.path.as_str())
            .filter(|path| path.ends_with("/tests.rs") || path.contains("test_kinds"))
            .collect();
        assert_eq!(tests, Vec::<&str>::new());
        for file in &files {
            assert!(!file.contents.contains("#[cfg(test)]"), "{}", file.path);
            assert!(!file.contents.contains("mod tests"), "{}", file.path);
        }
        let manifest = &files[0].contents;
        assert!(!manifest.contains("[dev-dependencies]"), "{manifest}");
        assert!(manifest.contains("[dependencies]") && manifest.contains("[features]"));
        // The crate's own tests are files of their own, which the copy leaves out.
        let mut all = Vec::new();
        collect(&SOURCE, &mut all);
        let kept = files.len() - 2;
        assert!(kept < all.len(), "{kept} of {} files kept", all.len());
    }

    #[test]
    fn test_modules_are_found_beside_or_below_their_parent() {
        let text =
            "mod kept;\n\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\npub(crate) mod fixtures;\n";
        assert_eq!(
            test_module_files("client/apply.rs", text),
            [
                "client/apply/tests.rs",
                "client/apply/tests/",
                "client/apply/fixtures.rs",
                "client/apply/fixtures/"
            ]
        );
        assert_eq!(
            test_module_files("operand/mod.rs", text)[0],
            "operand/tests.rs"
        );
        assert_eq!(test_module_files("lib.rs", text)[0], "tests.rs");
        assert_eq!(without_test_modules(text), "mod kept;\n");
        let between = "mod a;\n\n#[cfg(test)]\nmod tests;\n\npub use a::B;\n";
        assert_eq!(without_test_modules(between), "mod a;\n\npub use a::B;\n");
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
