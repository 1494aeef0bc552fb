use super::*;

#[test]
fn prometheus_gets_openmetrics_and_everyone_else_the_classic_format() {
    let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    assert!(wants_openmetrics(Some(prometheus)));
    assert!(wants_openmetrics(Some("Application/OpenMetrics-Text")));
    assert!(!wants_openmetrics(None));
    assert!(!wants_openmetrics(Some("*/*")));
    assert!(!wants_openmetrics(Some("text/plain")));
    assert!(!wants_openmetrics(Some(
        "application/openmetrics-text; q=0, text/plain"
    )));
}

#[test]
fn counters_take_their_total_name_and_openmetrics_only_lines_go() {
    let openmetrics = "\
# HELP app_reconciliations Reconciliations started.
# TYPE app_reconciliations counter
app_reconciliations_total{controller=\"a\"} 3
# HELP app_reconcile_duration_seconds Time spent.
# TYPE app_reconcile_duration_seconds histogram
# UNIT app_reconcile_duration_seconds seconds
app_reconcile_duration_seconds_sum{controller=\"a\"} 0.5
app_reconcile_duration_seconds_count{controller=\"a\"} 3
app_reconcile_duration_seconds_bucket{le=\"+Inf\",controller=\"a\"} 3
# HELP app_objects Objects.
# TYPE app_objects gauge
app_objects{controller=\"a\"} 2
# HELP app_mystery Something.
# TYPE app_mystery unknown
app_mystery 1
# EOF
";
    let expected = "\
# HELP app_reconciliations_total Reconciliations started.
# TYPE app_reconciliations_total counter
app_reconciliations_total{controller=\"a\"} 3
# HELP app_reconcile_duration_seconds Time spent.
# TYPE app_reconcile_duration_seconds histogram
app_reconcile_duration_seconds_sum{controller=\"a\"} 0.5
app_reconcile_duration_seconds_count{controller=\"a\"} 3
app_reconcile_duration_seconds_bucket{le=\"+Inf\",controller=\"a\"} 3
# HELP app_objects Objects.
# TYPE app_objects gauge
app_objects{controller=\"a\"} 2
# HELP app_mystery Something.
# TYPE app_mystery untyped
app_mystery 1
";
    assert_eq!(classic_text(openmetrics), expected);
}
