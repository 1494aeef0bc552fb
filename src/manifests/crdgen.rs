//! Builds and runs the api crate's `crdgen` binary with cargo, and returns what it printed:
//! the CRDs as kube-derive renders them.
//!
//! cargo's messages go to the user as cargo prints them, so that a compile error in the api
//! crate reads exactly as it would under `cargo build`. On a terminal, a spinner shows that
//! the (possibly long) first build is making progress: cargo's stderr is read line by line,
//! its status lines (`Compiling serde v1.0.219`) become the spinner's message, and every
//! other line (warnings, errors) is printed above the spinner, coloured as cargo coloured it.
//! Elsewhere (CI, pipes) cargo runs quietly with its stderr passed straight through.
//!
//! cargo is told to colour its messages exactly when opgen colours its own (`--color`,
//! `NO_COLOR`, `CLICOLOR_FORCE`). It runs in a process group of its own: on Ctrl-C or SIGTERM
//! opgen stops it, with the rustc processes it started, and restores what it wrote.
//!
//! cargo finds the target directory itself, so `CARGO_TARGET_DIR` is honoured. That is also a
//! trap: cargo keys a workspace member's build by its path relative to the workspace, so two
//! checkouts of one project sharing a target directory share one build of the api crate, and
//! cargo takes the other checkout's build as up to date with this one's sources. crdgen
//! therefore prints the directory it was compiled from (`--with-source`); when that is not
//! this checkout's api crate, opgen removes the api crate's build (`cargo clean --package`)
//! and builds it again, and it never returns CRDs it cannot tell are this checkout's.

use std::{
    ffi::OsStr,
    fs,
    io::{self, BufRead as _, BufReader, Read},
    path::{Path, PathBuf},
    process::{Command, ExitStatus, Stdio},
    thread,
    time::Duration,
};

use indicatif::{ProgressBar, ProgressStyle};

use super::{
    cargo_metadata::{self, BuildInfo},
    target_lock::TargetLock,
};
use crate::{
    interrupt::{self, Interrupt, Interrupted},
    project::Project,
    shell::Shell,
};

/// The api crate's binary that prints every CRD, in a project made before opgen named it after
/// the project (see [`cargo_metadata`]).
pub const BINARY: &str = "crdgen";

/// The argument that asks crdgen to print, before the CRDs, the directory it was built from.
pub const WITH_SOURCE: &str = "--with-source";

/// How crdgen's first line starts when it says the directory it was built from: a YAML
/// comment, so that its output stays a YAML stream.
const SOURCE_LINE: &str = "# source: ";

/// How cargo's messages reach the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A spinner with cargo's current step; cargo's other messages printed above it.
    Spinner,
    /// cargo run with `--quiet`, its stderr passed through untouched.
    Plain,
}

#[derive(Debug, thiserror::Error)]
pub enum CrdgenError {
    #[error("cargo was not found on PATH: install Rust from rustup.rs")]
    CargoNotFound,
    #[error("cannot run `{command}`")]
    Spawn {
        command: String,
        #[source]
        source: io::Error,
    },
    #[error(
        "`{command}` failed ({status}): the api crate does not compile (see cargo's messages above); fix it and run again"
    )]
    Failed { command: String, status: ExitStatus },
    #[error("crdgen printed text that is not UTF-8")]
    NotUtf8,
    #[error("the build of crdgen was stopped")]
    Interrupted(#[source] Interrupted),
    #[error(
        "`{command}` failed ({status}): the build of the api crate that another checkout left in the target directory cannot be removed; remove {target} or build with a target directory of this checkout's own (CARGO_TARGET_DIR)"
    )]
    CleanFailed {
        command: String,
        status: ExitStatus,
        target: String,
    },
    #[error(
        "crdgen says it was built from {built_from}, not from this checkout's api crate {expected}, even after its build was removed: opgen will not use CRDs of another checkout\n\nBuild with a target directory of this checkout's own (CARGO_TARGET_DIR)"
    )]
    ForeignBuild {
        built_from: String,
        expected: String,
    },
}

