//! `opgen generate bundle` on real projects: a second run changes nothing, `--check` catches a
//! stale bundle, the user's CSV base and the upgrade chain survive regeneration, a bundle OLM
//! would refuse is never written, bad input leaves every file as it was, and the Makefile's
//! bundle and catalog targets.
//!
//! The CRDs come from `generate manifests` with a stand-in for crdgen (building it takes
//! minutes, see `Project::generate_manifests_without_building`); the end-to-end tests make
//! bundles from real CRDs.

mod common;

use common::{Project, fails_unchanged, opgen, read_tree, write_script};
use serde_json::{Value, json};

const IMAGE: &str = "registry.example.com/demo-operator:v0.1.0";
const BASE: &str = "config/manifests/bases/demo-operator.clusterserviceversion.yaml";
const CSV: &str = "bundle/manifests/demo-operator.clusterserviceversion.yaml";

fn project(init_args: &str) -> Project {
    let project = Project::init("demo-operator", init_args);
    project.add_bundle_kinds();
    project
}

/// Runs `opgen generate bundle <args>` and returns its stderr; it must succeed.
fn bundle(project: &Project, args: &str) -> String {
    let output = project
        .opgen()
        .args(["generate", "bundle"])
        .args(args.split_whitespace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "generate bundle {args} failed:\n{stderr}"
    );
    stderr
}

fn yaml(project: &Project, path: &str) -> Value {
    serde_saphyr::from_str(&project.read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn write_yaml(project: &Project, path: &str, value: &Value) {
    std::fs::write(
        project.root.join(path),
        serde_saphyr::to_string(value).unwrap(),
    )
    .unwrap();
}

#[test]
fn generate_lists_the_bundle_command() {
    let temp = tempfile::tempdir().unwrap();
    let assert = opgen(temp.path())
        .args(["generate", "--help"])
        .assert()
        .success();
    let help = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(help.contains("bundle"), "{help}");
}

#[test]
fn a_second_run_changes_nothing_and_check_agrees() {
    let project = project("");
    let flags = format!("--version 0.1.0 --image {IMAGE}");
    let stderr = bundle(&project, &flags);
    assert!(stderr.contains(&format!("Creating {CSV}")), "{stderr}");
    assert!(
        stderr.contains("Creating config/olm/subscription.yaml"),
        "{stderr}"
    );
    let before = read_tree(&project.root);

    let stderr = bundle(&project, &flags);
    assert!(
        stderr.contains("the bundle is up to date; nothing changed"),
        "{stderr}"
    );
    // Channels and package left out keep those of the bundle in bundle/.
    bundle(&project, &format!("{flags} --check"));
    assert!(
        read_tree(&project.root) == before,
        "a second run changed files"
    );

    let csv = yaml(&project, CSV);
    assert_eq!(csv["metadata"]["name"], "demo-operator.v0.1.0");
    assert_eq!(csv["spec"]["minKubeVersion"], "1.35.0");
    assert_eq!(
        csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
            [0]["image"],
        IMAGE
    );
    assert_eq!(
        csv["spec"]["relatedImages"],
        json!([
            {"name": "manager", "image": IMAGE},
            {"name": "memcached", "image": "memcached:1.6"},
            {"name": "postgrescluster", "image": "postgres:17"},
        ])
    );

    // --dry-run shows what would change and writes nothing.
    let output = project
        .opgen()
        .args("generate bundle --version 0.1.1 --dry-run".split_whitespace())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("+  name: demo-operator.v0.1.1"));
    assert!(read_tree(&project.root) == before, "--dry-run wrote files");
}

#[test]
fn check_catches_a_stale_bundle_after_a_type_change() {
    let project = project("");
    let flags = format!("--version 0.1.0 --image {IMAGE}");
    bundle(&project, &flags);

    // What `generate manifests` writes after `size` is renamed `members` in the v1 types.
    let crd_path = "config/crd/bases/db.example.com_mysqlclusters.yaml";
    let mut crd = yaml(&project, crd_path);
    let properties = crd["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|v| v["name"] == "v1")
        .unwrap()
        .pointer_mut("/schema/openAPIV3Schema/properties/spec/properties")
        .unwrap()
        .as_object_mut()
        .unwrap();
    properties.remove("size");
    properties.insert(
        "members".into(),
        json!({"type": "integer", "description": "Members of the cluster."}),
    );
    write_yaml(&project, crd_path, &crd);

    let before = read_tree(&project.root);
    let output = project
        .opgen()
        .args(format!("generate bundle {flags} --check").split_whitespace())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("+++ b/bundle/manifests/db.example.com_mysqlclusters.yaml"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with('+') && line.trim_end().ends_with("members:")),
        "{stdout}"
    );
    assert!(
        stderr.contains("Outdated bundle/manifests/db.example.com_mysqlclusters.yaml"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("Outdated {CSV}")),
        "the size descriptor goes:\n{stderr}"
    );
    assert!(
        stderr.contains("the bundle is out of date: run `opgen generate bundle`"),
        "{stderr}"
    );
    assert!(read_tree(&project.root) == before, "--check wrote files");

    bundle(&project, &flags);
    bundle(&project, &format!("{flags} --check"));
    let csv = yaml(&project, CSV);
    let owned = &csv["spec"]["customresourcedefinitions"]["owned"];
    let v1 = owned
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "mysqlclusters.db.example.com" && o["version"] == "v1")
        .unwrap();
    assert!(v1.get("specDescriptors").is_none(), "{v1}");
}

