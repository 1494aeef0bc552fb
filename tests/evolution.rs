//! The commands that change a project after day one: `delete api`, `delete webhook` and
//! `edit`. Each refusal exits non-zero with the tree as it was; what a command leaves is what
//! `init` and the `create` commands that remain would have made.

mod common;

use std::collections::BTreeMap;

use common::{Project, fails_unchanged};
use predicates::prelude::*;

/// Runs `opgen <args>` (split at whitespace), expects success, and returns its stderr and
/// stdout, in that order.
fn ok(project: &Project, args: &str) -> String {
    let assert = project
        .opgen()
        .args(args.split_whitespace())
        .assert()
        .success();
    let output = assert.get_output();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    )
}

/// Runs `opgen <args>` with the crdgen stand-in of `record` (the `PROJECT` the command
/// leaves), for a command that rebuilds CRDs, and expects success.
fn ok_building(project: &Project, args: &str, record: &str) -> String {
    let path = project.crdgen_stand_in(record);
    let assert = project
        .opgen()
        .args(args.split_whitespace())
        .env("PATH", path)
        .assert()
        .success();
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

/// The files of `tree` that differ from `other`'s, or that only one of them has.
fn differences(tree: &BTreeMap<String, Vec<u8>>, other: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut paths: Vec<&String> = tree.keys().chain(other.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|path| tree.get(*path) != other.get(*path))
        .cloned()
        .collect()
}

/// Two kinds in db (MySQLCluster in two versions, the controller on the first, v1 stored), an
/// operand in cache, a built-in kind's controller, and webhooks of each type.
fn project() -> Project {
    let project = Project::init("demo-operator", "");
    for api in CREATE_APIS {
        project.create_api(api);
    }
    for webhook in CREATE_WEBHOOKS {
        ok(&project, &format!("create webhook {webhook}"));
    }
    project
}

const CREATE_APIS: [&str; 5] = [
    "--group db --version v1alpha1 --kind MySQLCluster",
    "--group db --version v1 --kind MySQLCluster",
    "--group db --version v1 --kind Backup",
    "--group cache --version v1 --kind Memcached --image memcached:1.6",
    "--group core --version v1 --kind ConfigMap --resource=false",
];

const CREATE_WEBHOOKS: [&str; 3] = [
    "--group db --version v1 --kind MySQLCluster --defaulting --validation",
    "--group db --version v1 --kind MySQLCluster --conversion",
    "--group cache --version v1 --kind Memcached --validation",
];

#[test]
fn delete_api_names_what_the_project_has_when_asked_for_what_it_has_not() {
    let project = project();
    for args in [
        "delete api --group db --version v2 --kind MySQLCluster",
        "delete api --group ops --version v1 --kind MySQLCluster",
        "delete api --group db --version v1 --kind Nothing",
        "delete api --group apps --version v1 --kind Deployment",
    ] {
        fails_unchanged(
            &project.root,
            args,
            1,
            &[
                "is not in PROJECT, which has MySQLCluster db/v1alpha1, MySQLCluster db/v1, Backup db/v1, Memcached cache/v1, ConfigMap core/v1",
                "Name one of those",
            ],
        );
    }
    // Without a flag it would ask on a terminal; with --yes it says which is missing.
    fails_unchanged(
        &project.root,
        "delete api --group db --version v1 --yes",
        1,
        &["--kind"],
    );
}

#[test]
fn delete_api_refuses_the_storage_version_and_a_referenced_kind() {
    let project = project();
    fails_unchanged(
        &project.root,
        "delete api --group db --version v1 --kind MySQLCluster",
        1,
        &[
            "v1 is the storage version of MySQLCluster and the hub its other versions convert through, which has other versions (v1alpha1)",
            "Delete the other versions first, or make another one the storage version",
        ],
    );
    project.create_api(
        "--group db --version v1 --kind Dump --image mysql:8.0 --workload job --references Memcached",
    );
    fails_unchanged(
        &project.root,
        "delete api --group cache --version v1 --kind Memcached",
        1,
        &[
            "Memcached (cache) is referenced by Dump (db) (`create api --references`)",
            "Delete it first",
        ],
    );
}

/// The version the controller watches hands the controller to the storage version by its
/// `use` line: a controller without that line is the user's to move first.
#[test]
fn delete_api_refuses_to_move_a_controller_it_cannot_point_elsewhere() {
    let project = project();
    let controller = "src/controllers/db/my_sql_cluster.rs";
    let text = project.read(controller);
    let line = "use ::demo_operator_api::db::v1alpha1 as api;";
    assert!(text.contains(line), "{text}");
    project.write(
        controller,
        &text.replace(
            line,
            "use ::demo_operator_api::db::v1alpha1::{self as api};",
        ),
    );
    fails_unchanged(
        &project.root,
        "delete api --group db --version v1alpha1 --kind MySQLCluster",
        1,
        &[
            "the controller of MySQLCluster watches v1alpha1, and src/controllers/db/my_sql_cluster.rs has no `use` of that version's module that opgen can point at v1",
            "Point the controller at v1 yourself",
        ],
    );
}

/// A file of the user's is listed and kept, and nothing is done, unless --force; --dry-run
/// --force shows every file that goes.
#[test]
fn delete_api_keeps_what_the_user_changed_unless_forced() {
    let project = project();
    let controller = "src/controllers/db/backup.rs";
    let edited = format!("{}// mine\n", project.read(controller));
    project.write(controller, &edited);
    for args in [
        "delete api --group db --version v1 --kind Backup",
        "delete api --group db --version v1 --kind Backup --dry-run",
    ] {
        fails_unchanged(
            &project.root,
            args,
            1,
            &[
                "this file is yours, so opgen will not remove or rewrite it without --force:\n  src/controllers/db/backup.rs: differs from what opgen scaffolds for it",
                "then pass --force (see what it does first with --dry-run --force)",
            ],
        );
    }
    let before = project.tree();
    let dry_run = ok(
        &project,
        "delete api --group db --version v1 --kind Backup --dry-run --force",
    );
    assert!(project.tree() == before, "--dry-run wrote files");
    for path in [
        "api/src/db/v1/backup.rs",
        "config/samples/db_v1_backup.yaml",
        "config/rbac/db_backup_editor_role.yaml",
        "config/rbac/db_backup_viewer_role.yaml",
        controller,
        "tests/integration/db/backup.rs",
    ] {
        assert!(dry_run.contains(&format!("Removing {path}\n")), "{dry_run}");
    }
    assert!(
        dry_run.contains("src/controllers/db/backup.rs differs from what opgen scaffolds for it: --force removes it"),
        "{dry_run}"
    );
    for path in [
        "api/src/db/v1/mod.rs",
        "src/controllers/db/mod.rs",
        "config/rbac/role.yaml",
        "grafana/controller-health.json",
        "PROJECT",
    ] {
        assert!(dry_run.contains(&format!("Updating {path}\n")), "{dry_run}");
    }
    ok(
        &project,
        "delete api --group db --version v1 --kind Backup --force",
    );
    assert!(!project.root.join(controller).exists());
    assert!(!project.read("config/rbac/role.yaml").contains("backups"));
}

#[test]
fn delete_api_of_a_kind_the_project_does_not_own() {
    let project = project();
    project.generate_manifests_without_building();
    let crd = format!(
        "{}/tests/fixtures/certificate-crd.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let before = project.tree();
    project.create_api(&format!(
        "--group cert-manager.io --version v1 --kind Certificate --resource=false --external-crd {crd}"
    ));
    assert!(
        project
            .root
            .join("api/src/external/cert_manager/v1.rs")
            .is_file()
    );
    let stderr = ok(
        &project,
        "delete api --group cert-manager.io --version v1 --kind Certificate",
    );
    for path in [
        "config/external/certificates.cert-manager.io.yaml",
        "api/src/external/cert_manager/v1.rs",
        "src/controllers/cert_manager/certificate.rs",
    ] {
        assert!(stderr.contains(&format!("Removing {path}\n")), "{stderr}");
    }
    assert_eq!(differences(&project.tree(), &before), Vec::<String>::new());

    ok(
        &project,
        "delete api --group core --version v1 --kind ConfigMap",
    );
    assert!(!project.root.join("src/controllers/core").exists());
    assert!(!project.read("PROJECT").contains("ConfigMap"));
}

/// What `delete api` and `delete webhook` leave is what `init` and the `create` commands that
/// remain write: `PROJECT`, and every other file.
#[test]
fn a_project_after_deletes_is_the_project_of_the_commands_that_remain() {
    let project = project();
    // The version with the controller: its controller moves to v1, the storage version, and
    // the conversion goes with the second-last version.
    let remaining = Project::init("demo-operator", "");
    for api in [
        "--group db --version v1 --kind MySQLCluster",
        "--group cache --version v1 --kind Memcached --image memcached:1.6",
        "--group core --version v1 --kind ConfigMap --resource=false",
    ] {
        remaining.create_api(api);
    }
    ok(
        &remaining,
        "create webhook --group db --version v1 --kind MySQLCluster --defaulting",
    );
    ok(
        &remaining,
        "create webhook --group cache --version v1 --kind Memcached --validation",
    );
    ok(&project, "delete api --group db --version v1 --kind Backup");
    let stderr = ok_building(
        &project,
        "delete api --group db --version v1alpha1 --kind MySQLCluster",
        &remaining.read("PROJECT"),
    );
    assert!(
        stderr.contains("src/controllers/db/my_sql_cluster.rs watches v1 now"),
        "{stderr}"
    );
    ok(
        &project,
        "delete webhook --group db --version v1 --kind MySQLCluster --validation",
    );
    assert_eq!(project.read("PROJECT"), remaining.read("PROJECT"));

    remaining.generate_manifests_without_building();
    project.generate_manifests_without_building();
    assert_eq!(
        differences(&project.tree(), &remaining.tree()),
        Vec::<String>::new(),
        "the files differ"
    );
}

#[test]
fn a_failed_delete_restores_every_file() {
    let project = project();
    let before = project.tree();
    // crdgen fails (the types do not build): the files already removed come back.
    let bin = project.temp.path().join("failing-cargo");
    std::fs::create_dir_all(&bin).unwrap();
    common::write_script(
        &bin.join("cargo"),
        "#!/bin/sh\necho 'error[E0425]: cannot find type `Spec`' >&2\nexit 101\n",
    );
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    project
        .opgen()
        .args("delete api --group db --version v1alpha1 --kind MySQLCluster".split_whitespace())
        .env("PATH", path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "nothing was changed: every file this command wrote was restored",
        ));
    assert!(project.tree() == before, "the failed delete left changes");
}

/// Ctrl-C while crdgen builds the CRDs of a deleted version, after every other file was
/// written: they all come back, and the command exits as SIGINT ended it.
#[test]
fn ctrl_c_during_a_delete_restores_every_file() {
    let project = project();
    let before = project.tree();
    let bin = project.temp.path().join("slow-cargo");
    std::fs::create_dir_all(&bin).unwrap();
    let started = project.temp.path().join("cargo-started");
    common::write_script(
        &bin.join("cargo"),
        &format!("#!/bin/sh\ntouch '{}'\nexec sleep 60\n", started.display()),
    );
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_opgen"))
        .args("delete api --group db --version v1alpha1 --kind MySQLCluster".split_whitespace())
        .current_dir(&project.root)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        assert!(std::time::Instant::now() < deadline, "cargo never ran");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !project
            .root
            .join("api/src/db/v1alpha1/my_sql_cluster.rs")
            .exists(),
        "the version's files are removed before crdgen runs"
    );
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    assert!(
        project.tree() == before,
        "the interrupted delete left changes"
    );
}