/// Builds and runs crdgen in the project at `root`, and returns the CRDs it printed, built
/// from this checkout's sources. Holds the lock of the project's target directory meanwhile
/// (see [`TargetLock`]).
pub fn run(
    root: &Path,
    project: &Project,
    shell: &mut Shell,
    interrupt: &Interrupt,
) -> Result<String, CrdgenError> {
    let api = project.project_name.api_crate();
    let build = cargo_metadata::read(root, &api, interrupt).map_err(CrdgenError::Interrupted)?;
    let binary = build
        .as_ref()
        .and_then(|build| build.crdgen.clone())
        .unwrap_or_else(|| BINARY.to_owned());
    let _lock = match &build {
        Some(build) => TargetLock::acquire(&build.target_directory, shell, interrupt)
            .map_err(CrdgenError::Interrupted)?,
        None => None,
    };
    let progress = if shell.shows_progress() {
        Progress::Spinner
    } else {
        Progress::Plain
    };
    let color = shell.colors();
    let crdgen = || {
        execute(
            command(root, project, &binary, progress, color),
            progress,
            interrupt,
        )
        .map(Printed::parse)
    };
    let printed = crdgen()?;
    // Without cargo's word on where the api crate is there is nothing to compare with; cargo
    // could not read the project, and the build above has said why.
    let Some((build, expected)) = build
        .as_ref()
        .and_then(|build| Some((build, build.api_dir.as_deref()?)))
    else {
        return Ok(printed.crds);
    };
    from_this_checkout(printed, expected, &build.target_directory, shell, || {
        clean(root, build, interrupt)?;
        crdgen()
    })
}

/// The CRDs of `printed` once they are known to be built from the api crate at `expected`:
/// when crdgen says another directory, or nothing, the api crate is built again (`rebuild`)
/// and must then say `expected`, or nothing.
fn from_this_checkout(
    printed: Printed,
    expected: &Path,
    target: &Path,
    shell: &mut Shell,
    rebuild: impl FnOnce() -> Result<Printed, CrdgenError>,
) -> Result<String, CrdgenError> {
    match &printed.source {
        Some(source) if same_dir(source, expected) => return Ok(printed.crds),
        Some(source) => shell.note(&format!(
            "the crdgen in {} was built from another checkout ({}): building it again from this one",
            target.display(),
            source.display()
        )),
        None => shell.note(&format!(
            "api/src/bin/crdgen.rs does not print the directory it was built from ({WITH_SOURCE}, as opgen's generated crdgen does), so the api crate is built again on every run, in case the target directory holds another checkout's build"
        )),
    }
    let printed = rebuild()?;
    match printed.source {
        Some(source) if !same_dir(&source, expected) => Err(CrdgenError::ForeignBuild {
            built_from: source.display().to_string(),
            expected: expected.display().to_string(),
        }),
        _ => Ok(printed.crds),
    }
}

/// What crdgen printed: the directory it says it was built from, and the CRDs.
#[derive(Debug, PartialEq, Eq)]
struct Printed {
    source: Option<PathBuf>,
    crds: String,
}

impl Printed {
    fn parse(output: String) -> Self {
        let Some(rest) = output.strip_prefix(SOURCE_LINE) else {
            return Self {
                source: None,
                crds: output,
            };
        };
        let (source, crds) = rest.split_once('\n').unwrap_or((rest, ""));
        Self {
            source: Some(PathBuf::from(source)),
            crds: crds.to_owned(),
        }
    }
}

