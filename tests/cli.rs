//! opgen's command line: exit codes and messages for bad input, and the promise that a
//! failed or dry run leaves the directory byte-for-byte as it was.

mod common;

use common::{Project, fails_unchanged, opgen, read_tree};
use predicates::prelude::*;

#[test]
fn help_lists_every_command() {
    let temp = tempfile::tempdir().unwrap();
    opgen(temp.path())
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("init"))
        .stdout(predicate::str::contains("create"))
        .stdout(predicate::str::contains("generate"))
        .stdout(predicate::str::contains("completions"));
    opgen(temp.path())
        .args("create --help".split_whitespace())
        .assert()
        .success()
        .stdout(predicate::str::contains("api"));
    opgen(temp.path())
        .args("generate --help".split_whitespace())
        .assert()
        .success()
        .stdout(predicate::str::contains("manifests"));
}

#[test]
fn version_and_completions() {
    let temp = tempfile::tempdir().unwrap();
    opgen(temp.path())
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!(
            "opgen {}",
            env!("CARGO_PKG_VERSION")
        )));
    opgen(temp.path())
        .args("completions bash".split_whitespace())
        .assert()
        .success()
        .stdout(predicate::str::contains("_opgen()"));
}

#[test]
fn init_refuses_bad_input_and_writes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    std::fs::create_dir(dir.join("Bad_Name")).unwrap();
    let cases: &[(&str, i32, &[&str])] = &[
        (
            "init demo --domain Example.com",
            1,
            &["invalid domain `Example.com`"],
        ),
        ("init demo --domain example..com", 1, &["empty part"]),
        (
            "init demo",
            1,
            &["missing --domain", "--domain example.com"],
        ),
        (
            "init demo --domain example.com --project-name Demo",
            1,
            &["invalid project name `Demo`", "--project-name"],
        ),
        (
            "init Bad_Name --domain example.com",
            1,
            &["invalid project name `Bad_Name`", "--project-name"],
        ),
        (
            "init demo --domain example.com --kubernetes-version 1.32",
            1,
            &["supports 1.33 to 1.37"],
        ),
        (
            "init demo --domain example.com --license gpl",
            2,
            &["invalid value 'gpl'"],
        ),
    ];
    for (args, code, needles) in cases {
        fails_unchanged(dir, args, *code, needles);
    }
}

#[test]
fn init_refuses_an_existing_project_or_crate() {
    let temp = tempfile::tempdir().unwrap();
    for marker in ["PROJECT", "Cargo.toml"] {
        let dir = temp.path().join(marker.to_lowercase());
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(marker), "mine\n").unwrap();
        for force in ["", "--force"] {
            let args = format!("init --domain example.com --project-name demo {force}");
            fails_unchanged(
                &dir,
                &args,
                1,
                &[&format!("already holds a {marker}"), "opgen create api"],
            );
        }
    }
}

#[test]
fn init_needs_force_for_a_non_empty_directory_and_keeps_existing_files() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("demo");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join("README.md"), "my notes\n").unwrap();
    fails_unchanged(
        &dir,
        "init --domain example.com",
        1,
        &["is not empty", "--force"],
    );

    opgen(&dir)
        .args("init --domain example.com --force".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains("Skipping README.md"));
    assert_eq!(
        std::fs::read_to_string(dir.join("README.md")).unwrap(),
        "my notes\n"
    );
    assert!(dir.join("PROJECT").is_file());
}

#[test]
fn init_in_an_empty_git_directory_needs_no_force() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("demo");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    opgen(&dir)
        .args("init --domain example.com".split_whitespace())
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(dir.join("PROJECT"))
            .unwrap()
            .contains("projectName: demo")
    );
}

#[test]
fn init_dry_run_writes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    opgen(temp.path())
        .args("init demo --domain example.com --dry-run".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains("Creating src/main.rs"))
        .stderr(predicate::str::contains("dry run: nothing was written"));
    assert!(read_tree(temp.path()).is_empty());
    assert!(!temp.path().join("demo").exists());
}

#[test]
fn init_failing_midway_restores_the_directory() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    // A file named like a directory init must create makes a late write fail.
    std::fs::write(dir.join("src"), "not a directory\n").unwrap();
    fails_unchanged(
        &dir,
        "init --domain example.com --force",
        1,
        &["nothing was changed", "cannot write"],
    );
}

#[test]
fn init_prints_created_files_and_next_steps() {
    let temp = tempfile::tempdir().unwrap();
    opgen(temp.path())
        .args("init demo --domain example.com".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains("Creating PROJECT"))
        .stderr(predicate::str::contains("Creating Cargo.toml"))
        .stdout(predicate::str::contains("cd demo"))
        .stdout(predicate::str::contains("opgen create api"))
        .stdout(predicate::str::contains("make run"));
}

