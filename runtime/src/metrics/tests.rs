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
        has(r#"PREFIX_reconcile_failures_total{controller="mysqlcluster",reason="ApplyFailed"} 1"#),
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
        has(r#"PREFIX_reconcile_duration_seconds_bucket{le="+Inf",controller="mysqlcluster"} 2"#),
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
        body.contains(r#"PREFIX_reconcile_duration_seconds_count{controller="backuppolicy"} 1"#),
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

use crate::operand::Workload;
use crate::test_kinds::{self, Widget, WidgetStatus};

/// What an operand's controller counts of its workloads.
fn replicas_of(deployment: &Deployment) -> (i32, i32) {
    (deployment.replicas(), deployment.progress().ready)
}
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
    metrics.count_replicas("mysqlcluster.db", store, replicas_of);

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
    metrics.count_replicas("widget.example", store, replicas_of);

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
