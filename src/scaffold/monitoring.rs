//! The monitoring files of a project, rebuilt from `PROJECT` like every generated file: the
//! alert rules (a PrometheusRule for kustomize, the same groups as a plain rule file for
//! promtool), promtool's unit tests of them, and the Grafana dashboard.

use serde_json::{Value, json};

use super::values::ProjectValues;
use crate::{
    plan::{GENERATED_MARKER, Owner, PlannedFile},
    templates::Templates,
};

/// The PrometheusRule that `config/prometheus` installs.
pub const RULE_FILE: &str = "config/prometheus/rules.yaml";
/// The same rule groups as a Prometheus rule file, which promtool reads.
pub const PROMTOOL_RULES: &str = "config/prometheus/promtool/rules.yaml";
/// promtool's unit tests of [`PROMTOOL_RULES`].
pub const PROMTOOL_TESTS: &str = "config/prometheus/promtool/rules_test.yaml";
/// The dashboard of the controllers' health, one row per kind.
pub const DASHBOARD: &str = "grafana/controller-health.json";

/// The monitoring files of the project whose values are `values`.
pub fn files(values: &ProjectValues) -> anyhow::Result<Vec<PlannedFile>> {
    let templates = Templates::get();
    let groups = templates.render("monitoring/rule_groups.yaml", values)?;
    let header = |purpose: &str| format!("# {GENERATED_MARKER}\n# {purpose}\n");
    let rule = format!(
        "{}{}spec:\n{}",
        header(
            "Rewritten from PROJECT by every opgen command. The manager's alerts, for the Prometheus\n# Operator: the groups of promtool/rules.yaml, which promtool/rules_test.yaml tests."
        ),
        templates.render("monitoring/prometheus_rule.yaml", values)?,
        indent(&groups)
    );
    let plain = format!(
        "{}{groups}",
        header(
            "Rewritten from PROJECT by every opgen command. The alerts of ../rules.yaml as a Prometheus\n# rule file: `promtool check rules rules.yaml`, `promtool test rules rules_test.yaml`."
        )
    );
    Ok(vec![
        PlannedFile::new(RULE_FILE, rule, Owner::Generated),
        PlannedFile::new(PROMTOOL_RULES, plain, Owner::Generated),
        PlannedFile::new(
            PROMTOOL_TESTS,
            format!(
                "{}{}",
                header(
                    "Rewritten from PROJECT by every opgen command. promtool's unit tests of rules.yaml: series\n# fed minute by minute, and the alerts that must fire, or not, at given times:\n# `promtool test rules rules_test.yaml` in this directory."
                ),
                templates.render("monitoring/rules_test.yaml", values)?
            ),
            Owner::Generated,
        ),
        PlannedFile::new(DASHBOARD, dashboard(values)?, Owner::Generated),
    ])
}

/// A panel of the dashboard: its title, its type, the unit of its values, and its queries with
/// their legends.
type PanelSpec<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, String)>);

