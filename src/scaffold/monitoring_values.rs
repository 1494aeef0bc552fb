//! What the monitoring templates (the alert rules, their promtool tests, the dashboard) print
//! of a project: its metric and alert prefixes and the labels of its controllers.

use serde::Serialize;

use crate::{
    model::{Resource, Workload},
    project::Project,
};

/// What the monitoring templates print, computed once.
#[derive(Debug, Serialize)]
pub struct MonitoringValues {
    /// The prefix of every metric the manager exports: `demo_operator`.
    pub metric_prefix: String,
    /// The prefix of every alert's name: `DemoOperator`.
    pub alert_prefix: String,
    /// The `job` label Prometheus gives the manager's targets: the metrics Service's name as
    /// config/default renders it.
    pub job: String,
    /// The namespace config/default installs the manager in, for the unit tests' series.
    pub namespace: String,
    /// The runbooks' page: docs/monitoring.md of the opgen release that wrote the rules.
    pub runbooks: String,
    /// Every controller, by its `controller` label.
    pub controllers: Vec<ControllerMetrics>,
    /// Some controller keeps replicas (an operand kind with a Deployment or StatefulSet).
    pub operands: bool,
}

/// One controller as its metrics name it.
#[derive(Debug, Serialize)]
pub struct ControllerMetrics {
    /// The `controller` label: `mysqlcluster.db`.
    pub label: String,
    /// `MySQLCluster`
    pub kind: String,
    /// Its operand gauges exist: a Deployment or StatefulSet operand.
    pub replicas: bool,
}

impl MonitoringValues {
    pub fn new(project: &Project) -> Self {
        let name = &project.project_name;
        let mut controllers: Vec<ControllerMetrics> = project
            .kinds()
            .filter(|kind| project.versions_of(kind).any(|r| r.controller))
            .map(|kind| ControllerMetrics {
                label: controller_label(kind.kind.as_str(), &kind.qualified_group(&project.domain)),
                kind: kind.kind.to_string(),
                replicas: keeps_replicas(project, kind),
            })
            .collect();
        controllers.extend(
            project
                .foreign_kinds
                .iter()
                .map(|foreign| ControllerMetrics {
                    label: controller_label(foreign.kind.as_str(), foreign.group.as_str()),
                    kind: foreign.kind.as_str().to_owned(),
                    replicas: false,
                }),
        );
        controllers.sort_by(|a, b| a.label.cmp(&b.label));
        Self {
            metric_prefix: name.crate_ident(),
            alert_prefix: heck::ToUpperCamelCase::to_upper_camel_case(name.as_str()),
            job: name.deployed_name(crate::model::METRICS_SERVICE),
            namespace: name.system_namespace(),
            runbooks: concat!(
                env!("CARGO_PKG_REPOSITORY"),
                "/blob/v",
                env!("CARGO_PKG_VERSION"),
                "/docs/monitoring.md"
            )
            .to_owned(),
            operands: controllers.iter().any(|c| c.replicas),
            controllers,
        }
    }
}

/// The `controller` label the runtime gives the controller of `kind` in `group`: the kind and
/// the group's first part, in lowercase (`core` for the core group).
fn controller_label(kind: &str, group: &str) -> String {
    let short_group = match group.split('.').next() {
        Some("") | None => "core",
        Some(first) => first,
    };
    format!("{}.{short_group}", kind.to_lowercase())
}

fn keeps_replicas(project: &Project, kind: &Resource) -> bool {
    project
        .versions_of(kind)
        .filter_map(|r| r.operand.as_ref())
        .any(|operand| {
            matches!(
                operand.workload,
                Workload::Deployment | Workload::StatefulSet
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_labels_are_the_runtimes() {
        assert_eq!(
            controller_label("MySQLCluster", "db.example.com"),
            "mysqlcluster.db"
        );
        assert_eq!(controller_label("ConfigMap", ""), "configmap.core");
        assert_eq!(
            controller_label("Certificate", "cert-manager.io"),
            "certificate.cert-manager"
        );
    }
}
