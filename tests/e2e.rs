//! End to end: generate operator projects and prove them by building them. Each scenario runs
//! `cargo build`, `cargo test`, `cargo clippy -D warnings` and `cargo fmt --check` on the
//! generated workspace, right after `init` and again after adding kinds, checks its manifests
//! with `opgen generate manifests --check` and the project's own drift test, and renders its
//! kustomize tree with `kubectl kustomize`, and makes its OLM bundle, which OLM's own
//! validation library checks. One scenario also makes the tutorial's edit (a new
//! spec field, from docs/tutorial-mysqlcluster.md) on an operand kind, then simulates a project
//! made by an older opgen and brings it up to date with `opgen update` before the build.
//! Then it runs the operator for real on a control plane (etcd, kube-apiserver,
//! kube-controller-manager from `KUBEBUILDER_ASSETS`): see `on_cluster`. The namespaced
//! scenario also runs the project's own integration tests (`make test-integration`), without
//! the binaries and with them: see `integration_tests`.
//!
//! Another scenario makes a project with the previous release, built from this repository's
//! history, and updates it: see `previous_release`. Another changes a project after day one
//! (`delete api`, `delete webhook`, `edit`) and proves it after every command: see `evolution`.
//!
//! All generated projects share one Cargo target directory (`target/e2e`), so the operator's
//! dependencies are compiled once per Kubernetes version feature, not once per scenario.

#[path = "e2e/batch.rs"]
mod batch;
mod common;
#[path = "e2e/dev.rs"]
mod dev;
#[path = "e2e/evolution.rs"]
mod evolution;
#[path = "e2e/foreign_kinds.rs"]
mod foreign_kinds;
#[path = "e2e/helm.rs"]
mod helm;
#[path = "e2e/integration_tests.rs"]
mod integration_tests;
#[path = "e2e/manifests.rs"]
mod manifests;
#[path = "e2e/node_images.rs"]
mod node_images;
#[path = "e2e/object_metrics.rs"]
mod object_metrics;
#[path = "e2e/on_cluster.rs"]
mod on_cluster;
#[path = "e2e/on_node.rs"]
mod on_node;
#[path = "e2e/previous_release.rs"]
mod previous_release;
#[path = "e2e/steady_state.rs"]
mod steady_state;
#[path = "e2e/traces.rs"]
mod traces;
#[path = "e2e/webhooks.rs"]
mod webhooks;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::OnceLock,
    time::Instant,
};

use common::{
    Project, control_plane::DEFAULT_KUBERNETES, generated_build_env, go_tool, shared_target_dir,
};

