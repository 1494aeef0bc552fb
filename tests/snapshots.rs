//! Snapshots of every file opgen writes, for fixed scenarios, stored under `snapshots/`.
//! A scenario also snapshots its sorted file list, so an added or lost file shows up.
//!
//! Review changes with `cargo insta review` (or read the `.snap.new` diffs) before accepting.

mod common;

use std::collections::BTreeMap;

use common::Project;

/// Snapshots the file list of `tree` and the text of every file in it.
fn snapshot_files(scenario: &str, tree: &BTreeMap<String, Vec<u8>>) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        let list: Vec<&str> = tree.keys().map(String::as_str).collect();
        insta::assert_snapshot!(format!("{scenario}@files"), list.join("\n"));
        for (path, bytes) in tree {
            // The runtime's copy is the crate in `runtime/`, verbatim but for a header line
            // (opgen's unit tests check it): listed, not stored a second time.
            if path.starts_with("vendor/opgen-runtime/") {
                continue;
            }
            let text = String::from_utf8(bytes.clone()).expect("generated files are UTF-8");
            insta::assert_snapshot!(format!("{scenario}@{}", path.replace('/', "__")), text);
        }
    });
}

/// The files a step created or changed: what `create api` wrote.
fn changed_files(
    before: &BTreeMap<String, Vec<u8>>,
    after: BTreeMap<String, Vec<u8>>,
) -> BTreeMap<String, Vec<u8>> {
    after
        .into_iter()
        .filter(|(path, bytes)| before.get(path) != Some(bytes))
        .collect()
}

#[test]
fn init_cluster_wide() {
    let project = Project::init("demo-operator", "");
    snapshot_files("init_cluster", &project.tree());
}

#[test]
fn init_namespaced_newest_kubernetes_mit() {
    let project = Project::init_args(
        "demo-operator",
        &[
            "--namespaced",
            "--kubernetes-version",
            "1.37",
            "--license",
            "mit",
            "--owner",
            "Jane Doe",
        ],
    );
    snapshot_files("init_namespaced", &project.tree());
}

#[test]
fn init_without_license() {
    let project = Project::init("demo-operator", "--license none");
    let tree = project.tree();
    assert!(!tree.contains_key("LICENSE"));
    assert!(!project.read("Cargo.toml").contains("license ="));
}

/// Snapshots what the last of `steps` (each a `create api` command line) writes on a new
/// project where the earlier steps have run.
fn snapshot_create_api(scenario: &str, steps: &[&str]) {
    let project = Project::init("demo-operator", "");
    let (last, earlier) = steps.split_last().expect("at least one step");
    for step in earlier {
        project.create_api(step);
    }
    let before = project.tree();
    project.create_api(last);
    snapshot_files(scenario, &changed_files(&before, project.tree()));
}

#[test]
fn create_api_namespaced_kind() {
    snapshot_create_api(
        "api_namespaced",
        &["--group db --version v1alpha1 --kind MySQLCluster"],
    );
}

#[test]
fn create_api_cluster_scoped_kind() {
    snapshot_create_api(
        "api_cluster_scoped",
        &["--group ops --version v1 --kind BackupPolicy --namespaced=false"],
    );
}

#[test]
fn create_api_second_version() {
    snapshot_create_api(
        "api_second_version",
        &[
            "--group db --version v1alpha1 --kind MySQLCluster",
            "--group db --version v1 --kind MySQLCluster",
        ],
    );
}

#[test]
fn create_api_same_kind_in_two_groups() {
    snapshot_create_api(
        "api_two_groups",
        &[
            "--group db --version v1 --kind Backup",
            "--group storage --version v1beta1 --kind Backup",
        ],
    );
}

#[test]
fn create_api_operand_on_a_deployment() {
    snapshot_create_api(
        "api_operand_deployment",
        &[
            "--group cache --version v1 --kind Memcached --image memcached:1.6 --command memcached --command -m=64",
        ],
    );
}

#[test]
fn create_api_operand_on_a_statefulset() {
    snapshot_create_api(
        "api_operand_statefulset",
        &[
            "--group db --version v1alpha1 --kind MySQLCluster --image mysql:8.0 --workload statefulset --port 3306",
        ],
    );
}

/// `--autoscale`: the optional `spec.autoscaling`, the controller's autoscaler and its RBAC.
#[test]
fn create_api_autoscaled_operand() {
    snapshot_create_api(
        "api_operand_autoscaled",
        &[
            "--group web --version v1 --kind Frontend --image nginxinc/nginx-unprivileged:1.27 --port 8080 --autoscale",
        ],
    );
}

#[test]
fn create_api_operand_on_a_job() {
    snapshot_create_api(
        "api_operand_job",
        &[
            "--group db --version v1alpha1 --kind MySQLBackup --image mysql:8.0 --workload job -- mysqldump --all-databases",
        ],
    );
}

/// A Job whose objects each name a MySQLCluster (`--references`): the spec's typed reference,
/// the sample naming the cluster's sample, and the controller's watch and RBAC marker.
#[test]
fn create_api_operand_on_a_job_referencing_another_kind() {
    snapshot_create_api(
        "api_operand_job_references",
        &[
            "--group db --version v1alpha1 --kind MySQLCluster --image mysql:8.0 --workload statefulset --port 3306",
            "--group db --version v1alpha1 --kind MySQLBackup --image mysql:8.0 --workload job --references MySQLCluster -- mysqldump --all-databases",
        ],
    );
}

#[test]
fn create_api_operand_on_a_cronjob() {
    snapshot_create_api(
        "api_operand_cronjob",
        &[
            "--group db --version v1alpha1 --kind MySQLBackupSchedule --image mysql:8.0 --workload cronjob",
        ],
    );
}

