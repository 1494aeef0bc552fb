//! Prints what a manager named by the first argument exports on /metrics before any
//! controller has recorded anything: the `# HELP`, `# TYPE` and `# UNIT` lines of every metric
//! family. opgen's tests check the queries of the dashboards and alerts it generates against
//! it, so that a query can only name a metric the runtime exports.

fn main() -> anyhow::Result<()> {
    let name = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: metric_families <manager name>"))?;
    opgen_runtime::context::set_field_manager(&name)?;
    let metrics = opgen_runtime::metrics::Metrics::new();
    print!("{}", metrics.encode()?);
    Ok(())
}
