//! The one-node cluster of `scripts/cluster.sh`, for the tests that run pods on it
//! (`tests/cluster.rs`, and the node scenario of `tests/e2e.rs`).

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

/// `scripts/cluster.sh` of this repository.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cluster.sh")
}

/// Why the cluster cannot run here, if it cannot: the test says so and returns.
pub fn cannot_run_here() -> Option<&'static str> {
    if !cfg!(target_os = "linux") {
        return Some("the cluster runs on Linux only");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some(
            "the cluster needs root (containerd, a bridge, iptables rules); run the tests as root, as CI does",
        );
    }
    None
}

/// `scripts/cluster.sh <args>`, its progress on our stderr as it happens; stdout captured.
pub fn cluster(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("bash runs")
}
