//! Helpers shared by opgen's integration tests.
#![allow(dead_code)] // each test binary uses its own subset

pub mod cluster;
pub mod control_plane;
pub mod docs;
pub mod go_tool;
pub mod helm;
pub mod http;
pub mod kubectl;
pub mod operator;
pub mod otlp;
pub mod process;
pub mod promtool;
pub mod releases;
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
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("OPGEN_TEMPLATES");
    cmd
}

/// Runs `opgen <args>` (split at whitespace) in `dir`, expects exit code `code` and a stderr
/// containing every `needle`, and checks that the tree is unchanged.
pub fn fails_unchanged(dir: &Path, args: &str, code: i32, needles: &[&str]) {
    let before = read_tree(dir);
    let assert = opgen(dir).args(args.split_whitespace()).assert().code(code);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "stderr of {args:?} lacks {needle:?}:\n{stderr}"
        );
    }
    assert!(read_tree(dir) == before, "{args:?} changed the tree");
}

/// The target directory every generated project builds into: `target/e2e`, or
/// `OPGEN_E2E_TARGET_DIR` when set (so that several checkouts can share one dependency build).
pub fn shared_target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("OPGEN_E2E_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("e2e")
}

/// The environment every build of a generated project runs in: the shared target directory,
/// and settings that keep it small. Each project is built once, so incremental state would
/// only fill the disk; full debug information is most of a debug build's size, and line
/// tables are enough for a backtrace. Every test that builds into the shared directory uses
/// all of it, since a different profile would build every dependency a second time.
pub fn generated_build_env() -> [(&'static str, std::ffi::OsString); 4] {
    [
        ("CARGO_TARGET_DIR", shared_target_dir().into_os_string()),
        ("CARGO_INCREMENTAL", "0".into()),
        ("CARGO_PROFILE_DEV_DEBUG", "line-tables-only".into()),
        ("CARGO_TERM_COLOR", "never".into()),
    ]
}

/// Dates every file of the project's vendored opgen-runtime at this opgen binary's build time, so
/// that the generated projects share one build of the runtime in the shared target directory.
///
/// Cargo names a path dependency's build by its path relative to the workspace, the same
/// `vendor/opgen-runtime` in every project, and reuses the build unless a source file is newer
/// than it. Written at `opgen init`, every project's copy is newer than the build of the project
/// before, and each project compiled the runtime again (about half a CPU-minute per project:
/// its build, test build and clippy). The copy is a function of the binary, so a copy dated at the binary is never newer
/// than a build of the same copy, and a new binary (a changed runtime) dates it later than every
/// build of the old one.
///
/// Only in this checkout's own target directory: checkouts sharing `OPGEN_E2E_TARGET_DIR` run
/// binaries of different commits, whose copies could take each other's builds.
pub fn date_vendored_runtime_at_the_binary(project_root: &Path) {
    let vendored = project_root.join("vendor/opgen-runtime");
    if std::env::var_os("OPGEN_E2E_TARGET_DIR").is_some() || !vendored.is_dir() {
        return;
    }
    let built = opgen_built_at();
    for entry in walkdir::WalkDir::new(&vendored) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            std::fs::File::options()
                .write(true)
                .open(entry.path())
                .and_then(|file| file.set_modified(built))
                .unwrap_or_else(|err| panic!("{}: {err}", entry.path().display()));
        }
    }
}

