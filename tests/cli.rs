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
        .stdout(predicate::str::contains("delete"))
        .stdout(predicate::str::contains("edit"))
        .stdout(predicate::str::contains("generate"))
        .stdout(predicate::str::contains("completions"));
    opgen(temp.path())
        .args("delete --help".split_whitespace())
        .assert()
        .success()
        .stdout(predicate::str::contains("api"))
        .stdout(predicate::str::contains("webhook"));
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
        .stdout(format!(
            "opgen {} (Kubernetes 1.35 to 1.37; 1.33 to 1.34 past their end of life)\n",
            env!("CARGO_PKG_VERSION")
        ));
    opgen(temp.path())
        .args("completions bash".split_whitespace())
        .assert()
        .success()
        .stdout(predicate::str::contains("_opgen()"))
        .stdout(predicate::str::contains(
            "opgen__subcmd__delete__subcmd__webhook",
        ))
        .stdout(predicate::str::contains("--cluster-wide"));
    // The release archives carry this page as man1/opgen.1.
    opgen(temp.path())
        .arg("man")
        .assert()
        .success()
        .stdout(predicate::str::starts_with(".ie \\n(.g .ds Aq"))
        .stdout(predicate::str::contains(".TH opgen 1"))
        .stdout(predicate::str::contains("opgen\\-init(1)"))
        .stdout(predicate::str::contains("opgen\\-delete(1)"))
        .stdout(predicate::str::contains("opgen\\-edit(1)"));
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
            "init demo --domain example.com --project-name abcdefghijklmnopqrstuvwxyzabc",
            1,
            &[
                "invalid project name `abcdefghijklmnopqrstuvwxyzabc`: it is 29 characters long; keep it to 28",
                "`abcdefghijklmnopqrstuvwxyzabc-controller-manager-metrics-service`, the longest Service name `make deploy` gives",
                "--project-name",
            ],
        ),
        (
            "init demo --domain example.com --kubernetes-version 1.32",
            1,
            &["supports 1.33 to 1.37, of which Kubernetes still supports 1.35 to 1.37"],
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
            vec!["invalid kind `Self`", "`Self` is a Rust keyword"],
        ),
        (
            api(&format!(
                "--group db --version v1 --kind A{}",
                "b".repeat(59)
            )),
            1,
            vec!["at most 59 characters", "`<Kind>List`"],
        ),
        (
            api("--group db --version v1 --kind MySQLClusterList"),
            1,
            vec!["Kubernetes names the lists of MySQLCluster `MySQLClusterList`"],
        ),
        (
            api("--group db --version v1alpha1 --kind MySQLClusterSpec --short-name mcs"),
            1,
            vec![
                "MySQLClusterSpec and MySQLCluster of db/v1alpha1 would both define the Rust type `MySQLClusterSpec`",
            ],
        ),
        (
            api("--group db_io --version v1 --kind Thing"),
            1,
            vec!["invalid group `db_io`", "DNS-1123 label"],
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

/// Kubernetes accepts these names, and so does opgen: kinds and groups named like what the
/// generated code uses, and groups whose module names adapt. (The e2e scenario
/// `names_that_clash_with_the_generated_code` builds such a project.)
#[test]
fn create_api_accepts_every_name_kubernetes_accepts() {
    let project = Project::init("demo", "");
    project.create_api("--group kube --version v1 --kind Service");
    project.create_api("--group type --version v1 --kind Match");
    project.create_api("--group 1db --version v1 --kind Condition");
    project.create_api("--group bin --version v1 --kind Option");
    project.create_api("--group db --version v1 --kind ThingSpec");
    for file in [
        "api/src/kube/v1/service.rs",
        "api/src/type_/v1/match_.rs",
        "api/src/_1db/v1/condition.rs",
        "api/src/bin_/v1/option.rs",
        "src/controllers/type_/match_.rs",
    ] {
        assert!(project.root.join(file).is_file(), "{file}");
    }
    assert!(
        project
            .read("api/src/type_/v1/mod.rs")
            .contains("mod match_;")
    );
    let option = project.read("api/src/bin_/v1/option.rs");
    assert!(option.contains("root = \"OptionResource\","), "{option}");
    assert!(
        project
            .read("api/src/lib.rs")
            .contains("crate::bin_::v1::OptionResource::crd(),")
    );
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
            api(&format!(
                "--image registry.example.com/{}:1.0",
                "a".repeat(279)
            )),
            1,
            vec![
                "is 300 characters long, and the reference grammar allows at most 255",
                "mysql:8.0",
            ],
        ),
        (
            api("--image nginx --run-as-user 0"),
            2,
            vec![
                "invalid value '0' for '--run-as-user <UID>'",
                "0 is root",
                "drop the flag",
            ],
        ),
        (
            api("--image mysql:8.0 --run-as-user -5"),
            2,
            vec![
                "invalid value '-5' for '--run-as-user <UID>'",
                "not negative",
                "999 for mysql",
            ],
        ),
        (
            api("--image mysql:8.0 --run-as-user mysql"),
            2,
            vec![
                "invalid value 'mysql' for '--run-as-user <UID>'",
                "not a number",
            ],
        ),
        (
            api("--image mysql:8.0 --run-as-user 2147483648"),
            2,
            vec!["up to 2147483647"],
        ),
        (
            api("--image mysql:8.0@sha256:abc"),
            1,
            vec!["invalid image `mysql:8.0@sha256:abc`", "is not a digest"],
        ),
        (
            api("--image nginx --run-as-user 2147483648"),
            2,
            vec!["--run-as-user"],
        ),
        (
            api("--image nginx --command nginx -- nginx -g"),
            2,
            vec!["cannot be used with"],
        ),
        (api("-- nginx -g"), 2, vec!["--image"]),
        (api("--image nginx --port 0"), 2, vec!["--port"]),
        (api("--image nginx --port 70000"), 2, vec!["--port"]),
        (api("--port 8080"), 2, vec!["--image"]),
        (api("--workload statefulset"), 2, vec!["--image"]),
        (api("--workload job"), 2, vec!["--image"]),
        (api("--workload cronjob"), 2, vec!["--image"]),
        (api("--autoscale"), 2, vec!["--image"]),
        (
            api("--image mysql:8.0 --workload job --autoscale"),
            1,
            vec![
                "--autoscale with --workload job",
                "no replicas to scale",
                "Drop --autoscale",
            ],
        ),
        (
            api("--image mysql:8.0 --workload cronjob --autoscale"),
            1,
            vec!["--autoscale with --workload cronjob", "Drop --autoscale"],
        ),
        (
            api("--image mysql:8.0 --workload job --port 3306"),
            1,
            vec![
                "--port 3306 with --workload job",
                "runs to completion",
                "Drop --port",
            ],
        ),
        (
            api("--image mysql:8.0 --workload cronjob --port 3306"),
            1,
            vec!["--port 3306 with --workload cronjob", "Drop --port"],
        ),
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

/// `--references` names a namespaced kind of the project's own, from a Job or CronJob operand
/// kind; any other is refused with the flag and the way out, and nothing is written.
#[test]
fn create_api_refuses_references_it_cannot_follow() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind MySQLCluster");
    project.create_api("--group ops --version v1 --kind MySQLCluster");
    project.create_api("--group ops --version v1 --kind Policy --namespaced=false");
    let api = |flags: &str| {
        format!("create api --group db --version v1 --kind MySQLBackup --image mysql:8.0 {flags}")
    };
    let cases: Vec<(String, i32, Vec<&str>)> = vec![
        (
            api("--workload job --references Deployment"),
            1,
            vec![
                "--references Deployment: the project owns no such kind (it owns MySQLCluster, Policy)",
                "create that kind first",
            ],
        ),
        (
            api("--workload job --references Policy"),
            1,
            vec![
                "--references Policy: it is cluster-scoped, and MySQLBackup is namespaced",
                "Reference a namespaced kind",
            ],
        ),
        (
            api("--workload statefulset --references MySQLCluster"),
            1,
            vec![
                "--references works with --workload job or cronjob (this kind's workload: statefulset)",
                "Add --image and --workload job or cronjob, or drop --references",
            ],
        ),
        (
            api("--workload deployment --references MySQLCluster"),
            1,
            vec![
                "--references works with --workload job or cronjob (this kind's workload: deployment)",
            ],
        ),
        (
            api("--workload job --references cache/MySQLCluster"),
            1,
            vec!["--references cache/MySQLCluster: the project owns no such kind"],
        ),
        (
            api("--workload job --references mysql-cluster"),
            1,
            vec!["invalid --references mysql-cluster"],
        ),
        (
            "create api --group db --version v1 --kind Thing --references MySQLCluster".to_owned(),
            2,
            vec!["--image"],
        ),
    ];
    for (args, code, needles) in cases {
        fails_unchanged(&project.root, &args, code, &needles);
    }
    // In another group than its own, a kind two groups have must be named with its group.
    fails_unchanged(
        &project.root,
        "create api --group cache --version v1 --kind Backup --image mysql:8.0 --workload job --references MySQLCluster",
        1,
        &[
            "the project has MySQLCluster in the groups db, ops",
            "Name its group: --references db/MySQLCluster",
        ],
    );
}

/// A CronJob operand kind may reference another kind: `PROJECT` records it, the spec gets the
/// typed field, and the controller hands the reference to the runtime, with the RBAC marker of
/// its watch.
#[test]
fn create_api_cronjob_references_another_kind() {
    let project = Project::init("demo", "");
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLCluster --image mysql:8.0 --workload statefulset --port 3306",
    );
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLBackupSchedule --image mysql:8.0 --workload cronjob --references MySQLCluster",
    );
    let text = project.read("PROJECT");
    assert!(
        text.contains("    references:\n      group: db\n      kind: MySQLCluster\n"),
        "{text}"
    );
    let types = project.read("api/src/db/v1alpha1/my_sql_backup_schedule.rs");
    assert!(
        types.contains("pub my_sql_cluster_ref: MySQLBackupScheduleReference,"),
        "{types}"
    );
    let controller = project.read("src/controllers/db/my_sql_backup_schedule.rs");
    for needle in [
        "CronJobOperand::new(APP_NAME, desired_cronjob, desired_status)",
        ".references(reference())",
        ".service_port(3306)",
        "+opgen:rbac:groups=db.example.com,resources=mysqlclusters,verbs=get;list;watch",
    ] {
        assert!(controller.contains(needle), "{needle}:\n{controller}");
    }
}

/// `--autoscale` is recorded in the kind's operand, and its controller keeps an autoscaler
/// with the RBAC for it; a kind without it has neither.
#[test]
fn create_api_autoscale_is_recorded_with_its_rbac() {
    let project = Project::init("demo", "");
    project.create_api(
        "--group cache --version v1 --kind Memcached --image memcached:1.6 --port 11211 --autoscale",
    );
    project.create_api(
        "--group db --version v1 --kind Store --image redis:7 --workload statefulset --autoscale",
    );
    project.create_api("--group web --version v1 --kind Frontend --image nginx:1.27");
    let text = project.read("PROJECT");
    assert_eq!(text.matches("    autoscale: true\n").count(), 2, "{text}");
    let marker = "+opgen:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=list;watch;create;patch;delete";
    for file in ["cache/memcached", "db/store"] {
        let controller = project.read(&format!("src/controllers/{file}.rs"));
        assert!(controller.contains(marker), "{controller}");
        assert!(
            controller.contains(".with_autoscaling(desired_autoscaling)"),
            "{controller}"
        );
    }
    let types = project.read("api/src/cache/v1/memcached.rs");
    assert!(
        types.contains("pub autoscaling: Option<MemcachedAutoscaling>,"),
        "{types}"
    );
    let plain = project.read("src/controllers/web/frontend.rs");
    assert!(!plain.contains("autoscal"), "{plain}");
    assert!(
        !project
            .read("api/src/web/v1/frontend.rs")
            .contains("autoscal")
    );
}

