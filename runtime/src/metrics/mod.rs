//! Prometheus metrics of the controllers, served on /metrics in the OpenMetrics text format (or
//! the older Prometheus text format, see [`exposition`](crate::exposition)).
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

use crate::workload::Workload;

/// The conditions that say an object is ready, in the order they are looked for: a plain
/// kind's controller maintains `Ready`, an operand's `Available`.
pub const READY_CONDITIONS: [&str; 2] = ["Ready", crate::workload::AVAILABLE];

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
    /// The API server's version, as it reports it (`v1.33.0`).
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
            "Whether this replica runs the controllers (1): it holds the leader-election Lease, or runs without leader election",
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
    /// `controller` made) ask for and those ready.
    pub fn count_replicas<W: Workload>(&self, controller: &str, store: Store<W>) {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        let desired = self.replicas_desired.get_or_create_owned(&labels);
        let ready = self.replicas_ready.get_or_create_owned(&labels);
        self.add_census(Box::new(move || {
            let (mut wanted, mut running) = (0_i64, 0_i64);
            for workload in store.state() {
                wanted += i64::from(workload.replicas());
                running += i64::from(workload.progress().ready);
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

    use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
    use ::k8s_openapi::api::core::v1::ConfigMap;
    use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use ::k8s_openapi::jiff::Timestamp;
    use ::kube::runtime::watcher;

    use crate::test_kinds::{self, Widget, WidgetStatus};
    use crate::testing;

    fn condition(type_: &str, status: &str) -> Condition {
        Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: "Test".to_owned(),
            message: String::new(),
            observed_generation: None,
            last_transition_time: Time(Timestamp::now()),
        }
    }

    fn widget(name: &str, conditions: Vec<Condition>) -> Widget {
        let mut widget = test_kinds::widget();
        widget.metadata.name = Some(name.to_owned());
        widget.status = Some(WidgetStatus {
            conditions,
            observed_generation: None,
        });
        widget
    }

    /// Fails, showing the whole exposition, unless `body` has `line`.
    #[track_caller]
    fn assert_has(body: &[String], line: &str) {
        assert!(body.iter().any(|l| l == line), "no {line:?} in {body:#?}");
    }

    fn lines(metrics: &Metrics) -> Vec<String> {
        without_prefix(metrics.encode().unwrap())
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn objects_and_those_not_ready_are_counted_per_kind_at_each_scrape() {
        let metrics = Metrics::new();
        let (store, mut writer) = ::kube::runtime::reflector::store::<Widget>();
        let widgets = [
            widget("ready", vec![condition("Ready", "True")]),
            widget("failing", vec![condition("Ready", "False")]),
            widget("unknown", vec![condition("Ready", "Unknown")]),
            // `Ready` decides when both are there; `Available` without `Ready`.
            widget(
                "ready-not-available",
                vec![condition("Available", "False"), condition("Ready", "True")],
            ),
            widget("unavailable", vec![condition("Available", "False")]),
            widget("available", vec![condition("Available", "True")]),
            // Not reconciled yet: no condition says anything.
            widget("new", Vec::new()),
            widget("other-conditions", vec![condition("Degraded", "True")]),
        ];
        for widget in &widgets {
            writer.apply_watcher_event(&watcher::Event::Apply(widget.clone()));
        }
        metrics.count_objects("widget.example", store);

        let body = lines(&metrics);
        assert_has(&body, "# TYPE PREFIX_objects gauge");
        assert_has(&body, r#"PREFIX_objects{controller="widget.example"} 8"#);
        assert_has(&body, "# TYPE PREFIX_objects_not_ready gauge");
        assert_has(
            &body,
            r#"PREFIX_objects_not_ready{controller="widget.example"} 3"#,
        );

        // The next scrape counts again.
        writer.apply_watcher_event(&watcher::Event::Delete(widgets[1].clone()));
        let body = lines(&metrics);
        assert_has(&body, r#"PREFIX_objects{controller="widget.example"} 7"#);
        assert_has(
            &body,
            r#"PREFIX_objects_not_ready{controller="widget.example"} 2"#,
        );
    }

    #[test]
    fn objects_of_a_kind_without_conditions_are_counted_and_none_is_not_ready() {
        let metrics = Metrics::new();
        let (store, mut writer) = ::kube::runtime::reflector::store::<ConfigMap>();
        writer.apply_watcher_event(&watcher::Event::Apply(testing::new_object::<ConfigMap>()));
        metrics.count_objects("configmap.core", store);

        let body = lines(&metrics);
        assert_has(&body, r#"PREFIX_objects{controller="configmap.core"} 1"#);
        assert_has(
            &body,
            r#"PREFIX_objects_not_ready{controller="configmap.core"} 0"#,
        );
    }

    fn deployment(name: &str, replicas: Option<i32>, ready: Option<i32>) -> Deployment {
        let mut deployment = Deployment::with_spec(
            ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                ..Default::default()
            },
            DeploymentSpec {
                replicas,
                ..DeploymentSpec::default()
            },
        );
        deployment.status = Some(DeploymentStatus {
            ready_replicas: ready,
            ..DeploymentStatus::default()
        });
        deployment
    }

    #[test]
    fn operand_replicas_are_summed_per_kind_never_per_object() {
        let metrics = Metrics::new();
        let (store, mut writer) = ::kube::runtime::reflector::store::<Deployment>();
        for deployment in [
            deployment("a", Some(3), Some(3)),
            deployment("b", Some(2), Some(1)),
            // Unset replicas default to 1; no status yet means none ready.
            deployment("c", None, None),
        ] {
            writer.apply_watcher_event(&watcher::Event::Apply(deployment));
        }
        metrics.count_replicas("mysqlcluster.db", store);

        let body = lines(&metrics);
        assert_has(&body, "# TYPE PREFIX_operand_replicas_desired gauge");
        assert_has(
            &body,
            r#"PREFIX_operand_replicas_desired{controller="mysqlcluster.db"} 6"#,
        );
        assert_has(
            &body,
            r#"PREFIX_operand_replicas_ready{controller="mysqlcluster.db"} 4"#,
        );
        // Per kind only: no object's name in any label.
        assert!(
            !body
                .iter()
                .any(|l| l.contains(r#""a""#) || l.contains("name=")),
            "{body:#?}"
        );
    }

    #[test]
    fn the_leader_gauge_follows_the_leadership() {
        let metrics = Metrics::new();
        let has = |metrics: &Metrics, line: &str| lines(metrics).iter().any(|l| l == line);
        assert!(has(&metrics, "# TYPE PREFIX_leader gauge"));
        assert!(has(&metrics, "PREFIX_leader 0"), "a standby until it leads");
        metrics.set_leader(true);
        assert!(has(&metrics, "PREFIX_leader 1"));
        metrics.set_leader(false);
        assert!(has(&metrics, "PREFIX_leader 0"));
    }

    #[test]
    fn build_info_is_one_series_with_the_versions() {
        let metrics = Metrics::new();
        metrics.set_build_info("0.3.1", "v1.33.0");
        let expected = format!(
            r#"PREFIX_build_info{{version="0.3.1",runtime_version="{}",kubernetes_version="v1.33.0"}} 1"#,
            env!("CARGO_PKG_VERSION")
        );
        let body = lines(&metrics);
        assert!(body.contains(&expected), "{body:#?}");
        assert_has(&body, "# TYPE PREFIX_build_info gauge");

        // Set again (a restart of the connection): still one series.
        metrics.set_build_info("0.3.1", "v1.34.0");
        let series = lines(&metrics)
            .into_iter()
            .filter(|l| l.starts_with("PREFIX_build_info{"))
            .count();
        assert_eq!(series, 1);
    }

    /// Prometheus' conventions: names in snake case under the manager's prefix, counters
    /// ending in `_total`, durations in seconds, labels from a small fixed set.
    #[test]
    fn every_metric_follows_the_naming_conventions() {
        let metrics = Metrics::new();
        drop(metrics.reconcile("widget.example"));
        metrics.reconcile_failure("widget.example", "kube_api");
        metrics.set_build_info("1.0.0", "v1.33.0");
        let (store, _writer) = ::kube::runtime::reflector::store::<Widget>();
        metrics.count_objects("widget.example", store);
        let (store, _writer) = ::kube::runtime::reflector::store::<Deployment>();
        metrics.count_replicas("widget.example", store);

        let body = lines(&metrics);
        let allowed_labels = [
            "controller",
            "reason",
            "le",
            "version",
            "runtime_version",
            "kubernetes_version",
        ];
        for line in body.iter().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            assert!(name.starts_with("PREFIX_"), "{line}");
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase()
                    || c == '_'
                    || c.is_ascii_digit()
                    || "PREFIX".contains(c)),
                "{line}"
            );
            if let Some(labels) = line.split_once('{').map(|(_, rest)| rest) {
                let labels = labels.split_once('}').unwrap().0;
                for pair in labels.split(',') {
                    let key = pair.split_once('=').unwrap().0;
                    assert!(allowed_labels.contains(&key), "{line}");
                }
            }
        }
        for line in body.iter().filter(|l| l.starts_with("# TYPE")) {
            let mut words = line.split(' ').skip(2);
            let (name, kind) = (words.next().unwrap(), words.next().unwrap());
            if kind == "counter" {
                // OpenMetrics names the family without `_total`; its samples carry it.
                assert!(
                    body.iter().any(|l| l.starts_with(&format!("{name}_total"))),
                    "{line}"
                );
            }
            if name.contains("duration") {
                assert!(name.ends_with("_seconds"), "{line}");
            }
        }
    }
}
