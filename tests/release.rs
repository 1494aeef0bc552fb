//! opgen's own CI and release: the workflows' structure (GitHub Actions cannot run here), the
//! release notes CHANGELOG.md gives, the crates' metadata, and `cargo publish --dry-run` of
//! every crate of the workspace.

use std::path::Path;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn workflow(name: &str) -> Value {
    let path = Path::new(ROOT).join(".github/workflows").join(name);
    serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The `run` scripts of a job's steps, and the actions it uses.
fn runs(job: &Value) -> Vec<&str> {
    steps(job).filter_map(|step| step["run"].as_str()).collect()
}

fn steps(job: &Value) -> impl Iterator<Item = &Value> {
    job["steps"].as_array().expect("a job with steps").iter()
}

fn uses<'a>(job: &'a Value, action: &str) -> Option<&'a Value> {
    steps(job).find(|step| {
        step["uses"]
            .as_str()
            .is_some_and(|uses| uses.starts_with(&format!("{action}@")))
    })
}

/// The command the README's "Run the tests" section gives.
fn readme_test_command() -> String {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let section = &readme[readme.find("## Run the tests").expect("a test section")..];
    let block = &section[section.find("```sh\n").unwrap() + 6..];
    block[..block.find("```").unwrap()].trim().to_owned()
}