#[test]
fn edits_to_the_csv_base_survive_regeneration() {
    let project = project("");
    let mut base = yaml(&project, BASE);
    base["metadata"]["annotations"]["categories"] = json!("Database");
    base["spec"]["description"] = json!("Runs MySQL clusters.");
    base["spec"]["icon"] = json!([{"base64data": "PHN2Zy8+", "mediatype": "image/svg+xml"}]);
    base["spec"]["links"] = json!([{"name": "Docs", "url": "https://example.com/docs"}]);
    base["spec"]["customresourcedefinitions"] = json!({"owned": [{
        "name": "mysqlclusters.db.example.com",
        "version": "v1",
        "displayName": "MySQL Cluster",
        "specDescriptors": [{"path": "size", "displayName": "Members", "x-descriptors": ["urn:alm:descriptor:com.tectonic.ui:podCount"]}],
    }]});
    write_yaml(&project, BASE, &base);
    let base_text = project.read(BASE);

    for version in ["0.1.0", "0.2.0"] {
        bundle(&project, &format!("--version {version} --image {IMAGE}"));
        let csv = yaml(&project, CSV);
        assert_eq!(csv["metadata"]["annotations"]["categories"], "Database");
        assert_eq!(csv["spec"]["description"], "Runs MySQL clusters.");
        assert_eq!(csv["spec"]["icon"], base["spec"]["icon"]);
        assert_eq!(csv["spec"]["links"], base["spec"]["links"]);
        let owned = csv["spec"]["customresourcedefinitions"]["owned"]
            .as_array()
            .unwrap();
        let mine = owned
            .iter()
            .find(|o| o["name"] == "mysqlclusters.db.example.com" && o["version"] == "v1")
            .unwrap();
        assert_eq!(mine["displayName"], "MySQL Cluster");
        assert_eq!(mine["specDescriptors"][0]["displayName"], "Members");
        assert_eq!(
            mine["description"],
            "MySQLCluster is the Schema for the mysqlclusters API."
        );
        let other = owned
            .iter()
            .find(|o| o["name"] == "mysqlclusters.db.example.com" && o["version"] == "v1alpha1")
            .unwrap();
        assert_eq!(
            other["displayName"], "My SQL Cluster",
            "only the version named is changed"
        );
        assert_eq!(project.read(BASE), base_text, "opgen never writes the base");
    }
}

