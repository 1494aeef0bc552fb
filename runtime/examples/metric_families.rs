//! Prints what a manager named by the first argument exports on /metrics once each of its
//! metrics holds a series: every family's `# HELP`, `# TYPE` and `# UNIT` lines, and one sample
//! of each (a family without series is not printed). opgen's tests check the queries of the
//! dashboards and alerts it generates against it, so that a query can only name a metric the
//! runtime exports.

use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
use kube::runtime::reflector::store;
use opgen_runtime::operand::Workload as _;

fn main() -> anyhow::Result<()> {
    let name = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: metric_families <manager name>"))?;
    opgen_runtime::identity::set_field_manager(&name)?;
    let metrics = opgen_runtime::metrics::Metrics::new();
    let controller = "example.core";
    drop(metrics.reconcile(controller));
    metrics.reconcile_failure(controller, "Example");
    metrics.reconcile_timeout(controller);
    metrics.set_build_info("0.0.0", "v0.0.0");
    let (objects, _objects_writer) = store::<ConfigMap>();
    metrics.count_objects(controller, objects);
    let (workloads, _workloads_writer) = store::<Deployment>();
    metrics.count_replicas(controller, workloads, |deployment| {
        (deployment.replicas(), deployment.progress().ready)
    });
    print!("{}", metrics.encode()?);
    Ok(())
}