#[test]
fn delete_webhook_refuses_webhooks_the_version_has_not() {
    let project = project();
    let webhook = |flags: &str| format!("delete webhook {flags}");
    for (args, needles) in [
        (
            webhook("--group db --version v2 --kind MySQLCluster --defaulting"),
            vec!["MySQLCluster db/v2 is not in PROJECT, which has MySQLCluster db/v1alpha1"],
        ),
        (
            webhook("--group cache --version v1 --kind Memcached --defaulting"),
            vec![
                "Memcached cache/v1 has no webhook of --defaulting (it has --validation)",
                "Drop the flag, or name one it has",
            ],
        ),
        (
            webhook("--group db --version v1 --kind Backup"),
            vec![
                "Backup db/v1 has no webhooks; those of the project are on MySQLCluster db/v1, Memcached cache/v1",
            ],
        ),
        (
            webhook("--group cache --version v1 --kind Memcached --conversion"),
            vec!["has no webhook of --conversion (it has --validation)"],
        ),
    ] {
        fails_unchanged(&project.root, &args, 1, &needles);
    }
    let file = "src/webhooks/db/my_sql_cluster_v1_defaulting.rs";
    project.write(file, &format!("{}// mine\n", project.read(file)));
    fails_unchanged(
        &project.root,
        "delete webhook --group db --version v1 --kind MySQLCluster --defaulting",
        1,
        &[
            "src/webhooks/db/my_sql_cluster_v1_defaulting.rs: differs from what opgen scaffolds",
            "--force",
        ],
    );
}

