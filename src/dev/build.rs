//! `cargo build` of the manager, run beside the session rather than waited for, so that the
//! old manager keeps running and its log keeps flowing while the new one compiles.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use super::{child::Child, tail::Tail};

pub struct Build {
    child: Child,
    package: String,
    started: Instant,
    /// cargo's messages as they come, for progress on a terminal.
    messages: Tail,
}

/// How a build ended.
pub enum Built {
    /// The manager binary it made.
    Binary(PathBuf),
    /// The compiler's messages, as cargo printed them.
    Failed(String),
}

impl Build {
    /// Starts `cargo build --bin <package>` in `root`, its messages in `log` (truncated).
    pub fn start(root: &Path, package: &str, log: &Path) -> anyhow::Result<Self> {
        std::fs::write(log, "")?;
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        command
            .current_dir(root)
            .args(["build", "--bin", package])
            // Artifacts as JSON lines on stdout, the compiler's messages rendered on stderr.
            .arg("--message-format=json-render-diagnostics");
        Ok(Self {
            child: Child::start("cargo build", command, log)?,
            package: package.to_owned(),
            started: Instant::now(),
            messages: Tail::from_end(log),
        })
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// cargo's progress since the last call: (`Compiling`, `kube-core v5.0.0`) and the like.
    pub fn progress(&mut self) -> Vec<(String, String)> {
        self.messages
            .new_lines()
            .iter()
            .filter_map(|line| progress(line))
            .collect()
    }

    /// How it ended, once it has.
    pub fn finished(&mut self) -> Option<Built> {
        let status = self.child.exited()?;
        let log = std::fs::read_to_string(self.child.log()).unwrap_or_default();
        let messages: String = log
            .lines()
            .filter(|line| !line.starts_with('{'))
            .map(|line| format!("{line}\n"))
            .collect();
        if !status.success() {
            return Some(Built::Failed(messages));
        }
        Some(match executable(&log, &self.package) {
            Some(binary) => Built::Binary(binary),
            None => Built::Failed(format!(
                "{messages}cargo built no binary named `{}`",
                self.package
            )),
        })
    }

    /// Stops cargo and the compilers it started.
    pub fn cancel(&mut self) {
        self.child.stop();
    }
}

/// A status line of cargo's (`   Compiling kube-core v5.0.0`) as its verb and the rest; not a
/// JSON message, a compiler's message or cargo's progress bar.
fn progress(line: &str) -> Option<(String, String)> {
    let (verb, rest) = line.trim_start().split_once(' ')?;
    let is_status = line.starts_with(' ')
        && !verb.is_empty()
        && verb.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && verb.chars().skip(1).all(|c| c.is_ascii_lowercase());
    is_status.then(|| (verb.to_owned(), rest.trim().to_owned()))
}

/// The executable of the `bin` target `name` in cargo's JSON messages.
fn executable(messages: &str, name: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == name)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_managers_executable() {
        let messages = r#"   Compiling demo v0.1.0
{"reason":"compiler-artifact","target":{"name":"demo_api","kind":["lib"]},"executable":null}
{"reason":"compiler-artifact","target":{"name":"demo","kind":["bin"]},"executable":"/p/target/debug/demo"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            executable(messages, "demo"),
            Some(PathBuf::from("/p/target/debug/demo"))
        );
        assert_eq!(executable(messages, "other"), None);
    }

    #[test]
    fn cargo_status_lines_are_progress_and_the_rest_is_not() {
        assert_eq!(
            progress("   Compiling kube-core v5.0.0"),
            Some(("Compiling".to_owned(), "kube-core v5.0.0".to_owned()))
        );
        assert_eq!(
            progress("    Finished `dev` profile in 3s").map(|(verb, _)| verb),
            Some("Finished".to_owned())
        );
        assert_eq!(progress(r#"{"reason":"build-finished"}"#), None);
        assert_eq!(progress("error[E0308]: mismatched types"), None);
        assert_eq!(progress("  --> src/main.rs:3:5"), None);
    }
}