/// A command's arguments may hold commas: one `--command` per argument, or all of them
/// after `--`.
#[test]
fn create_api_takes_command_arguments_with_commas() {
    let project = Project::init("demo", "");
    project.create_api(
        "--group cache --version v1 --kind Memcached --image memcached:1.6 --command memcached --command -o=modern,drop_privs --command -m=64",
    );
    project.create_api(
        "--group web --version v1 --kind Frontend --image nginx:1.27 -- nginx -g daemon,off;",
    );
    let text = project.read("PROJECT");
    assert!(
        text.contains("    command:\n    - memcached\n    - -o=modern,drop_privs\n    - -m=64\n"),
        "{text}"
    );
    assert!(
        text.contains("    command:\n    - nginx\n    - -g\n    - daemon,off;\n"),
        "{text}"
    );
    fails_unchanged(
        &project.root,
        "create api --group web --version v1 --kind Other --image nginx:1.27 --command=",
        1,
        &["invalid --command: an argument is empty"],
    );
}

/// `create api --image` and what it says of the user the pods run as: nothing for a known
/// image run as published, a warning (and success) for everything opgen cannot vouch for.
#[test]
fn create_api_warns_of_operands_that_may_not_start() {
    let project = Project::init("demo", "");
    let create = |args: &str| {
        let assert = project
            .opgen()
            .args("create api --version v1".split_whitespace())
            .args(args.split_whitespace())
            .assert()
            .success();
        String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
    };

    let stderr = create("--group db --kind MySQLCluster --image mysql:8.0 --port 3306");
    assert!(!stderr.contains("warning"), "{stderr}");
    let controller = project.read("src/controllers/db/my_sql_cluster.rs");
    assert!(
        controller.contains("const RUN_AS_USER: Option<i64> = Some(999);")
            && controller.contains("const RUN_AS_GROUP: Option<i64> = Some(999);"),
        "{controller}"
    );

    let stderr = create("--group web --kind Site --image ghcr.io/org/site:v1");
    for needle in [
        "warning: opgen does not know which user `ghcr.io/org/site:v1` runs as",
        "set RUN_AS_USER and RUN_AS_GROUP in src/controllers/web/site.rs",
        "--run-as-user <UID>",
    ] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    let controller = project.read("src/controllers/web/site.rs");
    assert!(controller.contains("const RUN_AS_USER: Option<i64> = None;"));
    // Once is enough: a later version shares the operand of the first.
    let later = project
        .opgen()
        .args("create api --group web --version v2 --kind Site".split_whitespace())
        .assert()
        .success();
    assert!(!String::from_utf8_lossy(&later.get_output().stderr).contains("warning"));

    let stderr = create("--group cache --kind Redis --image redis:7-alpine --run-as-user 1000");
    assert!(
        stderr.contains(
            "warning: --run-as-user 1000 differs from the user of `redis`, `redis` (UID 999, GID 1000)"
        ),
        "{stderr}"
    );
    assert!(project.read("PROJECT").contains("runAsUser: 1000\n"));
    let controller = project.read("src/controllers/cache/redis.rs");
    assert!(controller.contains("const RUN_AS_GROUP: Option<i64> = Some(1000);"));

    let stderr = create("--group edge --kind Proxy --image nginx:1.27 --port 80");
    assert!(
        stderr.contains("warning: `nginx` does not run in the pods opgen scaffolds")
            && stderr.contains("--image nginxinc/nginx-unprivileged:<tag> --port 8080"),
        "{stderr}"
    );

    let quiet = project
        .opgen()
        .args(
            "create api -q --group web --version v1 --kind Blog --image org/blog:v1"
                .split_whitespace(),
        )
        .assert()
        .success();
    assert!(quiet.get_output().stderr.is_empty());
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

/// Runs `opgen <args>` in `dir` on a pseudo-terminal, as a person's shell would (`script`
/// from util-linux provides it), typing each of `answers` after a pause, and returns what the
/// terminal showed.
fn on_a_terminal(dir: &std::path::Path, args: &str, answers: &[&str]) -> String {
    use std::{io::Write, process::Stdio, time::Duration};

    let command = format!("{} {args}", env!("CARGO_BIN_EXE_opgen"));
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("`script` from util-linux runs");
    let mut stdin = child.stdin.take().unwrap();
    for answer in answers {
        std::thread::sleep(Duration::from_millis(300));
        stdin.write_all(answer.as_bytes()).unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "opgen {args} waited for input it was given"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// On a terminal, `init` asks for what the command line left out, showing the defaults.
#[test]
fn init_asks_for_missing_values_on_a_terminal() {
    let temp = tempfile::tempdir().unwrap();
    // Accept the default project name, then give the domain.
    let screen = on_a_terminal(temp.path(), "init demo", &["\nexample.org\n"]);
    assert!(screen.contains("Project name [demo]"), "{screen}");
    assert!(screen.contains("Domain of the API groups"), "{screen}");
    let project = std::fs::read_to_string(temp.path().join("demo/PROJECT")).unwrap();
    assert!(project.contains("projectName: demo\n"), "{project}");
    assert!(project.contains("domain: example.org\n"), "{project}");
}

/// On a terminal, `create api` asks for the UID of an image it does not know.
#[test]
fn create_api_asks_for_the_uid_of_an_unknown_image_on_a_terminal() {
    let project = Project::init("demo", "");
    let args = "create api --group web --version v1 --kind Site --image ghcr.io/org/site:v1";
    // Root is refused, then a UID is taken.
    let screen = on_a_terminal(&project.root, args, &["0\n", "1234\n"]);
    assert!(
        screen.contains("UID of a non-root user ghcr.io/org/site:v1 runs as"),
        "{screen}"
    );
    assert!(screen.contains("0 is root"), "{screen}");
    assert!(!screen.contains("warning"), "{screen}");
    assert!(project.read("PROJECT").contains("runAsUser: 1234\n"));
    assert!(
        project
            .read("src/controllers/web/site.rs")
            .contains("const RUN_AS_USER: Option<i64> = Some(1234);")
    );
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

/// Every rule `create api` enforces holds for a PROJECT edited by hand: each bad edit is
/// reported by every command with the line of the entry at fault, and nothing is written.
#[test]
fn a_bad_project_edit_is_reported_with_its_line_by_every_command() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    project.create_api("--group db --version v1 --kind Other --image nginx:1");
    let good = project.read("PROJECT");
    let lines: Vec<&str> = good.lines().collect();
    let thing_entry = lines.iter().position(|l| *l == "- group: db").unwrap() + 1;
    let other_entry = lines.iter().rposition(|l| *l == "- group: db").unwrap() + 1;
    // (edit, needle, line of the entry at fault)
    let cases: Vec<(String, &str, usize)> = vec![
        (
            good.replace("kind: Other", "kind: Thing"),
            "is listed twice",
            other_entry,
        ),
        (
            good.replace("kind: Other", "kind: THING"),
            "differ only in letter case",
            other_entry,
        ),
        (
            good.replace("plural: others", "plural: things"),
            "same plural `things`",
            other_entry,
        ),
        (
            good.replace("shortName: oth", "shortName: thi"),
            "same shortName `thi`",
            other_entry,
        ),
        (
            good.replacen("namespaced: true", "namespaced: false", 2)
                .replacen("namespaced: false", "namespaced: true", 1),
            "must be namespaced",
            other_entry,
        ),
        (
            good.replace(
                "workload: deployment",
                "workload: deployment\n    runAsUser: 0",
            ),
            "0 is root",
            lines
                .iter()
                .position(|l| l.trim() == "workload: deployment")
                .unwrap()
                + 2,
        ),
        (
            good.replace("plural: things", "plural: 3things"),
            "start with a letter",
            thing_entry + 3,
        ),
        (
            format!(
                "{good}- group: db\n  version: v2\n  kind: Thing\n  plural: things\n  shortName: thi\n  namespaced: true\n  controller: false\n  storage: true\n"
            ),
            "2 storage versions",
            good.lines().count() + 1,
        ),
        (
            format!(
                "{good}- group: db\n  version: v2\n  kind: Thing\n  plural: thingies\n  shortName: thi\n  namespaced: true\n  controller: false\n  storage: false\n"
            ),
            "has plural `thingies`, but Thing db/v1 has `things`",
            good.lines().count() + 1,
        ),
        (
            good.replace(
                "domain: example.com",
                &format!("domain: {}.abcd", vec!["a".repeat(60); 4].join(".")),
            ),
            "characters long; Kubernetes allows 253",
            thing_entry,
        ),
        (
            format!(
                "{good}- group: db\n  version: v2\n  kind: ThingList\n  plural: thinglists\n  shortName: tl\n  namespaced: true\n  controller: true\n  storage: true\n"
            ),
            "Kubernetes names the lists of Thing `ThingList`",
            good.lines().count() + 1,
        ),
        (
            format!(
                "{good}- group: db\n  version: v1\n  kind: ThingStatus\n  plural: thingstatuses\n  shortName: ts\n  namespaced: true\n  controller: true\n  storage: true\n"
            ),
            "would both define the Rust type `ThingStatus`",
            good.lines().count() + 1,
        ),
    ];
    let line_of = |key: &str| lines.iter().position(|l| l.starts_with(key)).unwrap() + 1;
    let cases = cases.into_iter().chain([
        (
            good.replace("projectName: demo", "projectName: renamed"),
            "opgen does not rename a project",
            line_of("projectName:"),
        ),
        (
            good.replace("kubernetesVersion: \"1.35\"", "kubernetesVersion: \"1.37\""),
            "Set the feature of k8s-openapi in Cargo.toml to `v1_37`",
            line_of("kubernetesVersion:"),
        ),
        (
            good.replace("license: apache2", "license: mit"),
            "Cargo.toml says `Apache-2.0`",
            line_of("license:"),
        ),
        (
            good.replace("domain: example.com", "domain: example.org"),
            "declares `group = \"db.example.com\"`",
            line_of("domain:"),
        ),
    ]);
    let commands = [
        "create api --group db --version v1 --kind Extra",
        "generate manifests",
        "generate manifests --check",
    ];
    for (edit, needle, line) in cases {
        std::fs::write(project.root.join("PROJECT"), &edit).unwrap();
        for command in commands {
            fails_unchanged(
                &project.root,
                command,
                1,
                &[&format!("PROJECT:{line}"), needle],
            );
        }
    }
}

/// A directory holding a stand-in for the tool `name` (`cargo` or `rustfmt`) that says it
/// started (by creating `<dir>/<name>.started`) and then takes a minute: a first build that is
/// slow, or a hung formatter.
fn slow_tool(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    {
        let path = dir.path().join(name);
        let script = format!(
            "#!/bin/sh\ntouch '{}'\nsleep 60\n",
            dir.path().join(format!("{name}.started")).display()
        );
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// PATH with `tools` first.
fn path_with(tools: &std::path::Path) -> std::ffi::OsString {
    let mut paths = vec![tools.to_path_buf()];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
    std::env::join_paths(paths).unwrap()
}

/// Starts `opgen <args>` in `dir` with `tools` first on PATH and waits until it runs the tool
/// `waiting_in` (which then hangs).
fn start_hanging(
    dir: &std::path::Path,
    args: &str,
    tools: &std::path::Path,
    waiting_in: &str,
) -> std::process::Child {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_opgen"))
        .args(args.split_whitespace())
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("PATH", path_with(tools))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = tools.join(format!("{waiting_in}.started"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "opgen {args} never ran {waiting_in}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

/// Sends `signal` to `child`, waits for it, and returns its exit code and stderr.
fn signal_and_wait(child: std::process::Child, signal: &str) -> (Option<i32>, String) {
    std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    let started = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "opgen took {:?} to stop",
        started.elapsed()
    );
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A project whose generated api files are out of date (a newer opgen would rewrite them), so
/// that `generate manifests` writes them before it builds crdgen.
fn project_with_a_stale_api_crate() -> Project {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    let lib = project.root.join("api/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("{text}// written by an older opgen\n")).unwrap();
    project
}

#[test]
fn ctrl_c_during_the_crdgen_build_restores_every_file() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let project = project_with_a_stale_api_crate();
        let before = project.tree();
        let tools = slow_tool("cargo");
        let child = start_hanging(&project.root, "generate manifests", tools.path(), "cargo");
        let (exit, stderr) = signal_and_wait(child, signal);
        assert_eq!(exit, Some(code), "{stderr}");
        assert!(stderr.contains("Updating api/src/lib.rs"), "{stderr}");
        assert!(
            stderr.contains(&format!("interrupted by SIG{signal}")),
            "{stderr}"
        );
        assert!(
            stderr.ends_with("nothing was changed: every file this command wrote was restored\n"),
            "{stderr}"
        );
        assert!(project.tree() == before, "SIG{signal} left files changed");
    }
}

#[test]
fn ctrl_c_during_create_api_leaves_the_project_as_it_was() {
    let project = Project::init("demo", "");
    let before = project.tree();
    let tools = slow_tool("rustfmt");
    let child = start_hanging(
        &project.root,
        "create api --group db --version v1 --kind Thing",
        tools.path(),
        "rustfmt",
    );
    let (exit, stderr) = signal_and_wait(child, "INT");
    assert_eq!(exit, Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted by SIGINT (Ctrl-C)"),
        "{stderr}"
    );
    assert!(project.tree() == before);
}

#[test]
fn one_command_at_a_time_per_project() {
    let project = project_with_a_stale_api_crate();
    let tools = slow_tool("cargo");
    let running = start_hanging(&project.root, "generate manifests", tools.path(), "cargo");
    let before = project.tree();
    let started = std::time::Instant::now();
    let assert = project
        .opgen()
        .args("create api --group db --version v1 --kind Other".split_whitespace())
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("another opgen command is running in this project"),
        "{stderr}"
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(4),
        "it waited a while"
    );
    assert!(
        project.tree() == before,
        "the waiting command wrote nothing"
    );
    signal_and_wait(running, "INT");
    project.create_api("--group db --version v1 --kind Other");
}

/// With the longest name `init` accepts, every object `make deploy` installs (webhooks, the
/// Prometheus Operator's objects and cert-manager's included) has a name Kubernetes accepts:
/// at most 63 characters for a Service or a Namespace, 253 for the others.
#[test]
fn every_name_make_deploy_gives_fits_with_the_longest_project_name() {
    let name = "a-rather-long-operator-name1";
    assert_eq!(name.len(), 28);
    let project = Project::init(name, "");
    project.create_api("--group db --version v1 --kind MySQLCluster --image mysql:8 --port 3306");
    project
        .opgen()
        .args(
            "create webhook --group db --version v1 --kind MySQLCluster --defaulting --validation"
                .split_whitespace(),
        )
        .assert()
        .success();
    project.generate_manifests_without_building();
    let kustomization = project
        .read("config/default/kustomization.yaml")
        .replace("#- ../prometheus", "- ../prometheus")
        .replace("#components:", "components:")
        .replace("#- ../certmanager", "- ../certmanager");
    project.write("config/default/kustomization.yaml", &kustomization);
    let objects = rendered_objects(&project, "config/default");
    for kind in [
        "Service",
        "ServiceMonitor",
        "Certificate",
        "ValidatingWebhookConfiguration",
    ] {
        assert!(
            objects.iter().any(|(k, _, _)| k == kind),
            "{kind} in {objects:?}"
        );
    }
    for (kind, _, object) in &objects {
        let limit = if matches!(kind.as_str(), "Service" | "Namespace") {
            63
        } else {
            253
        };
        assert!(
            object.len() <= limit,
            "{kind} {object} is over {limit} characters"
        );
    }
    let metrics = format!("{name}-controller-manager-metrics-service");
    assert_eq!(metrics.len(), 63);
    assert!(
        objects
            .iter()
            .any(|(kind, _, object)| kind == "Service" && *object == metrics)
    );
}

#[test]
fn init_builds_beside_the_directory_and_renames_it_into_place() {
    let temp = tempfile::tempdir().unwrap();
    opgen(temp.path())
        .args("init nested/deeper/demo --domain example.com".split_whitespace())
        .assert()
        .success();
    let names: Vec<String> = std::fs::read_dir(temp.path().join("nested/deeper"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["demo"], "no temporary directory is left behind");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(temp.path().join("nested/deeper/demo"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o700, 0o700);
    assert_ne!(
        mode & 0o055,
        0,
        "the project is not private as a temporary directory is"
    );

    // A directory that appears meanwhile is never replaced: here it exists from the start,
    // non-empty, and init refuses it.
    std::fs::create_dir(temp.path().join("taken")).unwrap();
    std::fs::write(temp.path().join("taken/notes"), "mine").unwrap();
    fails_unchanged(
        temp.path(),
        "init taken --domain example.com",
        1,
        &["is not empty"],
    );
}

/// What an `opgen init` killed by SIGKILL while it built the project leaves beside it, a
/// `.<name>.opgen-XXXXXX` directory, is removed by the next `opgen init` there; one that
/// another init holds (locked) stays, and so do look-alikes that are no build of opgen's.
#[test]
fn init_removes_the_build_directory_a_killed_init_left() {
    let temp = tempfile::tempdir().unwrap();
    let parent = temp.path();
    let leftover = |name: &str| {
        let dir = parent.join(name);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/main.rs"), "half a project").unwrap();
        dir
    };
    let killed = leftover(".demo.opgen-Ab12Cd");
    let other = leftover(".other.opgen-9zY8xW");
    let building = leftover(".busy.opgen-Qr34St");
    let held = std::fs::File::open(&building).unwrap();
    held.try_lock().unwrap();
    let notes = leftover(".demo.opgen-notes");
    std::fs::write(parent.join(".demo.opgen-Zz99Zz"), "a file").unwrap();
    opgen(parent)
        .args("init demo --domain example.com".split_whitespace())
        .assert()
        .success();
    assert!(parent.join("demo/PROJECT").is_file());
    assert!(!killed.exists(), "the killed init's directory is left");
    assert!(
        !other.exists(),
        "another project's killed init's directory is left"
    );
    assert!(
        building.join("src/main.rs").is_file(),
        "a running init's directory was removed"
    );
    assert!(notes.is_dir(), "a directory that is no build was removed");
    assert!(parent.join(".demo.opgen-Zz99Zz").is_file());
    drop(held);
}

/// `--color` decides, and under `auto` the environment does: `NO_COLOR` turns colour off,
/// `CLICOLOR_FORCE` on. The cargo that `generate manifests` runs is told the same.
#[test]
fn colour_follows_the_flag_and_the_environment() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    let tools = tempfile::tempdir().unwrap();
    let args_file = tools.path().join("cargo-args");
    let cargo = tools.path().join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nexit 1\n",
            args_file.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    /// Flags, environment, and whether colour is expected.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], bool);
    let cases: &[Case] = &[
        (&[], &[("NO_COLOR", "1")], false),
        (&["--color", "always"], &[("NO_COLOR", "1")], true),
        (&[], &[("CLICOLOR_FORCE", "1")], true),
        (&["--color", "never"], &[("CLICOLOR_FORCE", "1")], false),
        (&[], &[], false),
    ];
    for (flags, env, coloured) in cases {
        let mut command = project.opgen();
        command
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env("PATH", path_with(tools.path()))
            .args(*flags)
            .args(["generate", "manifests"]);
        for (name, value) in *env {
            command.env(name, value);
        }
        let output = command.assert().code(1).get_output().clone();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr.contains('\u{1b}'),
            *coloured,
            "{flags:?} {env:?}: {stderr:?}"
        );
        let cargo_args = std::fs::read_to_string(&args_file).unwrap();
        let expected = if *coloured {
            "--color=always"
        } else {
            "--color=never"
        };
        assert!(
            cargo_args.contains(expected),
            "{flags:?} {env:?}: {cargo_args}"
        );
    }
}

/// PROJECT is the user's to edit: a change of `operatorScope` is followed by every file that
/// depends on it at the next command (the manager role, its binding, the manager's
/// WATCH_NAMESPACE and `make run`).
#[test]
fn an_edited_operator_scope_is_followed_everywhere() {
    let project = Project::init("demo", "");
    assert!(!project.read("PROJECT").contains("DO NOT EDIT"));
    let render = render_default;
    let make_run = |project: &Project| {
        let output = std::process::Command::new("make")
            .args(["-n", "run", "KUBECTL=false", "OPGEN=true"])
            .current_dir(&project.root)
            .output()
            .expect("make runs");
        String::from_utf8(output.stdout).unwrap()
    };
    let cluster = render(&project);
    assert!(cluster.contains("kind: ClusterRoleBinding"), "{cluster}");
    assert!(
        cluster.contains("- name: WATCH_NAMESPACE\n          value: \"\""),
        "{cluster}"
    );
    assert!(make_run(&project).contains("--watch-namespace=\n"));

    let path = project.root.join("PROJECT");
    let text = project.read("PROJECT");
    std::fs::write(
        &path,
        text.replace("operatorScope: cluster", "operatorScope: namespace"),
    )
    .unwrap();
    project
        .opgen()
        .args(["generate", "manifests"])
        .assert()
        .success();
    let namespaced = render(&project);
    for needle in [
        "kind: RoleBinding",
        "kind: Role\n",
        "- name: WATCH_NAMESPACE\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.namespace",
    ] {
        assert!(namespaced.contains(needle), "{needle}:\n{namespaced}");
    }
    // The manager's own binding is a RoleBinding; the one ClusterRoleBinding left is for the
    // token and access reviews of /metrics, which exist cluster-wide only.
    assert_eq!(
        namespaced.matches("kind: ClusterRoleBinding").count(),
        1,
        "{namespaced}"
    );
    assert!(
        namespaced.contains("name: demo-metrics-auth-rolebinding"),
        "{namespaced}"
    );
    assert!(make_run(&project).contains("--watch-namespace=default"));

    // A kind the new scope cannot hold is refused, with the line of the kind.
    std::fs::write(&path, text).unwrap();
    project.create_api("--group ops --version v1 --kind Thing --namespaced=false");
    let text = project.read("PROJECT");
    let line = text.lines().position(|l| l == "- group: ops").unwrap() + 1;
    std::fs::write(
        &path,
        text.replace("operatorScope: cluster", "operatorScope: namespace"),
    )
    .unwrap();
    fails_unchanged(
        &project.root,
        "generate manifests",
        1,
        &[
            &format!("PROJECT:{line}: Thing is cluster-scoped"),
            "Make the kind namespaced, or the operator cluster-wide",
        ],
    );
}
/// `make help` lists every target of the generated Makefile, each with a description.
#[test]
fn make_help_describes_every_target() {
    let project = Project::init("demo", "--namespaced");
    let makefile = project.read("Makefile");
    let targets: Vec<&str> = makefile
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, _)| name)
        .filter(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .collect();
    assert!(targets.len() >= 15, "{targets:?}");
    let output = std::process::Command::new("make")
        .arg("help")
        .current_dir(&project.root)
        .output()
        .expect("make runs");
    assert!(output.status.success(), "{output:?}");
    let help = String::from_utf8(output.stdout).unwrap();
    for target in targets {
        let described = help.lines().any(|line| {
            line.trim_start()
                .strip_prefix(target)
                .is_some_and(|rest| rest.starts_with("  ") && !rest.trim().is_empty())
        });
        assert!(described, "`make help` does not describe {target}:\n{help}");
    }
}

/// A directory holding a fake `name` that appends its arguments, one call a line, to
/// `<name>.calls` beside it.
fn recording_tool(name: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let calls = dir.path().join(format!("{name}.calls"));
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\n", calls.display());
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// `make <args>` in `project` with `tools` first on PATH: whether it succeeded, and its
/// stdout and stderr together.
fn make_with_tools(project: &Project, tools: &std::path::Path, args: &str) -> (bool, String) {
    project.try_make_with(args, &[("PATH", &path_with(tools))])
}

/// Every image target of the Makefile refuses a container tool other than docker, podman and
/// buildah, naming the three, before it runs anything.
#[test]
fn image_targets_refuse_an_unknown_container_tool() {
    let project = Project::init("demo", "");
    let tools = recording_tool("nerdctl");
    for target in [
        "docker-build",
        "docker-push",
        "bundle-build",
        "bundle-push",
        "catalog-build",
        "catalog-push",
    ] {
        let (ok, output) = make_with_tools(
            &project,
            tools.path(),
            &format!("{target} CONTAINER_TOOL=nerdctl"),
        );
        assert!(!ok, "{target}: {output}");
        assert!(
            output.contains(
                "CONTAINER_TOOL=nerdctl is not supported: set it to docker, podman or buildah"
            ),
            "{target}: {output}"
        );
    }
    assert!(
        !tools.path().join("nerdctl.calls").exists(),
        "nerdctl ran before the check stopped make"
    );
}

/// buildah takes the arguments the recipes give docker: checked with a fake `buildah` first on
/// PATH that records them.
#[test]
fn image_targets_run_buildah_with_dockers_arguments() {
    let project = Project::init("demo", "");
    let tools = recording_tool("buildah");
    for target in ["docker-build", "docker-push", "bundle-build", "bundle-push"] {
        let args = format!("{target} CONTAINER_TOOL=buildah IMG=example.com/demo:1 VERSION=1.0.0");
        let (ok, output) = make_with_tools(&project, tools.path(), &args);
        assert!(ok, "{target}: {output}");
    }
    let calls = std::fs::read_to_string(tools.path().join("buildah.calls")).unwrap();
    assert_eq!(
        calls,
        "build -t example.com/demo:1 .\n\
         push example.com/demo:1\n\
         build -f bundle.Dockerfile -t example.com/demo-bundle:v1.0.0 .\n\
         push example.com/demo-bundle:v1.0.0\n"
    );
}

/// `make docker-build CONTAINER_TOOL=buildah` builds an image with the real buildah, from a
/// `FROM scratch` Dockerfile in place of the project's (whose base images would be pulled).
#[test]
fn docker_build_builds_an_image_with_buildah() {
    let found = std::process::Command::new("buildah")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: buildah is not installed (Debian: apt-get install buildah)");
        return;
    }
    let project = Project::init("demo", "");
    std::fs::write(
        project.root.join("Dockerfile"),
        "FROM scratch\nCOPY Cargo.toml /Cargo.toml\n",
    )
    .unwrap();
    let image = format!("localhost/opgen-cli-test:{}", std::process::id());
    let built = std::process::Command::new("make")
        .args([
            "docker-build",
            "CONTAINER_TOOL=buildah",
            &format!("IMG={image}"),
        ])
        .current_dir(&project.root)
        .output()
        .expect("make runs");
    let listed = std::process::Command::new("buildah")
        .args(["images", "--noheading", &image])
        .output()
        .expect("buildah runs");
    let _ = std::process::Command::new("buildah")
        .args(["rmi", &image])
        .output();
    assert!(built.status.success(), "{built:?}");
    assert!(listed.status.success(), "{listed:?}");
    assert!(
        String::from_utf8_lossy(&built.stdout).contains(&format!("buildah build -t {image} .")),
        "{built:?}"
    );
}

/// Every project has an end-to-end test that `make test-e2e` runs and `cargo test` ignores;
/// it reads the samples from config/samples when it runs, so the sample `create api` adds to
/// that kustomization is tested without a change to the test, which stays the user's.
#[test]
fn the_end_to_end_test_runs_from_make_and_covers_every_sample() {
    let project = Project::init("demo", "");
    let test = project.read("tests/e2e/main.rs");
    assert!(!test.contains("DO NOT EDIT"), "the test is the user's");
    for needle in [
        "#[ignore = \"needs a cluster, kubectl and a container tool: run it with `make test-e2e`\"]",
        "\"E2E_SAMPLES\"",
        "\"config/samples\"",
        "\"E2E_LOAD_IMAGE\"",
        "\"E2E_SKIP_BUILD\"",
        "\"E2E_CURL_IMAGE\"",
    ] {
        assert!(test.contains(needle), "{needle}");
    }
    let make = project.make("-n test-e2e");
    assert!(
        make.contains("cargo test --test e2e -- --ignored --nocapture"),
        "{make}"
    );

    project.create_api("--group web --version v1 --kind Site");
    project.create_api("--group cache --version v1 --kind Memcached --image memcached:1.6");
    assert_eq!(project.read("tests/e2e/main.rs"), test);
    let samples = project.read("config/samples/kustomization.yaml");
    for sample in ["- web_v1_site.yaml", "- cache_v1_memcached.yaml"] {
        assert!(samples.contains(sample), "{sample}:\n{samples}");
    }
}

/// rustfmt's user-wide configuration (`~/.config/rustfmt/rustfmt.toml`) never shapes what opgen
/// writes: without a configuration in the project, rustfmt's defaults apply.
#[test]
fn the_users_global_rustfmt_configuration_does_not_leak_in() {
    let args = "create api --group db --version v1 --kind MySQLClusterBackup";
    let plain = Project::init("demo", "");
    plain.create_api(args.trim_start_matches("create api "));
    let global = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(global.path().join("rustfmt")).unwrap();
    std::fs::write(
        global.path().join("rustfmt/rustfmt.toml"),
        "max_width = 60\nhard_tabs = true\n",
    )
    .unwrap();
    let configured = Project::init("demo", "");
    configured
        .opgen()
        .env("XDG_CONFIG_HOME", global.path())
        .args(args.split_whitespace())
        .assert()
        .success();
    for file in [
        "api/src/db/v1/my_sql_cluster_backup.rs",
        "src/controllers/db/my_sql_cluster_backup.rs",
    ] {
        assert_eq!(configured.read(file), plain.read(file), "{file}");
    }
    // The same configuration in the project is followed.
    let project_config = Project::init("demo", "");
    std::fs::copy(
        global.path().join("rustfmt/rustfmt.toml"),
        project_config.root.join("rustfmt.toml"),
    )
    .unwrap();
    project_config.create_api(args.trim_start_matches("create api "));
    let types = project_config.read("api/src/db/v1/my_sql_cluster_backup.rs");
    assert!(
        types.contains("\n\tpub "),
        "hard tabs from rustfmt.toml:\n{types}"
    );
}

#[test]
fn create_webhook_refuses_bad_input_and_writes_nothing() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    project.create_api("--group db --version v1 --kind Backup");
    project.create_api("--group db --version v1alpha1 --kind Backup --controller=false");
    project
        .opgen()
        .args("create webhook --group db --version v1 --kind Thing --defaulting".split_whitespace())
        .assert()
        .success();
    let webhook = |flags: &str| format!("create webhook {flags}");
    let cases: Vec<(String, i32, Vec<&str>)> = vec![
        (
            webhook("--group db --version v1 --kind Thing"),
            1,
            vec![
                "no webhook asked for",
                "--defaulting, --validation and --conversion",
            ],
        ),
        (
            webhook("--group db --version v1 --kind Other --validation"),
            1,
            vec![
                "Other db/v1 is not in PROJECT",
                "opgen create api --group db --version v1 --kind Other",
            ],
        ),
        (
            webhook("--group db --version v2 --kind Thing --validation"),
            1,
            vec!["Thing db/v2 is not in PROJECT (it has v1)"],
        ),
        (
            webhook("--group db --version v1 --kind Thing --conversion"),
            1,
            vec![
                "--conversion needs a kind with two versions",
                "opgen create api",
            ],
        ),
        (
            webhook("--group db --version v1 --kind Thing --defaulting"),
            1,
            vec!["--defaulting already", "--force"],
        ),
        (
            webhook("--group db --version v1 --kind thing --defaulting"),
            1,
            vec!["invalid kind `thing`"],
        ),
        (
            webhook("--group db --version v1 --defaulting"),
            1,
            vec!["missing --kind"],
        ),
        (
            webhook("--group db --version v1 --kind Thing --mutating"),
            2,
            vec!["unexpected argument"],
        ),
    ];
    for (args, code, needles) in cases {
        fails_unchanged(&project.root, &args, code, &needles);
    }
    // A PROJECT edited into a conversion webhook for a single version is refused with its line.
    let path = project.root.join("PROJECT");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("    defaulting: true", "    conversion: true");
    std::fs::write(&path, text).unwrap();
    fails_unchanged(
        &project.root,
        "create webhook --group db --version v1 --kind Backup --validation",
        1,
        &[
            "PROJECT:",
            "records a conversion webhook, but Thing has only one version",
        ],
    );
}

#[test]
fn create_webhook_records_the_webhooks_in_project() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Backup");
    project.create_api("--group db --version v1alpha1 --kind Backup --controller=false");
    let before = project.tree();
    project
        .opgen()
        .args(
            "create webhook --group db --version v1 --kind Backup --defaulting --conversion --dry-run"
                .split_whitespace(),
        )
        .assert()
        .success()
        .stderr(predicate::str::contains("Updating PROJECT"))
        .stdout(predicate::str::contains("+  webhooks:"));
    assert!(project.tree() == before, "--dry-run wrote files");
    for flags in [
        "--version v1 --kind Backup --defaulting --conversion",
        "--version v1alpha1 --kind Backup --validation",
    ] {
        project
            .opgen()
            .args(["create", "webhook", "--group", "db"])
            .args(flags.split_whitespace())
            .assert()
            .success();
    }
    let recorded = project.read("PROJECT");
    assert!(
        recorded.contains("  webhooks:\n    defaulting: true\n    conversion: true\n"),
        "{recorded}"
    );
    assert!(
        recorded.contains("  webhooks:\n    validation: true\n"),
        "{recorded}"
    );
    // --force asks again for what exists, and changes nothing that is not asked.
    project
        .opgen()
        .args(
            "create webhook --group db --version v1 --kind Backup --defaulting --force"
                .split_whitespace(),
        )
        .assert()
        .success();
    assert_eq!(project.read("PROJECT"), recorded);
}

#[test]
fn create_webhook_scaffolds_the_webhook_file_and_adds_the_crates_once() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    project.create_api("--group db --version v1 --kind Other");
    let manifest = project.read("Cargo.toml");
    project
        .opgen()
        .args("create webhook --group db --version v1 --kind Thing --validation".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "Creating src/webhooks/db/thing_v1_validation.rs",
        ))
        .stderr(predicate::str::contains("Updating Cargo.toml"))
        .stdout(predicate::str::contains(
            "edit src/webhooks/db/thing_v1_validation.rs to write your validation rules",
        ));
    let amended = project.read("Cargo.toml");
    // The crates go at the end of [dependencies], before [features].
    assert!(amended.starts_with(manifest.split("\n[features]").next().unwrap()));
    assert!(
        amended.contains("\nkube-core = { version = \"5.0.0\", features = [\"admission\"] }\n")
    );
    let validation = project.read("src/webhooks/db/thing_v1_validation.rs");
    assert!(validation.contains("fn validate_create(&self, obj: &api::Thing) -> Verdict"));
    assert!(!validation.contains("fn default("));
    assert!(project.read("src/webhooks/mod.rs").contains(
        ".validation(\"/validate-db-example-com-v1-thing\", ::std::sync::Arc::new(db::thing_v1_validation::webhook()))"
    ));
    let lib = project.read("src/lib.rs");
    assert!(lib.contains("pub mod webhooks;"), "{lib}");
    assert!(
        lib.contains(".webhooks(crate::webhooks::router())"),
        "the manager is handed the webhooks:\n{lib}"
    );

    // A second webhook finds the crates there already.
    project
        .opgen()
        .args("create webhook --group db --version v1 --kind Other --defaulting".split_whitespace())
        .assert()
        .success();
    assert_eq!(project.read("Cargo.toml"), amended);

    // The other admission webhook of the version gets a file of its own: the user's code of
    // the first stays as it is, and no --force is needed.
    let edited = validation.replace("Verdict::allow()\n}", "Verdict::allow().warn(\"mine\")\n}");
    assert_ne!(edited, validation, "the validation file changed shape");
    project.write("src/webhooks/db/thing_v1_validation.rs", &edited);
    project
        .opgen()
        .args("create webhook --group db --version v1 --kind Thing --defaulting".split_whitespace())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "Creating src/webhooks/db/thing_v1_defaulting.rs",
        ))
        .stderr(predicate::str::contains("thing_v1_validation.rs").not());
    assert_eq!(
        project.read("src/webhooks/db/thing_v1_validation.rs"),
        edited
    );
    assert!(
        project
            .read("src/webhooks/db/thing_v1_defaulting.rs")
            .contains("fn default(")
    );
    let router = project.read("src/webhooks/mod.rs");
    assert!(
        router.contains("::std::sync::Arc::new(db::thing_v1_defaulting::webhook()))")
            && router.contains("::std::sync::Arc::new(db::thing_v1_validation::webhook()))"),
        "{router}"
    );
    assert!(
        project
            .read("PROJECT")
            .contains("  webhooks:\n    defaulting: true\n    validation: true\n")
    );

    // Asked again, a webhook is scaffolded again only with --force, which overwrites its file
    // (see the diff first with --dry-run --force).
    fails_unchanged(
        &project.root,
        "create webhook --group db --version v1 --kind Thing --validation",
        1,
        &["has the webhooks of --validation already", "--force"],
    );
    let before = project.tree();
    project
        .opgen()
        .args(
            "create webhook --group db --version v1 --kind Thing --validation --force --dry-run"
                .split_whitespace(),
        )
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "-    Verdict::allow().warn(\"mine\")",
        ));
    assert!(project.tree() == before, "--dry-run wrote files");
    project
        .opgen()
        .args(
            "create webhook --group db --version v1 --kind Thing --validation --force"
                .split_whitespace(),
        )
        .assert()
        .success();
    assert_eq!(
        project.read("src/webhooks/db/thing_v1_validation.rs"),
        validation
    );
}

