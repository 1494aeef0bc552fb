//! The generated alerts and dashboard: promtool checks the rules and runs their unit tests,
//! and the files follow `PROJECT` as kinds are added.

mod common;

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Command,
};

use common::{Project, promtool};
use serde_json::Value;

const RULE: &str = "config/prometheus/rules.yaml";
const PROMTOOL_DIR: &str = "config/prometheus/promtool";

/// A project with a plain kind, an operand with replicas, and a built-in kind.
fn project() -> Project {
    let project = Project::init("demo-operator", "");
    project.create_api("--group cache --version v1 --kind Memcached");
    project.create_api(
        "--group db --version v1alpha1 --kind MySQLCluster --image mysql:8.4 --workload statefulset",
    );
    project.create_api("--group core --version v1 --kind ConfigMap");
    project
}

fn promtool_binary() -> PathBuf {
    promtool::path().unwrap_or_else(|err| panic!("{err:#}"))
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|err| panic!("not YAML ({err}):\n{text}"))
}

/// `promtool check rules` and `promtool test rules` pass on what opgen generates, with and
/// without kinds.
#[test]
fn promtool_checks_the_rules_and_their_tests_pass() {
    let promtool = promtool_binary();
    let with_kinds = project();
    let without_kinds = Project::init("empty-operator", "");
    for (project, rules) in [(&with_kinds, 7), (&without_kinds, 6)] {
        let dir = project.root.join(PROMTOOL_DIR);
        let checked = promtool::ok(&promtool, &dir, &["check", "rules", "rules.yaml"]);
        assert!(
            checked.contains(&format!("SUCCESS: {rules} rules found")),
            "{checked}"
        );
        let tested = promtool::ok(&promtool, &dir, &["test", "rules", "rules_test.yaml"]);
        assert!(tested.contains("SUCCESS"), "{tested}");
    }
}

/// The unit tests see the alerts' thresholds: an alert that would fire too late, never, or
/// with other words fails them.
#[test]
fn the_unit_tests_fail_when_an_alert_changes() {
    let promtool = promtool_binary();
    let project = project();
    let dir = project.root.join(PROMTOOL_DIR);
    let original = project.read(&format!("{PROMTOOL_DIR}/rules.yaml"));
    for (from, to, alert) in [
        (
            "== 0\n    for: 5m",
            "== 0\n    for: 30m",
            "DemoOperatorDown",
        ),
        ("> 0.1", "> 0.9", "DemoOperatorReconcileErrors"),
        ("> 5\n", "> 6\n", "DemoOperatorReconcileSlow"),
        (
            "_objects_not_ready) > 0",
            "_objects_not_ready) > 5",
            "DemoOperatorObjectsNotReady",
        ),
        (
            "_operand_replicas_ready)\n",
            "_operand_replicas_desired)\n",
            "DemoOperatorOperandDegraded",
        ),
        ("_leader) == 0", "_leader) == 1", "DemoOperatorNoLeader"),
        (
            "the replica is down",
            "the replica is gone",
            "DemoOperatorDown",
        ),
    ] {
        assert!(
            original.contains(from),
            "{from:?} is not in the rules:\n{original}"
        );
        project.write(
            &format!("{PROMTOOL_DIR}/rules.yaml"),
            &original.replacen(from, to, 1),
        );
        let output = promtool::run(&promtool, &dir, &["test", "rules", "rules_test.yaml"], None);
        let text = promtool::text(&output);
        assert!(
            !output.status.success(),
            "{from:?} → {to:?} passed:\n{text}"
        );
        assert!(
            text.contains(alert),
            "{from:?} → {to:?} did not fail {alert}:\n{text}"
        );
    }
}

