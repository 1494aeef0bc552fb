//! What cargo says of a project (`cargo metadata`): the target directory it builds into, and
//! the name of the api crate's crdgen binary, which a project made by an older opgen calls
//! plain `crdgen` and a newer one names after the project (so that projects sharing a target
//! directory never run one another's).

use std::{
    io::Read as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
};

use crate::interrupt::{self, Interrupt, Interrupted};

/// The file every api crate builds its crdgen from.
const CRDGEN_SOURCE: &str = "src/bin/crdgen.rs";

/// Where and what cargo builds for the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildInfo {
    /// The target directory (`CARGO_TARGET_DIR` and cargo's configuration files followed).
    pub target_directory: PathBuf,
    /// The name of the binary built from the api crate's `src/bin/crdgen.rs`.
    pub crdgen: Option<String>,
}

/// What cargo says of the project at `root`, whose api crate is the package `api_package`;
/// `None` when cargo cannot read the project (the build then says what is wrong). cargo runs
/// in a process group of its own, stopped on Ctrl-C.
pub fn read(
    root: &Path,
    api_package: &str,
    interrupt: &Interrupt,
) -> Result<Option<BuildInfo>, Interrupted> {
    let mut command = Command::new("cargo");
    command
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    interrupt::own_process_group(&mut command);
    let Ok(mut child) = command.spawn() else {
        return Ok(None);
    };
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let status = interrupt.wait(&mut child)?;
    let bytes = reader.join().unwrap_or_default();
    if !status.is_ok_and(|status| status.success()) {
        return Ok(None);
    }
    let metadata: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
    Ok(metadata.and_then(|metadata| parse(&metadata, api_package)))
}

fn parse(metadata: &serde_json::Value, api_package: &str) -> Option<BuildInfo> {
    let target_directory = PathBuf::from(metadata["target_directory"].as_str()?);
    let packages = metadata["packages"].as_array()?;
    let api = packages.iter().find(|p| p["name"] == api_package);
    let crdgen = api
        .and_then(|api| api["targets"].as_array())
        .into_iter()
        .flatten()
        .find(|target| {
            let is_bin = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"));
            let source = target["src_path"].as_str().map(Path::new);
            is_bin && source.is_some_and(|source| source.ends_with(CRDGEN_SOURCE))
        })
        .and_then(|target| target["name"].as_str())
        .map(str::to_owned);
    Some(BuildInfo {
        target_directory,
        crdgen,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn metadata(bin: &str) -> serde_json::Value {
        json!({
            "target_directory": "/home/dev/demo/target",
            "packages": [
                { "name": "demo", "targets": [
                    { "kind": ["bin"], "name": "demo", "src_path": "/p/src/main.rs" },
                ]},
                { "name": "demo-api", "targets": [
                    { "kind": ["lib"], "name": "demo_api", "src_path": "/p/api/src/lib.rs" },
                    { "kind": ["bin"], "name": bin, "src_path": "/p/api/src/bin/crdgen.rs" },
                ]},
            ],
        })
    }

    #[test]
    fn finds_the_target_directory_and_the_name_of_crdgen() {
        let info = parse(&metadata("demo-crdgen"), "demo-api").unwrap();
        assert_eq!(
            info.target_directory,
            PathBuf::from("/home/dev/demo/target")
        );
        assert_eq!(info.crdgen.as_deref(), Some("demo-crdgen"));
    }

    #[test]
    fn an_older_project_calls_it_crdgen() {
        let info = parse(&metadata("crdgen"), "demo-api").unwrap();
        assert_eq!(info.crdgen.as_deref(), Some("crdgen"));
    }

    #[test]
    fn without_the_api_crate_there_is_no_crdgen() {
        let info = parse(&metadata("crdgen"), "other-api").unwrap();
        assert_eq!(info.crdgen, None);
    }

    #[test]
    fn reads_a_real_project() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"demo-api\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("src/bin")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/bin/crdgen.rs"), "fn main() {}").unwrap();
        let info = read(dir.path(), "demo-api", &Interrupt::never())
            .unwrap()
            .expect("cargo reads it");
        assert_eq!(info.crdgen.as_deref(), Some("crdgen"));
        let expected = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("target"));
        assert_eq!(info.target_directory, expected);
    }
}