/// A project of opgen 0.2.0 has one webhook file per version, with both admission webhooks in
/// it: opgen keeps serving it, a webhook added later gets a file of its own, and a webhook
/// moved out with --force loses its marker there.
#[test]
fn a_combined_webhook_file_of_an_older_opgen_keeps_working() {
    let project = Project::init("demo-operator", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    project
        .opgen()
        .args(
            "create webhook --group db --version v1alpha1 --kind MySQLCluster --defaulting"
                .split_whitespace(),
        )
        .assert()
        .success();
    // As 0.2.0 left it: one file with the defaulting webhook, and the router's module tree.
    let combined = "src/webhooks/db/my_sql_cluster_v1alpha1.rs";
    let legacy = include_str!("fixtures/webhook-0.2.0-my_sql_cluster_v1alpha1.rs");
    let validating = legacy
        .lines()
        .find(|line| line.contains("mutating=false"))
        .unwrap();
    project.write(combined, &legacy.replace(&format!("{validating}\n"), ""));
    std::fs::remove_file(
        project
            .root
            .join("src/webhooks/db/my_sql_cluster_v1alpha1_defaulting.rs"),
    )
    .unwrap();
    project.opgen().arg("update").assert().success();
    let router = project.read("src/webhooks/mod.rs");
    assert!(
        router.contains("::std::sync::Arc::new(db::my_sql_cluster_v1alpha1::webhook()))"),
        "{router}"
    );
    assert!(
        project
            .read("src/webhooks/db/mod.rs")
            .contains("\npub mod my_sql_cluster_v1alpha1;\n")
    );
    // `update` does not call the webhook's own file missing.
    project
        .opgen()
        .arg("update")
        .assert()
        .success()
        .stderr(predicate::str::contains("my_sql_cluster_v1alpha1_defaulting").not());

    // The validation webhook added later has its own file; the combined file is untouched.
    project
        .opgen()
        .args(
            "create webhook --group db --version v1alpha1 --kind MySQLCluster --validation"
                .split_whitespace(),
        )
        .assert()
        .success();
    let router = project.read("src/webhooks/mod.rs");
    assert!(
        router.contains(".defaulting(\"/mutate-db-example-com-v1alpha1-mysqlcluster\", ::std::sync::Arc::new(db::my_sql_cluster_v1alpha1::webhook()))")
            && router.contains(".validation(\"/validate-db-example-com-v1alpha1-mysqlcluster\", ::std::sync::Arc::new(db::my_sql_cluster_v1alpha1_validation::webhook()))"),
        "{router}"
    );
    assert_ne!(project.read(combined), legacy);
    assert!(!project.read(combined).contains("mutating=false"));

    // The defaulting webhook scaffolded again with --force moves to its own file, and the
    // combined file loses its marker, so that the webhook is configured once.
    project
        .opgen()
        .args(
            "create webhook --group db --version v1alpha1 --kind MySQLCluster --defaulting --force"
                .split_whitespace(),
        )
        .assert()
        .success()
        .stderr(predicate::str::contains(format!("Updating {combined}")));
    assert!(!project.read(combined).contains("+opgen:webhook:"));
    let groups = project.read("src/webhooks/db/mod.rs");
    assert!(
        !groups.contains("pub mod my_sql_cluster_v1alpha1;")
            && groups.contains("pub mod my_sql_cluster_v1alpha1_defaulting;"),
        "{groups}"
    );
}

#[test]
fn generate_manifests_writes_the_webhook_configurations_from_the_markers() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    project
        .opgen()
        .args("create webhook --group db --version v1 --kind Thing --defaulting".split_whitespace())
        .assert()
        .success();
    let first = project.read("config/webhook/manifests.yaml");
    assert!(
        first.contains("kind: MutatingWebhookConfiguration"),
        "{first}"
    );
    assert!(!first.contains("ValidatingWebhookConfiguration"), "{first}");
    let default = project.read("config/default/kustomization.yaml");
    assert!(default.contains("\n- ../manager\n# [WEBHOOK]"), "{default}");
    assert!(
        default.contains("#components:\n#- ../certmanager\n"),
        "{default}"
    );
    assert!(
        project
            .root
            .join("config/certmanager/certificate.yaml")
            .is_file()
    );

    // A marker added by hand reaches the manifests.
    let file = project.root.join("src/webhooks/db/thing_v1_defaulting.rs");
    let source = std::fs::read_to_string(&file).unwrap();
    let validating = "// +opgen:webhook:path=/validate-db-example-com-v1-thing,mutating=false,failurePolicy=ignore,sideEffects=None,groups=db.example.com,resources=things,verbs=create;update,versions=v1,name=vthing-v1.db.example.com,admissionReviewVersions=v1\n";
    std::fs::write(&file, format!("{validating}{source}")).unwrap();
    project.generate_manifests_without_building();
    let manifests = project.read("config/webhook/manifests.yaml");
    assert!(
        manifests.contains("kind: ValidatingWebhookConfiguration"),
        "{manifests}"
    );
    assert!(
        manifests.contains("  failurePolicy: Ignore\n  name: vthing-v1.db.example.com\n"),
        "{manifests}"
    );

    // A bad one is reported with its file and line, and nothing is written.
    let bad = "// +opgen:webhook:path=/validate-db-example-com-v1-thing,mutating=maybe\n";
    std::fs::write(&file, format!("{bad}{source}")).unwrap();
    for args in ["generate manifests", "generate manifests --check"] {
        fails_unchanged(
            &project.root,
            args,
            1,
            &[
                "src/webhooks/db/thing_v1_defaulting.rs:1: invalid mutating `maybe`",
                bad.trim_end(),
            ],
        );
    }
}

