//! The two text formats /metrics is served in, chosen by the scraper's `Accept` header.
//!
//! Prometheus asks for OpenMetrics and gets it, as [`Metrics::encode`](crate::metrics::Metrics::encode)
//! writes it. Everything else (promtool's `check metrics`, `curl`, older agents) gets the
//! Prometheus text format 0.0.4, which is what a scraper that names no format expects and the
//! only one promtool's linter reads.

use ::std::collections::HashSet;
use ::std::fmt::Write as _;

/// Content type of the OpenMetrics text exposition.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Content type of the Prometheus text format that [`classic_text`] produces.
pub const CLASSIC_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether an `Accept` header asks for OpenMetrics (Prometheus sends it first, with
/// `text/plain` as a fallback at a lower weight).
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|accept| {
        accept.split(',').any(|range| {
            let mut params = range.split(';').map(str::trim);
            let media = params.next().unwrap_or_default();
            let refused = params.any(|p| p.replace(' ', "") == "q=0");
            media.eq_ignore_ascii_case("application/openmetrics-text") && !refused
        })
    })
}

/// Rewrites an OpenMetrics exposition in the Prometheus text format 0.0.4.
///
/// The formats differ, for the metrics this crate registers, in three ways: a counter family
/// is named without `_total` in OpenMetrics and with it in the older format (whose parser
/// wants a family's samples to carry its name); `unknown` is `untyped`; and `# UNIT` and
/// `# EOF` do not exist in the older format. The crate records no exemplars and no `_created`
/// series, so neither is handled here.
pub fn classic_text(openmetrics: &str) -> String {
    let counters: HashSet<&str> = openmetrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.strip_suffix(" counter"))
        .collect();
    let family = |name: &str| {
        if counters.contains(name) {
            format!("{name}_total")
        } else {
            name.to_owned()
        }
    };
    let mut classic = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let _ = writeln!(classic, "# HELP {} {help}", family(name));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "unknown"));
            let kind = if kind == "unknown" { "untyped" } else { kind };
            let _ = writeln!(classic, "# TYPE {} {kind}", family(name));
        } else {
            classic.push_str(line);
            classic.push('\n');
        }
    }
    classic
}

#[cfg(test)]
mod tests;