#[test]
fn replaces_is_kept_from_the_previous_bundle() {
    let project = project("");
    bundle(
        &project,
        &format!(
            "--version 0.1.0 --image {IMAGE} --channels alpha,stable --default-channel stable"
        ),
    );
    assert!(yaml(&project, CSV)["spec"].get("replaces").is_none());

    let stderr = bundle(&project, &format!("--version 0.2.0 --image {IMAGE}"));
    assert!(
        stderr.contains(
            "demo-operator.v0.2.0 replaces demo-operator.v0.1.0, the bundle it supersedes"
        ),
        "{stderr}"
    );
    let csv = yaml(&project, CSV);
    assert_eq!(csv["spec"]["replaces"], "demo-operator.v0.1.0");
    let annotations = project.read("bundle/metadata/annotations.yaml");
    assert!(
        annotations.contains("channels.v1: alpha,stable\n"),
        "channels are kept:\n{annotations}"
    );
    assert!(
        annotations.contains("channel.default.v1: stable\n"),
        "{annotations}"
    );

    // Regenerating the same version keeps replaces, and skips written into the bundle's CSV.
    let mut csv = yaml(&project, CSV);
    csv["spec"]["skips"] = json!(["demo-operator.v0.1.1"]);
    write_yaml(&project, CSV, &csv);
    bundle(&project, &format!("--version 0.2.0 --image {IMAGE}"));
    let csv = yaml(&project, CSV);
    assert_eq!(csv["spec"]["replaces"], "demo-operator.v0.1.0");
    assert_eq!(csv["spec"]["skips"], json!(["demo-operator.v0.1.1"]));

    bundle(
        &project,
        &format!("--version 0.2.0 --image {IMAGE} --replaces 0.1.5"),
    );
    assert_eq!(
        yaml(&project, CSV)["spec"]["replaces"],
        "demo-operator.v0.1.5"
    );
    bundle(
        &project,
        &format!("--version 0.2.0 --image {IMAGE} --replaces="),
    );
    assert!(yaml(&project, CSV)["spec"].get("replaces").is_none());
}

/// A change to the CSV base.
type BaseEdit = fn(&mut Value);