#[test]
fn create_webhook_conversion_scaffolds_a_conversion_per_spoke_and_switches_the_crd() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1alpha1 --kind Thing");
    project.create_api("--group db --version v1beta1 --kind Thing --controller=false");
    project.create_api("--group db --version v1 --kind Thing --controller=false");
    project
        .opgen()
        .args("create webhook --group db --version v1 --kind Thing --conversion".split_whitespace())
        .assert()
        .success();
    // The hub is the storage version, v1; each other version converts to and from it.
    for spoke in ["v1alpha1", "v1beta1"] {
        let conversion = project.read(&format!("api/src/db/{spoke}/thing_conversion.rs"));
        assert!(
            conversion.contains("impl From<hub::Thing> for Thing {"),
            "{conversion}"
        );
        assert!(
            conversion.contains("use crate::db::v1 as hub;"),
            "{conversion}"
        );
        assert!(
            project
                .read(&format!("api/src/db/{spoke}/mod.rs"))
                .contains("mod thing_conversion;")
        );
    }
    assert!(
        !project
            .root
            .join("api/src/db/v1/thing_conversion.rs")
            .exists()
    );
    assert!(
        !project.root.join("src/webhooks/db").exists(),
        "no admission webhook file"
    );
    let lib = project.read("api/src/lib.rs");
    assert!(
        lib.contains("Some(\"things.db.example.com\") => \"/convert-db-example-com-thing\","),
        "{lib}"
    );
    assert!(lib.contains(".map(with_conversion)"), "{lib}");
    let router = project.read("src/webhooks/mod.rs");
    assert!(
        router.contains(".conversion(\"/convert-db-example-com-thing\", convert_db_thing)"),
        "{router}"
    );
    assert!(
        router.contains(
            "\"db.example.com/v1beta1\" => read::<group::v1beta1::Thing>(object)?.into(),"
        ),
        "{router}"
    );
    assert!(
        project
            .read("config/crd/kustomization.yaml")
            .contains("- kustomizeconfig.yaml")
    );
    assert!(
        project
            .root
            .join("config/crd/kustomizeconfig.yaml")
            .is_file()
    );
}

