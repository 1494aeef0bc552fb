//! Formats scaffolded Rust files with rustfmt.
//!
//! Names are filled into long templates (main, types, controller), and rustfmt wraps lines
//! differently for `Db` than for `MySQLClusterBackupSchedule`: no template can be
//! rustfmt-clean for every name. So the scaffolded Rust files go through one rustfmt process,
//! in a scratch copy of their tree. Generated files are laid out to be clean as rendered and
//! skip this, so that every command renders them identically.

use std::{
    fs,
    io::ErrorKind,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context as _, bail};

use crate::plan::PlannedFile;

/// Formats the `.rs` files among `files` in place. Returns false, leaving them as rendered,
/// when rustfmt is not installed.
pub fn format(files: &mut [PlannedFile]) -> anyhow::Result<bool> {
    let mut rust: Vec<&mut PlannedFile> = files
        .iter_mut()
        .filter(|f| f.path.ends_with(".rs"))
        .collect();
    if rust.is_empty() {
        return Ok(true);
    }
    let scratch = tempfile::tempdir().context("cannot create a scratch directory for rustfmt")?;
    let mut paths = Vec::with_capacity(rust.len());
    for file in &rust {
        let path = scratch.path().join(&file.path);
        fs::create_dir_all(path.parent().expect("a file has a parent"))?;
        fs::write(&path, &file.contents)?;
        paths.push(path);
    }
    // rustfmt follows `mod x;` into x.rs and fails when it is missing (a kind's file that
    // this command does not write): give it empty stand-ins.
    for (file, path) in rust.iter().zip(&paths) {
        for module in declared_modules(&file.contents) {
            let stand_in = module_path(path, module);
            if !stand_in.exists() && !stand_in.with_file_name(format!("{module}/mod.rs")).exists() {
                fs::create_dir_all(stand_in.parent().expect("a file has a parent"))?;
                fs::write(&stand_in, "")?;
            }
        }
    }
    let output = match Command::new("rustfmt")
        .args(["--edition", "2024"])
        .args(&paths)
        .output()
    {
        Ok(output) => output,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err).context("cannot run rustfmt"),
    };
    if !output.status.success() {
        bail!(
            "rustfmt rejected generated code (a bug in opgen, please report it):\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    for (file, path) in rust.iter_mut().zip(&paths) {
        file.contents = fs::read_to_string(path)?;
    }
    Ok(true)
}

/// The out-of-line modules a source declares (`mod x;`, `pub mod x;`).
fn declared_modules(source: &str) -> impl Iterator<Item = &str> {
    source.lines().filter_map(|line| {
        let line = line.trim();
        let rest = line.strip_prefix("pub ").unwrap_or(line);
        rest.strip_prefix("mod ")?.strip_suffix(';').map(str::trim)
    })
}

/// Where rustfmt looks for module `module` declared in the file at `declaring`.
fn module_path(declaring: &Path, module: &str) -> PathBuf {
    let dir = declaring.parent().expect("a file has a parent");
    let stem = declaring
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let base = if matches!(stem, "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    base.join(format!("{module}.rs"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Owner;

    fn file(path: &str, contents: &str) -> PlannedFile {
        PlannedFile::new(path, contents, Owner::Scaffolded)
    }

    #[test]
    fn formats_rust_files_and_leaves_others() {
        let mut files = vec![
            file(
                "src/main.rs",
                "mod cli;\nmod missing;\nfn  main( ){cli::run( );}\n",
            ),
            file("src/cli.rs", "pub fn run(){let x=1;let _=x;}\n"),
            file("README.md", "fn  main( ){}\n"),
        ];
        assert!(format(&mut files).unwrap(), "the test machine has rustfmt");
        assert_eq!(
            files[0].contents,
            "mod cli;\nmod missing;\nfn main() {\n    cli::run();\n}\n"
        );
        assert_eq!(
            files[1].contents,
            "pub fn run() {\n    let x = 1;\n    let _ = x;\n}\n"
        );
        assert_eq!(files[2].contents, "fn  main( ){}\n");
    }

    #[test]
    fn invalid_code_is_reported_as_a_bug() {
        let err = format(&mut [file("src/lib.rs", "fn {")]).unwrap_err();
        assert!(err.to_string().contains("a bug in opgen"), "{err}");
    }

    #[test]
    fn finds_declared_modules_where_rustfmt_looks() {
        let modules: Vec<&str> =
            declared_modules("mod a;\npub mod b;\n// mod c;\nfn mod_d() {}\n").collect();
        assert_eq!(modules, ["a", "b"]);
        assert_eq!(
            module_path(Path::new("s/main.rs"), "a"),
            Path::new("s/a.rs")
        );
        assert_eq!(
            module_path(Path::new("s/db/mod.rs"), "a"),
            Path::new("s/db/a.rs")
        );
        assert_eq!(
            module_path(Path::new("s/db.rs"), "a"),
            Path::new("s/db/a.rs")
        );
    }
}