#[test]
fn a_bundle_olm_would_refuse_is_not_written() {
    let project = project("--namespaced");
    bundle(&project, &format!("--version 0.1.0 --image {IMAGE}"));
    let base_text = project.read(BASE);
    let flags = format!("generate bundle --version 0.1.0 --image {IMAGE}");
    let from_base = format!("(from {BASE})");
    let cases: &[(&str, BaseEdit, &[&str])] = &[
        (
            "install modes that contradict the scope",
            |base| base["spec"]["installModes"][3]["supported"] = json!(true),
            &["spec.installModes: AllNamespaces is supported, but the operator is namespaced"],
        ),
        (
            "examples that are not JSON",
            |base| base["metadata"]["annotations"]["alm-examples"] = json!("[{"),
            &["metadata.annotations.alm-examples: not JSON"],
        ),
        (
            "an example of a kind the bundle does not own",
            |base| {
                base["metadata"]["annotations"]["alm-examples"] =
                    json!(r#"[{"apiVersion": "db.example.com/v2", "kind": "MySQLCluster"}]"#)
            },
            &[
                "metadata.annotations.alm-examples[0]: an example of MySQLCluster (db.example.com/v2)",
            ],
        ),
        (
            "no display name",
            |base| base["spec"]["displayName"] = json!(""),
            &["spec.displayName: missing"],
        ),
        (
            "a related image that is no reference",
            |base| base["spec"]["relatedImages"] = json!([{"name": "helper", "image": "Busy Box"}]),
            &["spec.relatedImages[3].image: invalid image `Busy Box`"],
        ),
        (
            "an owned CRD the bundle lacks",
            |base| base["spec"]["customresourcedefinitions"] = json!({"owned": [{"name": "backups.db.example.com", "version": "v1", "kind": "Backup"}]}),
            &[
                "spec.customresourcedefinitions.owned[4]: the bundle has no CRD backups.db.example.com",
            ],
        ),
    ];
    for (what, change, needles) in cases {
        let mut base: Value = serde_saphyr::from_str(&base_text).unwrap();
        change(&mut base);
        write_yaml(&project, BASE, &base);
        let mut needles = needles.to_vec();
        needles.extend([
            "the bundle would not pass OLM's validation, so nothing was written",
            CSV,
            &from_base,
        ]);
        eprintln!("case: {what}");
        fails_unchanged(&project.root, &flags, 1, &needles);
    }
    std::fs::write(project.root.join(BASE), &base_text).unwrap();

    // Build metadata cannot be part of a CSV name.
    fails_unchanged(
        &project.root,
        "generate bundle --version 0.1.0+build.7",
        1,
        &["metadata.name: `demo-operator.v0.1.0+build.7` is not a valid CSV name"],
    );
    // A sample of a version the CRD does not have.
    let sample = project.root.join("config/samples/db_v1_mysqlcluster.yaml");
    let text = std::fs::read_to_string(&sample).unwrap();
    std::fs::write(
        &sample,
        text.replace("db.example.com/v1", "db.example.com/v9"),
    )
    .unwrap();
    fails_unchanged(
        &project.root,
        &flags,
        1,
        &["metadata.annotations.alm-examples[2]: an example of MySQLCluster (db.example.com/v9)"],
    );
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let project = project("");
    let root = &project.root;
    let cases: &[(&str, i32, &[&str])] = &[
        ("generate bundle", 2, &["--version <X.Y.Z>"]),
        (
            "generate bundle --version 1.0",
            1,
            &["invalid version `1.0`", "semantic version"],
        ),
        (
            "generate bundle --version v1.0.0",
            1,
            &["without the leading `v`"],
        ),
        (
            "generate bundle --version 0.1.0 --channels alpha --default-channel stable",
            1,
            &["the default channel `stable` is not among the channels alpha"],
        ),
        (
            "generate bundle --version 0.1.0 --channels al/pha",
            1,
            &["invalid channel `al/pha`"],
        ),
        (
            "generate bundle --version 0.1.0 --package Demo",
            1,
            &["invalid package name `Demo`"],
        ),
        (
            "generate bundle --version 0.1.0 --package other",
            1,
            &[
                "config/manifests/bases/other.clusterserviceversion.yaml is missing",
                "--init-base --package other",
            ],
        ),
        (
            "generate bundle --version 0.1.0 --image Demo",
            1,
            &["invalid image `Demo`"],
        ),
        (
            "generate bundle --version 0.1.0 --replaces 0.1.0",
            1,
            &["cannot replace itself"],
        ),
        (
            "generate bundle --version 0.1.0 --check --dry-run",
            2,
            &["cannot be used with"],
        ),
    ];
    for (args, code, needles) in cases {
        fails_unchanged(root, args, *code, needles);
    }

    // Without kubectl (and no KUSTOMIZE).
    let before = read_tree(root);
    let assert = project
        .opgen()
        .args("generate bundle --version 0.1.0".split_whitespace())
        .env("KUBECTL", "opgen-test-no-kubectl")
        .env_remove("KUSTOMIZE")
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("cannot run `opgen-test-no-kubectl`: it is not installed"),
        "{stderr}"
    );
    assert!(stderr.contains("set KUSTOMIZE"), "{stderr}");
    assert!(read_tree(root) == before);

    // Without CRDs: `generate manifests` has not run.
    for file in std::fs::read_dir(root.join("config/crd/bases")).unwrap() {
        std::fs::remove_file(file.unwrap().path()).unwrap();
    }
    std::fs::create_dir_all(root.join("config/crd/bases")).unwrap();
    // kustomize refuses a missing file, so list none.
    std::fs::write(
        root.join("config/crd/kustomization.yaml"),
        "# Code generated by opgen. DO NOT EDIT.\nresources: []\n",
    )
    .unwrap();
    fails_unchanged(
        root,
        "generate bundle --version 0.1.0",
        1,
        &[
            "renders no CRD for mysqlclusters.db.example.com",
            "opgen generate manifests",
        ],
    );

    // Without a CSV base.
    let project = self::project("");
    let base_text = project.read(BASE);
    std::fs::remove_file(project.root.join(BASE)).unwrap();
    fails_unchanged(
        &project.root,
        "generate bundle --version 0.1.0",
        1,
        &[
            &format!("{BASE} is missing"),
            "opgen generate bundle --init-base --package demo-operator",
        ],
    );
    std::fs::write(project.root.join(BASE), base_text).unwrap();

    // Without the kustomization of config/manifests.
    std::fs::remove_file(project.root.join("config/manifests/kustomization.yaml")).unwrap();
    fails_unchanged(
        &project.root,
        "generate bundle --version 0.1.0",
        1,
        &[
            "config/manifests/kustomization.yaml is missing",
            "--init-base --package demo-operator` (your CSV base is kept)",
        ],
    );

    // Without kinds.
    let empty = Project::init("demo-operator", "");
    fails_unchanged(
        &empty.root,
        "generate bundle --version 0.1.0",
        1,
        &["PROJECT lists no kinds", "opgen create api"],
    );

    // Outside a project.
    let temp = tempfile::tempdir().unwrap();
    fails_unchanged(
        temp.path(),
        "generate bundle --version 0.1.0",
        1,
        &["is not inside an opgen project"],
    );
}

