//! Prometheus metrics of the controllers, served on /metrics in the OpenMetrics text format.
//!
//! Every series carries a `controller` label so one dashboard covers all kinds. Failure
//! reasons are a label too: keep them to a small fixed set (an error variant name, not the
//! message), or the number of series grows without bound.

use ::std::time::Instant;

use ::prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        histogram::{Histogram, exponential_buckets},
    },
    registry::{Registry, Unit},
};

/// Content type of the OpenMetrics text exposition that [`Metrics::encode`] produces.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    controller: String,
    reason: String,
}

type DurationFamily = Family<ControllerLabels, Histogram, fn() -> Histogram>;

/// The registry and the metrics every controller records into; shared through the Context.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reconciliations: Family<ControllerLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    duration: DurationFamily,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with every metric at zero, prefixed with the manager's name.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix(metric_prefix());

        let reconciliations = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "reconciliations",
            "Reconciliations started",
            reconciliations.clone(),
        );

        let failures = Family::<FailureLabels, Counter>::default();
        registry.register(
            "reconcile_failures",
            "Reconciliations that returned an error",
            failures.clone(),
        );

        // 5 ms to ~10 s: a reconcile is a handful of API calls; slower ones are outliers anyway.
        let duration: DurationFamily =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.005, 2.0, 12)));
        registry.register_with_unit(
            "reconcile_duration",
            "Time spent in one reconciliation",
            Unit::Seconds,
            duration.clone(),
        );

        Self {
            registry,
            reconciliations,
            failures,
            duration,
        }
    }

    /// Renders every metric for a scrape of /metrics.
    pub fn encode(&self) -> Result<String, ::std::fmt::Error> {
        let mut body = String::new();
        encode(&mut body, &self.registry)?;
        Ok(body)
    }

    /// Counts a reconcile of `controller` and returns a guard that records its duration
    /// in the histogram when dropped.
    pub fn reconcile(&self, controller: &str) -> ReconcileTimer {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        self.reconciliations.get_or_create(&labels).inc();
        ReconcileTimer {
            histogram: self.duration.get_or_create_owned(&labels),
            start: Instant::now(),
        }
    }

    /// Counts a failed reconcile of `controller`, labelled with a short error reason.
    pub fn reconcile_failure(&self, controller: &str, reason: &str) {
        let labels = FailureLabels {
            controller: controller.to_owned(),
            reason: reason.to_owned(),
        };
        self.failures.get_or_create(&labels).inc();
    }
}

/// Records the time since [`Metrics::reconcile`] when dropped, so every exit path of a
/// reconcile (including `?`) is measured.
#[must_use = "the duration is recorded when the timer drops: bind it with `let _timer = ...`"]
pub struct ReconcileTimer {
    histogram: Histogram,
    start: Instant,
}

impl Drop for ReconcileTimer {
    fn drop(&mut self) {
        self.histogram.observe(self.start.elapsed().as_secs_f64());
    }
}

/// The prefix of every metric: the manager's name as a Rust identifier, as the crate name of
/// the project's package is.
fn metric_prefix() -> String {
    crate::context::field_manager().replace('-', "_")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The exposition text with the crate's metric prefix written `PREFIX`, so that the
    /// assertions read the same whatever the project is called.
    pub(crate) fn without_prefix(body: String) -> String {
        body.replace(&metric_prefix(), "PREFIX")
    }

    #[test]
    fn records_reconciles_failures_and_durations_per_controller() {
        let metrics = Metrics::new();

        drop(metrics.reconcile("mysqlcluster"));
        {
            let _timer = metrics.reconcile("mysqlcluster");
            metrics.reconcile_failure("mysqlcluster", "ApplyFailed");
        }
        let timer = metrics.reconcile("backuppolicy");

        let body = without_prefix(metrics.encode().unwrap());
        let has = |line: &str| body.lines().any(|l| l == line);

        assert!(has("# TYPE PREFIX_reconciliations counter"), "{body}");
        assert!(
            has(r#"PREFIX_reconciliations_total{controller="mysqlcluster"} 2"#),
            "{body}"
        );
        assert!(
            has(r#"PREFIX_reconciliations_total{controller="backuppolicy"} 1"#),
            "{body}"
        );
        assert!(
            has(
                r#"PREFIX_reconcile_failures_total{controller="mysqlcluster",reason="ApplyFailed"} 1"#
            ),
            "{body}"
        );
        assert!(
            has("# TYPE PREFIX_reconcile_duration_seconds histogram"),
            "{body}"
        );
        assert!(
            has("# UNIT PREFIX_reconcile_duration_seconds seconds"),
            "{body}"
        );
        assert!(
            has(r#"PREFIX_reconcile_duration_seconds_count{controller="mysqlcluster"} 2"#),
            "{body}"
        );
        assert!(
            has(
                r#"PREFIX_reconcile_duration_seconds_bucket{le="+Inf",controller="mysqlcluster"} 2"#
            ),
            "{body}"
        );
        // The backuppolicy reconcile is counted at once and timed when its guard drops.
        assert!(
            has(r#"PREFIX_reconcile_duration_seconds_count{controller="backuppolicy"} 0"#),
            "{body}"
        );
        drop(timer);
        let body = without_prefix(metrics.encode().unwrap());
        assert!(
            body.contains(
                r#"PREFIX_reconcile_duration_seconds_count{controller="backuppolicy"} 1"#
            ),
            "{body}"
        );
        assert!(body.ends_with("# EOF\n"), "{body}");
    }

    #[test]
    fn failures_are_counted_per_reason() {
        let metrics = Metrics::new();
        metrics.reconcile_failure("mysqlcluster", "ApplyFailed");
        metrics.reconcile_failure("mysqlcluster", "ApplyFailed");
        metrics.reconcile_failure("mysqlcluster", "NotFound");

        let body = metrics.encode().unwrap();
        assert!(
            body.contains(r#"{controller="mysqlcluster",reason="ApplyFailed"} 2"#),
            "{body}"
        );
        assert!(
            body.contains(r#"{controller="mysqlcluster",reason="NotFound"} 1"#),
            "{body}"
        );
    }
}