#[test]
fn create_api_outside_a_project_says_how_to_start() {
    let temp = tempfile::tempdir().unwrap();
    fails_unchanged(
        temp.path(),
        "create api --group db --version v1 --kind Thing",
        1,
        &["not inside an opgen project", "opgen init"],
    );
}

#[test]
fn create_api_refuses_bad_input_and_writes_nothing() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    let api = |flags: &str| format!("create api {flags}");
    let cases: Vec<(String, i32, Vec<&str>)> = vec![
        (api("--group db --version v1"), 1, vec!["missing --kind"]),
        (api("--group db --kind Thing"), 1, vec!["missing --version"]),
        (api("--version v1 --kind Thing"), 1, vec!["missing --group"]),
        (
            api("--group db --version v1 --kind thing"),
            1,
            vec!["invalid kind `thing`", "PascalCase"],
        ),
        (
            api("--group db --version v1 --kind My-Thing"),
            1,
            vec!["only ASCII letters and digits"],
        ),
        (
            api("--group db --version v1 --kind Self"),
            1,
            vec!["clashes"],
        ),
        (
            api("--group Db --version v1 --kind Thing"),
            1,
            vec!["invalid group `Db`"],
        ),
        (
            api("--group db.io --version v1 --kind Thing"),
            1,
            vec!["invalid group `db.io`"],
        ),
        (
            api("--group db --version 1 --kind Thing"),
            1,
            vec!["invalid version `1`", "v1alpha1"],
        ),
        (
            api("--group db --version v1beta --kind Thing"),
            1,
            vec!["invalid version `v1beta`"],
        ),
        (
            api("--group db --version v1 --kind Thing --plural Things"),
            1,
            vec!["invalid resource name `Things`"],
        ),
        (
            api("--group db --version v1alpha1 --kind MySQLCluster"),
            1,
            vec!["already exists in PROJECT"],
        ),
        (
            api("--group db --version v1 --kind MySQLCluster --controller"),
            1,
            vec!["already has a controller", "--controller=false"],
        ),
        (
            api("--group db --version v1 --kind MySQLCluster --plural clusters"),
            1,
            vec!["--plural `clusters` differs from `mysqlclusters`"],
        ),
        (
            api("--group db --version v1 --kind MySQLCluster --namespaced=false"),
            1,
            vec!["--namespaced `false` differs"],
        ),
        (
            api("--group db --version v2 --kind Other --resource=false"),
            1,
            vec!["--resource=false needs the types", "opgen create api"],
        ),
        (
            api("--group db --version v1 --kind Msc --short-name msc"),
            1,
            vec!["short name `msc`"],
        ),
        (
            api("--group db --version v1 --kind Thing --namespaced false"),
            2,
            vec!["unexpected argument"],
        ),
    ];
    for (args, code, needles) in cases {
        fails_unchanged(&project.root, &args, code, &needles);
    }
}

#[test]
fn create_api_reports_a_malformed_project_file_with_its_line() {
    let project = Project::init("demo", "");
    let path = project.root.join("PROJECT");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("domain: example.com", "domain: Example.com");
    std::fs::write(&path, text).unwrap();
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Thing",
        1,
        &["PROJECT:", "invalid domain `Example.com`"],
    );
}

#[test]
fn create_api_never_overwrites_user_files_without_force() {
    let project = Project::init("demo", "");
    let types = project.root.join("api/src/db/v1/thing.rs");
    std::fs::create_dir_all(types.parent().unwrap()).unwrap();
    std::fs::write(&types, "// mine\n").unwrap();
    let args = "create api --group db --version v1 --kind Thing";
    fails_unchanged(
        &project.root,
        args,
        1,
        &["api/src/db/v1/thing.rs already exists", "--force"],
    );

    // --dry-run --force shows the diff of what would be overwritten, and writes nothing.
    let before = project.tree();
    project
        .opgen()
        .args(args.split_whitespace())
        .args("--force --dry-run".split_whitespace())
        .assert()
        .success()
        .stdout(predicate::str::contains("-// mine"))
        .stderr(predicate::str::contains("Updating api/src/db/v1/thing.rs"));
    assert!(project.tree() == before);

    project
        .opgen()
        .args(args.split_whitespace())
        .arg("--force")
        .assert()
        .success();
    assert!(
        project
            .read("api/src/db/v1/thing.rs")
            .contains("pub struct ThingSpec")
    );
}