/// Runs `command_line` (split at whitespace; `opgen` is the binary under test) in `dir` with
/// the shared target directory, and panics with its output unless it exits as `success` says.
fn run(dir: &Path, command_line: &str, success: bool) -> Output {
    let mut words = command_line.split_whitespace();
    let program = match words.next().unwrap() {
        "opgen" => env!("CARGO_BIN_EXE_opgen"),
        program => program,
    };
    let started = Instant::now();
    let output = Command::new(program)
        .args(words)
        .current_dir(dir)
        .envs(generated_build_env())
        .output()
        .unwrap_or_else(|err| panic!("cannot run {program}: {err}"));
    let name = dir.file_name().unwrap().to_string_lossy();
    eprintln!("[e2e {name}] {command_line} ({:.0?})", started.elapsed());
    if output.status.success() != success {
        panic!(
            "`{command_line}` in {} {}:\n--- stdout\n{}\n--- stderr\n{}",
            dir.display(),
            if success {
                "failed"
            } else {
                "succeeded unexpectedly"
            },
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
    }
    output
}

/// What a user runs on a generated project before committing.
fn build_test_lint(root: &Path) {
    run(root, "cargo build --all-targets", true);
    let test = run(root, "cargo test", true);
    // The vendored opgen-runtime is a dependency, not a member: the user's `cargo test` runs
    // the user's tests only (cargo names each test binary it runs on stderr).
    let ran = String::from_utf8_lossy(&test.stderr);
    assert!(ran.contains("Running "), "{ran}");
    assert!(
        !ran.contains("opgen_runtime-"),
        "runs the runtime's tests:\n{ran}"
    );
    run(root, "cargo clippy --all-targets -- -D warnings", true);
    run(root, "cargo fmt --check", true);
}

/// What of the runtime's operand machinery the project's debug library compiles: the watches of
/// its `controllers`' own kinds, one each, and nothing of what operands make (the watches of
/// workloads, Services, budgets, autoscalers, Jobs and CronJobs, and the applies). Those are
/// the instances opgen-runtime compiles once (runtime/src/operand/instances.rs), which an
/// unoptimized build links instead of compiling them again for every project.
fn assert_links_the_runtimes_operand_machinery(root: &Path, controllers: usize) {
    let name = root
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace('-', "_");
    let prefix = format!("lib{name}-");
    // The newest: other checkouts sharing the target directory build the same name.
    let library = std::fs::read_dir(shared_target_dir().join("debug/deps"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let file = path.file_name().unwrap().to_string_lossy();
            file.starts_with(&prefix) && file.ends_with(".rlib")
        })
        .max_by_key(|path| path.metadata().unwrap().modified().unwrap())
        .unwrap_or_else(|| panic!("no {prefix}*.rlib in the shared target directory"));
    let output = run(
        root,
        &format!("nm --demangle --defined-only {}", library.display()),
        true,
    );
    let symbols = String::from_utf8_lossy(&output.stdout);
    // `ADDRESS TYPE NAME`, the name demangled without its hash.
    let defined: Vec<&str> = symbols
        .lines()
        .filter_map(|line| line.splitn(3, ' ').nth(2))
        .collect();
    let watches = defined
        .iter()
        .filter(|name| **name == "opgen_runtime::client::cache::cached_watch")
        .count();
    assert_eq!(
        watches,
        controllers,
        "{} compiles {watches} cached watches, not one per controller",
        library.display()
    );
    let operand_machinery: Vec<&&str> = defined
        .iter()
        .filter(|name| {
            name.starts_with("opgen_runtime::client::apply::")
                || name.starts_with("opgen_runtime::controller::setup::metadata_watch")
        })
        .collect();
    assert!(
        operand_machinery.is_empty(),
        "{} compiles what the runtime's instances hold: {operand_machinery:?}",
        library.display()
    );
}

/// `kubectl kustomize dir`, rendered, after checking it holds an object of every kind in `kinds`.
fn kustomize(root: &Path, dir: &str, kinds: &[&str]) -> String {
    let output = run(root, &format!("kubectl kustomize {dir}"), true);
    let rendered = String::from_utf8(output.stdout).unwrap();
    for kind in kinds {
        assert!(
            rendered.contains(&format!("\nkind: {kind}\n")),
            "{dir} renders no {kind}:\n{rendered}"
        );
    }
    rendered
}

/// Adds the kinds of a scenario: several groups (one kind name in two of them), a
/// two-version kind, a cluster-scoped kind (a namespaced one in a namespaced operator, which
/// cannot hold cluster-scoped kinds), operands run by a StatefulSet (with a Service) and
/// by a Deployment (without), and backups run by a Job and by CronJobs, the Job and one
/// CronJob referencing a cluster kind (`--references`).
fn add_kinds(project: &Project, namespaced_operator: bool) {
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    project.create_api("--group db --version v1 --kind MySQLCluster");
    let scope = if namespaced_operator { "true" } else { "false" };
    project.create_api(&format!(
        "--group ops --version v1 --kind BackupPolicy --namespaced={scope}"
    ));
    project.create_api("--group ops --version v1beta1 --kind Proxy");
    // The same kind name in a second group.
    project.create_api("--group ops --version v1 --kind MySQLCluster");
    project.create_api(
        "--group data --version v1alpha1 --kind PostgresCluster --image postgres:17 --workload statefulset --port 5432 --autoscale",
    );
    project.create_api(
        "--group cache --version v1 --kind Memcached --image memcached:1.6 --autoscale -- memcached -m=64",
    );
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLBackup --image mysql:8.0 --workload job --references PostgresCluster -- mysqldump --all-databases",
    );
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLBackupSchedule --image mysql:8.0 --workload cronjob -- mysqldump --all-databases",
    );
    project.create_api(
        "--group data --version v1alpha1 --kind PostgresBackupSchedule --image postgres:17 --workload cronjob --references PostgresCluster -- pg_dumpall",
    );
}