/// A file opgen generated for the bundle that it no longer would (a kind deleted, a webhook
/// gone) is opgen's: the next bundle removes it.
#[test]
fn files_opgen_generated_and_no_longer_would_are_removed() {
    let project = project("");
    bundle(&project, &format!("--version 0.1.0 --image {IMAGE}"));
    let stray = "bundle/manifests/demo-operator-retired_v1_service.yaml";
    let header = "# Code generated by opgen generate bundle. DO NOT EDIT.";
    std::fs::write(
        project.root.join(stray),
        format!("{header}\nkind: Service\n"),
    )
    .unwrap();
    let stderr = bundle(&project, &format!("--version 0.1.0 --image {IMAGE}"));
    assert!(stderr.contains(&format!("Removing {stray}")), "{stderr}");
    assert!(!project.root.join(stray).exists());
}

#[test]
fn files_left_in_the_bundle_are_refused() {
    let project = project("");
    bundle(&project, &format!("--version 0.1.0 --image {IMAGE}"));
    std::fs::write(
        project
            .root
            .join("bundle/manifests/ops.example.com_backups.yaml"),
        "kind: CustomResourceDefinition\n",
    )
    .unwrap();
    fails_unchanged(
        &project.root,
        "generate bundle --version 0.1.0",
        1,
        &[
            "this file is not part of the bundle opgen generates",
            "bundle/manifests/ops.example.com_backups.yaml",
            "Delete it",
        ],
    );
}

#[test]
fn init_base_scaffolds_config_manifests_for_an_existing_project() {
    let project = Project::init("demo-operator", "--namespaced");
    assert!(project.root.join(BASE).is_file(), "init scaffolds the base");
    std::fs::remove_dir_all(project.root.join("config/manifests")).unwrap();

    let before = read_tree(&project.root);
    let assert = project
        .opgen()
        .args("generate bundle --init-base --dry-run".split_whitespace())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains(&format!("Creating {BASE}")), "{stderr}");
    assert!(read_tree(&project.root) == before);

    let assert = project
        .opgen()
        .args("generate bundle --init-base".split_whitespace())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains(&format!("Fill in {BASE}")), "{stdout}");
    let base = yaml(&project, BASE);
    let supported: Vec<&Value> = base["spec"]["installModes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["supported"] == true)
        .map(|m| &m["type"])
        .collect();
    assert_eq!(
        supported,
        [&json!("OwnNamespace"), &json!("SingleNamespace")]
    );
    assert!(
        project
            .root
            .join("config/manifests/kustomization.yaml")
            .is_file()
    );

    fails_unchanged(
        &project.root,
        "generate bundle --init-base",
        1,
        &["already exist and are yours"],
    );
    fails_unchanged(
        &project.root,
        "generate bundle --init-base --version 0.1.0",
        2,
        &["cannot be used with"],
    );
    // A lost kustomization comes back; the base, edited, stays as it is.
    let edited = format!("{}# mine\n", project.read(BASE));
    std::fs::write(project.root.join(BASE), &edited).unwrap();
    std::fs::remove_file(project.root.join("config/manifests/kustomization.yaml")).unwrap();
    let assert = project
        .opgen()
        .args("generate bundle --init-base".split_whitespace())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("Creating config/manifests/kustomization.yaml"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("Skipping {BASE}")), "{stderr}");
    assert_eq!(project.read(BASE), edited);

    // A kustomization the user changed is kept.
    let kustomization = project.root.join("config/manifests/kustomization.yaml");
    std::fs::write(&kustomization, "resources:\n- ../default\n").unwrap();
    let assert = project
        .opgen()
        .args("generate bundle --init-base --package mysql".split_whitespace())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("Creating config/manifests/bases/mysql.clusterserviceversion.yaml"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Skipping config/manifests/kustomization.yaml"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&kustomization).unwrap(),
        "resources:\n- ../default\n"
    );
}

