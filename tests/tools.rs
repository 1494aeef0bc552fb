//! The Go tools the tests build (helm, OLM's validator) are built once and kept in the tools'
//! store, where a later run or another checkout finds them instead of compiling them again.

mod common;

use std::{path::Path, process::Command};

use common::go_tool::{build_once, source_fingerprint, tools_store_with};

/// A command that writes `binary` into the staging directory it is given, and counts its runs
/// in `runs`: what a `go build -o` does, without Go.
fn fake_build(staging: &Path, binary: &str, runs: &Path) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg("printf built > \"$0/$1\" && printf x >> \"$2\"")
        .arg(staging)
        .arg(binary)
        .arg(runs);
    sh
}

#[test]
fn a_tool_is_built_once_and_then_found() {
    let store = tempfile::tempdir().unwrap();
    let dir = store.path().join("tool/1.0-linux-amd64");
    let runs = store.path().join("runs");
    let first = build_once(&dir, "tool", |staging| fake_build(staging, "tool", &runs)).unwrap();
    assert_eq!(first, dir.join("tool"));
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "built");
    let second = build_once(&dir, "tool", |staging| fake_build(staging, "tool", &runs)).unwrap();
    assert_eq!(second, first);
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "x", "built twice");
    // Nothing of the build is left beside the tool.
    let left: Vec<_> = std::fs::read_dir(store.path().join("tool"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(left, ["1.0-linux-amd64"]);
}

#[test]
fn a_missing_go_is_reported_as_nothing_built() {
    let store = tempfile::tempdir().unwrap();
    let dir = store.path().join("tool/1.0-linux-amd64");
    let built = build_once(&dir, "tool", |_| Command::new("/nonexistent/go"));
    assert_eq!(built, None);
    assert!(!dir.exists());
}

#[test]
#[should_panic(expected = "no such module")]
fn a_failed_build_fails_the_test_with_its_output() {
    let store = tempfile::tempdir().unwrap();
    let dir = store.path().join("tool/1.0-linux-amd64");
    build_once(&dir, "tool", |_| {
        let mut sh = Command::new("sh");
        sh.args(["-c", "echo no such module >&2; exit 1"]);
        sh
    });
}

#[test]
fn an_edit_of_a_tools_source_changes_where_it_is_kept() {
    let source = tempfile::tempdir().unwrap();
    std::fs::write(source.path().join("main.go"), "package main\n").unwrap();
    std::fs::write(source.path().join("go.mod"), "module x\n").unwrap();
    let before = source_fingerprint(source.path());
    assert_eq!(before, source_fingerprint(source.path()), "not stable");
    std::fs::write(source.path().join("main.go"), "package main // edited\n").unwrap();
    let edited = source_fingerprint(source.path());
    assert_ne!(before, edited);
    // A renamed file is another source too.
    std::fs::rename(
        source.path().join("main.go"),
        source.path().join("other.go"),
    )
    .unwrap();
    assert_ne!(edited, source_fingerprint(source.path()));
}

#[test]
fn the_store_is_where_the_scripts_keep_their_tools() {
    let store = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        tools_store_with(move |name| {
            vars.iter()
                .find(|(var, _)| var == name)
                .map(|(_, value)| value.into())
        })
    };
    assert_eq!(
        store(&[("HOME", "/home/u")]),
        Path::new("/home/u/.local/share/opgen-tools")
    );
    assert_eq!(
        store(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")]),
        Path::new("/data/opgen-tools")
    );
    assert_eq!(
        store(&[
            ("HOME", "/home/u"),
            ("XDG_DATA_HOME", "/data"),
            ("OPGEN_TOOLS_STORE", "/store")
        ]),
        Path::new("/store")
    );
    // Empty is unset, as `${VAR:-default}` reads it in scripts/promtool.sh.
    assert_eq!(
        store(&[
            ("HOME", "/home/u"),
            ("XDG_DATA_HOME", ""),
            ("OPGEN_TOOLS_STORE", "")
        ]),
        Path::new("/home/u/.local/share/opgen-tools")
    );
    // The scripts' own default, word for word.
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/promtool.sh"))
            .unwrap();
    assert!(
        script.contains(
            "store=${OPGEN_TOOLS_STORE:-${XDG_DATA_HOME:-$HOME/.local/share}/opgen-tools}"
        ),
        "scripts/promtool.sh keeps its tools elsewhere now: move tools_store with it"
    );
}