#[test]
fn create_api_refuses_to_regenerate_a_generated_file_edited_by_hand() {
    let project = Project::init("demo", "");
    std::fs::write(
        project.root.join("src/controllers/mod.rs"),
        "// my own wiring\n",
    )
    .unwrap();
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Thing",
        1,
        &[
            "src/controllers/mod.rs no longer carries opgen's",
            "Restore the header",
        ],
    );
}

#[test]
fn create_api_dry_run_shows_changes_and_writes_nothing() {
    let project = Project::init("demo", "");
    let before = project.tree();
    project
        .opgen()
        .args("create api --group db --version v1 --kind Thing --dry-run".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains("Creating api/src/db/v1/thing.rs"))
        .stderr(predicate::str::contains("Updating PROJECT"))
        .stdout(predicate::str::contains("+- group: db"));
    assert!(project.tree() == before);
}

#[test]
fn create_api_works_from_a_subdirectory() {
    let project = Project::init("demo", "");
    project
        .opgen()
        .current_dir(project.root.join("src"))
        .args("create api --group db --version v1 --kind Thing".split_whitespace())
        .assert()
        .success();
    assert!(project.root.join("api/src/db/v1/thing.rs").is_file());
}

#[test]
fn create_api_refuses_a_cluster_scoped_kind_in_a_namespaced_operator() {
    let project = Project::init("demo", "--namespaced");
    fails_unchanged(
        &project.root,
        "create api --group ops --version v1 --kind Thing --namespaced=false",
        1,
        &["cannot be cluster-scoped in this project", "Role"],
    );
}

#[test]
fn create_api_refuses_bad_operand_flags() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster --image mysql:8.0");
    let api = |flags: &str| format!("create api --group web --version v1 --kind Frontend {flags}");
    let cases: Vec<(String, i32, Vec<&str>)> = vec![
        (
            api("--image Nginx:1.27"),
            1,
            vec!["invalid image `Nginx:1.27`", "mysql:8.0"],
        ),
        (api("--image nginx:"), 1, vec!["is not a valid tag"]),
        (
            api("--image nginx --run-as-user 0"),
            1,
            vec!["invalid --run-as-user `0`", "non-root"],
        ),
        (
            api("--image nginx --command nginx,,-g"),
            1,
            vec!["invalid --command"],
        ),
        (api("--image nginx --port 0"), 2, vec!["--port"]),
        (api("--image nginx --port 70000"), 2, vec!["--port"]),
        (api("--port 8080"), 2, vec!["--image"]),
        (api("--workload statefulset"), 2, vec!["--image"]),
        (
            api("--image nginx --workload daemonset"),
            2,
            vec!["invalid value 'daemonset'"],
        ),
        (
            api("--image nginx --namespaced=false"),
            1,
            vec!["cannot be cluster-scoped", "--image"],
        ),
        (
            "create api --group db --version v1 --kind MySQLCluster --image mysql:8.4".to_owned(),
            1,
            vec!["--image is set by the first version of a kind"],
        ),
    ];
    for (args, code, needles) in cases {
        fails_unchanged(&project.root, &args, code, &needles);
    }
}

#[test]
fn generate_manifests_outside_a_project_says_how_to_start() {
    let temp = tempfile::tempdir().unwrap();
    fails_unchanged(
        temp.path(),
        "generate manifests",
        1,
        &["not inside an opgen project", "opgen init"],
    );
}

#[test]
fn generate_manifests_reports_a_bad_marker_with_file_and_line_and_writes_nothing() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    let controller = project.root.join("src/controllers/db/thing.rs");
    let source = std::fs::read_to_string(&controller).unwrap();
    let bad = "// +opgen:rbac:groups=apps,resources=deployments,verb=get\n";
    std::fs::write(&controller, format!("{bad}{source}")).unwrap();
    for args in ["generate manifests", "generate manifests --check"] {
        fails_unchanged(
            &project.root,
            args,
            1,
            &[
                "src/controllers/db/thing.rs:1: unknown key `verb`",
                bad.trim_end(),
            ],
        );
    }
}

#[test]
fn generate_manifests_of_a_project_without_kinds_is_up_to_date() {
    let project = Project::init("demo", "");
    let before = project.tree();
    project
        .opgen()
        .args("generate manifests --check".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains("up to date"));
    project
        .opgen()
        .args("generate manifests".split_whitespace())
        .assert()
        .success();
    assert!(project.tree() == before);
}