#[test]
fn a_new_version_of_a_converting_kind_is_a_spoke_of_its_hub() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1alpha1 --kind Thing");
    project.create_api("--group db --version v1 --kind Thing --controller=false");
    project
        .opgen()
        .args("create webhook --group db --version v1 --kind Thing --conversion".split_whitespace())
        .assert()
        .success();
    fails_unchanged(
        &project.root,
        "create api --group db --version v2 --kind Thing --controller=false",
        1,
        &["Thing converts through v1, its hub", "--storage=false"],
    );
    project.create_api("--group db --version v2 --kind Thing --controller=false --storage=false");
    let conversion = project.read("api/src/db/v2/thing_conversion.rs");
    assert!(
        conversion.contains("use crate::db::v1 as hub;"),
        "{conversion}"
    );
    assert!(
        project
            .read("src/webhooks/mod.rs")
            .contains("\"db.example.com/v2\" => write(&group::v2::Thing::from(hub)),")
    );
}

/// The CRD fixture of cert-manager's shape that `--external-crd` tests read.
fn certificate_crd() -> String {
    format!(
        "{}/tests/fixtures/certificate-crd.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn create_api_watches_built_in_kinds_without_types_or_crds() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Backup");
    project.create_api("--group core --version v1 --kind ConfigMap --resource=false");
    project.create_api("--group apps --version v1 --kind Deployment --resource=false");
    // The core group may also be named by its empty name, as RBAC does.
    project.create_api("--group= --version v1 --kind Namespace --resource=false");

    let record = project.read("PROJECT");
    assert!(
        record.contains("foreignKinds:\n- origin: builtIn\n  group: \"\"\n  version: v1\n  kind: ConfigMap\n  plural: configmaps\n  namespaced: true\n"),
        "{record}"
    );
    assert!(
        record.contains("  kind: Namespace\n  plural: namespaces\n  namespaced: false\n"),
        "{record}"
    );
    let config_map = project.read("src/controllers/core/config_map.rs");
    assert!(
        config_map
            .contains("// +opgen:rbac:groups=\"\",resources=configmaps,verbs=get;list;watch\n")
    );
    assert!(config_map.contains("use ::k8s_openapi::api::core::v1 as api;"));
    assert!(config_map.contains("const FINALIZER: bool = false;"));
    let deployment = project.read("src/controllers/apps/deployment.rs");
    assert!(
        deployment
            .contains("// +opgen:rbac:groups=apps,resources=deployments,verbs=get;list;watch\n")
    );
    assert!(deployment.contains("type Object = api::Deployment;"));
    let controllers = project.read("src/controllers/mod.rs");
    for run in [
        "apps::deployment::run",
        "core::config_map::run",
        "core::namespace::run",
        "db::backup::run",
    ] {
        assert!(controllers.contains(run), "{run}: {controllers}");
    }
    // No types, no CRD: the api crate has only the project's own group.
    assert!(!project.root.join("api/src/core").exists());
    assert!(!project.root.join("api/src/apps").exists());
    assert!(!project.read("api/src/lib.rs").contains("pub mod core"));
    assert!(
        !project
            .read("config/crd/kustomization.yaml")
            .contains("configmaps")
    );
    // A kind that is the project's own keeps working as before.
    project.create_api("--group db --version v1 --kind Thing --controller=false");
    project.create_api("--group db --version v1 --kind Thing --resource=false");
    assert!(project.root.join("src/controllers/db/thing.rs").is_file());
}