/// When the opgen binary the tests run was built (its modification time).
pub fn opgen_built_at() -> std::time::SystemTime {
    std::fs::metadata(env!("CARGO_BIN_EXE_opgen"))
        .and_then(|metadata| metadata.modified())
        .unwrap()
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
    /// `make <args>` in the project, with this opgen as `OPGEN`; panics with the output
    /// unless it succeeds, and returns stdout and stderr together.
    pub fn make(&self, args: &str) -> String {
        self.make_with(args, &[])
    }

    /// [`Project::make`] with more environment variables.
    pub fn make_with(&self, args: &str, env: &[(&str, &std::ffi::OsStr)]) -> String {
        let (succeeded, text) = self.try_make_with(args, env);
        assert!(succeeded, "make {args} failed:\n{text}");
        text
    }

    /// `make <args>` with this opgen as `OPGEN` and `env` besides: whether it succeeded, and
    /// its stdout and stderr together.
    pub fn try_make_with(&self, args: &str, env: &[(&str, &std::ffi::OsStr)]) -> (bool, String) {
        let output = std::process::Command::new("make")
            .args(args.split_whitespace())
            .arg(format!("OPGEN={}", env!("CARGO_BIN_EXE_opgen")))
            .current_dir(&self.root)
            .env("NO_COLOR", "1")
            .envs(env.iter().copied())
            .output()
            .expect("make runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), text)
    }

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
        date_vendored_runtime_at_the_binary(&root);
        Self { temp, root }
    }

    pub fn opgen(&self) -> assert_cmd::Command {
        opgen(&self.root)
    }

    /// Runs `opgen create api <args>` (split at whitespace) and expects success.
    pub fn create_api(&self, args: &str) {
        self.opgen()
            .args(["create", "api"])
            .args(args.split_whitespace())
            .assert()
            .success();
    }

    /// Writes `text` to `path` in the project, creating its directory.
    pub fn write(&self, path: &str, text: &str) {
        let path = self.root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The script of the step `name` of the job `job` in the generated CI workflow.
    pub fn ci_step(&self, job: &str, name: &str) -> String {
        let workflow: serde_json::Value =
            serde_saphyr::from_str(&self.read(".github/workflows/ci.yml")).unwrap();
        let steps = workflow["jobs"][job]["steps"].as_array().unwrap();
        steps
            .iter()
            .find(|step| step["name"] == name)
            .and_then(|step| step["run"].as_str())
            .unwrap_or_else(|| panic!("no `{name}` step in job `{job}`: {steps:?}"))
            .to_owned()
    }

    pub fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        read_tree(&self.root)
    }
}

impl Project {
    /// Runs `opgen generate manifests` with a stand-in for cargo that prints, as the project's
    /// crdgen would, a CRD for every kind of `PROJECT`, without building anything (which takes
    /// minutes): all versions of the kind, the stored one marked, and the fields `create api`
    /// scaffolds with their doc comments, and the conversion webhook of a kind that has one.
    /// The role comes from the markers, as always.
    pub fn generate_manifests_without_building(&self) {
        let path = self.crdgen_stand_in(&self.read("PROJECT"));
        self.opgen()
            .args(["generate", "manifests"])
            .env("PATH", path)
            .assert()
            .success();
    }

    /// A `PATH` whose `cargo` prints, as the project's crdgen would, the CRDs of the kinds of
    /// `record` (a `PROJECT`'s text), for a command that builds crdgen (see
    /// [`Project::generate_manifests_without_building`]).
    pub fn crdgen_stand_in(&self, record: &str) -> std::ffi::OsString {
        let project: serde_json::Value = serde_saphyr::from_str(record).unwrap();
        let domain = project["domain"].as_str().unwrap();
        let project_name = project["projectName"].as_str().unwrap();
        let resources = project["resources"].as_array().unwrap();
        let mut kinds: Vec<(&str, &str)> = Vec::new();
        for resource in resources {
            let key = (
                resource["group"].as_str().unwrap(),
                resource["kind"].as_str().unwrap(),
            );
            if !kinds.contains(&key) {
                kinds.push(key);
            }
        }
        let mut stream = String::new();
        for (group, kind) in kinds {
            let versions: Vec<&serde_json::Value> = resources
                .iter()
                .filter(|r| r["group"] == group && r["kind"] == kind)
                .collect();
            let first = versions[0];
            let plural = first["plural"].as_str().unwrap();
            let qualified = format!("{group}.{domain}");
            let operand = versions.iter().find_map(|r| r.get("operand"));
            let mut crd = serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{plural}.{qualified}")},
                "spec": {
                    "group": qualified,
                    "names": {
                        "kind": kind,
                        "plural": plural,
                        "singular": kind.to_lowercase(),
                        "shortNames": [first["shortName"]],
                    },
                    "scope": if first["namespaced"] == true { "Namespaced" } else { "Cluster" },
                    "versions": versions.iter().map(|r| serde_json::json!({
                        "name": r["version"],
                        "served": true,
                        "storage": r["storage"],
                        "schema": {"openAPIV3Schema": fake_schema(kind, plural, operand)},
                        "subresources": {"status": {}},
                    })).collect::<Vec<_>>(),
                },
            });
            // As the api crate's `with_conversion` does for a kind with a conversion webhook.
            if versions.iter().any(|r| r["webhooks"]["conversion"] == true) {
                let group_path = qualified.replace('.', "-");
                crd["metadata"]["labels"] =
                    serde_json::json!({"opgen.io/webhook-ca": project_name});
                crd["spec"]["conversion"] = serde_json::json!({
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"service": {
                            "name": "webhook-service",
                            "namespace": "system",
                            "path": format!("/convert-{group_path}-{}", kind.to_lowercase()),
                            "port": 443,
                        }},
                        "conversionReviewVersions": ["v1"],
                    },
                });
            }
            stream.push_str("---\n");
            stream.push_str(&serde_saphyr::to_string(&crd).unwrap());
        }
        let bin = self.temp.path().join("stand-in-cargo");
        std::fs::create_dir_all(&bin).unwrap();
        let output = bin.join("crdgen.yaml");
        std::fs::write(&output, stream).unwrap();
        write_script(
            &bin.join("cargo"),
            &format!("#!/bin/sh\ncat '{}'\n", output.display()),
        );
        std::env::join_paths(
            std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap()
    }
}

