//! Formats scaffolded Rust files with rustfmt and the project's own configuration.
//!
//! Names are filled into long templates (types, controller), and rustfmt wraps lines
//! differently for `Db` than for `MySQLClusterBackupSchedule`: no template can be
//! rustfmt-clean for every name. So the scaffolded Rust files go through rustfmt, in a scratch
//! copy of their tree, with the configuration `cargo fmt` would use in the project: the
//! nearest `rustfmt.toml` or `.rustfmt.toml` between the file and the project root. Without
//! one, rustfmt's defaults, never the user's global configuration, so that what opgen writes
//! does not depend on whose machine ran it. rustfmt runs in the project's directory, so that a
//! `rust-toolchain.toml` there picks its version.
//!
//! Generated files skip this: they are laid out to be clean as rendered (`tests/formatting.rs`
//! checks it), so that every command renders them identically, with or without rustfmt. The
//! manager's `runtime` module, too long to lay out for every width, is declared with
//! `#[rustfmt::skip]`, so that neither `cargo fmt` nor a project's configuration touches it.

use std::{
    collections::BTreeMap,
    fs,
    io::{ErrorKind, Read as _},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
};

use anyhow::Context as _;

use crate::{
    interrupt::{self, Interrupt},
    plan::{Owner, PlannedFile},
    templates::{self, Templates},
};

/// The names rustfmt looks for, in its order.
const CONFIG_FILES: [&str; 2] = ["rustfmt.toml", ".rustfmt.toml"];

/// Formats the scaffolded `.rs` files among `files` in place, for the project at `root`.
/// Returns false, leaving them as rendered, when rustfmt is not installed.
pub fn format(
    files: &mut [PlannedFile],
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<bool> {
    let mut rust: Vec<&mut PlannedFile> = files
        .iter_mut()
        .filter(|f| f.path.ends_with(".rs") && needs_formatting(f))
        .collect();
    if rust.is_empty() {
        return Ok(true);
    }
    let scratch = tempfile::tempdir().context("cannot create a scratch directory for rustfmt")?;
    let defaults = scratch.path().join("rustfmt-defaults.toml");
    fs::write(&defaults, "")?;
    let tree = scratch.path().join("tree");
    let mut by_config: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut paths = Vec::with_capacity(rust.len());
    for file in &rust {
        let path = tree.join(&file.path);
        fs::create_dir_all(path.parent().expect("a file has a parent"))?;
        fs::write(&path, &file.contents)?;
        let config = project_config(root, &file.path).unwrap_or_else(|| defaults.clone());
        by_config.entry(config).or_default().push(path.clone());
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
    for (config, group) in &by_config {
        let mut command = Command::new("rustfmt");
        command
            // `init` formats a project whose directory does not exist yet.
            .current_dir(root.ancestors().find(|dir| dir.is_dir()).unwrap_or(root))
            .args(["--edition", "2024", "--config-path"])
            .arg(config)
            .args(group);
        match run(command, interrupt)? {
            Run::Formatted => {}
            Run::NotInstalled => return Ok(false),
            Run::Rejected(stderr) => return Err(rejected(&stderr, &tree, &rust)),
        }
    }
    for (file, path) in rust.iter_mut().zip(&paths) {
        file.contents = fs::read_to_string(path)?;
    }
    Ok(true)
}

/// Whether `file` goes through rustfmt (see the module's documentation).
fn needs_formatting(file: &PlannedFile) -> bool {
    match file.owner {
        Owner::Scaffolded => true,
        Owner::Generated
        | Owner::GeneratedWith(_)
        | Owner::Manifest
        | Owner::Record
        | Owner::Amended => false,
    }
}

/// How a run of rustfmt ended.
enum Run {
    Formatted,
    NotInstalled,
    /// It refused the code, and said why on stderr.
    Rejected(String),
}

/// Runs rustfmt.
fn run(mut command: Command, interrupt: &Interrupt) -> anyhow::Result<Run> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    interrupt::own_process_group(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(Run::NotInstalled),
        Err(err) => return Err(err).context("cannot run rustfmt"),
    };
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = interrupt.wait(&mut child)?.context("cannot run rustfmt")?;
    let stderr = reader.join().unwrap_or_default();
    if !status.success() {
        return Ok(Run::Rejected(stderr));
    }
    Ok(Run::Formatted)
}

/// Why rustfmt refused `files`, copied under `tree`: the override that rendered the first file
/// it names, at the line of the override its message quotes, or else a bug of opgen's, with
/// the file's path in the project.
fn rejected(stderr: &str, tree: &Path, files: &[&mut PlannedFile]) -> anyhow::Error {
    let stderr = stderr.replace(&format!("{}/", tree.display()), "");
    let Some(diagnostic) = Diagnostic::first(&stderr) else {
        return anyhow::anyhow!(
            "rustfmt rejected the Rust files opgen rendered (a bug in opgen, please report it):\n{stderr}"
        );
    };
    let path = diagnostic.path;
    let place = files
        .iter()
        .find(|file| file.path == path)
        .and_then(|file| Templates::get().override_place(&file.contents, &diagnostic.lines));
    match place {
        Some(place) => {
            templates::invalid_output(&place, path, "Rust", diagnostic.line, diagnostic.problem)
        }
        None => anyhow::anyhow!(
            "rustfmt rejected {path} as opgen rendered it (a bug in opgen, please report it):\n{stderr}"
        ),
    }
}

/// The first error rustc's parser (in rustfmt) reports: `error: problem`, then ` --> file:line:
/// column`, then the lines it quotes (`12 | code`).
struct Diagnostic<'a> {
    problem: &'a str,
    path: &'a str,
    /// The line it points at.
    line: usize,
    /// The lines it quotes, in the file's order (an unclosed delimiter's line comes before
    /// the end of the file it points at), then the line it points at.
    lines: Vec<usize>,
}

