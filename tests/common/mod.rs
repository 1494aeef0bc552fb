//! Helpers shared by opgen's integration tests.
#![allow(dead_code)] // each test binary uses its own subset

pub mod control_plane;
pub mod http;
pub mod kubectl;
pub mod operator;
pub mod process;
pub mod wait;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

/// `opgen` run in `dir`, never prompting and never colouring.
pub fn opgen(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("opgen");
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CARGO_TARGET_DIR");
    cmd
}

/// Every file under `dir` (but build output) with its bytes, keyed by relative path.
pub fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != "target")
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// A fresh project in a temporary directory: `opgen init <args>` with domain example.com.
pub struct Project {
    pub temp: tempfile::TempDir,
    pub root: PathBuf,
}

impl Project {
    /// `opgen init <name> --domain example.com <extra>`, `extra` split at whitespace.
    pub fn init(name: &str, extra: &str) -> Self {
        Self::init_args(name, &extra.split_whitespace().collect::<Vec<_>>())
    }

    /// `opgen init <name> <extra>`, with `--domain example.com` unless `extra` has a domain.
    pub fn init_args(name: &str, extra: &[&str]) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join(name);
        let domain: &[&str] = if extra.contains(&"--domain") {
            &[]
        } else {
            &["--domain", "example.com"]
        };
        opgen(temp.path())
            .args(["init", name])
            .args(domain)
            .args(extra)
            .assert()
            .success();
        Self { temp, root }
    }

    pub fn opgen(&self) -> assert_cmd::Command {
        opgen(&self.root)
    }

    /// Runs `opgen create api` with the given flags and expects success.
    /// Runs `opgen create api <args>` (split at whitespace) and expects success.
    pub fn create_api(&self, args: &str) {
        self.opgen()
            .args(["create", "api"])
            .args(args.split_whitespace())
            .assert()
            .success();
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    pub fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        read_tree(&self.root)
    }
}