#[test]
fn the_makefile_builds_the_bundle_the_catalog_and_installs_through_olm() {
    let project = project("");
    // `-o manifests`: the CRDs are written already, and building crdgen takes minutes.
    project.make(&format!(
        "-o manifests bundle IMG={IMAGE} CHANNELS=alpha,stable DEFAULT_CHANNEL=stable"
    ));
    let csv = yaml(&project, CSV);
    assert_eq!(
        csv["spec"]["version"], "0.1.0",
        "VERSION comes from Cargo.toml"
    );
    assert_eq!(csv["spec"]["relatedImages"][0]["image"], IMAGE);
    let annotations = project.read("bundle/metadata/annotations.yaml");
    assert!(
        annotations.contains("channels.v1: alpha,stable\n"),
        "{annotations}"
    );

    // opm and the container tool are stand-ins that show what they were asked to do; the tool is
    // named podman, one of the three the Makefile accepts.
    let bin = project.root.join("test-bin");
    std::fs::create_dir(&bin).unwrap();
    write_script(
        &bin.join("opm"),
        "#!/bin/sh\ncase \"$1\" in\n  init) printf -- '---\\nschema: olm.package\\nname: %s\\ndefaultChannel: %s\\n' \"$2\" \"${3#--default-channel=}\" ;;\n  render) test -f \"$2/metadata/annotations.yaml\" && printf -- '---\\nschema: olm.bundle\\nname: demo-operator.v0.1.0\\nimage: %s\\n' \"${3#--alpha-image-ref-template=}\" ;;\n  validate) test -f \"$2/demo-operator/index.yaml\" ;;\n  generate) touch \"$3.Dockerfile\" ;;\n  *) exit 1 ;;\nesac\n",
    );
    write_script(
        &bin.join("podman"),
        "#!/bin/sh\necho \"podman $*\" >> built.log\n",
    );
    let bundle_image = "registry.example.com/demo-operator-bundle:v0.1.0";
    project.make(&format!(
        "catalog-build OPM={} CONTAINER_TOOL={} IMAGE_TAG_BASE=registry.example.com/demo-operator",
        bin.join("opm").display(),
        bin.join("podman").display()
    ));
    let index = project.read("bin/catalog/demo-operator/index.yaml");
    let blobs: Vec<Value> = serde_saphyr::from_multiple(&index).unwrap();
    assert_eq!(
        blobs,
        [
            json!({"schema": "olm.package", "name": "demo-operator", "defaultChannel": "stable"}),
            json!({"schema": "olm.bundle", "name": "demo-operator.v0.1.0", "image": bundle_image}),
            json!({"schema": "olm.channel", "package": "demo-operator", "name": "alpha", "entries": [{"name": "demo-operator.v0.1.0"}]}),
            json!({"schema": "olm.channel", "package": "demo-operator", "name": "stable", "entries": [{"name": "demo-operator.v0.1.0"}]}),
        ]
    );
    let built = project.read("built.log");
    assert_eq!(
        built,
        "podman build -f bin/catalog.Dockerfile -t registry.example.com/demo-operator-catalog:v0.1.0 bin/\n"
    );

    // olm-deploy applies config/olm with the catalog image in place of the placeholder.
    write_script(
        &bin.join("kubectl"),
        "#!/bin/sh\nif [ \"$1\" = apply ]; then cat > applied.yaml; else exec kubectl \"$@\"; fi\n",
    );
    project.make(&format!(
        "olm-deploy KUBECTL={} CATALOG_IMG=registry.example.com/catalog:v1",
        bin.join("kubectl").display()
    ));
    let applied: Vec<Value> = serde_saphyr::from_multiple(&project.read("applied.yaml")).unwrap();
    let mut kinds: Vec<&str> = applied
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        [
            "CatalogSource",
            "Namespace",
            "OperatorGroup",
            "Subscription"
        ]
    );
    let catalog = applied
        .iter()
        .find(|o| o["kind"] == "CatalogSource")
        .unwrap();
    assert_eq!(catalog["spec"]["image"], "registry.example.com/catalog:v1");
    let subscription = applied
        .iter()
        .find(|o| o["kind"] == "Subscription")
        .unwrap();
    assert_eq!(subscription["spec"]["channel"], "stable");
    assert_eq!(subscription["spec"]["source"], catalog["metadata"]["name"]);
    assert_eq!(
        subscription["metadata"]["namespace"],
        "demo-operator-system"
    );
}
