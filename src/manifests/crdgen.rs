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
//! cargo finds the target directory itself, so `CARGO_TARGET_DIR` is honoured.

use std::{
    ffi::OsStr,
    io::{self, BufRead as _, BufReader, Read},
    path::Path,
    process::{Command, ExitStatus, Stdio},
    thread,
    time::Duration,
};

use indicatif::{ProgressBar, ProgressStyle};

use super::{cargo_metadata, target_lock::TargetLock};
use crate::{
    interrupt::{self, Interrupt, Interrupted},
    project::Project,
    shell::Shell,
};

/// The api crate's binary that prints every CRD, in a project made before opgen named it after
/// the project (see [`cargo_metadata`]).
pub const BINARY: &str = "crdgen";

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
}

/// Builds and runs crdgen in the project at `root`, and returns its standard output. Holds the
/// lock of the project's target directory meanwhile (see [`TargetLock`]).
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
    execute(
        command(root, project, &binary, progress, shell.colors()),
        progress,
        interrupt,
    )
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
            "cargo run --package demo-operator-api --bin demo-operator-crdgen --quiet --color=never"
        );
        assert_eq!(plain.get_current_dir(), Some(root));
        let spinner = command(root, &project(), BINARY, Progress::Spinner, true);
        assert_eq!(
            display(&spinner),
            "cargo run --package demo-operator-api --bin crdgen --color=always"
        );
        let spinner = command(root, &project(), BINARY, Progress::Spinner, false);
        assert!(display(&spinner).ends_with("--color=never"));
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
