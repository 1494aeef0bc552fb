//! `opgen init` writes Rust that is rustfmt-clean without running rustfmt (later commands
//! run it): checked here for the shortest and the longest project names and domains, since
//! names are what could change how lines wrap. (That the files opgen generates stay clean as
//! rendered once kinds are added is checked by the `scaffold` module's unit tests.)

mod common;

use std::process::Command;

use common::Project;

fn assert_rustfmt_clean(project: &Project) {
    let roots = [
        "src/main.rs",
        "src/lib.rs",
        "api/src/lib.rs",
        "api/src/bin/crdgen.rs",
        "api/tests/manifests.rs",
    ];
    let output = Command::new("rustfmt")
        .args(["--edition", "2024", "--check"])
        .args(roots)
        .current_dir(&project.root)
        .output()
        .expect("rustfmt runs");
    assert!(
        output.status.success(),
        "the Rust files of {} are not rustfmt-clean:\n{}",
        project.root.display(),
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn init_writes_rustfmt_clean_code_for_short_names() {
    let project = Project::init_args("a", &["--domain", "x.io"]);
    assert_rustfmt_clean(&project);
}

#[test]
fn init_writes_rustfmt_clean_code_for_long_names() {
    let name = "a-rather-long-operator-name-of-forty-chr";
    assert_eq!(name.len(), 40, "the longest project name opgen accepts");
    let domain = "platform.engineering.infrastructure.example.corp";
    let project = Project::init_args(name, &["--domain", domain, "--namespaced"]);
    assert_rustfmt_clean(&project);
}
