//! The `helm` binary the chart tests run: built once from the Go module proxy into the tools'
//! store (`go_tool::tools_store`), so every test binary, every later run and every other
//! checkout reuses it.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
};

use super::{go_tool, shared_target_dir};

/// The pinned release, the newest of Helm 4 when it was set: see docs/helm.md.
pub const VERSION: &str = "v4.3.2";
pub const MODULE: &str = "helm.sh/helm/v4/cmd/helm@v4.3.2";

/// `helm`, built on first use; `None`, said on stderr, when Go is not installed.
pub fn helm() -> Option<&'static Path> {
    static HELM: OnceLock<Option<PathBuf>> = OnceLock::new();
    HELM.get_or_init(build).as_deref()
}

fn build() -> Option<PathBuf> {
    let built = go_tool::build_once(&go_tool::tool_dir("helm", VERSION), "helm", |staging| {
        let mut go = Command::new("go");
        go.arg("install");
        go_tool::build_like_the_scripts(&mut go);
        go.arg(MODULE)
            .env("GOBIN", staging)
            .env("GOFLAGS", "-mod=readonly");
        go
    });
    if built.is_none() {
        eprintln!(
            "[helm] NOT RUN: the chart checks with the real helm: `go` is not installed, so {MODULE} cannot be built (install Go 1.24 or newer)"
        );
    }
    built
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