/// Whether `a` and `b` name one directory. cargo says both the same way, so they are equal
/// strings, but a link on the way should not make opgen rebuild every time.
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (fs::canonicalize(a), fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

/// Removes the builds of the api crate and of the workspace members it depends on from the
/// target directory, so that the next build compiles them from this checkout's sources. The
/// dependencies from crates.io stay: their builds are the same for every checkout.
fn clean(root: &Path, build: &BuildInfo, interrupt: &Interrupt) -> Result<(), CrdgenError> {
    let mut command = Command::new("cargo");
    command.current_dir(root).args(["clean", "--quiet"]);
    for package in &build.api_packages {
        command.args(["--package", package]);
    }
    match execute(command, Progress::Plain, interrupt) {
        Err(CrdgenError::Failed { command, status }) => Err(CrdgenError::CleanFailed {
            command,
            status,
            target: build.target_directory.display().to_string(),
        }),
        other => other.map(drop),
    }
}

/// The cargo command that builds and runs crdgen, colouring its messages when `color` says.
/// No `--locked`: a project may not have a lockfile yet, and the build would then create it,
/// as any `cargo build` does.
pub fn command(
    root: &Path,
    project: &Project,
    binary: &str,
    progress: Progress,
    color: bool,
) -> Command {
    let mut command = Command::new("cargo");
    command
        .current_dir(root)
        .args(["run", "--package"])
        .arg(project.project_name.api_crate())
        .args(["--bin", binary]);
    if progress == Progress::Plain {
        command.arg("--quiet");
    }
    // Said explicitly in both cases: cargo cannot tell through the spinner's pipe that its
    // messages reach a terminal, and does not read NO_COLOR itself.
    command.arg(if color {
        "--color=always"
    } else {
        "--color=never"
    });
    command.args(["--", WITH_SOURCE]);
    command
}

/// Runs `command` and returns its standard output, which must be UTF-8.
fn execute(
    mut command: Command,
    progress: Progress,
    interrupt: &Interrupt,
) -> Result<String, CrdgenError> {
    let shown = display(&command);
    let spawn_error = |source: io::Error| {
        if source.kind() == io::ErrorKind::NotFound {
            CrdgenError::CargoNotFound
        } else {
            CrdgenError::Spawn {
                command: shown.clone(),
                source,
            }
        }
    };
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    command.stderr(match progress {
        Progress::Plain => Stdio::inherit(),
        Progress::Spinner => Stdio::piped(),
    });
    interrupt::own_process_group(&mut command);
    let mut child = command.spawn().map_err(spawn_error)?;
    let spinner = (progress == Progress::Spinner).then(|| {
        let stderr = child.stderr.take().expect("stderr is piped");
        Spinner::start(stderr)
    });
    // stdout is read on a thread of its own while the relay drains stderr, so that neither
    // pipe can fill up and block cargo, and this thread can watch for signals.
    let mut stdout_pipe = child.stdout.take().expect("stdout is piped");
    let reader = thread::spawn(move || {
        let mut stdout = Vec::new();
        stdout_pipe.read_to_end(&mut stdout).map(|_| stdout)
    });
    let waited = interrupt.wait(&mut child);
    let stdout = reader.join().unwrap_or_else(|_| Ok(Vec::new()));
    if let Some(spinner) = spinner {
        spinner.finish();
    }
    let status = waited
        .map_err(CrdgenError::Interrupted)?
        .map_err(spawn_error)?;
    let stdout = stdout.map_err(spawn_error)?;
    if !status.success() {
        return Err(CrdgenError::Failed {
            command: shown,
            status,
        });
    }
    String::from_utf8(stdout).map_err(|_| CrdgenError::NotUtf8)
}

/// A spinner on stderr, fed by cargo's stderr as described in the module's documentation.
struct Spinner {
    bar: ProgressBar,
    relay: thread::JoinHandle<()>,
}

impl Spinner {
    fn start(stderr: impl Read + Send + 'static) -> Self {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner:.green} {wide_msg} {elapsed:.dim}")
                .expect("the spinner template is valid"),
        );
        bar.set_message("Building crdgen");
        bar.enable_steady_tick(Duration::from_millis(100));
        let relay = {
            let bar = bar.clone();
            thread::spawn(move || relay(stderr, &bar))
        };
        Self { bar, relay }
    }

    fn finish(self) {
        // The relay ends when cargo closes its stderr; a panic there lost only messages.
        let _ = self.relay.join();
        self.bar.finish_and_clear();
    }
}

