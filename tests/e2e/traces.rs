//! A manager built with the `otel` feature, run with a collector: its reconciles arrive as
//! OTLP spans, under the manager's service name, with the object's kind and namespace, and
//! (kube_client at debug level) the API requests a reconcile sent as spans inside it.

use crate::{
    common::{otlp::Collector, wait::wait_for},
    manifests::Crd,
    on_cluster::{SETTLE, Setup},
};

pub fn check(collector: &Collector, setup: &Setup, crds: &[Crd]) {
    let namespace = setup.namespace();
    wait_for("a reconcile span of every kind", SETTLE, || {
        let spans = collector.spans();
        let reconciles: Vec<_> = spans.iter().filter(|s| s.name == "reconcile").collect();
        for crd in crds {
            // By controller: two groups may have a kind of the same name.
            let controller = crd.controller();
            let span = reconciles
                .iter()
                .find(|s| s.attributes.get("controller") == Some(&controller))
                .ok_or_else(|| {
                    format!(
                        "no reconcile span of {controller} among {} spans ({} reconciles)",
                        spans.len(),
                        reconciles.len()
                    )
                })?;
            assert_eq!(span.service, setup.name, "{span:?}");
            assert_eq!(span.attributes.get("kind"), Some(&crd.kind), "{span:?}");
            let expected_namespace = if crd.namespaced {
                namespace.as_str()
            } else {
                ""
            };
            assert_eq!(
                span.attributes.get("namespace").map(String::as_str),
                Some(expected_namespace),
                "{span:?}"
            );
        }
        let request_in_a_reconcile = spans.iter().any(|span| {
            span.attributes.contains_key("http.method")
                && reconciles.iter().any(|r| r.span_id == span.parent_span_id)
        });
        if request_in_a_reconcile {
            Ok(())
        } else {
            Err(format!(
                "no request span inside a reconcile among {} spans",
                spans.len()
            ))
        }
    });
}