/// Writes an executable script.
pub fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The schema of a kind made by `create api` (with `--image` when `operand` is set).
fn fake_schema(kind: &str, plural: &str, operand: Option<&serde_json::Value>) -> serde_json::Value {
    use serde_json::json;
    let field =
        |kind_of: &str, description: &str| json!({"type": kind_of, "description": description});
    let conditions = json!({"type": "array", "items": {"type": "object"}, "description": format!("Conditions describe the current state of the {kind}.")});
    let generation = field(
        "integer",
        "ObservedGeneration is the `metadata.generation` the controller last reconciled.",
    );
    let (spec, status) = match operand {
        None => (
            json!({"size": field("integer", &format!("Size is an example field of {kind}; edit or remove it."))}),
            json!({"conditions": conditions, "observedGeneration": generation}),
        ),
        Some(operand) => {
            let mut spec = json!({
                "replicas": field("integer", "Replicas is the number of pods that run the application (0 stops it). `kubectl scale`\nsets it too."),
                "image": field("string", "Image is the container image of the application."),
                "env": {"type": "array", "items": {"type": "object"}, "description": "Env lists environment variables of the application's container."},
                "resources": {"type": "object", "description": "Resources are the CPU and memory requests and limits of the application's container."},
            });
            if operand.get("port").is_some() {
                spec["port"] = field(
                    "integer",
                    "Port is the TCP port the application listens on.",
                );
            }
            if operand["workload"] == "statefulset" {
                spec["storage"] = json!({"type": "object", "description": "Storage is the persistent volume every pod gets.", "properties": {
                    "size": field("string", "Size is the capacity each pod's volume requests."),
                    "storageClassName": field("string", "StorageClassName is the StorageClass of the volumes."),
                }});
            }
            (
                spec,
                json!({
                    "replicas": field("integer", "Replicas is the number of pods of the application, ready or not."),
                    "readyReplicas": field("integer", "ReadyReplicas is the number of pods that are ready to serve."),
                    "selector": field("string", "Selector selects the pods of the application."),
                    "conditions": conditions,
                    "observedGeneration": generation,
                }),
            )
        }
    };
    json!({
        "description": format!("{kind} is the Schema for the {plural} API."),
        "type": "object",
        "properties": {
            "spec": {"type": "object", "description": format!("{kind}Spec defines the desired state of a {kind}."), "properties": spec},
            "status": {"type": "object", "description": format!("{kind}Status defines the observed state of a {kind}."), "properties": status},
        },
        "required": ["spec"],
    })
}

impl Project {
    /// The kinds the bundle tests use, with their CRDs: a plain kind with two versions, and
    /// operands on a Deployment and on a StatefulSet, both with a Service.
    pub fn add_bundle_kinds(&self) {
        self.create_api("--group db --version v1alpha1 --kind MySQLCluster");
        self.create_api("--group db --version v1 --kind MySQLCluster");
        self.create_api(
            "--group cache --version v1 --kind Memcached --image memcached:1.6 --port 11211",
        );
        self.create_api(
            "--group data --version v1alpha1 --kind PostgresCluster --image postgres:17 --workload statefulset --port 5432 --run-as-user 999",
        );
        self.generate_manifests_without_building();
    }
}