/// The Grafana dashboard of the controllers' health: a row for the manager, then one row per
/// kind. Every query uses the manager's metrics only (tests/monitoring.rs checks them against
/// what the runtime exports).
fn dashboard(values: &ProjectValues) -> anyhow::Result<String> {
    let monitoring = &values.monitoring;
    let m = &monitoring.metric_prefix;
    let datasource = json!({"type": "prometheus", "uid": "${datasource}"});
    let mut panels = Vec::new();
    let mut y = 0;
    let row = |title: String, panels: &mut Vec<Value>, y: &mut u32| {
        panels.push(json!({
            "type": "row",
            "title": title,
            "collapsed": false,
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": *y},
            "panels": [],
        }));
        *y += 1;
    };
    let panel =
        |title: &str, kind: &str, unit: &str, targets: &[(&str, String)], x: u32, y: u32| {
            json!({
                "type": kind,
                "title": title,
                "datasource": datasource,
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "gridPos": {"h": 8, "w": 6, "x": x, "y": y},
                "targets": targets
                    .iter()
                    .enumerate()
                    .map(|(i, (legend, expr))| json!({
                        "refId": ((b'A' + i as u8) as char).to_string(),
                        "datasource": datasource,
                        "expr": expr,
                        "legendFormat": legend,
                    }))
                    .collect::<Vec<_>>(),
            })
        };
    let job = &monitoring.job;
    row("Manager".to_owned(), &mut panels, &mut y);
    let manager: [PanelSpec; 4] = [
        (
            "Replicas up",
            "stat",
            "short",
            vec![(
                "up",
                format!("sum(up{{job=\"{job}\", namespace=\"$namespace\"}})"),
            )],
        ),
        (
            "Leader",
            "stat",
            "short",
            vec![(
                "leaders",
                format!("sum({m}_leader{{namespace=\"$namespace\"}})"),
            )],
        ),
        (
            "Reconciles per second",
            "timeseries",
            "ops",
            vec![(
                "{{controller}}",
                format!(
                    "sum by (controller) (rate({m}_reconciliations_total{{namespace=\"$namespace\"}}[5m]))"
                ),
            )],
        ),
        (
            "Versions",
            "table",
            "short",
            vec![(
                "",
                format!(
                    "max by (version, runtime_version, kubernetes_version) ({m}_build_info{{namespace=\"$namespace\"}})"
                ),
            )],
        ),
    ];
    for (i, (title, kind, unit, targets)) in manager.iter().enumerate() {
        panels.push(panel(title, kind, unit, targets, 6 * i as u32, y));
    }
    y += 8;
    for controller in &monitoring.controllers {
        row(
            format!("{} ({})", controller.kind, controller.label),
            &mut panels,
            &mut y,
        );
        let selector = format!(
            "{{namespace=\"$namespace\", controller=\"{}\"}}",
            controller.label
        );
        let mut kind_panels: Vec<PanelSpec> = vec![
            (
                "Reconciles and failures per second",
                "timeseries",
                "ops",
                vec![
                    (
                        "reconciles",
                        format!("sum(rate({m}_reconciliations_total{selector}[5m]))"),
                    ),
                    (
                        "failures: {{reason}}",
                        format!(
                            "sum by (reason) (rate({m}_reconcile_failures_total{selector}[5m]))"
                        ),
                    ),
                    (
                        "timeouts",
                        format!("sum(rate({m}_reconcile_timeouts_total{selector}[5m]))"),
                    ),
                ],
            ),
            (
                "Reconcile time",
                "timeseries",
                "s",
                vec![
                    (
                        "p50",
                        format!(
                            "histogram_quantile(0.5, sum by (le) (rate({m}_reconcile_duration_seconds_bucket{selector}[5m])))"
                        ),
                    ),
                    (
                        "p99",
                        format!(
                            "histogram_quantile(0.99, sum by (le) (rate({m}_reconcile_duration_seconds_bucket{selector}[5m])))"
                        ),
                    ),
                ],
            ),
            (
                "Objects",
                "timeseries",
                "short",
                vec![
                    ("objects", format!("max({m}_objects{selector})")),
                    ("not ready", format!("max({m}_objects_not_ready{selector})")),
                ],
            ),
        ];
        if controller.replicas {
            kind_panels.push((
                "Operand pods",
                "timeseries",
                "short",
                vec![
                    (
                        "desired",
                        format!("max({m}_operand_replicas_desired{selector})"),
                    ),
                    (
                        "ready",
                        format!("max({m}_operand_replicas_ready{selector})"),
                    ),
                ],
            ));
        }
        for (i, (title, kind, unit, targets)) in kind_panels.iter().enumerate() {
            panels.push(panel(title, kind, unit, targets, 6 * i as u32, y));
        }
        y += 8;
    }
    for (id, panel) in panels.iter_mut().enumerate() {
        panel["id"] = json!(id + 1);
    }
    let dashboard = json!({
        "title": format!("{} controllers", values.name),
        "uid": dashboard_uid(&values.name),
        "description": format!(
            "{GENERATED_MARKER} Rewritten from PROJECT by every opgen command: the health of the {} manager's controllers, one row per kind.",
            values.name
        ),
        "tags": ["opgen", values.name],
        "editable": true,
        "schemaVersion": 39,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [
            {
                "name": "datasource",
                "label": "Data source",
                "type": "datasource",
                "query": "prometheus",
            },
            {
                "name": "namespace",
                "label": "Namespace",
                "type": "query",
                "datasource": datasource,
                "query": format!("label_values({m}_build_info, namespace)"),
                "refresh": 2,
            },
        ]},
        "panels": panels,
    });
    Ok(serde_json::to_string_pretty(&dashboard)? + "\n")
}

/// A dashboard's uid: at most 40 characters, the project's name or its start.
fn dashboard_uid(name: &str) -> String {
    let uid = format!("{name}-controllers");
    if uid.len() <= 40 {
        uid
    } else {
        name.chars().take(40).collect()
    }
}

/// `text` indented by two spaces, blank lines left empty.
fn indent(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                "\n".to_owned()
            } else {
                format!("  {line}\n")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indenting_keeps_blank_lines_empty() {
        assert_eq!(indent("a:\n\n- b\n"), "  a:\n\n  - b\n");
    }
}