/// A CronJob whose objects each name a MySQLCluster (`--references`): the reference as in the
/// Job case, the CronJob suspended while the cluster is missing (the controller's test), and
/// the integration test that waits for it to be resumed.
#[test]
fn create_api_operand_on_a_cronjob_referencing_another_kind() {
    snapshot_create_api(
        "api_operand_cronjob_references",
        &[
            "--group db --version v1alpha1 --kind MySQLCluster --image mysql:8.0 --workload statefulset --port 3306",
            "--group db --version v1alpha1 --kind MySQLBackupSchedule --image mysql:8.0 --workload cronjob --references MySQLCluster -- mysqldump --all-databases",
        ],
    );
}

#[test]
fn create_api_built_in_kind() {
    snapshot_create_api(
        "api_built_in",
        &[
            "--group db --version v1 --kind Backup",
            "--group core --version v1 --kind ConfigMap --resource=false",
        ],
    );
}

#[test]
fn create_api_external_crd() {
    let crd = format!(
        "{}/tests/fixtures/certificate-crd.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    snapshot_create_api(
        "api_external_crd",
        &[&format!(
            "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {crd}"
        )],
    );
}

/// Snapshots the bundle (and `config/olm`, `config/manifests`) of a project made with
/// `init_args`, with a plain two-version kind and two operand kinds.
fn snapshot_bundle(scenario: &str, init_args: &str) {
    let project = Project::init("demo-operator", init_args);
    project.add_bundle_kinds();
    project
        .opgen()
        .args(
            "generate bundle --version 0.1.0 --image registry.example.com/demo-operator:v0.1.0"
                .split_whitespace(),
        )
        .assert()
        .success();
    let bundle = project
        .tree()
        .into_iter()
        .filter(|(path, _)| {
            ["bundle/", "bundle.Dockerfile", "config/olm/"]
                .iter()
                .any(|prefix| path.starts_with(prefix))
        })
        .collect();
    snapshot_files(scenario, &bundle);
}

#[test]
fn bundle_of_a_cluster_wide_operator() {
    snapshot_bundle("bundle_cluster", "");
}

#[test]
fn bundle_of_a_namespaced_operator() {
    snapshot_bundle(
        "bundle_namespaced",
        "--namespaced --kubernetes-version 1.37",
    );
}

/// Snapshots what the last `create webhook` of `webhooks` writes (each a command line of its
/// flags) on a project with the kinds `apis` (each a `create api` command line).
fn snapshot_create_webhook(scenario: &str, apis: &[&str], webhooks: &[&str]) {
    let project = Project::init("demo-operator", "");
    for api in apis {
        project.create_api(api);
    }
    let (last, earlier) = webhooks.split_last().expect("at least one webhook");
    let create_webhook = |flags: &str| {
        project
            .opgen()
            .args(["create", "webhook"])
            .args(flags.split_whitespace())
            .assert()
            .success();
    };
    for flags in earlier {
        create_webhook(flags);
    }
    let before = project.tree();
    create_webhook(last);
    snapshot_files(scenario, &changed_files(&before, project.tree()));
}

#[test]
fn create_webhook_defaulting_and_validation() {
    snapshot_create_webhook(
        "webhook_admission",
        &["--group db --version v1alpha1 --kind MySQLCluster"],
        &["--group db --version v1alpha1 --kind MySQLCluster --defaulting --validation"],
    );
}

#[test]
fn create_webhook_validation_of_a_second_kind() {
    snapshot_create_webhook(
        "webhook_second_kind",
        &[
            "--group db --version v1alpha1 --kind MySQLCluster",
            "--group cache --version v1 --kind Memcached --image memcached:1.6",
        ],
        &[
            "--group db --version v1alpha1 --kind MySQLCluster --defaulting",
            "--group cache --version v1 --kind Memcached --validation",
        ],
    );
}

#[test]
fn create_webhook_conversion_of_a_two_version_kind() {
    snapshot_create_webhook(
        "webhook_conversion",
        &[
            "--group db --version v1alpha1 --kind MySQLCluster",
            "--group db --version v1 --kind MySQLCluster",
        ],
        &["--group db --version v1 --kind MySQLCluster --conversion"],
    );
}

/// Validation added to a version that has defaulting: a file of its own, the wiring and
/// `PROJECT`, and nothing of the defaulting webhook's file.
#[test]
fn create_webhook_validation_after_defaulting() {
    snapshot_create_webhook(
        "webhook_added_later",
        &["--group db --version v1alpha1 --kind MySQLCluster"],
        &[
            "--group db --version v1alpha1 --kind MySQLCluster --defaulting",
            "--group db --version v1alpha1 --kind MySQLCluster --validation",
        ],
    );
}

/// Every stored snapshot is of a file its scenario writes: a file a scenario no longer writes
/// (renamed, or gone) would otherwise keep its snapshot forever, since insta reads only those
/// a test asserts.
#[test]
fn every_stored_snapshot_is_of_a_file_its_scenario_lists() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".snap"))
        .collect();
    let listed = |scenario: &str| -> Vec<String> {
        let text =
            std::fs::read_to_string(dir.join(format!("{scenario}@files.snap"))).unwrap_or_default();
        let body = text.splitn(3, "---").nth(2).unwrap_or_default();
        body.lines()
            .map(|line| line.trim().replace('/', "__"))
            .collect()
    };
    let strays: Vec<&String> = names
        .iter()
        .filter(|name| !name.ends_with("@files.snap"))
        .filter(|name| {
            let (scenario, file) = name
                .trim_end_matches(".snap")
                .split_once('@')
                .expect("snapshots are named <scenario>@<file>");
            !listed(scenario).iter().any(|path| path == file)
        })
        .collect();
    assert_eq!(strays, Vec::<&String>::new(), "delete them");
}
