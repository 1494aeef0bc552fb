//! Prometheus metrics of the controllers, served on /metrics in the OpenMetrics text format (or
//! the older Prometheus text format, see the `exposition` module).
//!
//! Every series carries a `controller` label so one dashboard covers all kinds. Failure
//! reasons are a label too: keep them to a small fixed set (an error variant name, not the
//! message), or the number of series grows without bound. No series is ever labelled with an
//! object's name or namespace: the gauges of objects and replicas are sums per kind.
//!
//! The gauges that describe what the controllers watch (objects, not-ready objects, operand
//! replicas) are counted from the controllers' caches when /metrics is scraped, not kept up
//! to date on every watch event: a scrape every 30 seconds costs one pass over each cache.

use ::std::sync::{Mutex, PoisonError};
use ::std::time::Instant;

use ::kube::Resource;
use ::kube::runtime::reflector::Store;
use ::prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::{Registry, Unit},
};
use ::serde::Serialize;

use crate::conditions::{AVAILABLE, READY};
use crate::identity::field_manager;

pub(crate) mod exposition;

/// The conditions that say an object is ready, in the order they are looked for: a plain
/// kind's controller maintains `Ready`, an operand's `Available`.
const READY_CONDITIONS: [&str; 2] = [READY, AVAILABLE];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    controller: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    /// The project's version (its package's).
    version: String,
    /// The version of this crate the project runs on.
    runtime_version: String,
    /// The API server's version, as it reports it (`v1.35.4`).
    kubernetes_version: String,
}

type DurationFamily = Family<ControllerLabels, Histogram, fn() -> Histogram>;

/// Sets gauges from a controller's cache: run before each scrape is encoded.
type Census = Box<dyn Fn() + Send + Sync>;

/// The registry and the metrics every controller records into; shared through the Context.
pub struct Metrics {
    registry: Registry,
    reconciliations: Family<ControllerLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    timeouts: Family<ControllerLabels, Counter>,
    duration: DurationFamily,
    objects: Family<ControllerLabels, Gauge>,
    objects_not_ready: Family<ControllerLabels, Gauge>,
    replicas_desired: Family<ControllerLabels, Gauge>,
    replicas_ready: Family<ControllerLabels, Gauge>,
    leader: Gauge,
    build_info: Family<BuildLabels, Gauge>,
    censuses: Mutex<Vec<Census>>,
}

