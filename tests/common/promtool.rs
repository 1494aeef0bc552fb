//! Prometheus' `promtool`, which `scripts/promtool.sh` builds from source (pinned, cached
//! after the first build), for the tests of the generated alerts and of the manager's
//! `/metrics`.

use std::{
    io::Write as _,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

use anyhow::{Context as _, bail};

/// The promtool binary: `$PROMTOOL` when set, else what `scripts/promtool.sh` prints (it
/// builds promtool once, then finds its cache in a second).
pub fn path() -> anyhow::Result<PathBuf> {
    if let Some(binary) = std::env::var_os("PROMTOOL").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(binary));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/promtool.sh");
    eprintln!(
        "running {} (a first build takes minutes; then it is cached)",
        script.display()
    );
    let output = Command::new("bash")
        .arg(&script)
        .output()
        .with_context(|| format!("cannot run {}", script.display()))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        // The script's own verdict (Go missing or too old, the proxy unreachable) last.
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "promtool is needed, and `scripts/promtool.sh` failed ({}):\n{}\n\nIt builds promtool from source with Go 1.26.7 or newer through the Go module proxy; install Go, or set PROMTOOL to a promtool 3 binary",
            output.status,
            tail.join("\n")
        );
    }
    let binary = String::from_utf8(output.stdout).context("promtool.sh printed no path")?;
    Ok(PathBuf::from(binary.trim()))
}

/// Runs `promtool <args>` in `dir`, with `stdin` as its input if there is one (`check
/// metrics` reads a /metrics body there).
pub fn run(promtool: &Path, dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(promtool)
        .args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", promtool.display()));
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(input.as_bytes())
            .expect("promtool reads its input");
    }
    child
        .wait_with_output()
        .unwrap_or_else(|err| panic!("{} did not end: {err}", promtool.display()))
}

/// Runs `promtool <args>` in `dir` and returns its output, stdout then stderr; panics with it
/// unless promtool succeeds.
pub fn ok(promtool: &Path, dir: &Path, args: &[&str]) -> String {
    let output = run(promtool, dir, args, None);
    let text = text(&output);
    assert!(output.status.success(), "promtool {args:?} failed:\n{text}");
    text
}

/// stdout and stderr of `output`, together.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
