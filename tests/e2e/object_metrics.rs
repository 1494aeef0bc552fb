//! The manager's /metrics after it has reconciled the samples: clean for Prometheus' linter,
//! and counting each kind's objects, and those not ready, as the API server has them.

use std::path::Path;

use serde_json::Value;

use crate::{
    common::{kubectl::Kubectl, operator::Operator, promtool, wait::wait_for},
    manifests::Crd,
    on_cluster::{SETTLE, Setup},
};

/// The conditions the manager reads readiness from, in its order (`metrics::READY_CONDITIONS`).
const READY_CONDITIONS: [&str; 2] = ["Ready", "Available"];

pub fn check(kubectl: &Kubectl, setup: &Setup, manager: &Operator, crds: &[Crd]) {
    let promtool = promtool::path().unwrap_or_else(|err| panic!("{err:#}"));
    let body = manager.metrics();
    // Its linter reads the body from stdin, in the classic text format only.
    let lint = promtool::run(
        &promtool,
        Path::new("."),
        &["check", "metrics"],
        Some(&body),
    );
    assert!(
        lint.status.success(),
        "promtool check metrics ({}):\n{}\n--- /metrics\n{body}",
        lint.status,
        promtool::text(&lint)
    );

    let prefix = setup.name.replace('-', "_");
    let namespace = setup.namespace();
    let not_ready = wait_for("the object gauges to match the API server", SETTLE, || {
        let body = manager.metrics();
        let mut not_ready = 0;
        for crd in crds {
            let listed = kubectl.try_json(&["get", &crd.name, "-n", &namespace, "-o", "json"])?;
            let objects = listed["items"].as_array().cloned().unwrap_or_default();
            let expected = (
                objects.len(),
                objects.iter().filter(|o| is_not_ready(o)).count(),
            );
            let controller = crd.controller();
            let served = (
                gauge(&body, &format!("{prefix}_objects"), &controller)?,
                gauge(&body, &format!("{prefix}_objects_not_ready"), &controller)?,
            );
            if served != expected {
                return Err(format!(
                    "{controller}: (objects, not ready) {served:?} on /metrics, {expected:?} on the API server"
                ));
            }
            not_ready += expected.1;
        }
        Ok(not_ready)
    });
    // Operands never become Available here: no kubelet runs their pods.
    assert!(
        not_ready > 0,
        "no object was not ready: the not-ready gauge went untested"
    );
}

/// Whether the first of the ready conditions the object has is not True; an object without
/// one is not counted as not ready.
fn is_not_ready(object: &Value) -> bool {
    let conditions = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    READY_CONDITIONS
        .iter()
        .find_map(|wanted| conditions.iter().find(|c| c["type"] == *wanted))
        .is_some_and(|condition| condition["status"] != "True")
}

/// The value of `name{controller="…"}` in a Prometheus text body.
fn gauge(body: &str, name: &str, controller: &str) -> Result<usize, String> {
    let series = format!("{name}{{controller=\"{controller}\"}} ");
    let line = body
        .lines()
        .find(|line| line.starts_with(&series))
        .ok_or_else(|| format!("no {series}on /metrics"))?;
    line[series.len()..]
        .trim()
        .parse()
        .map_err(|err| format!("{line}: {err}"))
}