impl ::std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        f.debug_struct("Metrics")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
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

        let timeouts = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "reconcile_timeouts",
            "Reconciliations cancelled because they ran longer than the reconcile timeout",
            timeouts.clone(),
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

        let objects = Family::<ControllerLabels, Gauge>::default();
        registry.register(
            "objects",
            "Objects of the kind the controller watches",
            objects.clone(),
        );
        let objects_not_ready = Family::<ControllerLabels, Gauge>::default();
        registry.register(
            "objects_not_ready",
            "Objects of the kind whose Ready (or Available) condition is not True",
            objects_not_ready.clone(),
        );
        let replicas_desired = Family::<ControllerLabels, Gauge>::default();
        registry.register(
            "operand_replicas_desired",
            "Pods the workloads of an operand kind ask for, summed over its objects",
            replicas_desired.clone(),
        );
        let replicas_ready = Family::<ControllerLabels, Gauge>::default();
        registry.register(
            "operand_replicas_ready",
            "Ready pods of the workloads of an operand kind, summed over its objects",
            replicas_ready.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "Whether this replica reconciles (1): it holds the leader-election Lease, or runs without leader election; 0 on a standby, warm or not",
            leader.clone(),
        );
        let build_info = Family::<BuildLabels, Gauge>::default();
        registry.register(
            "build_info",
            "Always 1: the versions of the manager, its runtime and the Kubernetes API server",
            build_info.clone(),
        );

        Self {
            registry,
            reconciliations,
            failures,
            timeouts,
            duration,
            objects,
            objects_not_ready,
            replicas_desired,
            replicas_ready,
            leader,
            build_info,
            censuses: Mutex::default(),
        }
    }

    /// Renders every metric for a scrape of /metrics, with the gauges of what the controllers
    /// watch counted now.
    pub fn encode(&self) -> Result<String, ::std::fmt::Error> {
        for census in self
            .censuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            census();
        }
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

    /// Counts a reconcile of `controller` cancelled because it ran longer than the reconcile
    /// timeout (it also counts as a failure, reason `timeout`).
    pub fn reconcile_timeout(&self, controller: &str) {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        self.timeouts.get_or_create(&labels).inc();
    }

    /// Counts, at each scrape, the objects in `store` (what `controller` watches) and those
    /// not ready: whose `Ready` condition, or without one `Available`, is not `True`. An
    /// object with neither condition (not yet reconciled, or of a kind whose controller
    /// reports none, such as a built-in kind's) is not counted as not ready.
    pub fn count_objects<K>(&self, controller: &str, store: Store<K>)
    where
        K: Resource<DynamicType = ()> + Serialize + Clone + Send + Sync + 'static,
    {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        let objects = self.objects.get_or_create_owned(&labels);
        let not_ready = self.objects_not_ready.get_or_create_owned(&labels);
        self.add_census(Box::new(move || {
            let state = store.state();
            let unready = state
                .iter()
                .filter(|obj| is_not_ready(obj.as_ref()))
                .count();
            objects.set(gauge_value(state.len()));
            not_ready.set(gauge_value(unready));
        }));
    }

    /// Sums, at each scrape, the replicas the workloads in `store` (those an operand kind's
    /// `controller` made) ask for and those ready, as `replicas` reads them from each workload:
    /// `(desired, ready)`.
    pub fn count_replicas<W>(
        &self,
        controller: &str,
        store: Store<W>,
        replicas: fn(&W) -> (i32, i32),
    ) where
        W: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        let desired = self.replicas_desired.get_or_create_owned(&labels);
        let ready = self.replicas_ready.get_or_create_owned(&labels);
        self.add_census(Box::new(move || {
            let (mut wanted, mut running) = (0_i64, 0_i64);
            for workload in store.state() {
                let (asked, up) = replicas(&workload);
                wanted += i64::from(asked);
                running += i64::from(up);
            }
            desired.set(wanted);
            ready.set(running);
        }));
    }

    /// Records whether this replica runs the controllers.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Records the versions of the manager (`version`, the project's) and of the API server
    /// it talks to; the runtime's own is added.
    pub fn set_build_info(&self, version: &str, kubernetes_version: &str) {
        self.build_info.clear();
        let labels = BuildLabels {
            version: version.to_owned(),
            runtime_version: env!("CARGO_PKG_VERSION").to_owned(),
            kubernetes_version: kubernetes_version.to_owned(),
        };
        self.build_info.get_or_create(&labels).set(1);
    }

    fn add_census(&self, census: Census) {
        census();
        self.censuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(census);
    }
}

/// Whether `obj`'s readiness condition (the first of [`READY_CONDITIONS`] it has) is other
/// than `True`; `false` when it has none.
fn is_not_ready<K: Serialize>(obj: &K) -> bool {
    // The kinds are generic here: their conditions are read from the serialized status.
    let Ok(value) = ::serde_json::to_value(obj) else {
        return false;
    };
    let Some(conditions) = value
        .pointer("/status/conditions")
        .and_then(|conditions| conditions.as_array())
    else {
        return false;
    };
    READY_CONDITIONS
        .iter()
        .find_map(|wanted| {
            conditions
                .iter()
                .find(|condition| condition["type"] == *wanted)
        })
        .is_some_and(|condition| condition["status"] != "True")
}

/// A count as a gauge's value; no cache holds more than `i64::MAX` objects.
fn gauge_value(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
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
    field_manager().replace('-', "_")
}

#[cfg(test)]
pub(crate) mod tests;
