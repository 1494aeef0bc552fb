//! What cargo says of a project (`cargo metadata`): the target directory it builds into; the
//! name of the api crate's crdgen binary, which a project made by an older opgen calls plain
//! `crdgen` and a newer one names after the project (so that projects sharing a target
//! directory never run one another's); and where the api crate is, with the workspace members
//! it is built from, to tell a build of this checkout from one of another checkout.

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
    /// The api crate's directory: what a crdgen built from this checkout says it was built
    /// from.
    pub api_dir: Option<PathBuf>,
    /// The api crate and the workspace members it depends on, sorted: the packages whose
    /// builds crdgen is made of.
    pub api_packages: Vec<String>,
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
    let api_dir = api
        .and_then(|api| api["manifest_path"].as_str())
        .and_then(|manifest| Path::new(manifest).parent())
        .map(Path::to_path_buf);
    Some(BuildInfo {
        target_directory,
        crdgen,
        api_dir,
        api_packages: api.map_or_else(Vec::new, |_| members_built_into(packages, api_package)),
    })
}

/// `package` and every workspace member it depends on for its build, directly or through
/// another member (dev-dependencies do not count: crdgen is no test). `packages` are the
/// workspace's members, as `cargo metadata --no-deps` lists them.
fn members_built_into(packages: &[serde_json::Value], package: &str) -> Vec<String> {
    let mut found = vec![package.to_owned()];
    let mut next = 0;
    while let Some(name) = found.get(next).cloned() {
        next += 1;
        let Some(member) = packages.iter().find(|p| p["name"] == name.as_str()) else {
            continue;
        };
        let dependencies = member["dependencies"].as_array().into_iter().flatten();
        for dependency in dependencies.filter(|d| d["kind"] != "dev") {
            let Some(dependency) = dependency["name"].as_str() else {
                continue;
            };
            let is_member = packages.iter().any(|p| p["name"] == dependency);
            if is_member && !found.iter().any(|f| f == dependency) {
                found.push(dependency.to_owned());
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn metadata(bin: &str) -> serde_json::Value {
        json!({
            "target_directory": "/home/dev/demo/target",
            "packages": [
                { "name": "demo", "manifest_path": "/p/Cargo.toml", "targets": [
                    { "kind": ["bin"], "name": "demo", "src_path": "/p/src/main.rs" },
                ], "dependencies": [
                    { "name": "demo-api", "kind": null, "path": "/p/api" },
                ]},
                { "name": "demo-api", "manifest_path": "/p/api/Cargo.toml", "targets": [
                    { "kind": ["lib"], "name": "demo_api", "src_path": "/p/api/src/lib.rs" },
                    { "kind": ["bin"], "name": bin, "src_path": "/p/api/src/bin/crdgen.rs" },
                ], "dependencies": [
                    { "name": "kube", "kind": null },
                ]},
            ],
        })
    }

    #[test]
    fn finds_the_api_crates_directory_and_packages() {
        let info = parse(&metadata("demo-crdgen"), "demo-api").unwrap();
        assert_eq!(info.api_dir, Some(PathBuf::from("/p/api")));
        assert_eq!(info.api_packages, ["demo-api"]);
    }

    #[test]
    fn the_api_crate_is_built_from_the_members_it_depends_on() {
        let mut metadata = metadata("demo-crdgen");
        let packages = metadata["packages"].as_array_mut().unwrap();
        packages[1]["dependencies"] = json!([
            { "name": "shared-types", "kind": null, "path": "/p/shared" },
            { "name": "test-helpers", "kind": "dev", "path": "/p/helpers" },
            { "name": "serde", "kind": null },
        ]);
        packages.push(json!({ "name": "shared-types", "dependencies": [
            { "name": "units", "kind": "build", "path": "/p/units" },
        ]}));
        packages.push(json!({ "name": "units", "dependencies": [] }));
        packages.push(json!({ "name": "test-helpers", "dependencies": [] }));
        let info = parse(&metadata, "demo-api").unwrap();
        assert_eq!(info.api_packages, ["demo-api", "shared-types", "units"]);
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
        assert_eq!(info.api_dir, None);
        assert!(info.api_packages.is_empty());
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
        assert_eq!(info.api_dir.as_deref(), Some(dir.path()));
        let expected = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("target"));
        assert_eq!(info.target_directory, expected);
    }
}