impl<'a> Diagnostic<'a> {
    fn first(stderr: &'a str) -> Option<Self> {
        let mut lines = stderr.lines();
        let problem = lines.find_map(|line| line.strip_prefix("error: "))?;
        let (path, at) = lines
            .next()?
            .trim_start()
            .strip_prefix("--> ")?
            .split_once(':')?;
        let line: usize = at.split(':').next()?.parse().ok()?;
        let quoted = lines
            .take_while(|line| !line.starts_with("error"))
            .filter_map(|line| line.split_once(" |")?.0.trim().parse().ok());
        Some(Self {
            problem,
            path,
            line,
            lines: quoted.chain(std::iter::once(line)).collect(),
        })
    }
}

/// The rustfmt configuration `cargo fmt` would apply to `file` (relative to `root`): the
/// nearest configuration file in its directory or a parent, up to the project root.
fn project_config(root: &Path, file: &str) -> Option<PathBuf> {
    let relative_dir = Path::new(file).parent().unwrap_or(Path::new(""));
    relative_dir.ancestors().find_map(|dir| {
        CONFIG_FILES
            .iter()
            .map(|name| root.join(dir).join(name))
            .find(|path| path.is_file())
    })
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

    fn file(path: &str, contents: &str) -> PlannedFile {
        PlannedFile::new(path, contents, Owner::Scaffolded)
    }

    fn format_in(root: &Path, files: &mut [PlannedFile]) -> anyhow::Result<bool> {
        format(files, root, &Interrupt::never())
    }

    #[test]
    fn formats_scaffolded_rust_files_and_leaves_others() {
        let root = tempfile::tempdir().unwrap();
        let mut files = vec![
            file(
                "src/main.rs",
                "mod cli;\nmod missing;\nfn  main( ){cli::run( );}\n",
            ),
            file("src/cli.rs", "pub fn run(){let x=1;let _=x;}\n"),
            file("README.md", "fn  main( ){}\n"),
            PlannedFile::new("api/src/gen.rs", "fn  main( ){}\n", Owner::Generated),
            PlannedFile::new("src/runtime/gen.rs", "fn  main( ){}\n", Owner::Generated),
        ];
        assert!(
            format_in(root.path(), &mut files).unwrap(),
            "the test machine has rustfmt"
        );
        assert_eq!(
            files[0].contents,
            "mod cli;\nmod missing;\nfn main() {\n    cli::run();\n}\n"
        );
        assert_eq!(
            files[1].contents,
            "pub fn run() {\n    let x = 1;\n    let _ = x;\n}\n"
        );
        assert_eq!(files[2].contents, "fn  main( ){}\n");
        assert_eq!(
            files[3].contents, "fn  main( ){}\n",
            "generated files are not formatted"
        );
        assert_eq!(
            files[4].contents, "fn  main( ){}\n",
            "the manager's neither"
        );
    }

    const LONG_CALL: &str = "fn main() {\n    let _ = std::collections::BTreeMap::<String, String>::from([(String::new(), String::new()), (String::new(), String::new())]);\n}\n";

    #[test]
    fn follows_the_projects_configuration() {
        let root = tempfile::tempdir().unwrap();
        let wide = [file("src/lib.rs", LONG_CALL)];
        let mut default = wide.clone();
        format_in(root.path(), &mut default).unwrap();
        fs::write(root.path().join("rustfmt.toml"), "max_width = 200\n").unwrap();
        let mut configured = wide.clone();
        format_in(root.path(), &mut configured).unwrap();
        assert_ne!(default[0].contents, LONG_CALL, "wrapped at 100 columns");
        assert_eq!(configured[0].contents, LONG_CALL, "kept within 200 columns");

        // A configuration nearer to the file wins, as with cargo fmt.
        fs::create_dir(root.path().join("api")).unwrap();
        fs::write(root.path().join("api/.rustfmt.toml"), "max_width = 100\n").unwrap();
        let mut nested = [file("api/src/lib.rs", LONG_CALL)];
        format_in(root.path(), &mut nested).unwrap();
        assert_eq!(nested[0].contents, default[0].contents);
    }

    #[test]
    fn invalid_code_of_opgens_own_is_reported_as_a_bug_in_the_projects_file() {
        let root = tempfile::tempdir().unwrap();
        let err = format_in(root.path(), &mut [file("src/lib.rs", "fn {")])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("rustfmt rejected src/lib.rs as opgen rendered it (a bug in opgen"),
            "{err}"
        );
        assert!(err.contains("--> src/lib.rs:1:"), "{err}");
        assert!(!err.contains("/tree/"), "no scratch path: {err}");
    }

    #[test]
    fn reads_the_first_error_and_the_lines_it_quotes() {
        let stderr = "error: this file contains an unclosed delimiter\n --> src/main.rs:6:3\n  |\n3 | async fn main( -> u8 {\n  |              - unclosed delimiter\n...\n6 | }\n  |  ^\n\nerror: expected expression\n --> src/lib.rs:2:13\n";
        let first = Diagnostic::first(stderr).unwrap();
        assert_eq!(first.problem, "this file contains an unclosed delimiter");
        assert_eq!(first.path, "src/main.rs");
        assert_eq!(first.line, 6);
        assert_eq!(first.lines, [3, 6, 6]);
        assert!(Diagnostic::first("warning: nothing to see\n").is_none());
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