/// The workspace as `cargo metadata` sees it.
fn metadata() -> Value {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// opgen's own package, as `cargo metadata` describes it.
fn opgen_package() -> Value {
    metadata()["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|package| package["name"] == "opgen")
        .unwrap()
        .clone()
}

/// The workspace's publishable crates, each after the members it depends on.
fn publish_order(metadata: &Value) -> Vec<String> {
    let members: Vec<&Value> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|package| package["publish"] != serde_json::json!([]))
        .collect();
    let mut order: Vec<String> = Vec::new();
    while order.len() < members.len() {
        let before = order.len();
        for member in &members {
            let name = member["name"].as_str().unwrap().to_owned();
            let ready = member["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                // A dev-dependency is not published (the runtime's on itself, for its tests).
                .filter(|dep| dep["kind"] != "dev")
                .all(|dep| {
                    let dep = dep["name"].as_str().unwrap();
                    !members.iter().any(|m| m["name"] == dep) || order.iter().any(|o| o == dep)
                });
            if ready && !order.contains(&name) {
                order.push(name);
            }
        }
        assert!(order.len() > before, "a dependency cycle among {order:?}");
    }
    order
}

#[test]
fn ci_checks_formatting_clippy_and_the_readmes_tests() {
    let ci = workflow("ci.yml");
    assert!(ci["on"]["push"].is_object(), "{:?}", ci["on"]);
    assert!(
        ci["on"].get("pull_request").is_some(),
        "CI on pull requests: {:?}",
        ci["on"]
    );
    let jobs = ci["jobs"].as_object().unwrap();
    let every_run: Vec<&str> = jobs.values().flat_map(runs).collect();
    assert!(
        every_run.contains(&"cargo fmt --all --check"),
        "{every_run:?}"
    );
    assert!(
        every_run
            .iter()
            .any(|run| run.starts_with("cargo clippy") && run.ends_with("-- -D warnings")),
        "{every_run:?}"
    );
    let command = readme_test_command();
    let (_, test) = jobs
        .iter()
        .find(|(_, job)| runs(job).contains(&command.as_str()))
        .unwrap_or_else(|| panic!("no job runs the README's `{command}`"));
    // The control plane and the Go tools persist between runs of the test job.
    let cache = uses(test, "actions/cache").expect("a cache step");
    assert!(
        cache["with"]["path"]
            .as_str()
            .unwrap()
            .contains("kubebuilder-envtest"),
        "{cache:?}"
    );
    assert!(
        cache["with"]["key"]
            .as_str()
            .unwrap()
            .contains("hashFiles('scripts/control-plane.sh')"),
        "{cache:?}"
    );
    assert!(uses(test, "actions/setup-go").is_some());
    assert!(uses(test, "Swatinem/rust-cache").is_some());
    assert!(uses(test, "azure/setup-kubectl").is_some());
}

#[test]
fn a_release_tag_builds_four_platforms_with_checksums_and_notes() {
    let release = workflow("release.yml");
    assert_eq!(
        release["on"]["push"]["tags"],
        serde_json::json!(["v[0-9]+.[0-9]+.[0-9]+"])
    );
    let jobs = &release["jobs"];

    let build = &jobs["build"];
    let targets: Vec<&str> = build["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin"
        ]
    );
    let build_runs = runs(build).join("\n");
    for needle in [
        "cargo build --release --locked --target \"$TARGET\"",
        "completions bash",
        "completions zsh",
        "completions fish",
        "\"$bin\" man > \"dist/$name/man/man1/opgen.1\"",
        "shasum -a 256 \"$name.tar.gz\" > \"$name.tar.gz.sha256\"",
    ] {
        assert!(build_runs.contains(needle), "build lacks {needle:?}");
    }

    // `cargo binstall opgen` finds the archive the build names.
    let opgen = opgen_package();
    let binstall = &opgen["metadata"]["binstall"];
    let archive = binstall["pkg-url"]
        .as_str()
        .unwrap()
        .replace("{ repo }", opgen["repository"].as_str().unwrap())
        .replace("{ version }", "1.2.3")
        .replace("{ name }", "opgen")
        .replace("{ target }", "x86_64-apple-darwin")
        .replace("{ archive-suffix }", ".tar.gz");
    let built = "opgen-$GITHUB_REF_NAME-$TARGET"
        .replace("$GITHUB_REF_NAME", "v1.2.3")
        .replace("$TARGET", "x86_64-apple-darwin");
    assert!(build_runs.contains("name=\"opgen-$GITHUB_REF_NAME-$TARGET\""));
    assert_eq!(
        archive,
        format!(
            "{}/releases/download/v1.2.3/{built}.tar.gz",
            opgen["repository"].as_str().unwrap()
        )
    );
    assert_eq!(
        binstall["bin-dir"].as_str().unwrap(),
        "{ name }-v{ version }-{ target }/{ bin }{ binary-ext }"
    );

    let publish_release = &jobs["release"];
    assert_eq!(publish_release["needs"], "build");
    assert_eq!(publish_release["permissions"]["contents"], "write");
    let release_runs = runs(publish_release).join("\n");
    assert!(release_runs.contains("scripts/release-notes.sh \"${GITHUB_REF_NAME#v}\" > notes.md"));
    assert!(release_runs.contains("--notes-file notes.md dist/*.tar.gz dist/*.tar.gz.sha256"));

    // crates.io after the binaries; cargo orders the workspace's crates by their dependencies.
    let publish = &jobs["publish"];
    assert_eq!(publish["needs"], "release");
    assert!(runs(publish).contains(&"cargo publish --workspace --locked"));
}

#[test]
fn release_notes_come_from_the_changelog() {
    let version = env!("CARGO_PKG_VERSION");
    let notes = std::process::Command::new("scripts/release-notes.sh")
        .arg(version)
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(notes.status.success(), "{notes:?}");
    let notes = String::from_utf8(notes.stdout).unwrap();
    assert!(notes.starts_with("### Added\n\n- "), "{notes}");
    assert!(
        !notes.contains("## ["),
        "one release's notes only:\n{notes}"
    );
    assert!(
        !notes.contains("]: https://"),
        "no link references:\n{notes}"
    );

    let missing = std::process::Command::new("scripts/release-notes.sh")
        .arg("0.0.0")
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        "CHANGELOG.md has no notes for 0.0.0: add a `## [0.0.0]` section\n"
    );

    let changelog = std::fs::read_to_string(Path::new(ROOT).join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains("\n## [Unreleased]\n"));
    assert!(
        changelog.contains(&format!("\n[{version}]: ")),
        "a link for {version}"
    );
}

#[test]
fn every_crate_has_the_metadata_crates_io_shows() {
    let metadata = metadata();
    for package in metadata["packages"].as_array().unwrap() {
        let name = &package["name"];
        for field in [
            "description",
            "license",
            "repository",
            "homepage",
            "documentation",
            "readme",
        ] {
            assert!(
                package[field].as_str().is_some_and(|v| !v.is_empty()),
                "{name} has no {field}"
            );
        }
        for field in ["keywords", "categories"] {
            assert!(
                package[field].as_array().is_some_and(|v| !v.is_empty()),
                "{name} has no {field}"
            );
        }
    }
}