#[test]
fn create_api_refuses_unknown_built_in_kinds_and_second_controllers() {
    let project = Project::init("demo", "");
    project.create_api("--group apps --version v1 --kind Deployment --resource=false");
    let api = |flags: &str| format!("create api {flags} --resource=false");
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            api("--group apps --version v1 --kind Deployments"),
            vec!["has no kind Deployments", "Did you mean --kind Deployment?"],
        ),
        (
            api("--group apps --version v1beta1 --kind StatefulSet"),
            vec![
                "no StatefulSet in apps/v1beta1",
                "Did you mean apps/v1? Pass --version v1",
            ],
        ),
        (
            api("--group app --version v1 --kind StatefulSet"),
            vec!["`app` is not an API group", "Did you mean --group apps?"],
        ),
        (
            api("--group batch --version v1 --kind DaemonSet"),
            vec!["Did you mean --group apps --version v1?"],
        ),
        (
            api("--group apps --version v1 --kind Deployment"),
            vec![
                "Deployment of `apps` has a controller already",
                "src/controllers/apps/deployment.rs",
            ],
        ),
        (
            api("--group apps --version v1 --kind StatefulSet --plural sets"),
            vec![
                "--plural does not apply to a kind this project does not own",
                "Drop --plural",
            ],
        ),
        (
            api("--group apps --version v1 --kind StatefulSet --image mysql:8.0"),
            vec!["--image"],
        ),
    ];
    for (args, needles) in cases {
        fails_unchanged(&project.root, &args, 1, &needles);
    }

    let namespaced = Project::init("solo", "--namespaced");
    fails_unchanged(
        &namespaced.root,
        "create api --group core --version v1 --kind Namespace --resource=false",
        1,
        &["Namespace v1 is cluster-scoped", "cluster-wide operator"],
    );
}

#[test]
fn create_api_watches_a_kind_of_an_external_crd() {
    let project = Project::init("demo", "");
    let crd = certificate_crd();
    project.create_api(&format!(
        "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {crd}"
    ));
    assert_eq!(
        project.read("config/external/certificates.cert-manager.io.yaml"),
        std::fs::read_to_string(&crd).unwrap(),
        "the CRD is stored as given"
    );
    let record = project.read("PROJECT");
    assert!(
        record.contains("- origin: external\n  group: cert-manager.io\n  version: v1\n  kind: Certificate\n  plural: certificates\n  namespaced: true\n  crd: config/external/certificates.cert-manager.io.yaml\n"),
        "{record}"
    );
    let controller = project.read("src/controllers/cert_manager/certificate.rs");
    assert!(controller.contains("use ::demo_api::external::cert_manager::v1 as api;"));
    assert!(controller.contains(
        "// +opgen:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch\n"
    ));
    let types = project.read("api/src/external/cert_manager/v1.rs");
    assert!(types.starts_with("// Code generated by opgen. DO NOT EDIT."));
    assert!(types.contains("pub struct CertificateSpec {"));
    assert!(types.contains("fn an_example_certificate_round_trips()"));
    assert!(
        project
            .read("api/src/lib.rs")
            .contains("#[rustfmt::skip]\npub mod external;")
    );
    // Never the external CRD among the project's own.
    assert!(
        !project
            .read("config/crd/kustomization.yaml")
            .contains("certificates")
    );
}

#[test]
fn create_api_refuses_bad_external_crds() {
    let project = Project::init("demo", "");
    let crd = certificate_crd();
    project.write(
        "not-a-crd.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    let beta = std::fs::read_to_string(&crd)
        .unwrap()
        .replace("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1");
    project.write("beta-crd.yaml", &beta);
    let external = |flags: &str, file: &str| {
        format!("create api {flags} --resource=false --external-crd {file}")
    };
    let certificate = "--group cert-manager.io --version v1 --kind Certificate";
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            external(certificate, "not-a-crd.yaml"),
            vec![
                "is not a CRD opgen can use",
                "a `ConfigMap` of `v1`",
                "apiextensions.k8s.io/v1",
            ],
        ),
        (
            external(certificate, "beta-crd.yaml"),
            vec!["not a `CustomResourceDefinition` of `apiextensions.k8s.io/v1`"],
        ),
        (
            external(certificate, "missing.yaml"),
            vec!["cannot read --external-crd missing.yaml"],
        ),
        (
            external("--group cert-manager.io --version v1 --kind Issuer", &crd),
            vec![
                "defines the kind Certificate, not Issuer",
                "Pass --kind Certificate",
            ],
        ),
        (
            external(
                "--group cert-manager.io --version v2 --kind Certificate",
                &crd,
            ),
            vec!["in version(s) v1, not v2"],
        ),
        (
            format!("create api {certificate} --external-crd {crd}"),
            vec![
                "--external-crd describes a kind of another project",
                "Add --resource=false",
            ],
        ),
        (
            external(
                "--group certmanager.io --version v1 --kind Certificate",
                &crd,
            ),
            vec![
                "defines group `cert-manager.io`",
                "Pass --group cert-manager.io",
            ],
        ),
    ];
    for (args, needles) in cases {
        fails_unchanged(&project.root, &args, 1, &needles);
    }
    project.create_api(&external(certificate, &crd)["create api ".len()..]);
    fails_unchanged(
        &project.root,
        &external(certificate, &crd),
        1,
        &["Certificate of `cert-manager.io` has a controller already"],
    );
}

#[test]
fn project_refuses_a_built_in_kind_edited_out_of_kubernetes_shape() {
    let project = Project::init("demo", "");
    project.create_api("--group apps --version v1 --kind Deployment --resource=false");
    let edited = project
        .read("PROJECT")
        .replace("plural: deployments", "plural: deploys");
    project.write("PROJECT", &edited);
    let line = edited
        .lines()
        .position(|l| l == "- origin: builtIn")
        .unwrap()
        + 1;
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Thing",
        1,
        &[
            &format!(
                "PROJECT:{line}: the plural of the built-in Deployment is `deployments`, not `deploys`"
            ),
            "Set `plural: deployments`",
        ],
    );
}

#[test]
fn a_stored_external_crd_must_keep_defining_its_kind() {
    let project = Project::init("demo", "");
    let crd = certificate_crd();
    project.create_api(&format!(
        "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {crd}"
    ));
    let stored = "config/external/certificates.cert-manager.io.yaml";
    let other = project
        .read(stored)
        .replace("kind: Certificate\n", "kind: Issuer\n");
    project.write(stored, &other);
    fails_unchanged(
        &project.root,
        "generate manifests",
        1,
        &[
            "config/external/certificates.cert-manager.io.yaml defines Issuer of `cert-manager.io`, but PROJECT has it for Certificate",
            "Put back the CRD of Certificate",
        ],
    );
}

#[test]
fn create_api_reads_the_kind_s_document_of_a_file_of_several() {
    let project = Project::init("demo", "");
    let crd = std::fs::read_to_string(certificate_crd()).unwrap();
    let issuer = crd
        .replace("kind: Certificate\n", "kind: Issuer\n")
        .replace("certificates", "issuers");
    project.write("one-then-marker.yaml", &format!("{crd}---\n"));
    project.write("several.yaml", &format!("{issuer}---\n{crd}---\n"));
    project.write("twice.yaml", &format!("{crd}---\n{crd}"));
    project.write("empty.yaml", "# nothing yet\n---\n");
    project.write("no-kind.yaml", "metadata:\n  name: x\n");
    let external = |kind: &str, file: &str| {
        format!(
            "create api --group cert-manager.io --version v1 --kind {kind} --resource=false --external-crd {file}"
        )
    };
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            external("Order", "several.yaml"),
            vec![
                "none of its 2 YAML documents is the CRD of Order of `cert-manager.io`",
                "1. Issuer of `cert-manager.io` (line 1); 2. Certificate of `cert-manager.io` (line ",
            ],
        ),
        (
            external("Certificate", "twice.yaml"),
            vec!["2 of its 2 YAML documents are the CRD of Certificate of `cert-manager.io`"],
        ),
        (
            external("Certificate", "empty.yaml"),
            vec!["it holds no YAML document"],
        ),
        (
            external("Certificate", "no-kind.yaml"),
            vec![
                "it has no `kind` and no `apiVersion`: a CRD has `apiVersion: apiextensions.k8s.io/v1` and `kind: CustomResourceDefinition`",
            ],
        ),
    ];
    for (args, needles) in cases {
        let assert = opgen(&project.root)
            .args(args.split_whitespace())
            .assert()
            .code(1);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        for hidden in ["from_str", "Options", "``"] {
            assert!(!stderr.contains(hidden), "{args}: {stderr}");
        }
        fails_unchanged(&project.root, &args, 1, &needles);
    }

    project.create_api(&external("Certificate", "one-then-marker.yaml")["create api ".len()..]);
    assert_eq!(
        project.read("config/external/certificates.cert-manager.io.yaml"),
        crd,
        "the CRD is stored without the empty document after it"
    );
    project.create_api(&external("Issuer", "several.yaml")["create api ".len()..]);
    assert_eq!(
        project.read("config/external/issuers.cert-manager.io.yaml"),
        issuer,
        "only the Issuer's document is stored"
    );
    // A stored copy replaced by the project's file of all its CRDs is read the same way.
    project.write(
        "config/external/certificates.cert-manager.io.yaml",
        &format!("{issuer}---\n{crd}"),
    );
    opgen(&project.root)
        .args(["generate", "manifests", "--dry-run"])
        .assert()
        .success();
}

#[test]
fn project_refuses_a_stored_crd_outside_config_external() {
    let project = Project::init("demo", "");
    project.create_api(&format!(
        "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {}",
        certificate_crd()
    ));
    let stored = "crd: config/external/certificates.cert-manager.io.yaml";
    let original = project.read("PROJECT");
    let line = original
        .lines()
        .position(|l| l == "- origin: external")
        .unwrap()
        + 1;
    let outside = project.root.parent().unwrap().join("outside.yaml");
    std::fs::write(
        &outside,
        std::fs::read_to_string(certificate_crd()).unwrap(),
    )
    .unwrap();
    for crd in [
        "config/external/../../outside.yaml".to_owned(),
        outside.display().to_string(),
    ] {
        project.write("PROJECT", &original.replace(stored, &format!("crd: {crd}")));
        fails_unchanged(
            &project.root,
            "generate manifests",
            1,
            &[
                &format!(
                    "PROJECT:{line}: Certificate cert-manager.io/v1 has `crd: {crd}`, which is not a file inside config/external/"
                ),
                "Put back `crd: config/external/certificates.cert-manager.io.yaml`",
            ],
        );
    }
    project.write("PROJECT", &original);
    std::os::unix::fs::symlink(&outside, project.root.join("config/external/linked.yaml")).unwrap();
    project.write(
        "PROJECT",
        &original.replace(stored, "crd: config/external/linked.yaml"),
    );
    fails_unchanged(
        &project.root,
        "generate manifests",
        1,
        &[
            &format!(
                "PROJECT:{line}: Certificate cert-manager.io/v1 has `crd: config/external/linked.yaml`, which resolves through a symbolic link to a file outside config/external/"
            ),
            "Replace the link with a copy of the CRD",
        ],
    );
}