/// Makes the tutorial's first edit, a spec field with its default (docs/tutorial-mysqlcluster.md
/// shows it on its MySQLCluster), on the PostgresCluster operand, which the scenario then
/// builds, tests and lints like the rest.
fn add_the_tutorials_field(project: &Project) {
    let diff = common::docs::blocks("docs/tutorial-mysqlcluster.md")
        .into_iter()
        .find(|block| block.lang == "diff")
        .expect("the tutorial adds a field with a `diff` block")
        .text
        .replace("MySQLCluster", "PostgresCluster");
    let path = "api/src/data/v1alpha1/postgres_cluster.rs";
    let edited = common::docs::apply_diff(&diff, &project.read(path), path)
        .unwrap_or_else(|why| panic!("the tutorial's edit does not apply to {path}: {why}"));
    std::fs::write(project.root.join(path), edited).unwrap();
}

/// Checks a CRD that `generate manifests` wrote against what `PROJECT` says of its kind.
fn check_crd(
    project: &Project,
    file: &str,
    scope: &str,
    short_name: &str,
    versions: &[(&str, bool)],
) {
    let text = project.read(&format!("config/crd/bases/{file}.yaml"));
    let crd: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let spec = &crd["spec"];
    assert_eq!(spec["scope"], scope, "{file}");
    assert_eq!(
        spec["names"]["shortNames"],
        serde_json::json!([short_name]),
        "{file}"
    );
    let mut found: Vec<(&str, bool)> = spec["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["storage"].as_bool().unwrap()))
        .collect();
    found.sort();
    let mut expected = versions.to_vec();
    expected.sort();
    assert_eq!(found, expected, "{file}: versions and storage flags");
    for version in spec["versions"].as_array().unwrap() {
        assert!(
            version["subresources"]["status"].is_object(),
            "{file}: no status subresource"
        );
        let columns = version["additionalPrinterColumns"]
            .as_array()
            .expect("printer columns");
        assert!(
            columns.iter().any(|c| c["name"] == "Age"),
            "{file}: no Age column"
        );
    }
}

/// Makes `project` look like one an older opgen made (an older `opgenVersion`, generated
/// files that no longer build, a scaffolded file of the user's) and runs `opgen update`. The
/// build that follows proves the updated project compiles and passes its tests.
fn age_and_update(project: &Project) {
    let header = "Code generated by opgen. DO NOT EDIT.";
    let record = project.read("PROJECT");
    let current = format!("opgenVersion: \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(record.contains(&current), "{record}");
    project.write(
        "PROJECT",
        &record.replace(&current, "opgenVersion: \"0.0.1\""),
    );
    for path in [
        "api/src/lib.rs",
        "src/controllers/mod.rs",
        "api/src/db/v1/mod.rs",
    ] {
        project.write(path, &format!("// {header}\ncompile_error!(\"stale\");\n"));
    }
    let main = format!("{}// The user's own line.\n", project.read("src/main.rs"));
    project.write("src/main.rs", &main);

    let update = run(&project.root, "opgen update", true);
    let stderr = String::from_utf8_lossy(&update.stderr);
    assert!(stderr.contains("Updating api/src/lib.rs"), "{stderr}");
    assert!(stderr.contains("Differs src/main.rs"), "{stderr}");
    assert_eq!(
        project.read("src/main.rs"),
        main,
        "update touched src/main.rs"
    );
    assert!(project.read("PROJECT").contains(&current));
}

/// What a scenario does besides what every scenario does.
#[derive(Default)]
struct Extras {
    /// Simulate a project of an older opgen and `opgen update` it.
    update_from_older: bool,
    /// Make the tutorial's first edit on an operand kind before building.
    tutorial_edit: bool,
    /// Show on the control plane that a missing RBAC rule is caught.
    check_missing_rule: bool,
    /// Run the project's own integration tests (`make test-integration`).
    run_integration_tests: bool,
    /// Give the two-version MySQLCluster defaulting, validation and conversion webhooks, and
    /// prove them on the control plane.
    webhooks: bool,
    /// Build the manager with the `otel` feature and check its traces on the control plane.
    traces: bool,
}

fn scenario(name: &str, init_args: &str, manager_role: &str, extras: Extras) {
    let Extras {
        update_from_older,
        tutorial_edit,
        check_missing_rule,
        run_integration_tests,
        webhooks,
        traces,
    } = extras;
    let started = Instant::now();
    let project = Project::init(name, init_args);
    let root = &project.root;

    // The project `init` writes builds and renders before any kind is added.
    build_test_lint(root);
    let rendered = kustomize(
        root,
        "config/default",
        &[
            "Deployment",
            manager_role,
            "ServiceAccount",
            "NetworkPolicy",
        ],
    );
    for needle in [
        "runAsUser: 65532",
        "runAsGroup: 65532",
        "image: controller:0.1.0",
    ] {
        assert!(rendered.contains(needle), "config/default lacks {needle}");
    }
    kustomize(root, "config/samples", &[]);

    let namespaced_operator = init_args.contains("--namespaced");
    if namespaced_operator {
        // A project with its own rustfmt configuration: what opgen writes from now on must
        // pass both `cargo fmt --check` and `generate manifests --check` under it.
        std::fs::write(root.join("rustfmt.toml"), "max_width = 80\n").unwrap();
        run(root, "cargo fmt", true);
    }
    let kubernetes = init_args
        .split_whitespace()
        .skip_while(|arg| *arg != "--kubernetes-version")
        .nth(1)
        .unwrap_or(DEFAULT_KUBERNETES);
    add_kinds(&project, namespaced_operator);
    if webhooks {
        webhooks::add(&project);
    }
    if update_from_older {
        age_and_update(&project);
    }
    if tutorial_edit {
        add_the_tutorials_field(&project);
    }
    run(root, "opgen generate manifests", true);
    build_test_lint(root);
    // MySQLCluster's two versions share one controller.
    assert_links_the_runtimes_operand_machinery(root, 9);
    if tutorial_edit {
        let crd = project.read("config/crd/bases/data.example.com_postgresclusters.yaml");
        assert!(
            crd.contains("maxConnections:\n                default: 151\n"),
            "the tutorial's field has no default in the CRD:\n{crd}"
        );
    }

    // Manifests: one CRD per kind, all versions merged, one storage version; idempotent.
    let scope = if namespaced_operator {
        "Namespaced"
    } else {
        "Cluster"
    };
    check_crd(
        &project,
        "db.example.com_mysqlclusters",
        "Namespaced",
        "msc",
        &[("v1", true), ("v1alpha1", false)],
    );
    check_crd(
        &project,
        "ops.example.com_backuppolicies",
        scope,
        "bp",
        &[("v1", true)],
    );
    check_crd(
        &project,
        "ops.example.com_mysqlclusters",
        "Namespaced",
        "msc",
        &[("v1", true)],
    );
    check_crd(
        &project,
        "ops.example.com_proxies",
        "Namespaced",
        "pro",
        &[("v1beta1", true)],
    );
    check_crd(
        &project,
        "data.example.com_postgresclusters",
        "Namespaced",
        "pc",
        &[("v1alpha1", true)],
    );
    check_crd(
        &project,
        "cache.example.com_memcacheds",
        "Namespaced",
        "mem",
        &[("v1", true)],
    );
    // crdgen builds from the api crate alone: none of the manager's runtime is in its graph.
    let tree = run(
        root,
        &format!("cargo tree --package {name}-api --edges normal --prefix none"),
        true,
    );
    let tree = String::from_utf8(tree.stdout).unwrap();
    for heavy in ["tokio ", "hyper ", "axum ", "kube-runtime "] {
        assert!(
            !tree.contains(heavy),
            "the api crate depends on {heavy}:\n{tree}"
        );
    }
    let role = project.read("config/rbac/role.yaml");
    for resource in [
        "statefulsets",
        "deployments",
        "jobs",
        "cronjobs",
        "horizontalpodautoscalers",
        "services",
        "mysqlclusters/status",
        "events",
    ] {
        assert!(
            role.contains(&format!("- {resource}\n")),
            "role.yaml lacks {resource}:\n{role}"
        );
    }
    assert!(
        !role.contains("'*'") && !role.contains("\"*\""),
        "role.yaml has a wildcard:\n{role}"
    );
    run(root, "opgen generate manifests --check", true);
    let before = project.tree();
    run(root, "opgen generate manifests", true);
    assert!(
        project.tree() == before,
        "a second generate manifests changed files"
    );
    check_bundle(&project, namespaced_operator);

    if run_integration_tests {
        // The kinds' modules, as add_kinds makes them: one test each.
        let kinds = [
            "db::my_sql_cluster",
            "ops::backup_policy",
            "ops::proxy",
            "ops::my_sql_cluster",
            "data::postgres_cluster",
            "cache::memcached",
            "db::my_sql_backup",
            "db::my_sql_backup_schedule",
            "data::postgres_backup_schedule",
        ];
        integration_tests::run(&project, name, kubernetes, &kinds);
    }

    if traces {
        // The same targets as `build_test_lint`'s, so that features unify as they did there
        // and only the runtime, its tracing dependencies and the manager are compiled again.
        run(root, "cargo build --all-targets --features otel", true);
    }
    // The manager `build_test_lint` built, on a control plane.
    on_cluster::run(&on_cluster::Setup {
        project: &project,
        name,
        target_dir: &shared_target_dir(),
        namespaced_operator,
        kubernetes,
        check_missing_rule,
        webhooks,
        secure_metrics: true,
        disruption_budgets: true,
        autoscaling: true,
        object_metrics: true,
        traces,
    });

    let rendered = kustomize(
        root,
        "config/default",
        &["CustomResourceDefinition", manager_role, "Deployment"],
    );
    assert!(
        rendered.contains("name: mysqlclusters.db.example.com"),
        "{rendered}"
    );
    kustomize(
        root,
        "config/samples",
        &[
            "MySQLCluster",
            "BackupPolicy",
            "Proxy",
            "PostgresCluster",
            "Memcached",
            "MySQLBackup",
            "MySQLBackupSchedule",
            "PostgresBackupSchedule",
        ],
    );

    // Drift: a new Spec field makes both opgen's check and the project's own test fail.
    let types = root.join("api/src/db/v1/my_sql_cluster.rs");
    let source = std::fs::read_to_string(&types).unwrap();
    let edited = source.replace(
        "    pub size: i32,\n",
        "    pub size: i32,\n    /// Whether backups are taken.\n    #[serde(default)]\n    pub backups: bool,\n",
    );
    assert_ne!(source, edited, "the example field moved: update this test");
    std::fs::write(&types, edited).unwrap();
    let check = run(root, "opgen generate manifests --check", false);
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(
        stderr.contains("config/crd/bases/db.example.com_mysqlclusters.yaml"),
        "{stderr}"
    );
    let drift = run(root, &format!("cargo test --package {name}-api"), false);
    let stdout = String::from_utf8_lossy(&drift.stdout);
    assert!(stdout.contains("run `make manifests`"), "{stdout}");
    run(root, "opgen generate manifests", true);
    run(root, "opgen generate manifests --check", true);
    run(root, &format!("cargo test --package {name}-api"), true);
    bundle_follows_the_type_change(root);

    // `make build-installer` bundles CRDs, RBAC and the Deployment into one file.
    let make = format!(
        "make build-installer OPGEN={} IMG=registry.example/op:v1",
        env!("CARGO_BIN_EXE_opgen")
    );
    run(root, &make, true);
    let installer = project.read("dist/install.yaml");
    for needle in [
        "kind: CustomResourceDefinition",
        &format!("kind: {manager_role}\n"),
        "kind: Deployment",
        "image: registry.example/op:v1",
    ] {
        assert!(
            installer.contains(needle),
            "dist/install.yaml lacks {needle}"
        );
    }
    eprintln!("[e2e {name}] scenario took {:.0?}", started.elapsed());
}

#[test]
fn a_project_of_the_previous_release_updated() {
    previous_release::update_from_the_previous_release();
}

#[test]
fn a_project_of_0_2_0_updated() {
    previous_release::update_from_0_2_0();
}

#[test]
fn cluster_wide_operator_on_the_oldest_kubernetes() {
    scenario(
        "cluster-op",
        "",
        "ClusterRole",
        Extras {
            update_from_older: true,
            tutorial_edit: true,
            check_missing_rule: true,
            webhooks: true,
            ..Extras::default()
        },
    );
}

/// Ctrl-C during the first, slow build of crdgen (a target directory of its own, so that
/// cargo compiles every dependency): cargo stops, and every file the command wrote is put
/// back.
#[test]
fn ctrl_c_during_a_real_first_build_restores_the_project() {
    let project = Project::init("interrupted-op", "");
    project.create_api("--group db --version v1 --kind Thing");
    let lib = project.root.join("api/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("{text}// written by an older opgen\n")).unwrap();
    // cargo writes the lockfile as a build starts: that is cargo's doing, not opgen's.
    run(&project.root, "cargo generate-lockfile", true);
    let before = project.tree();
    let target = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_opgen"))
        .args(["generate", "manifests"])
        .current_dir(&project.root)
        .env("CARGO_TARGET_DIR", target.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until cargo is compiling, then interrupt.
    let deadline = Instant::now() + std::time::Duration::from_secs(120);
    while !target.path().join("debug/build").exists() {
        assert!(Instant::now() < deadline, "cargo never started building");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    assert!(
        project.tree() == before,
        "the interrupted command left changes"
    );
}

/// Two checkouts of one project (a copy, as `cp -a`, a second clone or a git worktree make)
/// building into one target directory: cargo takes either build of the api crate for the
/// other's, yet each checkout's manifests come from its own types, both ways, and the api
/// crate's drift test (`api/tests/manifests.rs`) refuses a build of the other checkout's rather
/// than check its types.
#[test]
fn two_checkouts_sharing_a_target_directory_get_their_own_crds() {
    let started = Instant::now();
    let project = Project::init("twin-op", "");
    let a = &project.root;
    project.create_api("--group db --version v1 --kind Thing");
    run(a, "opgen generate manifests", true);
    let b = project.temp.path().join("twin-op-copy");
    run(
        project.temp.path(),
        &format!("cp -a {} {}", a.display(), b.display()),
        true,
    );

    // A field in the first checkout only.
    let types = "api/src/db/v1/thing.rs";
    let field = "    pub size: i32,\n";
    let with_field = project.read(types).replace(
        field,
        &format!(
            "{field}    /// Replicas is only in the first checkout.\n    pub replicas: i32,\n"
        ),
    );
    assert!(with_field.contains("pub replicas"), "{types} changed shape");
    std::fs::write(a.join(types), with_field).unwrap();
    run(a, "opgen generate manifests", true);
    let crd = "config/crd/bases/db.example.com_things.yaml";
    assert!(
        project.read(crd).contains("replicas:"),
        "{crd} of the first"
    );

    let drift_test = "cargo test -p twin-op-api --test manifests";
    run(a, drift_test, true);
    // The copy's files are older than the first checkout's build, which cargo runs as is.
    let refused = run(&b, drift_test, false);
    let refused = String::from_utf8_lossy(&refused.stdout);
    assert!(
        refused.contains(&format!(
            "this test runs a build of the api crate made in {}",
            a.join("api").display()
        )) && refused.contains("run `make manifests` (opgen rebuilds the api crate)"),
        "the copy's drift test did not notice the first checkout's build:\n{refused}"
    );

    let read_b = |path: &str| std::fs::read_to_string(b.join(path)).unwrap();
    let before = read_b(crd);
    assert!(!before.contains("replicas:"));
    let checked = run(&b, "opgen generate manifests --check", true);
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(stderr.contains("manifests are up to date"), "{stderr}");
    assert!(
        stderr.contains("built from another checkout"),
        "the copy's check did not notice the first checkout's build:\n{stderr}"
    );
    run(&b, "opgen generate manifests", true);
    assert_eq!(read_b(crd), before, "the copy's CRD changed");
    // opgen rebuilt the copy's api crate: its drift test now checks its own types.
    run(&b, drift_test, true);

    // And back: the first checkout's field is still found.
    run(a, "opgen generate manifests --check", true);
    eprintln!("[e2e twin-op] scenario took {:.0?}", started.elapsed());
}

/// Named to start first, beside the node scenario: its project's integration tests and its
/// on-cluster part wait on the control plane more than they compute, and started last, as its
/// name once sorted, they left a core idle for minutes at the end of the run.
#[test]
fn a_namespaced_operator_on_the_newest_kubernetes() {
    scenario(
        "namespaced-op",
        "--namespaced --kubernetes-version 1.37",
        "Role",
        Extras {
            run_integration_tests: true,
            traces: true,
            ..Extras::default()
        },
    );
}

/// Kinds and groups named like what the generated code uses (kube's and k8s-openapi's types,
/// the runtime's, Rust's prelude, the crates the project depends on, a keyword, `rustfmt`),
/// plain and operand, with admission and conversion webhooks: the project builds, passes its
/// tests and lints, and renders. One
/// project on the default Kubernetes version, without a cluster, to keep it quick.
#[test]
fn names_that_clash_with_the_generated_code() {
    let started = Instant::now();
    let project = Project::init("clash-op", "");
    let root = &project.root;
    let deployment = "--image nginxinc/nginx-unprivileged:1.27 --workload deployment --port 8080";
    let statefulset = "--image redis:7 --workload statefulset --port 6379";
    for args in [
        "--group kube --version v1 --kind Service".to_owned(),
        format!("--group kube --version v1 --kind Probe {deployment}"),
        format!("--group tokio --version v1 --kind Patch {statefulset}"),
        "--group tokio --version v1 --kind Finalizer".to_owned(),
        "--group serde --version v1 --kind Action".to_owned(),
        format!("--group serde --version v1 --kind Condition {statefulset}"),
        format!("--group std --version v1 --kind Event {deployment}"),
        "--group std --version v1 --kind Error".to_owned(),
        format!("--group http --version v1 --kind Context {deployment}"),
        "--group http --version v1 --kind Option".to_owned(),
        format!("--group http --version v1 --kind Service {statefulset}"),
        "--group rustfmt --version v1 --kind Default".to_owned(),
        "--group rustfmt --version v2 --kind Default".to_owned(),
        "--group type --version v1 --kind Match".to_owned(),
    ] {
        project.create_api(&args);
    }
    // Webhooks too: admission for a kind named like a prelude type and for an operand, and a
    // conversion through the hub in the group named like rustfmt's attributes.
    for args in [
        "--group http --version v1 --kind Option --defaulting --validation",
        "--group kube --version v1 --kind Probe --validation",
        "--group rustfmt --version v1 --kind Default --conversion",
    ] {
        run(root, &format!("opgen create webhook {args}"), true);
    }
    run(root, "opgen generate manifests", true);
    build_test_lint(root);
    run(root, "opgen generate manifests --check", true);

    // Kubernetes knows the kinds by their names, whatever their Rust types are called.
    for (file, kind) in [
        ("http.example.com_options", "Option"),
        ("rustfmt.example.com_defaults", "Default"),
        ("http.example.com_services", "Service"),
    ] {
        let crd = project.read(&format!("config/crd/bases/{file}.yaml"));
        assert!(
            crd.contains(&format!("    kind: {kind}\n")),
            "{file}:\n{crd}"
        );
    }
    kustomize(
        root,
        "config/default",
        &["CustomResourceDefinition", "ClusterRole", "Deployment"],
    );
    kustomize(
        root,
        "config/samples",
        &[
            "Service",
            "Probe",
            "Patch",
            "Finalizer",
            "Action",
            "Condition",
            "Event",
            "Error",
            "Context",
            "Option",
            "Default",
            "Match",
        ],
    );
    eprintln!("[e2e clash-op] scenario took {:.0?}", started.elapsed());
}

/// `make bundle` with the image every scenario uses, and the `--check` that goes with it.
const MAKE_BUNDLE: &str = "make bundle IMG=registry.example/op:v1";
const CHECK_BUNDLE: &str =
    "opgen generate bundle --version 0.1.0 --image registry.example/op:v1 --check";

/// The OLM bundle of a project with kinds: made by `make bundle` from the real CRDs, accepted by
/// OLM's own validation, unchanged by a second run, and installable through `config/olm`.
fn check_bundle(project: &Project, namespaced_operator: bool) {
    let root = &project.root;
    let make = format!("{MAKE_BUNDLE} OPGEN={}", env!("CARGO_BIN_EXE_opgen"));
    run(root, &make, true);
    validate_with_olm(root);
    run(root, CHECK_BUNDLE, true);
    let before = project.tree();
    run(root, &make, true);
    assert!(
        project.tree() == before,
        "a second make bundle changed files"
    );

    let package = root.file_name().unwrap().to_string_lossy();
    let csv_path = format!("bundle/manifests/{package}.clusterserviceversion.yaml");
    let csv: serde_json::Value = serde_saphyr::from_str(&project.read(&csv_path)).unwrap();
    let supported: Vec<&str> = csv["spec"]["installModes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|mode| mode["supported"] == true)
        .map(|mode| mode["type"].as_str().unwrap())
        .collect();
    let install = &csv["spec"]["install"]["spec"];
    if namespaced_operator {
        assert_eq!(supported, ["OwnNamespace", "SingleNamespace"]);
        // Cluster-wide, a namespaced operator may only have /metrics' callers reviewed (both
        // reviews are cluster-scoped objects); everything else is in its namespace.
        let cluster_rules: Vec<(String, String)> = install["clusterPermissions"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|permission| permission["rules"].as_array().unwrap())
            .flat_map(|rule| {
                let group = rule["apiGroups"][0].as_str().unwrap().to_owned();
                rule["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |resource| (group.clone(), resource.as_str().unwrap().to_owned()))
            })
            .collect();
        assert_eq!(
            cluster_rules,
            [
                (
                    "authentication.k8s.io".to_owned(),
                    "tokenreviews".to_owned()
                ),
                (
                    "authorization.k8s.io".to_owned(),
                    "subjectaccessreviews".to_owned()
                ),
            ],
            "{install}"
        );
    } else {
        assert_eq!(supported, ["AllNamespaces"]);
        assert!(
            install["clusterPermissions"][0]["rules"].is_array(),
            "{install}"
        );
    }
    let owned = csv["spec"]["customresourcedefinitions"]["owned"]
        .as_array()
        .unwrap();
    // Ten kinds, MySQLCluster of db in two versions.
    assert_eq!(owned.len(), 10, "{owned:#?}");
    kustomize(
        root,
        "config/olm",
        &["CatalogSource", "OperatorGroup", "Subscription"],
    );
}

/// After a type change and `generate manifests`, the bundle is stale until `make bundle`.
fn bundle_follows_the_type_change(root: &Path) {
    let check = run(root, CHECK_BUNDLE, false);
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(
        stderr.contains("Outdated bundle/manifests/db.example.com_mysqlclusters.yaml"),
        "{stderr}"
    );
    run(
        root,
        &format!("{MAKE_BUNDLE} OPGEN={}", env!("CARGO_BIN_EXE_opgen")),
        true,
    );
    run(root, CHECK_BUNDLE, true);
    validate_with_olm(root);
}

/// Runs the default bundle validators of operator-framework/api, which `operator-sdk bundle
/// validate` runs, on `root/bundle`; says so and returns when Go is not installed.
fn validate_with_olm(root: &Path) {
    let Some(validator) = olm_validator() else {
        return;
    };
    let output = Command::new(validator)
        .arg("bundle")
        .current_dir(root)
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let name = root.file_name().unwrap().to_string_lossy();
    eprintln!("[e2e {name}] bundle-validate bundle:\n{report}");
    assert!(
        output.status.success(),
        "OLM's validation refuses the bundle of {}:\n{report}",
        root.display()
    );
}

/// scripts/bundle-validate, built once into the tools' store under a fingerprint of its source
/// (so an edit of it builds it again). The first build downloads operator-framework/api and
/// its dependencies through the Go module proxy into Go's module cache.
fn olm_validator() -> Option<&'static Path> {
    static VALIDATOR: OnceLock<Option<PathBuf>> = OnceLock::new();
    VALIDATOR
        .get_or_init(|| {
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bundle-validate");
            let dir = go_tool::tool_dir(
                "bundle-validate",
                &go_tool::source_fingerprint(&source),
            );
            let built = go_tool::build_once(&dir, "bundle-validate", |staging| {
                let mut go = Command::new("go");
                go.arg("build");
                go_tool::build_like_the_scripts(&mut go);
                go.arg("-o")
                    .arg(staging.join("bundle-validate"))
                    .arg(".")
                    .current_dir(&source)
                    .env("GOFLAGS", "-mod=readonly");
                go
            });
            if built.is_none() {
                eprintln!(
                    "[e2e] NOT RUN: OLM's bundle validation (operator-framework/api): `go` is not installed, so scripts/bundle-validate cannot be built"
                );
            }
            built
        })
        .as_deref()
}

/// The manager and its operands as pods on a one-node cluster; see `on_node`. Named to
/// start among the first: its release build of the manager is the longest single step of
/// the end-to-end tests, and overlaps the other scenarios best when it starts early.
#[test]
fn a_node_runs_the_operator_as_users_deploy_it() {
    on_node::scenario();
}

/// `opgen dev` on the oldest Kubernetes: see `dev`.
#[test]
fn dev_session_on_the_oldest_kubernetes() {
    dev::run();
}

/// The Helm chart installed, upgraded and uninstalled on a control plane (tests/e2e/helm.rs).
#[test]
fn helm_chart_on_a_control_plane() {
    helm::scenario(&shared_target_dir());
}
