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

use std::process::Command;

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