#[test]
fn a_malformed_project_is_reported_once_at_its_place_in_opgen_s_words() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    let original = project.read("PROJECT");
    let (index, line) = original
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with("controller: true"))
        .unwrap();
    let column = line.find("true").unwrap() + 1;
    project.write(
        "PROJECT",
        &original.replace("controller: true", "controller: maybe"),
    );
    let place = format!("PROJECT:{}:{column}: ", index + 1);
    let assert = opgen(&project.root)
        .args(["generate", "manifests"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!("{place}invalid boolean")),
        "{stderr}"
    );
    assert!(!stderr.contains(" line "), "one location only: {stderr}");

    let scope = original
        .lines()
        .position(|l| l.starts_with("operatorScope:"))
        .unwrap();
    project.write(
        "PROJECT",
        &original.replace(
            "operatorScope: cluster\n",
            "operatorScope: cluster\noperatorScope: cluster\n",
        ),
    );
    let assert = opgen(&project.root)
        .args(["generate", "manifests"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!(
            "PROJECT:{}:1: duplicate mapping key `operatorScope`",
            scope + 2
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("DuplicateKeyPolicy"), "{stderr}");
    assert!(!stderr.contains("Options"), "{stderr}");
}

#[test]
fn create_api_says_why_a_kind_that_exists_cannot_be_watched() {
    let project = Project::init("demo", "");
    fails_unchanged(
        &project.root,
        "create api --group authentication.k8s.io --version v1 --kind TokenReview --resource=false",
        1,
        &[
            "TokenReview authentication.k8s.io/v1 cannot be watched: Kubernetes answers each one as it is created and stores none",
        ],
    );
    fails_unchanged(
        &project.root,
        "create api --group autoscaling --version v1 --kind Scale --resource=false",
        1,
        &["Scale autoscaling/v1 is a subresource of other kinds"],
    );
}

/// The generated CI workflow runs the integration tests on the control plane of the
/// Kubernetes release the project targets: its `Control plane` step, run with a `go` and a
/// `setup-envtest` that print what they are asked, asks for that release and hands the
/// directory to the next steps.
#[test]
fn ci_runs_the_integration_tests_on_the_projects_kubernetes() {
    let project = Project::init("demo", "--kubernetes-version 1.35");
    let step = |name: &str| project.ci_step("integration", name);
    assert_eq!(step("Integration tests"), "make test-integration");

    let tools = tempfile::tempdir().unwrap();
    let gopath = tools.path().join("gopath");
    std::fs::create_dir_all(gopath.join("bin")).unwrap();
    let calls = tools.path().join("calls");
    common::write_script(
        &tools.path().join("go"),
        &format!(
            "#!/bin/sh\nif [ \"$1\" = env ]; then echo {}; else echo \"go $*\" >> {}; fi\n",
            gopath.display(),
            calls.display()
        ),
    );
    common::write_script(
        &gopath.join("bin/setup-envtest"),
        &format!(
            "#!/bin/sh\necho \"setup-envtest $*\" >> {}\necho /store/k8s/1.35.4-linux-amd64\n",
            calls.display()
        ),
    );
    let github_env = tools.path().join("github-env");
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap()
    );
    let output = std::process::Command::new("bash")
        .args(["-eo", "pipefail", "-c", &step("Control plane")])
        .current_dir(&project.root)
        .env("PATH", path)
        .env("GITHUB_ENV", &github_env)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        "go install sigs.k8s.io/controller-runtime/tools/setup-envtest@v0.25.1\nsetup-envtest use 1.35.x -p path\n"
    );
    assert_eq!(
        std::fs::read_to_string(&github_env).unwrap(),
        "KUBEBUILDER_ASSETS=/store/k8s/1.35.4-linux-amd64\n"
    );
}

/// What the generated CI's `Install opgen` step did, run with stand-ins.
struct InstallRun {
    output: std::process::Output,
    /// Every call of the stand-ins `cargo` and `curl`, one a line.
    calls: String,
    /// The `opgen` it installed, if any.
    installed: Option<String>,
}

/// How the release of the project's opgen looks to the `Install opgen` step.
enum Release {
    /// cargo-binstall is on the runner.
    Binstall,
    /// The release has this runner's archive, with a good or a bad checksum.
    Archive { good_checksum: bool },
    /// Nothing to download for this runner.
    Missing,
}

/// Runs the generated CI's `Install opgen` step of `project` on a Linux x86_64 runner of
/// stand-ins: `uname`, a `curl` that serves the release's files from a directory, a `cargo`
/// that records its calls, and `cargo-binstall` when `release` says so. `sha256sum`, `tar`
/// and the shell are the machine's.
fn run_install_step(project: &Project, release: Release) -> InstallRun {
    let script = project.ci_step("check", "Install opgen");
    let version = env!("CARGO_PKG_VERSION");
    let tools = tempfile::tempdir().unwrap();
    let bin = tools.path().join("bin");
    let served = tools.path().join("served");
    let cargo_home = tools.path().join("cargo-home");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&served).unwrap();
    let calls = tools.path().join("calls");
    common::write_script(
        &bin.join("uname"),
        "#!/bin/sh\ncase \"$1\" in -s) echo Linux ;; -m) echo x86_64 ;; esac\n",
    );
    common::write_script(
        &bin.join("cargo"),
        &format!("#!/bin/sh\necho \"cargo $*\" >> {}\n", calls.display()),
    );
    common::write_script(
        &bin.join("curl"),
        &format!(
            "#!/bin/sh\nwhile [ \"$1\" != -o ]; do shift; done\nout=$2 url=$3\necho \"curl $url\" >> {calls}\ncp \"{served}/$(basename \"$url\")\" \"$out\" 2>/dev/null || exit 22\n",
            calls = calls.display(),
            served = served.display()
        ),
    );
    match release {
        Release::Binstall => common::write_script(&bin.join("cargo-binstall"), "#!/bin/sh\n"),
        Release::Archive { good_checksum } => {
            let name = format!("opgen-v{version}-x86_64-unknown-linux-musl");
            let staging = tools.path().join("staging");
            std::fs::create_dir_all(staging.join(&name)).unwrap();
            common::write_script(
                &staging.join(&name).join("opgen"),
                "#!/bin/sh\necho released opgen\n",
            );
            let archive = served.join(format!("{name}.tar.gz"));
            let tar = std::process::Command::new("tar")
                .arg("-czf")
                .arg(&archive)
                .arg("-C")
                .arg(&staging)
                .arg(&name)
                .status()
                .unwrap();
            assert!(tar.success());
            let checksum = if good_checksum {
                let sum = std::process::Command::new("sha256sum")
                    .arg(format!("{name}.tar.gz"))
                    .current_dir(&served)
                    .output()
                    .unwrap();
                String::from_utf8(sum.stdout).unwrap()
            } else {
                format!("{}  {name}.tar.gz\n", "0".repeat(64))
            };
            std::fs::write(served.join(format!("{name}.tar.gz.sha256")), checksum).unwrap();
        }
        Release::Missing => {}
    }
    let output = std::process::Command::new("bash")
        .args(["-eo", "pipefail", "-c", &script])
        .current_dir(&project.root)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("CARGO_HOME", &cargo_home)
        // The step downloads into `mktemp -d`, which a CI runner throws away with itself: here,
        // into the test's own directory, so that no run leaves it behind.
        .env("TMPDIR", tools.path())
        .output()
        .unwrap();
    InstallRun {
        output,
        calls: std::fs::read_to_string(&calls).unwrap_or_default(),
        installed: std::fs::read_to_string(cargo_home.join("bin/opgen")).ok(),
    }
}

/// The generated CI installs the opgen release PROJECT names: through cargo-binstall when it
/// is there, else the release archive checked against its checksum (a mismatch fails the
/// step), else from crates.io with `cargo install --locked`.
#[test]
fn ci_installs_the_opgen_release_the_project_names() {
    let project = Project::init("demo", "");
    let version = env!("CARGO_PKG_VERSION");
    let url = format!(
        "{}/releases/download/v{version}/opgen-v{version}-x86_64-unknown-linux-musl.tar.gz",
        env!("CARGO_PKG_REPOSITORY")
    );

    let binstall = run_install_step(&project, Release::Binstall);
    assert!(binstall.output.status.success(), "{:?}", binstall.output);
    assert_eq!(
        binstall.calls,
        format!(
            "cargo binstall opgen --version {version} --no-confirm --disable-strategies quick-install,compile\n"
        )
    );

    let download = run_install_step(
        &project,
        Release::Archive {
            good_checksum: true,
        },
    );
    assert!(download.output.status.success(), "{:?}", download.output);
    assert_eq!(download.calls, format!("curl {url}\ncurl {url}.sha256\n"));
    assert_eq!(
        download.installed.as_deref(),
        Some("#!/bin/sh\necho released opgen\n")
    );

    let tampered = run_install_step(
        &project,
        Release::Archive {
            good_checksum: false,
        },
    );
    assert!(!tampered.output.status.success(), "{:?}", tampered.output);
    assert!(
        String::from_utf8_lossy(&tampered.output.stdout)
            .contains("does not match its published SHA-256 checksum"),
        "{:?}",
        tampered.output
    );
    assert_eq!(tampered.calls, format!("curl {url}\ncurl {url}.sha256\n"));
    assert_eq!(tampered.installed, None);

    let missing = run_install_step(&project, Release::Missing);
    assert!(missing.output.status.success(), "{:?}", missing.output);
    assert_eq!(
        missing.calls,
        format!("curl {url}\ncargo install opgen --locked --version {version}\n")
    );
    assert_eq!(missing.installed, None);
}