fn relay(stderr: impl Read, spinner: &ProgressBar) {
    for line in BufReader::new(stderr).split(b'\n') {
        let Ok(line) = line else {
            break;
        };
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches('\r');
        let plain = strip_ansi(line);
        if is_cargo_status(&plain) {
            spinner.set_message(format!("Building crdgen: {}", plain.trim_start()));
        } else {
            spinner.println(line);
        }
    }
}

/// Whether `line` is one of cargo's status lines, whose verb cargo right-aligns in twelve
/// columns: `   Compiling serde v1.0.219`. Diagnostics (`warning: …`, `error[E0308]: …`,
/// ` --> src/lib.rs:3:5`) never have that shape.
fn is_cargo_status(line: &str) -> bool {
    let (Some(verb), Some(rest)) = (line.get(..12), line.get(12..)) else {
        return false;
    };
    let word = verb.trim_start();
    let mut chars = word.chars();
    rest.starts_with(' ')
        && chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_lowercase())
}

/// `text` without the ANSI escape sequences that colour it.
fn strip_ansi(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}

/// The command line, as a user would type it.
fn display(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    fn project() -> Project {
        Project::for_test("demo-operator", Scope::Cluster)
    }

    #[test]
    fn runs_the_api_crates_crdgen_in_the_project() {
        let root = Path::new("projects/demo-operator");
        let plain = command(
            root,
            &project(),
            "demo-operator-crdgen",
            Progress::Plain,
            false,
        );
        assert_eq!(
            display(&plain),
            "cargo run --package demo-operator-api --bin demo-operator-crdgen --quiet --color=never -- --with-source"
        );
        assert_eq!(plain.get_current_dir(), Some(root));
        let spinner = command(root, &project(), BINARY, Progress::Spinner, true);
        assert_eq!(
            display(&spinner),
            "cargo run --package demo-operator-api --bin crdgen --color=always -- --with-source"
        );
        let spinner = command(root, &project(), BINARY, Progress::Spinner, false);
        assert!(display(&spinner).ends_with("--color=never -- --with-source"));
    }

    const CRDS: &str = "---\nkind: CustomResourceDefinition\n";

    fn printed(source: Option<&str>) -> Printed {
        Printed {
            source: source.map(PathBuf::from),
            crds: CRDS.to_owned(),
        }
    }

    #[test]
    fn reads_the_source_crdgen_says() {
        assert_eq!(
            Printed::parse(format!("# source: /work/a/api\n{CRDS}")),
            printed(Some("/work/a/api"))
        );
        assert_eq!(Printed::parse(CRDS.to_owned()), printed(None));
        assert_eq!(
            Printed::parse("# source: /work/a/api".to_owned()),
            Printed {
                source: Some(PathBuf::from("/work/a/api")),
                crds: String::new()
            }
        );
    }

    /// Runs `from_this_checkout` with a rebuild that prints `rebuilt`, and returns its result,
    /// whether it rebuilt, and its notes.
    fn check_source(
        first: Option<&str>,
        rebuilt: Option<&str>,
    ) -> (Result<String, CrdgenError>, bool, String) {
        let err = crate::shell::Buffer::default();
        let mut shell = Shell::to_buffers(crate::shell::Buffer::default(), err.clone());
        let mut called = false;
        let result = from_this_checkout(
            printed(first),
            Path::new("/work/b/api"),
            Path::new("/shared/target"),
            &mut shell,
            || {
                called = true;
                Ok(printed(rebuilt))
            },
        );
        (result, called, err.text())
    }

    #[test]
    fn a_build_of_this_checkout_is_used_as_it_is() {
        let (result, rebuilt, notes) = check_source(Some("/work/b/api"), None);
        assert_eq!(result.unwrap(), CRDS);
        assert!(!rebuilt);
        assert_eq!(notes, "");
    }

    #[test]
    fn a_build_of_another_checkout_is_built_again() {
        let (result, rebuilt, notes) = check_source(Some("/work/a/api"), Some("/work/b/api"));
        assert_eq!(result.unwrap(), CRDS);
        assert!(rebuilt);
        assert_eq!(
            notes,
            "note: the crdgen in /shared/target was built from another checkout (/work/a/api): building it again from this one\n"
        );
    }

    #[test]
    fn crdgen_that_does_not_say_its_source_is_built_again() {
        let (result, rebuilt, notes) = check_source(None, None);
        assert_eq!(result.unwrap(), CRDS);
        assert!(rebuilt);
        assert!(
            notes.contains("does not print the directory it was built from"),
            "{notes}"
        );
    }

    #[test]
    fn another_checkouts_crds_are_never_returned() {
        let (result, rebuilt, _) = check_source(Some("/work/a/api"), Some("/work/a/api"));
        assert!(rebuilt);
        let err = result.unwrap_err();
        assert!(matches!(err, CrdgenError::ForeignBuild { .. }), "{err:?}");
        assert!(
            err.to_string().starts_with(
                "crdgen says it was built from /work/a/api, not from this checkout's api crate /work/b/api"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_link_on_the_way_is_the_same_directory() {
        let dir = tempfile::tempdir().unwrap();
        let api = dir.path().join("api");
        fs::create_dir(&api).unwrap();
        assert!(same_dir(&api, &api));
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(dir.path(), &link).unwrap();
            assert!(same_dir(&link.join("api"), &api));
        }
        assert!(!same_dir(dir.path(), &api));
    }

    #[test]
    fn returns_standard_output() {
        for progress in [Progress::Plain, Progress::Spinner] {
            let mut command = Command::new("sh");
            command.args(["-c", "echo ---"]);
            assert_eq!(
                execute(command, progress, &Interrupt::never()).unwrap(),
                "---\n"
            );
        }
    }

    #[test]
    fn failure_names_the_command_and_the_fix() {
        let mut command = Command::new("sh");
        command.args(["-c", "exit 101"]);
        let err = execute(command, Progress::Plain, &Interrupt::never()).unwrap_err();
        assert!(matches!(err, CrdgenError::Failed { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.starts_with("`sh -c exit 101` failed ("),
            "{message}"
        );
        assert!(
            message.ends_with(
                "the api crate does not compile (see cargo's messages above); fix it and run again"
            ),
            "{message}"
        );
    }

    #[test]
    fn missing_cargo() {
        let command = Command::new("/nonexistent/opgen-test/cargo");
        let err = execute(command, Progress::Plain, &Interrupt::never()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cargo was not found on PATH: install Rust from rustup.rs"
        );
    }

    #[test]
    fn output_must_be_utf8() {
        let mut command = Command::new("sh");
        command.args(["-c", "printf '\\377'"]);
        assert!(matches!(
            execute(command, Progress::Plain, &Interrupt::never()),
            Err(CrdgenError::NotUtf8)
        ));
    }

    #[test]
    fn an_interrupt_stops_the_build() {
        for progress in [Progress::Plain, Progress::Spinner] {
            let mut command = Command::new("sh");
            command.args(["-c", "sleep 5"]);
            let started = std::time::Instant::now();
            let err = execute(command, progress, &Interrupt::after(3)).unwrap_err();
            assert!(matches!(err, CrdgenError::Interrupted(_)), "{err:?}");
            assert!(started.elapsed() < Duration::from_secs(4));
        }
    }

    #[test]
    fn recognises_cargo_status_lines() {
        assert!(is_cargo_status("   Compiling serde v1.0.219"));
        assert!(is_cargo_status(
            "    Finished `dev` profile [unoptimized] target(s)"
        ));
        assert!(is_cargo_status(" Downloading crates ..."));
        assert!(!is_cargo_status("warning: unused variable: `x`"));
        assert!(!is_cargo_status("error[E0308]: mismatched types"));
        assert!(!is_cargo_status("  --> api/src/lib.rs:3:5"));
        assert!(!is_cargo_status("   |"));
        assert!(!is_cargo_status(""));
    }

    #[test]
    fn strips_colours() {
        assert_eq!(
            strip_ansi("\u{1b}[1m\u{1b}[92m   Compiling\u{1b}[0m serde"),
            "   Compiling serde"
        );
        assert_eq!(strip_ansi("plain"), "plain");
    }
}
