//! `opgen generate helm` on real projects: the chart's files, a second run that changes
//! nothing, `--check` and `--dry-run`, the user's Chart.yaml and values.yaml kept, bad input
//! refused with every file unchanged; and, with the real `helm` (built from the Go module
//! proxy), `helm lint --strict`, `helm template` against `kubectl kustomize config/default`,
//! and values the schema refuses.
//!
//! The CRDs come from `generate manifests` with a stand-in for crdgen (see
//! `Project::generate_manifests_without_building`); the control-plane scenario is in tests/e2e.

mod common;

use std::collections::BTreeMap;

use common::{Project, fails_unchanged, helm, read_tree};
use serde_json::Value;

const CHART: &str = "dist/chart";

/// A cluster-wide project with admission and conversion webhooks and an operand kind.
fn cluster_wide() -> Project {
    let project = Project::init("demo-operator", "");
    project.create_api("--group db --version v1alpha1 --kind MySQLCluster");
    project.create_api("--group db --version v1 --kind MySQLCluster");
    project.create_api(
        "--group cache --version v1 --kind Memcached --image memcached:1.6 --port 11211",
    );
    project
        .opgen()
        .args(
            "create webhook --group db --version v1 --kind MySQLCluster --defaulting --validation --conversion"
                .split_whitespace(),
        )
        .assert()
        .success();
    project.generate_manifests_without_building();
    project
}

/// A namespaced project without webhooks.
fn namespaced() -> Project {
    let project = Project::init("team-operator", "--namespaced");
    project.create_api("--group apps --version v1 --kind Backup");
    project.generate_manifests_without_building();
    project
}

/// Runs `opgen generate helm <args>` and returns its stderr; it must succeed.
fn generate(project: &Project, args: &str) -> String {
    let output = project
        .opgen()
        .args(["generate", "helm"])
        .args(args.split_whitespace())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "generate helm {args} failed:\n{stderr}"
    );
    stderr
}

fn chart_files(project: &Project) -> BTreeMap<String, Vec<u8>> {
    project
        .tree()
        .into_iter()
        .filter(|(path, _)| path.starts_with(CHART))
        .collect()
}

fn snapshot_chart(scenario: &str, project: &Project) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let files = chart_files(project);
    settings.bind(|| {
        let list: Vec<&str> = files.keys().map(String::as_str).collect();
        insta::assert_snapshot!(format!("{scenario}@files"), list.join("\n"));
        for (path, bytes) in &files {
            let text = String::from_utf8(bytes.clone()).unwrap();
            insta::assert_snapshot!(format!("{scenario}@{}", path.replace('/', "__")), text);
        }
    });
}

#[test]
fn generate_lists_the_helm_command() {
    let temp = tempfile::tempdir().unwrap();
    let assert = common::opgen(temp.path())
        .args(["generate", "--help"])
        .assert()
        .success();
    let help = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(help.contains("helm"), "{help}");
}

#[test]
fn chart_of_a_cluster_wide_operator_with_webhooks() {
    let project = cluster_wide();
    generate(&project, "");
    snapshot_chart("helm_cluster", &project);
}

#[test]
fn chart_of_a_namespaced_operator() {
    let project = namespaced();
    generate(&project, "");
    snapshot_chart("helm_namespaced", &project);
}

/// The alerts go with the ServiceMonitor, and their Prometheus templates reach Prometheus as
/// written: Helm prints each `{{` the rule holds instead of running it.
#[test]
fn the_chart_carries_the_alerts_with_the_service_monitor() {
    let project = namespaced();
    generate(&project, "");
    let text = project.read(&format!("{CHART}/templates/prometheus.yaml"));
    let condition = "{{- if and $values.metrics.enabled $values.metrics.serviceMonitor.enabled }}";
    let rule = text
        .split("\n---\n")
        .find(|part| part.contains("kind: PrometheusRule"))
        .unwrap_or_else(|| panic!("no PrometheusRule in the chart:\n{text}"));
    assert!(rule.trim_start().starts_with(condition), "{rule}");
    assert!(
        rule.contains("name: {{ include \"team-operator.fullname\" . }}-controller-manager-alerts"),
        "{rule}"
    );
    assert!(rule.contains("{{`{{`}} $labels.controller }}"), "{rule}");
    assert!(!rule.contains("'{{ $labels"), "{rule}");
}

