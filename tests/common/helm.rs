//! The `helm` binary the chart tests run: built once from the Go module proxy into the shared
//! target directory, so every test binary and every later run reuses it.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
    time::Instant,
};

use super::shared_target_dir;

/// The pinned release, the newest of Helm 4 when it was set: see docs/helm.md.
pub const VERSION: &str = "v4.3.2";
pub const MODULE: &str = "helm.sh/helm/v4/cmd/helm@v4.3.2";

/// `helm`, built on first use; `None`, said on stderr, when Go is not installed.
pub fn helm() -> Option<&'static Path> {
    static HELM: OnceLock<Option<PathBuf>> = OnceLock::new();
    HELM.get_or_init(build).as_deref()
}

fn build() -> Option<PathBuf> {
    let dir = shared_target_dir().join("helm").join(VERSION);
    let binary = dir.join("helm");
    if binary.is_file() {
        return Some(binary);
    }
    // Built beside the final place and renamed into it, so that two test binaries building
    // at once never run a half-written file.
    // On a fresh checkout the shared directory may not exist yet (no project built so far).
    std::fs::create_dir_all(shared_target_dir()).unwrap();
    let staging = tempfile::tempdir_in(shared_target_dir()).unwrap();
    let started = Instant::now();
    let mut go = Command::new("go");
    go.arg("install");
    super::go_tool::build_like_the_scripts(&mut go);
    let output = match go
        .arg(MODULE)
        .env("GOBIN", staging.path())
        .env("GOFLAGS", "-mod=readonly")
        .output()
    {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "[helm] NOT RUN: the chart checks with the real helm: `go` is not installed, so {MODULE} cannot be built (install Go 1.24 or newer)"
            );
            return None;
        }
        Err(err) => panic!("cannot run go: {err}"),
    };
    assert!(
        output.status.success(),
        "go install {MODULE} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::rename(staging.path().join("helm"), &binary).unwrap();
    eprintln!("[helm] go install {MODULE} ({:.0?})", started.elapsed());
    Some(binary)
}

/// Runs `helm <args>` in `dir`, with Helm's own cache and settings in the shared target
/// directory rather than the user's home.
pub fn run(helm: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    let home = shared_target_dir().join("helm").join("home");
    Command::new(helm)
        .args(args)
        .current_dir(dir)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .unwrap()
}