#[test]
fn create_api_adds_types_and_controller_separately() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing --controller=false");
    assert!(project.root.join("api/src/db/v1/thing.rs").is_file());
    assert!(!project.root.join("src/controllers/db/thing.rs").exists());
    assert!(project.read("PROJECT").contains("controller: false"));
    assert!(!project.read("src/controllers/mod.rs").contains("thing"));

    let types = project.read("api/src/db/v1/thing.rs");
    project.create_api("--group db --version v1 --kind Thing --resource=false");
    assert_eq!(
        project.read("api/src/db/v1/thing.rs"),
        types,
        "the types are kept"
    );
    assert!(project.root.join("src/controllers/db/thing.rs").is_file());
    assert!(project.read("PROJECT").contains("controller: true"));
    assert!(
        project
            .read("src/controllers/mod.rs")
            .contains("db::thing::run")
    );

    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Thing --resource=false",
        1,
        &["has a controller already"],
    );
}

#[test]
fn create_api_stores_the_newest_version_unless_told_otherwise() {
    let project = Project::init("demo", "");
    let storage = |project: &Project| {
        let text = project.read("PROJECT");
        let stored: Vec<String> = text
            .split("- group:")
            .skip(1)
            .filter(|entry| entry.contains("storage: true"))
            .map(|entry| {
                entry
                    .lines()
                    .find(|l| l.contains("version:"))
                    .unwrap()
                    .trim()
                    .to_owned()
            })
            .collect();
        stored
    };
    project.create_api("--group db --version v1beta1 --kind Thing");
    assert_eq!(storage(&project), ["version: v1beta1"]);
    project.create_api("--group db --version v1alpha1 --kind Thing");
    assert_eq!(
        storage(&project),
        ["version: v1beta1"],
        "an older version is not stored"
    );
    project.create_api("--group db --version v1 --kind Thing --storage=false");
    assert_eq!(
        storage(&project),
        ["version: v1beta1"],
        "--storage=false keeps the stored one"
    );
    project.create_api("--group db --version v2 --kind Thing");
    assert_eq!(
        storage(&project),
        ["version: v2"],
        "the newest is stored by default"
    );
    project.create_api("--group db --version v2alpha1 --kind Thing --storage");
    assert_eq!(
        storage(&project),
        ["version: v2alpha1"],
        "--storage stores the new version"
    );
}

/// On a terminal, `init` asks for what the command line left out, showing the defaults.
/// `script` (util-linux) gives opgen a pseudo-terminal, as a person's shell would.
#[test]
fn init_asks_for_missing_values_on_a_terminal() {
    use std::{io::Write, process::Stdio, time::Duration};

    let temp = tempfile::tempdir().unwrap();
    let command = format!("{} init demo", env!("CARGO_BIN_EXE_opgen"));
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(temp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("`script` from util-linux runs");
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // Accept the default project name, then give the domain.
    stdin.write_all(b"\nexample.org\n").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "opgen init waited for input it was given"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(screen.contains("Project name [demo]"), "{screen}");
    assert!(screen.contains("Domain of the API groups"), "{screen}");
    let project = std::fs::read_to_string(temp.path().join("demo/PROJECT")).unwrap();
    assert!(project.contains("projectName: demo\n"), "{project}");
    assert!(project.contains("domain: example.org\n"), "{project}");
}

#[test]
fn create_api_without_rustfmt_still_writes_and_says_so() {
    let project = Project::init("demo", "");
    let empty = tempfile::tempdir().unwrap();
    project
        .opgen()
        .env("PATH", empty.path())
        .args("create api --group db --version v1 --kind Thing".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains("rustfmt was not found"));
    assert!(
        project
            .read("src/controllers/db/thing.rs")
            .contains("pub async fn run")
    );
}

#[test]
fn quiet_prints_nothing_on_success() {
    let temp = tempfile::tempdir().unwrap();
    opgen(temp.path())
        .args("--quiet init demo --domain example.com".split_whitespace())
        .assert()
        .success()
        .stdout("")
        .stderr("");
    opgen(&temp.path().join("demo"))
        .args("create api -q --group db --version v1 --kind Thing".split_whitespace())
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

#[test]
fn a_write_lists_what_changed_and_a_dry_run_also_what_did_not() {
    let project = Project::init("demo", "");
    let args = "create api --group db --version v1 --kind Thing";
    project
        .opgen()
        .args(args.split_whitespace())
        .arg("--dry-run")
        .assert()
        .success()
        .stderr(predicate::str::contains("Unchanged api/src/bin/crdgen.rs"));
    project
        .opgen()
        .args(args.split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "Creating src/controllers/db/thing.rs",
        ))
        .stderr(predicate::str::contains("Updating PROJECT"))
        .stderr(predicate::str::contains("Unchanged").not());
}
