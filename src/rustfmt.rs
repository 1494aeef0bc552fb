//! Formats scaffolded Rust files with rustfmt.
//!
//! The kind's names are filled into long templates (types, controller), and rustfmt wraps
//! lines differently for `Db` than for `MySQLClusterBackupSchedule`; no template can be
//! rustfmt-clean for every name. So those files go through rustfmt, one process each, all at
//! once. The project-level templates are laid out to be clean as rendered and skip this.

use std::{
    io::{ErrorKind, Write as _},
    process::{Command, Stdio},
};

use anyhow::{Context as _, bail};

/// What came out of formatting.
pub enum Formatted {
    Sources(Vec<String>),
    /// rustfmt is not installed; the sources are returned as rendered.
    RustfmtMissing(Vec<String>),
}

/// Formats each source as a Rust 2024 file.
pub fn format(sources: Vec<String>) -> anyhow::Result<Formatted> {
    let spawned: Vec<_> = sources
        .iter()
        .map(|_| {
            Command::new("rustfmt")
                .args(["--edition", "2024", "--emit", "stdout"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        })
        .collect();
    if spawned
        .iter()
        .any(|child| matches!(child, Err(err) if err.kind() == ErrorKind::NotFound))
    {
        return Ok(Formatted::RustfmtMissing(sources));
    }
    let mut formatted = Vec::with_capacity(sources.len());
    for (child, source) in spawned.into_iter().zip(&sources) {
        let mut child = child.context("cannot run rustfmt")?;
        // rustfmt reads all its input before it writes, so writing first cannot deadlock.
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(source.as_bytes())
            .context("cannot write to rustfmt")?;
        let output = child.wait_with_output().context("cannot run rustfmt")?;
        if !output.status.success() {
            // The rendered template is not valid Rust: a bug in opgen's templates.
            bail!(
                "rustfmt rejected generated code (a bug in opgen, please report it):\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        formatted.push(String::from_utf8(output.stdout).context("rustfmt printed non-UTF-8")?);
    }
    Ok(Formatted::Sources(formatted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_rust_sources() {
        let sources = vec![
            "fn  main( ){let x=1;}\n".to_owned(),
            "pub  mod a;\n".to_owned(),
        ];
        match format(sources).unwrap() {
            Formatted::Sources(out) => {
                assert_eq!(out, ["fn main() {\n    let x = 1;\n}\n", "pub mod a;\n"]);
            }
            Formatted::RustfmtMissing(_) => panic!("the test machine has rustfmt"),
        }
    }

    #[test]
    fn invalid_code_is_reported_as_a_bug() {
        let err = format(vec!["fn {".to_owned()])
            .err()
            .expect("invalid code fails");
        assert!(err.to_string().contains("a bug in opgen"), "{err}");
    }
}