/// `config/default` as `kubectl kustomize` renders it.
fn render_default(project: &Project) -> String {
    let output = std::process::Command::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(&project.root)
        .output()
        .expect("kubectl runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The first webhook of a cluster-wide project has the manager keep its own certificate: the
/// patch that names its Secret, the Secret's Role, and the injection's permissions in the
/// role. A namespaced project, whose Role cannot hold cluster-wide permissions, gets
/// cert-manager's certificate instead.
#[test]
fn the_first_webhook_picks_the_certificate_the_scope_allows() {
    for (init, self_managed) in [("", true), ("--namespaced", false)] {
        let project = Project::init("demo", init);
        project.create_api("--group db --version v1 --kind Thing");
        project
            .opgen()
            .args(["create", "webhook", "--group", "db", "--version", "v1"])
            .args(["--kind", "Thing", "--defaulting"])
            .assert()
            .success();
        project.generate_manifests_without_building();
        let exists = |path: &str| project.root.join(path).exists();
        assert_eq!(
            exists("config/default/manager_webhook_patch.yaml"),
            self_managed,
            "{init}"
        );
        assert_eq!(
            exists("config/webhook/certificate_role.yaml"),
            self_managed,
            "{init}"
        );
        let role = project.read("config/rbac/role.yaml");
        assert_eq!(
            role.contains("- mutatingwebhookconfigurations\n"),
            self_managed,
            "{init}: {role}"
        );
        let rendered = render_default(&project);
        assert_eq!(
            rendered.contains("name: WEBHOOK_CERT_SECRET"),
            self_managed,
            "{init}"
        );
        assert_eq!(
            rendered.contains("name: WEBHOOK_CERT_DIR"),
            !self_managed,
            "{init}"
        );
    }
}

#[test]
fn generate_bundle_refuses_a_replaces_that_is_not_an_older_bundle_of_the_package() {
    let project = Project::init("demo-operator", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    fails_unchanged(
        &project.root,
        "generate bundle --version 0.2.0 --replaces 0.3.0",
        1,
        &[
            "demo-operator.v0.2.0 cannot replace demo-operator.v0.3.0, a newer version",
            "Name a version before 0.2.0",
        ],
    );
    fails_unchanged(
        &project.root,
        "generate bundle --version 0.2.0 --replaces other.v0.1.0",
        1,
        &[
            "cannot replace other.v0.1.0: a bundle replaces an older bundle of its own package, demo-operator",
        ],
    );
}

#[test]
fn generate_bundle_before_generate_manifests_says_to_run_it() {
    let project = Project::init("demo-operator", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    fails_unchanged(
        &project.root,
        "generate bundle --version 0.1.0",
        1,
        &[
            "config/crd/bases is missing",
            "Run `make manifests` (or `opgen generate manifests`) first",
        ],
    );
}

#[test]
fn create_webhook_refuses_a_kind_the_project_does_not_own() {
    let project = Project::init("demo", "");
    project.create_api("--group core --version v1 --kind ConfigMap --resource=false");
    project.create_api(&format!(
        "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {}",
        certificate_crd()
    ));
    let owned_only = "webhooks are for the kinds this project owns";
    let fix = "add them to a kind made with `opgen create api` (without --resource=false)";
    for (flags, what) in [
        (
            "--group core --version v1 --kind ConfigMap",
            "ConfigMap (core) is a built-in Kubernetes kind, recorded under `foreignKinds` in PROJECT",
        ),
        (
            "--group cert-manager.io --version v1 --kind Certificate",
            "Certificate (cert-manager.io) is a kind of another project's CRD (config/external/certificates.cert-manager.io.yaml)",
        ),
        (
            "--group apps --version v1 --kind Deployment",
            "Deployment (apps) is a built-in Kubernetes kind:",
        ),
    ] {
        fails_unchanged(
            &project.root,
            &format!("create webhook {flags} --validation"),
            1,
            &[what, owned_only, fix],
        );
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_project_file_is_written_through_the_link() {
    let project = Project::init("demo", "");
    // PROJECT kept elsewhere, the project holding a link to it.
    let kept = project.temp.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    std::fs::rename(project.root.join("PROJECT"), kept.join("PROJECT")).unwrap();
    std::os::unix::fs::symlink("../kept/PROJECT", project.root.join("PROJECT")).unwrap();
    project.create_api("--group db --version v1 --kind Thing");
    let link = std::fs::symlink_metadata(project.root.join("PROJECT")).unwrap();
    assert!(link.file_type().is_symlink(), "PROJECT is no longer a link");
    assert_eq!(
        std::fs::read_link(project.root.join("PROJECT")).unwrap(),
        std::path::Path::new("../kept/PROJECT")
    );
    let written = std::fs::read_to_string(kept.join("PROJECT")).unwrap();
    assert!(written.contains("kind: Thing"), "{written}");
    let names: Vec<_> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        ["PROJECT"],
        "a temporary file was left beside the target"
    );
}

#[cfg(unix)]
#[test]
fn a_link_to_nothing_is_refused_and_the_project_left_as_it_was() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1 --kind Thing");
    // The controllers' module list is generated: a dangling link where it is.
    let path = project.root.join("src/controllers/mod.rs");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("gone/mod.rs", &path).unwrap();
    fails_unchanged(
        &project.root,
        "create api --group db --version v1 --kind Other",
        1,
        &[
            "error: cannot write",
            "src/controllers/mod.rs",
            "it is a symbolic link to gone/mod.rs, which cannot be followed",
            "opgen writes through a link, never over it",
        ],
    );
    assert!(
        std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn control_characters_in_a_rejected_name_are_escaped() {
    let temp = tempfile::tempdir().unwrap();
    let reversed = "demo\u{202e}txt";
    let coloured = "demo\u{1b}[31m";
    for (args, shown) in [
        (
            vec![
                "init",
                "x",
                "--domain",
                "example.com",
                "--project-name",
                reversed,
            ],
            "invalid project name `demo\\u{202e}txt`: `\\u{202e}` is not allowed",
        ),
        (
            vec!["init", "x", "--domain", coloured],
            "invalid domain `demo\\u{1b}[31m`",
        ),
    ] {
        let before = read_tree(temp.path());
        let output = opgen(temp.path()).args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(shown), "{stderr}");
        assert!(
            !stderr.contains('\u{202e}') && !stderr.contains('\u{1b}'),
            "raw control characters in: {stderr:?}"
        );
        assert!(read_tree(temp.path()) == before);
    }
    let project = Project::init("demo", "");
    let before = project.tree();
    let output = project
        .opgen()
        .args(["create", "api", "--group", "db", "--version", "v1"])
        .args(["--kind", "Thing\u{202e}", "--image", "nginx:1\u{202e}"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("invalid kind `Thing\\u{202e}`"), "{stderr}");
    assert!(!stderr.contains('\u{202e}'), "{stderr:?}");
    assert!(project.tree() == before);
}

#[test]
fn a_failed_write_says_its_cause_before_what_was_restored() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("src"), "not a directory\n").unwrap();
    let before = read_tree(&dir);
    let output = opgen(&dir)
        .args("init --domain example.com --force".split_whitespace())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let error = stderr.find("error: ").expect("an error");
    let lines: Vec<&str> = stderr[error..].lines().collect();
    assert!(lines[0].starts_with("error: cannot "), "{stderr}");
    assert!(lines[1].starts_with("  caused by: "), "{stderr}");
    assert_eq!(
        lines.last(),
        Some(&"nothing was changed: every file this command wrote was restored"),
        "{stderr}"
    );
    assert!(read_tree(&dir) == before);
}

#[test]
fn temporary_files_of_a_killed_opgen_are_ignored_by_git_and_removed_by_the_next_command() {
    let project = Project::init("demo", "");
    assert!(
        project
            .read(".gitignore")
            .lines()
            .any(|line| line == ".opgen-tmp-*"),
        "{}",
        project.read(".gitignore")
    );
    // What SIGKILL between creating and renaming a temporary file leaves, and a file of
    // another program's that looks alike.
    project.write("src/.opgen-tmp-Xy12Ab", "half a file");
    project.write(".opgen-tmp-9aZ0pQ", "");
    project.write("src/.tmpXy12Ab", "not opgen's");
    project.create_api("--group db --version v1 --kind Thing");
    assert!(!project.root.join("src/.opgen-tmp-Xy12Ab").exists());
    assert!(!project.root.join(".opgen-tmp-9aZ0pQ").exists());
    assert_eq!(project.read("src/.tmpXy12Ab"), "not opgen's");
}

/// `kubectl kustomize dir` of `project`, as (kind, namespace, name) of every object.
fn rendered_objects(project: &Project, dir: &str) -> Vec<(String, Option<String>, String)> {
    let output = std::process::Command::new("kubectl")
        .args(["kustomize", dir])
        .current_dir(&project.root)
        .output()
        .expect("kubectl runs");
    assert!(output.status.success(), "{dir}: {output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .split("\n---\n")
        .map(|document| {
            let object: serde_json::Value = serde_saphyr::from_str(document).unwrap();
            let metadata = &object["metadata"];
            (
                object["kind"].as_str().unwrap().to_owned(),
                metadata["namespace"].as_str().map(str::to_owned),
                metadata["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The development overlay names the webhook configurations as `config/default` deploys
/// them, so `make dev-webhooks` replaces the deployed pair (and `make deploy` puts it back)
/// rather than adding a second one; and nothing cluster-scoped that opgen renders, with or
/// without the cert-manager component, has a name another project could also have.
#[test]
fn the_dev_overlay_and_every_cluster_scoped_object_carry_the_projects_prefix() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1alpha1 --kind Thing");
    project.create_api("--group db --version v1 --kind Thing --controller=false");
    project
        .opgen()
        .args(["create", "webhook", "--group", "db", "--version", "v1"])
        .args([
            "--kind",
            "Thing",
            "--defaulting",
            "--validation",
            "--conversion",
        ])
        .assert()
        .success();
    project.generate_manifests_without_building();

    let configurations = |objects: &[(String, Option<String>, String)]| {
        let mut found: Vec<(String, String)> = objects
            .iter()
            .filter(|(kind, _, _)| kind.ends_with("WebhookConfiguration"))
            .map(|(kind, _, name)| (kind.clone(), name.clone()))
            .collect();
        found.sort();
        found
    };
    let default = rendered_objects(&project, "config/default");
    let dev = rendered_objects(&project, "config/dev");
    let expected = [
        (
            "MutatingWebhookConfiguration",
            "demo-mutating-webhook-configuration",
        ),
        (
            "ValidatingWebhookConfiguration",
            "demo-validating-webhook-configuration",
        ),
    ]
    .map(|(kind, name)| (kind.to_owned(), name.to_owned()));
    assert_eq!(configurations(&default), expected);
    assert_eq!(configurations(&dev), expected);

    let kustomization = project.root.join("config/default/kustomization.yaml");
    let text = std::fs::read_to_string(&kustomization).unwrap();
    let with_cert_manager = text.replace(
        "#components:\n#- ../certmanager\n",
        "components:\n- ../certmanager\n",
    );
    assert_ne!(
        text, with_cert_manager,
        "the component's lines moved: update this test"
    );
    std::fs::write(&kustomization, with_cert_manager).unwrap();
    let cert_manager = rendered_objects(&project, "config/default");
    assert!(
        cert_manager
            .iter()
            .any(|(kind, _, _)| kind == "Certificate"),
        "{cert_manager:?}"
    );
    assert_eq!(configurations(&cert_manager), expected);

    for (dir, objects) in [
        ("config/default", &default),
        ("config/dev", &dev),
        ("config/default with ../certmanager", &cert_manager),
    ] {
        let cluster_scoped: Vec<_> = objects
            .iter()
            .filter(|(_, namespace, _)| namespace.is_none())
            .collect();
        assert!(cluster_scoped.len() >= 3, "{dir}: {objects:?}");
        for (kind, _, name) in cluster_scoped {
            let owned = if kind == "CustomResourceDefinition" {
                name.ends_with(".example.com")
            } else {
                name.starts_with("demo-")
            };
            assert!(
                owned,
                "{dir}: {kind} {name} does not carry the project's name"
            );
        }
    }
}

/// The self-managed certificate's CA injection may patch the project's own webhook
/// configurations and converting CRDs, by name, and nothing else; it lists and watches them
/// by label, which RBAC cannot narrow.
#[test]
fn the_ca_injection_patches_only_the_projects_own_objects() {
    let project = Project::init("demo", "");
    project.create_api("--group db --version v1alpha1 --kind Thing");
    project.create_api("--group db --version v1 --kind Thing --controller=false");
    project.create_api("--group ops --version v1 --kind Plain");
    project
        .opgen()
        .args(["create", "webhook", "--group", "db", "--version", "v1"])
        .args(["--kind", "Thing", "--defaulting", "--conversion"])
        .assert()
        .success();
    project.generate_manifests_without_building();
    let role: serde_json::Value =
        serde_saphyr::from_str(&project.read("config/rbac/role.yaml")).unwrap();
    let mut found: Vec<String> = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|rule| {
            rule["apiGroups"].as_array().unwrap().iter().any(|group| {
                group == "admissionregistration.k8s.io" || group == "apiextensions.k8s.io"
            })
        })
        .map(|rule| rule.to_string())
        .collect();
    found.sort();
    let mut expected: Vec<String> = [
        serde_json::json!({"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"], "resourceNames": ["demo-mutating-webhook-configuration"], "verbs": ["get", "patch"]}),
        serde_json::json!({"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"], "verbs": ["list", "watch"]}),
        serde_json::json!({"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"], "resourceNames": ["demo-validating-webhook-configuration"], "verbs": ["get", "patch"]}),
        serde_json::json!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "resourceNames": ["things.db.example.com"], "verbs": ["get", "patch"]}),
        serde_json::json!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list", "watch"]}),
    ]
    .iter()
    .map(|rule| rule.to_string())
    .collect();
    expected.sort();
    assert_eq!(found, expected);
}

/// The tests' projects carry their copy of opgen-runtime dated at this binary's build (see
/// `common::date_vendored_runtime_at_the_binary`), which lets every generated project the tests
/// build share one build of it; a copy dated at its writing would be compiled again by each.
#[test]
fn the_tests_date_a_projects_runtime_copy_at_the_binarys_build() {
    if std::env::var_os("OPGEN_E2E_TARGET_DIR").is_some() {
        eprintln!("NOT RUN: with OPGEN_E2E_TARGET_DIR the copies keep the time they were written");
        return;
    }
    let project = Project::init("dated-op", "");
    let built = common::opgen_built_at();
    let copy = project.root.join("vendor/opgen-runtime");
    let mut files = 0;
    for entry in walkdir::WalkDir::new(&copy) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            files += 1;
            let modified = entry.metadata().unwrap().modified().unwrap();
            assert_eq!(modified, built, "{}", entry.path().display());
        }
    }
    assert!(files > 20, "{} holds {files} files", copy.display());
}