/// The PrometheusRule kustomize installs holds exactly the groups promtool tests.
#[test]
fn the_prometheus_rule_holds_the_tested_groups() {
    let project = project();
    let rule = yaml(&project.read(RULE));
    assert_eq!(rule["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(rule["kind"], "PrometheusRule");
    assert_eq!(rule["metadata"]["name"], "controller-manager-alerts");
    let plain = yaml(&project.read(&format!("{PROMTOOL_DIR}/rules.yaml")));
    assert_eq!(rule["spec"], plain);
    let kustomization = yaml(&project.read("config/prometheus/kustomization.yaml"));
    assert_eq!(
        kustomization["resources"],
        serde_json::json!(["monitor.yaml", "rules.yaml"])
    );
}

/// Every alert says what it is about and where its runbook is: a section of
/// docs/monitoring.md.
#[test]
fn every_alert_has_a_summary_a_description_and_a_runbook_section() {
    let project = project();
    let plain = yaml(&project.read(&format!("{PROMTOOL_DIR}/rules.yaml")));
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/monitoring.md"))
            .unwrap();
    let mut alerts = Vec::new();
    for group in plain["groups"].as_array().unwrap() {
        for rule in group["rules"].as_array().unwrap() {
            let name = rule["alert"].as_str().unwrap();
            alerts.push(name.to_owned());
            let annotations = &rule["annotations"];
            for key in ["summary", "description"] {
                assert!(
                    annotations[key]
                        .as_str()
                        .is_some_and(|text| text.len() > 20),
                    "{name} has no {key}"
                );
            }
            let url = annotations["runbook_url"].as_str().unwrap();
            let (page, anchor) = url.split_once('#').unwrap();
            assert_eq!(
                page,
                format!(
                    "https://github.com/opgen-rs/opgen/blob/v{}/docs/monitoring.md",
                    env!("CARGO_PKG_VERSION")
                )
            );
            let section = name.strip_prefix("DemoOperator").unwrap();
            assert_eq!(anchor, section.to_lowercase(), "{name}");
            assert!(
                docs.contains(&format!("\n#### {section}\n")),
                "docs/monitoring.md has no runbook section for {name}"
            );
            let severity = rule["labels"]["severity"].as_str().unwrap();
            assert!(["critical", "warning"].contains(&severity), "{name}");
        }
    }
    assert_eq!(
        alerts,
        [
            "DemoOperatorDown",
            "DemoOperatorAbsent",
            "DemoOperatorNoLeader",
            "DemoOperatorReconcileErrors",
            "DemoOperatorReconcileSlow",
            "DemoOperatorObjectsNotReady",
            "DemoOperatorOperandDegraded",
        ]
    );
}

/// Each kind added gets its unit tests, and the operand alert comes with the first operand
/// kind that keeps replicas.
#[test]
fn the_rules_and_their_tests_follow_the_kinds() {
    let project = Project::init("demo-operator", "");
    let tests = || project.read(&format!("{PROMTOOL_DIR}/rules_test.yaml"));
    let rules = || project.read(RULE);
    assert!(!tests().contains("controller=\""), "{}", tests());
    project.create_api("--group cache --version v1 --kind Memcached");
    assert!(
        tests().contains("controller=\"memcached.cache\""),
        "{}",
        tests()
    );
    assert!(!rules().contains("OperandDegraded"), "{}", rules());
    project
        .create_api("--group ops --version v1 --kind Backup --image busybox:1.37 --workload job");
    assert!(tests().contains("controller=\"backup.ops\""), "{}", tests());
    assert!(
        !rules().contains("OperandDegraded"),
        "a Job keeps no replicas"
    );
    project.create_api("--group web --version v1 --kind Site --image nginx:1.27");
    assert!(
        rules().contains("DemoOperatorOperandDegraded"),
        "{}",
        rules()
    );
    assert!(
        tests().contains(
            "_operand_replicas_ready{namespace=\"demo-operator-system\", controller=\"site.web\"}"
        ),
        "{}",
        tests()
    );
}

/// The metrics a manager named `name` exports, from the runtime's own encoding of its registry
/// (`runtime/examples/metric_families.rs`, one series in each): the samples' names, as
/// queries use them.
fn exported_metrics(name: &str) -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The directory, settings and features of tests/runtime_crate.rs, whose `cargo test`
    // builds this example too: the crate and its dependencies are built once for both.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("runtime-crate");
    let output = Command::new(env!("CARGO"))
        .args([
            "run",
            "--quiet",
            "-p",
            "opgen-runtime",
            "--all-features",
            "--example",
            "metric_families",
            "--",
            name,
        ])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", &target)
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37")
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .expect("cargo runs");
    let body = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the metric_families example failed:\n{body}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let names: BTreeSet<String> = body
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect();
    assert!(names.len() > 5, "too few metrics in:\n{body}");
    names
}

/// The metric names a PromQL expression reads: its identifiers, less functions and
/// aggregations (followed by `(`, `by` or `without`), keywords, label names (in matchers and `by`/`without` lists), strings, numbers and ranges.
fn metric_names(expr: &str) -> BTreeSet<String> {
    // Matchers, strings and ranges hold no metric name.
    let mut bare = String::new();
    let mut chars = expr.chars();
    while let Some(c) = chars.next() {
        let close = match c {
            '{' => Some('}'),
            '[' => Some(']'),
            '"' => Some('"'),
            _ => None,
        };
        match close {
            Some(close) => {
                bare.push(' ');
                for skipped in chars.by_ref() {
                    if skipped == close {
                        break;
                    }
                }
            }
            None => bare.push(c),
        }
    }
    let mut tokens: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in bare.chars().chain([' ']) {
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '.' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    let keywords = [
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "and",
        "or",
        "unless",
        "offset",
    ];
    let mut names = BTreeSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        let next = tokens.get(i + 1).map(String::as_str);
        if ["by", "without", "on", "ignoring"].contains(&token.as_str()) && next == Some("(") {
            while tokens.get(i).is_some_and(|t| t != ")") {
                i += 1;
            }
        } else if token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && !matches!(next, Some("(" | "by" | "without"))
            && !keywords.contains(&token.as_str())
        {
            names.insert(token.clone());
        }
        i += 1;
    }
    names
}

#[test]
fn metric_names_are_found_in_promql() {
    let expr = r#"histogram_quantile(0.99, sum by (namespace, le) (rate(a_seconds_bucket{controller="x.y", le=~"1|2"}[5m]))) > 5 and on (namespace) b_total / ignoring (le) c offset 5m"#;
    assert_eq!(
        metric_names(expr),
        BTreeSet::from(["a_seconds_bucket".into(), "b_total".into(), "c".into()])
    );
}

/// Prometheus' own series, which every scrape adds.
const SCRAPE_SERIES: [&str; 1] = ["up"];

/// Every query of the alerts and of the dashboard reads only what the manager exports, and
/// the dashboard shows every metric it exports.
#[test]
fn every_query_uses_metrics_the_manager_exports() {
    let project = project();
    let exported = exported_metrics("demo-operator");
    let known = |name: &str| exported.contains(name) || SCRAPE_SERIES.contains(&name);

    let plain = yaml(&project.read(&format!("{PROMTOOL_DIR}/rules.yaml")));
    for group in plain["groups"].as_array().unwrap() {
        for rule in group["rules"].as_array().unwrap() {
            let expr = rule["expr"].as_str().unwrap();
            let names = metric_names(expr);
            assert!(!names.is_empty(), "{expr}");
            for name in &names {
                assert!(
                    known(name),
                    "{} queries {name}, which is not exported: {exported:?}",
                    rule["alert"]
                );
            }
        }
    }

    let dashboard: Value = serde_json::from_str(&project.read(DASHBOARD)).unwrap();
    let mut shown = BTreeSet::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            let names = metric_names(expr);
            assert!(!names.is_empty(), "{expr}");
            for name in names {
                assert!(
                    known(&name),
                    "panel {} queries {name}, which is not exported: {exported:?}",
                    panel["title"]
                );
                shown.insert(name);
            }
        }
    }
    let query = dashboard["templating"]["list"][1]["query"]
        .as_str()
        .unwrap();
    let variable_metric = query
        .strip_prefix("label_values(")
        .and_then(|rest| rest.split(',').next())
        .unwrap();
    assert!(known(variable_metric), "{query}");
    let unshown: Vec<&String> = exported
        .iter()
        .filter(|name| !name.ends_with("_sum") && !name.ends_with("_count"))
        .filter(|name| !shown.contains(*name))
        .collect();
    assert!(
        unshown.is_empty(),
        "the dashboard shows none of {unshown:?}"
    );
}