/// Packages and verifies every crate of the workspace as crates.io would receive it, in the
/// order the release publishes them (a member before those that depend on it). Needs
/// crates.io's index; the verification builds each crate once.
#[test]
fn cargo_publish_dry_run_passes_for_every_crate() {
    let metadata = metadata();
    let order = publish_order(&metadata);
    assert!(order.contains(&"opgen".to_owned()), "{order:?}");
    let output = std::process::Command::new(env!("CARGO"))
        .args([
            "publish",
            "--dry-run",
            "--workspace",
            "--locked",
            "--allow-dirty",
        ])
        .current_dir(ROOT)
        .env("CARGO_TERM_COLOR", "never")
        // opgen-runtime leaves the Kubernetes version to the project using it; building it
        // alone, as the verification does, needs one named.
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "cargo publish --dry-run:\n{stderr}"
    );
    let packaged: Vec<&str> = stderr
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("Packaging "))
        .map(|rest| rest.split_whitespace().next().unwrap())
        .collect();
    // Every crate, none before a member it depends on (cargo orders the independent ones
    // its own way).
    let mut sorted_packaged = packaged.clone();
    sorted_packaged.sort_unstable();
    let mut sorted_order: Vec<&str> = order.iter().map(String::as_str).collect();
    sorted_order.sort_unstable();
    assert_eq!(sorted_packaged, sorted_order, "{stderr}");
    for (later, name) in order.iter().enumerate() {
        let position = packaged.iter().position(|p| p == name).unwrap();
        for earlier in &order[..later] {
            if depends_on(&metadata, name, earlier) {
                let before = packaged.iter().position(|p| p == earlier).unwrap();
                assert!(before < position, "{earlier} after {name}:\n{stderr}");
            }
        }
    }
}

/// Whether workspace package `name` has a non-dev dependency on `dependency`.
fn depends_on(metadata: &Value, name: &str, dependency: &str) -> bool {
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|package| package["name"] == name)
        .flat_map(|package| package["dependencies"].as_array().unwrap())
        .any(|dep| dep["name"] == dependency && dep["kind"] != "dev")
}

/// The build job's `Package` step, run on this machine with opgen's own binary standing in
/// for the release build: the archive holds the binary where `cargo binstall` looks for it,
/// the completions and the man page, and its checksum file verifies it.
#[test]
fn the_package_step_makes_the_archive_binstall_expects() {
    let release = workflow("release.yml");
    let package = steps(&release["jobs"]["build"])
        .find(|step| step["name"] == "Package")
        .and_then(|step| step["run"].as_str())
        .expect("a Package step")
        .to_owned();
    let target = "x86_64-unknown-linux-musl";
    let version = env!("CARGO_PKG_VERSION");
    let checkout = tempfile::tempdir().unwrap();
    let built = checkout.path().join(format!("target/{target}/release"));
    std::fs::create_dir_all(&built).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_opgen"), built.join("opgen")).unwrap();
    for file in ["README.md", "CHANGELOG.md"] {
        std::fs::copy(Path::new(ROOT).join(file), checkout.path().join(file)).unwrap();
    }
    let output = std::process::Command::new("bash")
        .args(["-eo", "pipefail", "-c", &package])
        .current_dir(checkout.path())
        .env("TARGET", target)
        .env("GITHUB_REF_NAME", format!("v{version}"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");

    let dist = checkout.path().join("dist");
    let name = format!("opgen-v{version}-{target}");
    let verify = std::process::Command::new("sha256sum")
        .args(["-c", &format!("{name}.tar.gz.sha256")])
        .current_dir(&dist)
        .output()
        .unwrap();
    assert!(verify.status.success(), "{verify:?}");
    let listing = std::process::Command::new("tar")
        .args(["-tzf", &format!("{name}.tar.gz")])
        .current_dir(&dist)
        .output()
        .unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let mut files: Vec<&str> = listing.lines().filter(|l| !l.ends_with('/')).collect();
    files.sort_unstable();
    let expected: Vec<String> = [
        "CHANGELOG.md",
        "README.md",
        "completions/_opgen",
        "completions/opgen.bash",
        "completions/opgen.fish",
        "man/man1/opgen.1",
        "opgen",
    ]
    .iter()
    .map(|file| format!("{name}/{file}"))
    .collect();
    assert_eq!(files, expected);
    // binstall's `bin-dir`, filled in for this archive, names the binary in it.
    let opgen = opgen_package();
    let bin_dir = opgen["metadata"]["binstall"]["bin-dir"]
        .as_str()
        .unwrap()
        .replace("{ name }", "opgen")
        .replace("{ version }", version)
        .replace("{ target }", target)
        .replace("{ bin }", "opgen")
        .replace("{ binary-ext }", "");
    assert!(files.contains(&bin_dir.as_str()), "{bin_dir} in {files:?}");
    let page = std::fs::read_to_string(dist.join(&name).join("man/man1/opgen.1")).unwrap();
    assert!(page.contains(".TH opgen 1"), "{page}");
    let bash = std::fs::read_to_string(dist.join(&name).join("completions/opgen.bash")).unwrap();
    assert!(bash.contains("_opgen()"), "{bash}");
}