#[test]
fn a_second_run_changes_nothing_and_check_finds_drift() {
    let project = namespaced();
    let stderr = generate(&project, "");
    assert!(
        stderr.contains("Creating dist/chart/templates/crd.yaml"),
        "{stderr}"
    );
    let before = read_tree(&project.root);
    let stderr = generate(&project, "");
    assert!(
        stderr.contains("the Helm chart is up to date; nothing changed"),
        "{stderr}"
    );
    let stderr = generate(&project, "--check");
    assert!(stderr.contains("the Helm chart is up to date"), "{stderr}");
    assert!(read_tree(&project.root) == before);

    // A new kind changes the rendered CRDs and RBAC: the chart is stale until regenerated.
    project.create_api("--group apps --version v1 --kind Restore");
    project.generate_manifests_without_building();
    let before = read_tree(&project.root);
    let assert = project
        .opgen()
        .args(["generate", "helm", "--check"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stdout.contains("+  name: restores.apps.example.com"),
        "{stdout}"
    );
    assert!(
        stderr.contains("Outdated dist/chart/templates/crd.yaml"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the Helm chart is out of date: run `opgen generate helm`"),
        "{stderr}"
    );
    let stderr = generate(&project, "--dry-run");
    assert!(stderr.contains("dist/chart/templates/crd.yaml"), "{stderr}");
    assert!(read_tree(&project.root) == before, "--dry-run wrote");
    generate(&project, "");
    assert!(
        project
            .read("dist/chart/templates/crd.yaml")
            .contains("restores.apps.example.com")
    );
}

#[test]
fn the_users_chart_and_values_are_kept_and_new_keys_reported() {
    let project = namespaced();
    generate(&project, "");
    let chart = project
        .read("dist/chart/Chart.yaml")
        .replace("version: 0.1.0", "version: 2.0.0");
    project.write("dist/chart/Chart.yaml", &chart);
    // A user's values.yaml from before `crds`, `custom` and `metrics.serviceMonitor` existed.
    let values = project.read("dist/chart/values.yaml");
    let (kept, _) = values.split_once("\ncrds:").unwrap();
    let kept = kept
        .replace("  serviceMonitor:\n    enabled: false\n", "")
        .replace("replicaCount: 1", "replicaCount: 3");
    project.write("dist/chart/values.yaml", &kept);
    let stderr = generate(&project, "");
    assert!(
        stderr.contains("this opgen's chart has values it lacks, which take their defaults: crds, custom, metrics.serviceMonitor"),
        "{stderr}"
    );
    assert_eq!(project.read("dist/chart/values.yaml"), kept);
    assert_eq!(project.read("dist/chart/Chart.yaml"), chart);
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    // No kinds.
    let empty = Project::init("empty-operator", "");
    fails_unchanged(
        &empty.root,
        "generate helm",
        1,
        &["PROJECT lists no kinds", "opgen create api"],
    );

    let project = namespaced();
    // No kubectl, and no kustomize.
    let before = read_tree(&project.root);
    let assert = project
        .opgen()
        .args(["generate", "helm"])
        .env("KUBECTL", "opgen-no-such-kubectl")
        .env_remove("KUSTOMIZE")
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("cannot run `opgen-no-such-kubectl`: it is not installed or not on PATH"),
        "{stderr}"
    );
    assert!(stderr.contains("set KUSTOMIZE"), "{stderr}");
    assert!(read_tree(&project.root) == before);

    // A values.yaml the user broke.
    generate(&project, "");
    project.write(
        "dist/chart/values.yaml",
        "image:\n  repository: [unclosed\n",
    );
    std::fs::remove_file(project.root.join("dist/chart/templates/crd.yaml")).unwrap();
    fails_unchanged(
        &project.root,
        "generate helm",
        1,
        &[
            "dist/chart/values.yaml is not valid YAML",
            "line 2",
            "Fix dist/chart/values.yaml",
            "nothing was written",
        ],
    );

    // A template opgen generated and no longer would.
    project.write("dist/chart/values.yaml", "");
    project.write(
        "dist/chart/templates/old.yaml",
        "# Code generated by opgen generate helm. DO NOT EDIT.\n",
    );
    fails_unchanged(
        &project.root,
        "generate helm",
        1,
        &["dist/chart/templates/old.yaml", "Delete it"],
    );
    // One of the user's own beside opgen's is theirs, and stays.
    std::fs::remove_file(project.root.join("dist/chart/templates/old.yaml")).unwrap();
    project.write("dist/chart/templates/extra.yaml", "# mine\n");
    generate(&project, "");
    assert_eq!(project.read("dist/chart/templates/extra.yaml"), "# mine\n");
}

/// `helm <args>` in the project; it must succeed. `None` when helm cannot be built.
fn helm_ok(project: &Project, args: &[&str]) -> Option<String> {
    let helm = helm::helm()?;
    let output = helm::run(helm, &project.root, args);
    assert!(
        output.status.success(),
        "helm {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8(output.stdout).unwrap())
}

/// The labels and annotations Helm puts on a release's objects, and no kustomize object has.
const HELM_OWN: [&str; 5] = [
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "helm.sh/resource-policy",
];

/// The objects of a YAML stream by kind and name, without Helm's own labels and annotations
/// (nor the maps they leave empty), and without the Namespace (Helm installs into one).
fn objects(stream: &str) -> BTreeMap<(String, String), Value> {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    if matches!(
                        key.as_str(),
                        "labels" | "matchLabels" | "selector" | "annotations"
                    ) && let Some(labels) = item.as_object_mut()
                    {
                        labels.retain(|k, _| !HELM_OWN.contains(&k.as_str()));
                    }
                    strip(item);
                }
                map.retain(|key, item| {
                    !(matches!(key.as_str(), "labels" | "annotations")
                        && item.as_object().is_some_and(|m| m.is_empty()))
                });
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let values: Vec<Value> = serde_saphyr::from_multiple(stream).unwrap();
    values
        .into_iter()
        .filter(|v| !v.is_null() && v["kind"] != "Namespace")
        .map(|mut v| {
            strip(&mut v);
            let key = (
                v["kind"].as_str().unwrap().to_owned(),
                v["metadata"]["name"].as_str().unwrap().to_owned(),
            );
            (key, v)
        })
        .collect()
}

fn kustomize_default(project: &Project) -> String {
    let output = std::process::Command::new("kubectl")
        .args(["kustomize", "config/default"])
        .current_dir(&project.root)
        .output()
        .expect("kubectl runs");
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

/// `helm lint --strict` is clean, and `helm template` with default values (the release named
/// after the project, in config/default's namespace) renders what kustomize renders.
fn chart_matches_kustomize(project: &Project, name: &str) {
    generate(project, "");
    let Some(lint) = helm_ok(project, &["lint", "--strict", CHART]) else {
        return;
    };
    assert!(lint.contains("0 chart(s) failed"), "{lint}");
    let namespace = format!("{name}-system");
    let helm = helm_ok(
        project,
        &["template", name, CHART, "--namespace", &namespace],
    )
    .unwrap();
    let helm = objects(&helm);
    let kustomize = objects(&kustomize_default(project));
    assert_eq!(
        helm.keys().collect::<Vec<_>>(),
        kustomize.keys().collect::<Vec<_>>()
    );
    for (key, object) in &kustomize {
        assert_eq!(&helm[key], object, "{key:?} differs from kustomize's");
    }
}

#[test]
fn the_chart_of_a_cluster_wide_operator_renders_what_kustomize_renders() {
    chart_matches_kustomize(&cluster_wide(), "demo-operator");
}

#[test]
fn the_chart_of_a_namespaced_operator_renders_what_kustomize_renders() {
    chart_matches_kustomize(&namespaced(), "team-operator");
}

#[test]
fn values_that_break_the_schema_are_refused_naming_the_key() {
    let project = cluster_wide();
    generate(&project, "");
    let Some(helm) = helm::helm() else { return };
    for (set, needle) in [
        ("image.repo=x", "additional properties 'repo' not allowed"),
        (
            "replicaCount=two",
            "at '/replicaCount': got string, want integer",
        ),
        (
            "webhooks.certificate.mode=vault",
            "at '/webhooks/certificate/mode'",
        ),
        ("metrics.port=70000", "at '/metrics/port'"),
        ("logging.format=xml", "at '/logging/format'"),
    ] {
        let output = helm::run(
            helm,
            &project.root,
            &["template", "demo-operator", CHART, "--set", set],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "--set {set} was accepted");
        assert!(stderr.contains(needle), "--set {set}:\n{stderr}");
    }
}

/// The dotted paths of every value of `values` that may be missing: each top-level value, and
/// each key of the chart's own maps (those whose keys the schema closes), at any depth.
fn value_paths(values: &Value, schema: &Value, path: &str, paths: &mut Vec<String>) {
    let Some(map) = values.as_object() else {
        return;
    };
    for (key, value) in map {
        let key_path = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        paths.push(key_path.clone());
        let inner = &schema["properties"][key];
        if inner["additionalProperties"] == false {
            value_paths(value, inner, &key_path, paths);
        }
    }
}

fn without(values: &Value, path: &str) -> Value {
    let mut values = values.clone();
    let (parent, key) = path.rsplit_once('.').unwrap_or(("", path));
    let pointer = if parent.is_empty() {
        String::new()
    } else {
        format!("/{}", parent.replace('.', "/"))
    };
    values
        .pointer_mut(&pointer)
        .and_then(Value::as_object_mut)
        .unwrap()
        .remove(key)
        .unwrap();
    values
}

/// A values.yaml that lacks a value (one kept from an older opgen, or one the user deleted)
/// renders exactly as the default would: each value removed in turn, and all of them, give
/// what the full values.yaml gives, and `helm lint --strict` (which fails on a missing key)
/// passes with an empty one.
#[test]
fn a_value_missing_from_values_yaml_renders_as_its_default() {
    let project = cluster_wide();
    generate(&project, "");
    let Some(helm) = helm::helm() else { return };
    let values_file = format!("{CHART}/values.yaml");
    let values: Value = serde_saphyr::from_str(&project.read(&values_file)).unwrap();
    let schema: Value =
        serde_json::from_str(&project.read(&format!("{CHART}/values.schema.json"))).unwrap();
    let render = |values: &Value| {
        project.write(&values_file, &serde_saphyr::to_string(values).unwrap());
        let output = helm::run(
            helm,
            &project.root,
            &[
                "template",
                "demo-operator",
                CHART,
                "--namespace",
                "demo-operator-system",
            ],
        );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let full = render(&values);
    assert!(full.contains("helm.sh/resource-policy: keep"), "{full}");
    assert!(full.contains("- --leader-elect"), "{full}");
    let mut paths = Vec::new();
    value_paths(&values, &schema, "", &mut paths);
    for expected in [
        "crds",
        "crds.keep",
        "crds.install",
        "leaderElection.enabled",
        "networkPolicy",
        "webhooks.certificate.mode",
        "resources",
    ] {
        assert!(
            paths.iter().any(|p| p == expected),
            "{expected} in {paths:?}"
        );
    }
    for path in &paths {
        let rendered = render(&without(&values, path));
        assert!(
            rendered == full,
            "without {path}, the chart renders otherwise than with its default:\n{}",
            similar::TextDiff::from_lines(&full, &rendered).unified_diff()
        );
    }
    assert_eq!(render(&serde_json::json!({})), full);
    let lint = helm_ok(&project, &["lint", "--strict", CHART]).unwrap();
    assert!(lint.contains("0 chart(s) failed"), "{lint}");
}

/// The issue's reproduction: `keep: true` deleted from values.yaml, the chart regenerated, and
/// the CRDs still kept on uninstall, as the note says.
#[test]
fn a_values_yaml_without_crds_keep_still_keeps_the_crds() {
    let project = namespaced();
    generate(&project, "");
    let values = project.read("dist/chart/values.yaml");
    project.write(
        "dist/chart/values.yaml",
        &values.replace("  keep: true\n", ""),
    );
    let stderr = generate(&project, "");
    assert!(
        stderr.contains("which take their defaults: crds.keep"),
        "{stderr}"
    );
    let Some(rendered) = helm_ok(&project, &["template", "team-operator", CHART]) else {
        return;
    };
    let crds = rendered.matches("kind: CustomResourceDefinition").count();
    assert_eq!(crds, 1, "{rendered}");
    assert_eq!(
        rendered.matches("helm.sh/resource-policy: keep").count(),
        crds,
        "{rendered}"
    );
}

/// A project `name` with one kind and its defaulting webhook, and its chart.
fn with_a_defaulting_webhook(name: &str) -> Project {
    let project = Project::init(name, "");
    project.create_api("--group db --version v1 --kind Backup");
    project
        .opgen()
        .args(
            "create webhook --group db --version v1 --kind Backup --defaulting".split_whitespace(),
        )
        .assert()
        .success();
    project.generate_manifests_without_building();
    generate(&project, "");
    project
}

/// The chart finds the webhook Service by the name the webhooks call, so a project whose name
/// holds "webhook" gets the certificate of its webhook Service, not of its metrics Service.
#[test]
fn the_certificate_is_the_webhook_services_in_a_project_named_webhook() {
    let project = with_a_defaulting_webhook("webhook-op");
    let Some(rendered) = helm_ok(
        &project,
        &[
            "template",
            "webhook-op",
            CHART,
            "--namespace",
            "ops",
            "--set",
            "webhooks.certificate.mode=cert-manager",
        ],
    ) else {
        return;
    };
    let objects = objects(&rendered);
    let certificate = &objects[&(
        "Certificate".to_owned(),
        "webhook-op-serving-cert".to_owned(),
    )];
    assert_eq!(
        certificate["spec"]["dnsNames"],
        serde_json::json!([
            "webhook-op-webhook-service.ops.svc",
            "webhook-op-webhook-service.ops.svc.cluster.local"
        ])
    );
    let configuration = &objects[&(
        "MutatingWebhookConfiguration".to_owned(),
        "webhook-op-mutating-webhook-configuration".to_owned(),
    )];
    assert_eq!(
        configuration["webhooks"][0]["clientConfig"]["service"]["name"],
        "webhook-op-webhook-service"
    );
    assert!(objects.contains_key(&(
        "Service".to_owned(),
        "webhook-op-webhook-service".to_owned()
    )));
}

/// Every name a release gets fits Kubernetes' limits (63 characters for a Service, 253 for
/// the others), whatever the release's name: `production-europe-west` of `base-op` gives a
/// fullname of 30 characters, which keeps its first 19 and a hash of the whole, so that a
/// release whose name starts alike still gets names of its own.
#[test]
fn every_name_of_a_release_fits_whatever_the_release_name() {
    let project = with_a_defaulting_webhook("base-op");
    let Some(helm) = helm::helm() else { return };
    let names = |release: &str| -> Vec<(String, String)> {
        let output = helm::run(
            helm,
            &project.root,
            &["template", release, CHART, "--namespace", "ops"],
        );
        assert!(output.status.success(), "{output:?}");
        objects(&String::from_utf8(output.stdout).unwrap())
            .into_keys()
            .collect()
    };
    let production = names("production-europe-west");
    for (kind, name) in &production {
        let limit = if kind == "Service" { 63 } else { 253 };
        assert!(
            name.len() <= limit,
            "{kind} {name} is over {limit} characters"
        );
    }
    let metrics = production
        .iter()
        .find(|(kind, name)| {
            kind == "Service" && name.ends_with("-controller-manager-metrics-service")
        })
        .map(|(_, name)| name.clone())
        .unwrap();
    let fullname = metrics
        .strip_suffix("-controller-manager-metrics-service")
        .unwrap();
    // The first 19 characters of `production-europe-west-base-op`, and 8 of its SHA-256 (as
    // docs/helm.md shows).
    assert_eq!(fullname, "production-europe-w-6e055146", "{metrics}");
    assert!(
        production
            .iter()
            .filter(|(_, name)| !name.contains('.'))
            .all(|(_, name)| name.starts_with(&format!("{fullname}-"))),
        "every object is named after the same fullname: {production:?}"
    );
    let canary = names("production-europe-west-canary");
    assert!(
        production
            .iter()
            .filter(|(_, name)| !name.contains('.'))
            .all(|object| !canary.contains(object)),
        "two releases whose names start alike share a name: {production:?} {canary:?}"
    );
    // A release named after the project gets the names `make deploy` gives.
    assert!(names("base-op").contains(&(
        "Service".into(),
        "base-op-controller-manager-metrics-service".into()
    )));
}

/// A template whose header the user removed is theirs: `generate helm` keeps it, says so, and
/// `--check` does not call it out of date.
#[test]
fn a_template_without_its_header_is_the_users_and_kept() {
    let project = namespaced();
    generate(&project, "");
    let manager = "dist/chart/templates/manager.yaml";
    let edited = project
        .read(manager)
        .replace(
            "# Code generated by opgen generate helm. DO NOT EDIT.\n",
            "# Ours now.\n",
        )
        .replace(
            "terminationGracePeriodSeconds: 10",
            "terminationGracePeriodSeconds: 30",
        );
    assert!(
        edited.contains("terminationGracePeriodSeconds: 30"),
        "{edited}"
    );
    project.write(manager, &edited);
    let stderr = generate(&project, "");
    assert!(
        stderr.contains(&format!("{manager} lost its `Code generated by opgen generate helm. DO NOT EDIT.` header, so it is yours and was left as it is")),
        "{stderr}"
    );
    assert_eq!(project.read(manager), edited);
    let stderr = generate(&project, "--check");
    assert!(stderr.contains("the Helm chart is up to date"), "{stderr}");
    // A run that changes other templates skips it, as it skips Chart.yaml.
    project.create_api("--group apps --version v1 --kind Restore");
    project.generate_manifests_without_building();
    let stderr = generate(&project, "");
    assert!(stderr.contains(&format!("Skipping {manager}")), "{stderr}");
    assert!(
        stderr.contains("Updating dist/chart/templates/crd.yaml"),
        "{stderr}"
    );
    assert_eq!(project.read(manager), edited);
}

/// The user's own templates read their values under `custom`, which the schema leaves open,
/// while a misspelt value of the chart's is still refused.
#[test]
fn the_users_own_templates_have_their_values_under_custom() {
    let project = namespaced();
    generate(&project, "");
    project.write(
        "dist/chart/templates/backup.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: backup\ndata:\n  bucket: {{ .Values.custom.backup.bucket | quote }}\n",
    );
    let values = project.read("dist/chart/values.yaml");
    assert!(values.contains("\ncustom: {}\n"), "{values}");
    project.write(
        "dist/chart/values.yaml",
        &values.replace(
            "\ncustom: {}\n",
            "\ncustom:\n  backup:\n    bucket: s3://backups\n",
        ),
    );
    generate(&project, "");
    let Some(lint) = helm_ok(&project, &["lint", "--strict", CHART]) else {
        return;
    };
    assert!(lint.contains("0 chart(s) failed"), "{lint}");
    let rendered = helm_ok(&project, &["template", "team-operator", CHART]).unwrap();
    assert!(rendered.contains("bucket: \"s3://backups\""), "{rendered}");
    let output = helm::run(
        helm::helm().unwrap(),
        &project.root,
        &["template", "team-operator", CHART, "--set", "custm.x=1"],
    );
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("additional properties 'custm' not allowed"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every binding the chart renders names a role it renders too, with metrics on and off.
#[test]
fn the_metrics_review_role_and_its_binding_are_rendered_together() {
    let project = cluster_wide();
    generate(&project, "");
    for enabled in [true, false] {
        let set = format!("metrics.enabled={enabled}");
        let args = [
            "template",
            "demo",
            CHART,
            "--namespace",
            "demo-ns",
            "--set",
            &set,
        ];
        let Some(rendered) = helm_ok(&project, &args) else {
            return;
        };
        let objects = objects(&rendered);
        let review_objects: Vec<_> = objects
            .keys()
            .filter(|(_, name)| name.contains("metrics-auth"))
            .collect();
        assert_eq!(
            review_objects.len(),
            if enabled { 2 } else { 0 },
            "{review_objects:?}"
        );
        for ((kind, name), binding) in &objects {
            if !kind.ends_with("RoleBinding") {
                continue;
            }
            let role = (
                binding["roleRef"]["kind"].as_str().unwrap().to_owned(),
                binding["roleRef"]["name"].as_str().unwrap().to_owned(),
            );
            assert!(
                objects.contains_key(&role),
                "{kind} {name} (metrics.enabled={enabled}) binds {role:?}, which the chart does not render"
            );
        }
    }
}

#[test]
fn values_reach_the_objects() {
    let project = cluster_wide();
    generate(&project, "");
    let Some(rendered) = helm_ok(
        &project,
        &[
            "template",
            "shop",
            CHART,
            "--namespace",
            "shop-ns",
            "--set",
            "webhooks.certificate.mode=cert-manager",
            "--set",
            "serviceAccount.create=false",
            "--set",
            "serviceAccount.name=operator",
            "--set",
            "logging.level=debug",
            "--set",
            "replicaCount=2",
            "--set",
            "leaderElection.enabled=false",
            "--set",
            "metrics.serviceMonitor.enabled=true",
            "--set",
            "image.repository=registry.example.com/demo",
            "--set",
            "image.digest=sha256:0123456789abcdef0123456789abcdef",
            "--set",
            "crds.install=false",
            "--set",
            "networkPolicy.enabled=false",
            "--set",
            "rbac.helpers=false",
            "--set-json",
            r#"nodeSelector={"disk":"ssd"}"#,
        ],
    ) else {
        return;
    };
    let objects = objects(&rendered);
    let kinds: Vec<&str> = objects.keys().map(|(kind, _)| kind.as_str()).collect();
    assert!(!kinds.contains(&"CustomResourceDefinition"), "{kinds:?}");
    assert!(!kinds.contains(&"NetworkPolicy"), "{kinds:?}");
    assert!(!kinds.contains(&"ServiceAccount"), "{kinds:?}");
    assert!(
        kinds.contains(&"ServiceMonitor")
            && kinds.contains(&"PrometheusRule")
            && kinds.contains(&"Certificate"),
        "{kinds:?}"
    );
    let rule = &objects[&(
        "PrometheusRule".to_owned(),
        "shop-demo-operator-controller-manager-alerts".to_owned(),
    )];
    let summary = rule["spec"]["groups"][1]["rules"][0]["annotations"]["summary"].as_str();
    assert_eq!(
        summary,
        Some("{{ $labels.controller }} reconciles fail"),
        "{rule}"
    );
    assert!(
        !objects.contains_key(&(
            "ClusterRole".into(),
            "shop-demo-operator-db-mysqlcluster-editor-role".into()
        )),
        "{:?}",
        objects.keys()
    );
    let deployment = &objects[&(
        "Deployment".to_owned(),
        "shop-demo-operator-controller-manager".to_owned(),
    )];
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(deployment["metadata"]["namespace"], "shop-ns");
    assert_eq!(pod["serviceAccountName"], "operator");
    assert_eq!(pod["nodeSelector"], serde_json::json!({"disk": "ssd"}));
    assert_eq!(
        container["image"],
        "registry.example.com/demo@sha256:0123456789abcdef0123456789abcdef"
    );
    assert!(
        !container["args"]
            .as_array()
            .unwrap()
            .contains(&"--leader-elect".into())
    );
    let env = container["env"].as_array().unwrap();
    assert!(
        env.contains(&serde_json::json!({"name": "RUST_LOG", "value": "debug"})),
        "{env:?}"
    );
    assert!(env.contains(&serde_json::json!({"name": "WEBHOOK_CERT_DIR", "value": "/tmp/k8s-webhook-server/serving-certs"})), "{env:?}");
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        "shop-demo-operator-webhook-server-cert"
    );
    let webhook = &objects[&(
        "ValidatingWebhookConfiguration".to_owned(),
        "shop-demo-operator-validating-webhook-configuration".to_owned(),
    )];
    assert_eq!(
        webhook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "shop-ns/shop-demo-operator-serving-cert"
    );
    assert_eq!(
        webhook["webhooks"][0]["clientConfig"]["service"]["namespace"],
        "shop-ns"
    );
    assert!(
        !objects.contains_key(&(
            "Role".into(),
            "shop-demo-operator-webhook-certificate-role".into()
        )),
        "cert-manager replaces the manager's own certificate"
    );
    let binding = &objects[&(
        "ClusterRoleBinding".to_owned(),
        "shop-demo-operator-manager-rolebinding".to_owned(),
    )];
    assert_eq!(binding["subjects"][0]["name"], "operator");
    assert_eq!(binding["subjects"][0]["namespace"], "shop-ns");
}

#[test]
fn the_makefile_makes_lints_deploys_and_uninstalls_the_chart() {
    let project = namespaced();
    let help = project.make("help");
    for target in ["helm ", "helm-lint ", "helm-deploy ", "helm-uninstall "] {
        assert!(help.contains(&format!("  {target}")), "{target}:\n{help}");
    }
    // `-o manifests`: the CRDs are written already, and building crdgen takes minutes.
    project.make("-o manifests helm");
    assert!(project.root.join("dist/chart/values.schema.json").is_file());
    if let Some(helm) = helm::helm() {
        let lint = project.make(&format!("-o manifests helm-lint HELM={}", helm.display()));
        assert!(lint.contains("0 chart(s) failed"), "{lint}");
    }
    // What helm-deploy and helm-uninstall would run, with a registry's port in IMG.
    let deploy = project
        .make("-n -o manifests -o helm helm-deploy IMG=registry.example.com:5000/team/op:1.2.3");
    assert!(
        deploy.contains("helm upgrade --install team-operator dist/chart --namespace team-operator-system --create-namespace"),
        "{deploy}"
    );
    assert!(
        deploy.contains(
            "--set image.repository=registry.example.com:5000/team/op --set image.tag=1.2.3"
        ),
        "{deploy}"
    );
    let uninstall = project.make("-n helm-uninstall ignore-not-found=true");
    assert!(
        uninstall.contains(
            "helm uninstall team-operator --namespace team-operator-system --ignore-not-found"
        ),
        "{uninstall}"
    );
}

#[test]
fn ci_checks_and_lints_the_chart_once_there_is_one() {
    let project = namespaced();
    assert_eq!(
        project.ci_step("check", "Helm chart is up to date"),
        "opgen generate helm --check"
    );
    assert_eq!(
        project.ci_step("check", "Helm lint"),
        "helm lint --strict dist/chart"
    );
    let workflow: Value =
        serde_saphyr::from_str(&project.read(".github/workflows/ci.yml")).unwrap();
    let steps = workflow["jobs"]["check"]["steps"].as_array().unwrap();
    let helm_steps: Vec<&Value> = steps
        .iter()
        .filter(|step| {
            step["name"].as_str().is_some_and(|n| n.starts_with("Helm"))
                || step["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("azure/setup-helm"))
        })
        .collect();
    assert_eq!(helm_steps.len(), 3);
    for step in &helm_steps {
        assert_eq!(
            step["if"], "hashFiles('dist/chart/Chart.yaml') != ''",
            "{step}"
        );
    }
    // The project's CI lints with the release these tests prove the chart with.
    let setup = helm_steps
        .iter()
        .find(|step| step["uses"].is_string())
        .unwrap();
    assert_eq!(setup["with"]["version"], helm::VERSION, "{setup}");
    assert!(helm::MODULE.ends_with(&format!("@{}", helm::VERSION)));
}

#[test]
fn update_names_the_values_a_newer_chart_adds() {
    let project = namespaced();
    generate(&project, "");
    let values = project.read("dist/chart/values.yaml");
    let (kept, _) = values.split_once("\ncrds:").unwrap();
    project.write("dist/chart/values.yaml", kept);
    let assert = project.opgen().arg("update").assert().success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("this opgen's chart has values it lacks, which take their defaults: crds"),
        "{stderr}"
    );
    assert_eq!(project.read("dist/chart/values.yaml"), kept);

    // A values.yaml that does not parse is named, and the update still happens.
    project.write("dist/chart/values.yaml", "image: [\n");
    let assert = project.opgen().arg("update").assert().success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("dist/chart/values.yaml was not compared with this opgen's chart: dist/chart/values.yaml is not valid YAML"),
        "{stderr}"
    );
}