/// One webhook type goes with its file; the last webhook of the project takes the webhook
/// server's kustomize files and the lines the first webhook added, so the project is again
/// the one it was before its first webhook (but `Cargo.toml`'s crates).
#[test]
fn delete_webhook_undoes_create_webhook() {
    let project = Project::init("demo-operator", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    project.create_api("--group db --version v1 --kind MySQLCluster");
    project.generate_manifests_without_building();
    let before = project.tree();
    ok(
        &project,
        "create webhook --group db --version v1 --kind MySQLCluster --defaulting --validation --conversion",
    );
    let validation = "src/webhooks/db/my_sql_cluster_v1_validation.rs";
    let kept = project.read(validation);
    let stderr = ok(
        &project,
        "delete webhook --group db --version v1 --kind MySQLCluster --defaulting",
    );
    assert!(
        stderr.contains("Removing src/webhooks/db/my_sql_cluster_v1_defaulting.rs\n"),
        "{stderr}"
    );
    assert_eq!(project.read(validation), kept);
    let router = project.read("src/webhooks/mod.rs");
    assert!(!router.contains(".defaulting("), "{router}");
    let manifests = project.read("config/webhook/manifests.yaml");
    assert!(
        !manifests.contains("MutatingWebhookConfiguration")
            && manifests.contains("ValidatingWebhookConfiguration"),
        "{manifests}"
    );

    // Conversion is the kind's: named on either version, it goes, and the CRD is rebuilt.
    let after_conversion = project
        .read("PROJECT")
        .replace("    conversion: true\n", "");
    let stderr = ok_building(
        &project,
        "delete webhook --group db --version v1alpha1 --kind MySQLCluster --conversion",
        &after_conversion,
    );
    assert!(
        stderr.contains("Removing api/src/db/v1alpha1/my_sql_cluster_conversion.rs\n"),
        "{stderr}"
    );
    assert_eq!(project.read("PROJECT"), after_conversion);

    let stderr = ok(
        &project,
        "delete webhook --group db --version v1 --kind MySQLCluster",
    );
    for path in [
        validation,
        "src/webhooks/mod.rs",
        "config/webhook/manifests.yaml",
        "config/webhook/service.yaml",
        "config/certmanager/certificate.yaml",
        "config/default/manager_webhook_patch.yaml",
        "config/network-policy/allow-webhook-traffic.yaml",
        "config/dev/kustomization.yaml",
    ] {
        assert!(stderr.contains(&format!("Removing {path}\n")), "{stderr}");
    }
    assert!(
        stderr.contains("the webhook server's crates stay in Cargo.toml"),
        "{stderr}"
    );
    assert_eq!(differences(&project.tree(), &before), ["Cargo.toml"]);
}

/// A combined webhook file of opgen 0.2.0: a webhook deleted from it loses its marker there
/// (the user's code stays), and only with --force; the last one deleted takes the file, also
/// only with --force.
#[test]
fn delete_webhook_of_a_combined_file_of_an_older_opgen() {
    let project = Project::init("demo-operator", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    ok(
        &project,
        "create webhook --group db --version v1alpha1 --kind MySQLCluster --defaulting --validation",
    );
    let combined = "src/webhooks/db/my_sql_cluster_v1alpha1.rs";
    project.write(
        combined,
        include_str!("fixtures/webhook-0.2.0-my_sql_cluster_v1alpha1.rs"),
    );
    for webhook in ["defaulting", "validation"] {
        std::fs::remove_file(project.root.join(format!(
            "src/webhooks/db/my_sql_cluster_v1alpha1_{webhook}.rs"
        )))
        .unwrap();
    }
    ok(&project, "update");
    fails_unchanged(
        &project.root,
        "delete webhook --group db --version v1alpha1 --kind MySQLCluster --validation",
        1,
        &[
            "src/webhooks/db/my_sql_cluster_v1alpha1.rs: holds the webhook of --validation beside the other one",
            "--force",
        ],
    );
    ok(
        &project,
        "delete webhook --group db --version v1alpha1 --kind MySQLCluster --validation --force",
    );
    let text = project.read(combined);
    assert!(
        text.contains("mutating=true") && !text.contains("mutating=false"),
        "{text}"
    );
    assert!(
        text.contains("fn validate_create("),
        "the user's code stays"
    );
    assert!(
        !project
            .read("config/webhook/manifests.yaml")
            .contains("Validating")
    );
    fails_unchanged(
        &project.root,
        "delete webhook --group db --version v1alpha1 --kind MySQLCluster",
        1,
        &[
            "src/webhooks/db/my_sql_cluster_v1alpha1.rs: holds the admission webhooks of the version in one file",
        ],
    );
    ok(
        &project,
        "delete webhook --group db --version v1alpha1 --kind MySQLCluster --force",
    );
    assert!(!project.root.join(combined).exists());
}

#[test]
fn edit_without_a_flag_says_what_it_can_change() {
    let project = project();
    fails_unchanged(
        &project.root,
        "edit",
        1,
        &[
            "nothing to change: opgen edit changes the project-wide choices of `opgen init`",
            "--namespaced, --cluster-wide   the operator's scope (now cluster-wide)",
            "--license apache2|mit|none     the project's license (now apache2)",
            "--owner NAME                   the copyright owner of the license (now none given: \"The demo-operator Authors\")",
        ],
    );
    fails_unchanged(
        &project.root,
        "edit --namespaced --cluster-wide",
        2,
        &["cannot be used with"],
    );
    project
        .opgen()
        .args(["edit", "--cluster-wide"])
        .assert()
        .success()
        .stderr(predicate::str::contains("nothing changed"));
}

#[test]
fn edit_refuses_a_namespaced_operator_with_cluster_scoped_kinds() {
    let project = project();
    project.create_api("--group ops --version v1 --kind Policy --namespaced=false");
    project.create_api("--group core --version v1 --kind Namespace --resource=false");
    fails_unchanged(
        &project.root,
        "edit --namespaced",
        1,
        &[
            "the project's controllers watch Policy (ops), Namespace (core)",
            "Delete those kinds first (`opgen delete api`), or keep the operator cluster-wide",
        ],
    );
}

/// The scope edited either way leaves what `init` with that scope and the same commands make:
/// RBAC kinds, the watched namespace, the webhooks' certificate wiring, the CSV base's install
/// modes.
#[test]
fn edit_scope_makes_the_project_init_would_have_made() {
    let build = |init: &str| {
        let project = Project::init("demo-operator", init);
        for api in &CREATE_APIS[..4] {
            project.create_api(api);
        }
        for webhook in CREATE_WEBHOOKS {
            ok(&project, &format!("create webhook {webhook}"));
        }
        project.generate_manifests_without_building();
        project
    };
    let cluster = build("");
    let namespaced = build("--namespaced");
    let stderr = ok(&cluster, "edit --namespaced");
    for path in [
        "config/rbac/role.yaml",
        "config/rbac/role_binding.yaml",
        "config/manager/watch_namespace_patch.yaml",
        "config/default/kustomization.yaml",
        "config/manifests/bases/demo-operator.clusterserviceversion.yaml",
    ] {
        assert!(stderr.contains(&format!("Updating {path}\n")), "{stderr}");
    }
    assert!(
        stderr.contains("Removing config/webhook/certificate_role.yaml\n"),
        "{stderr}"
    );
    assert_eq!(
        differences(&cluster.tree(), &namespaced.tree()),
        Vec::<String>::new()
    );
    ok(&cluster, "edit --cluster-wide");
    let back = build("");
    assert_eq!(
        differences(&cluster.tree(), &back.tree()),
        Vec::<String>::new()
    );
}

/// A scaffolded file the scope changes that the user changed too is listed, and the edit is
/// refused unless --force.
#[test]
fn edit_keeps_what_the_user_changed_unless_forced() {
    let project = project();
    let file = "config/webhook/kustomization.yaml";
    project.write(file, &format!("{}# mine\n", project.read(file)));
    fails_unchanged(
        &project.root,
        "edit --namespaced",
        1,
        &["config/webhook/kustomization.yaml: differs from what opgen scaffolds for it"],
    );
    project
        .opgen()
        .args("edit --namespaced --dry-run --force".split_whitespace())
        .assert()
        .success()
        .stdout(predicate::str::contains("-# mine"));
    ok(&project, "edit --namespaced --force");
    assert!(!project.read(file).contains("# mine"));
}

#[test]
fn edit_license_and_owner_makes_the_project_init_would_have_made() {
    let project = Project::init("demo-operator", "");
    ok(&project, "edit --license mit --owner Jane_Doe");
    let mit = Project::init("demo-operator", "--license mit --owner Jane_Doe");
    assert_eq!(
        differences(&project.tree(), &mit.tree()),
        Vec::<String>::new()
    );
    ok(&project, "edit --license none");
    let none = Project::init("demo-operator", "--license none --owner Jane_Doe");
    assert_eq!(
        differences(&project.tree(), &none.tree()),
        Vec::<String>::new()
    );
    ok(&project, "edit --license apache2");
    let apache = Project::init("demo-operator", "--owner Jane_Doe");
    assert_eq!(
        differences(&project.tree(), &apache.tree()),
        Vec::<String>::new()
    );
}

/// The OLM bundle and the Helm chart of a project regenerate after a delete and an edit: the
/// deleted kind's bundle files go with it (`generate bundle` would refuse them as strays), the
/// chart's webhook templates with the last webhook (`generate helm` would refuse them as
/// stale), and the chart's `watchNamespace` value follows the scope.
#[test]
fn the_bundle_and_the_chart_follow_a_delete_and_an_edit() {
    let project = project();
    project.generate_manifests_without_building();
    let bundle = "generate bundle --version 0.1.0 --image registry.example/op:v1";
    ok(&project, bundle);
    ok(&project, "generate helm");
    let values = project.read("dist/chart/values.yaml");
    assert!(values.contains("\nwatchNamespace: \"\"\n"), "{values}");
    let stderr = ok(&project, "delete api --group db --version v1 --kind Backup");
    for path in [
        "bundle/manifests/db.example.com_backups.yaml",
        "bundle/manifests/demo-operator-db-backup-editor-role_rbac.authorization.k8s.io_v1_clusterrole.yaml",
        "bundle/manifests/demo-operator-db-backup-viewer-role_rbac.authorization.k8s.io_v1_clusterrole.yaml",
    ] {
        assert!(stderr.contains(&format!("Removing {path}\n")), "{stderr}");
    }
    assert!(
        stderr.contains("make bundle") && stderr.contains("make helm"),
        "{stderr}"
    );
    ok(&project, bundle);
    // MySQLCluster's conversion goes too: its CRD is rebuilt, by a crdgen stand-in here.
    let record = project.read("PROJECT");
    let without = record.replace(
        "  webhooks:\n    defaulting: true\n    validation: true\n    conversion: true\n",
        "",
    );
    assert_ne!(without, record, "PROJECT records the webhooks otherwise");
    ok_building(
        &project,
        "delete webhook --group db --version v1 --kind MySQLCluster",
        &without,
    );
    ok(
        &project,
        "delete webhook --group cache --version v1 --kind Memcached",
    );
    assert!(
        !project
            .root
            .join("dist/chart/templates/webhook.yaml")
            .exists()
    );
    ok(&project, "generate helm");
    ok(
        &project,
        "delete api --group core --version v1 --kind ConfigMap",
    );
    ok(&project, "edit --namespaced");
    let values = project.read("dist/chart/values.yaml");
    assert!(!values.contains("watchNamespace"), "{values}");
    ok(&project, "generate helm");
    ok(&project, bundle);
    let csv = project.read("bundle/manifests/demo-operator.clusterserviceversion.yaml");
    assert!(
        csv.contains("  - supported: true\n    type: OwnNamespace\n"),
        "{csv}"
    );
}