const DASHBOARD: &str = "grafana/controller-health.json";

/// The dashboard has a row for the manager and one per kind, in the order of the controllers'
/// labels; each kind's panels query its own `controller` label.
#[test]
fn the_dashboard_has_a_row_per_kind() {
    let project = project();
    let dashboard: Value = serde_json::from_str(&project.read(DASHBOARD)).unwrap();
    assert!(
        dashboard["description"]
            .as_str()
            .unwrap()
            .contains("Code generated by opgen. DO NOT EDIT."),
        "opgen rewrites it"
    );
    let panels = dashboard["panels"].as_array().unwrap();
    let rows: Vec<&str> = panels
        .iter()
        .filter(|p| p["type"] == "row")
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            "Manager",
            "ConfigMap (configmap.core)",
            "Memcached (memcached.cache)",
            "MySQLCluster (mysqlcluster.db)"
        ]
    );
    let mut row = "";
    for panel in panels {
        if panel["type"] == "row" {
            row = panel["title"].as_str().unwrap();
            continue;
        }
        let label = row
            .split_once('(')
            .map(|(_, rest)| rest.trim_end_matches(')'));
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            if let Some(label) = label {
                assert!(
                    expr.contains(&format!("controller=\"{label}\"")),
                    "{row}: {expr}"
                );
            }
        }
    }
    let operand_panels = panels
        .iter()
        .filter(|p| p["title"] == "Operand pods")
        .count();
    assert_eq!(operand_panels, 1, "only MySQLCluster keeps replicas");
    let ids: BTreeSet<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
}
