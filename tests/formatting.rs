//! opgen writes Rust that is rustfmt-clean without running rustfmt over it: `init`'s files
//! and every generated file are laid out to be clean as rendered, and only the files
//! `create api` scaffolds go through rustfmt. Checked here for the shortest and the longest
//! names, since names are what could change how lines wrap, under rustfmt's defaults and
//! under a project's `max_width = 80`.

mod common;

use std::{path::Path, process::Command};

use common::Project;

/// rustfmt's configurations a generated file must be clean under: the defaults, and a
/// narrower project. (A scaffolded file is the user's to format once they add a
/// configuration, so it is checked under the defaults only.)
const GENERATED: [&str; 2] = ["", "max_width = 80\n"];
const SCAFFOLDED: [&str; 1] = [""];

fn assert_rustfmt_clean(project: &Project, files: &[&str], configs: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for (index, config) in configs.iter().enumerate() {
        let path = dir.path().join(format!("rustfmt-{index}.toml"));
        std::fs::write(&path, config).unwrap();
        let output = Command::new("rustfmt")
            .args(["--edition", "2024", "--check", "--config-path"])
            .arg(&path)
            .args(files)
            .current_dir(&project.root)
            .output()
            .expect("rustfmt runs");
        assert!(
            output.status.success(),
            "the Rust files of {} are not rustfmt-clean with {config:?}:\n{}",
            project.root.display(),
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

/// The generated Rust files of the api crate.
fn generated_api_files(root: &Path) -> Vec<String> {
    let mut files = vec![
        "api/src/lib.rs".to_owned(),
        "api/src/bin/crdgen.rs".to_owned(),
        "api/tests/manifests.rs".to_owned(),
    ];
    for entry in walkdir::WalkDir::new(root.join("api/src")) {
        let entry = entry.unwrap();
        if entry.file_name() == "mod.rs" {
            let relative = entry.path().strip_prefix(root).unwrap();
            files.push(relative.to_string_lossy().into_owned());
        }
    }
    files
}

/// The generated Rust files of the manager: the library's root, the `controllers` module tree
/// and the integration tests' root (rustfmt follows them into the kinds' files, which are
/// scaffolded).
fn generated_manager_files(root: &Path) -> Vec<String> {
    let mut files = vec![
        "src/lib.rs".to_owned(),
        "tests/integration/main.rs".to_owned(),
    ];
    for dir in ["src/controllers", "src/webhooks"] {
        if !root.join(dir).is_dir() {
            continue;
        }
        for entry in walkdir::WalkDir::new(root.join(dir)).sort_by_file_name() {
            let entry = entry.unwrap();
            if entry.file_name() == "mod.rs" {
                let relative = entry.path().strip_prefix(root).unwrap();
                files.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    files
}

/// The project's copy of opgen-runtime, checked under the defaults only: it is not a member of
/// the project's workspace, so neither `cargo fmt` nor a project configuration applies to it.
const RUNTIME: [&str; 1] = ["vendor/opgen-runtime/src/lib.rs"];

/// `init`'s scaffolded entry point under the defaults, its generated files under both.
fn assert_init_clean(project: &Project) {
    assert_rustfmt_clean(project, &["src/main.rs"], &SCAFFOLDED);
    assert_rustfmt_clean(project, &RUNTIME, &SCAFFOLDED);
    let mut files = generated_api_files(&project.root);
    files.extend(generated_manager_files(&project.root));
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    assert_rustfmt_clean(project, &files, &GENERATED);
}

#[test]
fn init_writes_rustfmt_clean_code_for_short_names() {
    assert_init_clean(&Project::init_args("a", &["--domain", "x.io"]));
}

#[test]
fn init_writes_rustfmt_clean_code_for_long_names() {
    let name = "a-long-operator-name-of-28ch";
    assert_eq!(name.len(), 28, "the longest project name init accepts");
    let domain = "platform.engineering.infrastructure.example.corp";
    assert_init_clean(&Project::init_args(
        name,
        &["--domain", domain, "--namespaced"],
    ));
}

/// Generated files list kinds, versions and groups: short and long names, names that sort
/// differently as `mod` and as `use` lines, and names whose module gets a `_`.
#[test]
fn generated_files_are_rustfmt_clean_with_kinds_present() {
    let long_kind = format!("A{}", "b".repeat(58));
    let long_group = "g".repeat(63);
    let project = Project::init_args("a-long-operator-name-of-28ch", &[]);
    for args in [
        "--group a --version v1 --kind A".to_owned(),
        "--group a --version v1alpha1 --kind A".to_owned(),
        "--group a --version v10 --kind A".to_owned(),
        "--group a --version v2 --kind A".to_owned(),
        "--group a --version v1 --kind Thing2 --short-name t2".to_owned(),
        "--group a --version v1 --kind Thing10 --short-name t10".to_owned(),
        "--group a --version v1 --kind ABd --plural abds1 --short-name abd1".to_owned(),
        "--group a --version v1 --kind AbCde".to_owned(),
        "--group a-b --version v1 --kind Thing".to_owned(),
        "--group a --version v1 --kind Match".to_owned(),
        "--group a --version v1 --kind Option".to_owned(),
        "--group 1db --version v1 --kind Thing".to_owned(),
        "--group type --version v1beta1 --kind Thing".to_owned(),
        "--group type2 --version v1 --kind Thing".to_owned(),
        "--group rustfmt --version v1 --kind Thing".to_owned(),
        format!("--group {long_group} --version v1alpha1 --kind {long_kind}"),
        format!("--group {long_group} --version v1 --kind {long_kind}"),
    ] {
        project.create_api(&args);
    }
    // Webhooks list kinds too, and hand the webhook server to the runtime.
    for args in [
        "--group a --version v1 --kind A --defaulting --validation".to_owned(),
        "--group a-b --version v1 --kind Thing --validation".to_owned(),
        format!("--group {long_group} --version v1alpha1 --kind {long_kind} --defaulting"),
        format!("--group {long_group} --version v1 --kind {long_kind} --validation --conversion"),
    ] {
        project
            .opgen()
            .args(["create", "webhook"])
            .args(args.split_whitespace())
            .assert()
            .success();
    }
    assert_rustfmt_clean(&project, &RUNTIME, &SCAFFOLDED);
    let mut files = generated_api_files(&project.root);
    assert!(files.len() > 10, "{files:?}");
    let manager_files = generated_manager_files(&project.root);
    assert!(manager_files.len() > 3, "{manager_files:?}");
    files.extend(manager_files);
    // rustfmt follows `mod` lines into the kinds' files, which are scaffolded (formatted with
    // the project's configuration when written): they are emptied, to check only the rest.
    for dir in [
        "api/src",
        "src/controllers",
        "src/webhooks",
        "tests/integration",
    ] {
        for entry in walkdir::WalkDir::new(project.root.join(dir)) {
            let entry = entry.unwrap();
            let relative = entry.path().strip_prefix(&project.root).unwrap();
            let relative = relative.to_string_lossy();
            if relative.ends_with(".rs") && !files.iter().any(|f| *f == relative) {
                std::fs::write(entry.path(), "//! A kind.\n").unwrap();
            }
        }
    }
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    assert_rustfmt_clean(&project, &files, &GENERATED);
}

/// The `runtime` module that the generated `src/lib.rs` keeps while a file of the project names
/// the runtime as opgen 0.1 and 0.2 did is clean too.
#[test]
fn the_runtime_paths_of_earlier_releases_are_rustfmt_clean() {
    let project = Project::init_args("a-long-operator-name-of-28ch", &[]);
    project.write("src/legacy.rs", "use crate::runtime::Context;\n");
    project
        .opgen()
        .args(["generate", "manifests"])
        .assert()
        .success();
    assert!(
        project.read("src/lib.rs").contains("pub mod runtime {"),
        "{}",
        project.read("src/lib.rs")
    );
    assert_rustfmt_clean(&project, &["src/lib.rs"], &GENERATED);
}
