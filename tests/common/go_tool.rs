//! How the tests build the Go tools they check output with (helm, OLM's validator): as
//! `scripts/control-plane.sh` and `scripts/promtool.sh` build theirs, so that one Go build cache
//! serves them all.
//!
//! `.ci/run` gives the tools of a run one build cache, `OPGEN_GO_BUILD_CACHE`; the tests build
//! into it too. Go reuses a compiled package only for the same flags, so these are the scripts':
//! static (`CGO_ENABLED=0`), `-trimpath`, stripped, and without the debug information the linker
//! would drop. The standard library then compiles once per run, and so does every module the
//! builds share at one version: helm 4.3.2 builds on `k8s.io/api`, `apimachinery` and
//! `client-go` 0.37.2, which Kubernetes 1.37.2's control plane compiled.
//!
//! The binaries go where the scripts keep promtool and cargo-semver-checks, the tools' store
//! outside any checkout, so that a fresh clone finds them built instead of compiling them
//! again (a few CPU-minutes each time).

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};

/// Gives `go` (`go build` or `go install`) the flags and the environment of the scripts' builds,
/// and the run's build cache when there is one (else the user's, as any `go` command uses).
pub fn build_like_the_scripts(go: &mut Command) {
    go.args([
        "-trimpath",
        "-buildvcs=false",
        "-gcflags=all=-dwarf=false",
        "-ldflags=-s -w",
    ])
    .env("CGO_ENABLED", "0")
    .env("GOTOOLCHAIN", "local");
    if let Some(cache) = std::env::var_os("OPGEN_GO_BUILD_CACHE").filter(|dir| !dir.is_empty()) {
        go.env("GOCACHE", cache);
    }
}

/// Where built tools are kept across checkouts and runs, as `scripts/promtool.sh` and
/// `scripts/semver-checks.sh` keep theirs: `OPGEN_TOOLS_STORE`, else
/// `$XDG_DATA_HOME/opgen-tools`, else `~/.local/share/opgen-tools`.
pub fn tools_store() -> PathBuf {
    tools_store_with(|name| std::env::var_os(name))
}

/// [`tools_store`] with the environment read through `var`; an empty variable counts as unset,
/// as `${VAR:-default}` has it in the scripts.
pub fn tools_store_with(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let set = |name: &str| var(name).filter(|value| !value.is_empty());
    if let Some(store) = set("OPGEN_TOOLS_STORE") {
        return PathBuf::from(store);
    }
    let data = set("XDG_DATA_HOME").map_or_else(
        || PathBuf::from(set("HOME").expect("HOME is set")).join(".local/share"),
        PathBuf::from,
    );
    data.join("opgen-tools")
}

/// The store's directory for `tool` at `version`, `<store>/<tool>/<version>-<os>-<arch>` in
/// Go's names for the platform, as the scripts name theirs.
pub fn tool_dir(tool: &str, version: &str) -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    tools_store()
        .join(tool)
        .join(format!("{version}-{}-{arch}", std::env::consts::OS))
}

/// `dir/binary`, built by the `go` command `command` makes when it is not there yet; `None`
/// when Go is not installed (the caller says what that leaves unchecked).
///
/// `command` gets a staging directory to build `binary` into; it is renamed into `dir` once
/// built, so that test binaries building at once never run a half-written file (the later
/// rename replaces the earlier with the same build).
pub fn build_once(
    dir: &Path,
    binary: &str,
    command: impl FnOnce(&Path) -> Command,
) -> Option<PathBuf> {
    let path = dir.join(binary);
    if path.is_file() {
        return Some(path);
    }
    let parent = dir.parent().expect("a tool's directory has a parent");
    std::fs::create_dir_all(parent).unwrap();
    let staging = tempfile::tempdir_in(parent).unwrap();
    let started = Instant::now();
    let mut go = command(staging.path());
    let output = match go.output() {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => panic!("cannot run go: {err}"),
    };
    assert!(
        output.status.success(),
        "{go:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::create_dir_all(dir).unwrap();
    std::fs::rename(staging.path().join(binary), &path).unwrap();
    eprintln!("[go] built {} ({:.0?})", path.display(), started.elapsed());
    Some(path)
}

/// A fingerprint of the files directly in `dir` (names and contents, FNV-1a): what a tool built
/// from this repository's own Go source is stored under, so that an edit builds it again.
pub fn source_fingerprint(dir: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let contents = std::fs::read(&file).unwrap();
        for byte in name.bytes().chain([0]).chain(contents).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}
