//! Traces over OTLP, with the `otel` feature: every span the manager records at the level
//! RUST_LOG lets through becomes an OpenTelemetry span, among them one per reconcile (with
//! the object's kind, namespace and name; see [`reconcile`](crate::reconcile)). kube's client
//! records a span per request at debug level: `RUST_LOG=info,kube_client=debug` puts those
//! inside the reconcile's (and its debug lines in the log, since one filter serves both).
//!
//! Configured as every OpenTelemetry SDK is, from the environment: the traces go to
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (with
//! `/v1/traces` appended), over HTTP, in protobuf unless `OTEL_EXPORTER_OTLP_PROTOCOL` is
//! `http/json`; the service is named after the manager unless `OTEL_SERVICE_NAME` says
//! otherwise, and `OTEL_RESOURCE_ATTRIBUTES` adds attributes. Without an endpoint, or with
//! `OTEL_SDK_DISABLED=true`, nothing is exported: a manager built with the feature runs as
//! one without it until a collector is named.

use ::std::sync::OnceLock;

use ::anyhow::Context as _;
use ::opentelemetry::trace::TracerProvider as _;
use ::opentelemetry_otlp::SpanExporter;
use ::opentelemetry_sdk::{
    Resource,
    trace::{SdkTracerProvider, SpanExporter as ExportSpans},
};
use ::tracing::Subscriber;
use ::tracing_subscriber::{Layer, registry::LookupSpan};

/// The provider whose buffered spans [`shutdown`] sends.
static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// The layer that exports spans, or `None` when the environment names no collector.
pub(crate) fn layer<S>(service: &str) -> ::anyhow::Result<Option<impl Layer<S>>>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    if !exporting(|name| ::std::env::var(name).ok()) {
        return Ok(None);
    }
    let exporter = SpanExporter::builder().with_http().build().context(
        "cannot export traces: OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, \
         and the endpoint an http:// URL",
    )?;
    let provider = provider(exporter, service);
    let layer = tracing_layer(&provider);
    // One manager per process installs the subscriber once, so the provider is set once.
    let _ = PROVIDER.set(provider);
    Ok(Some(layer))
}

/// Whether the environment asks for traces: a collector named, and the SDK not disabled.
fn exporting(env: impl Fn(&str) -> Option<String>) -> bool {
    let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let endpoint = [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ]
    .iter()
    .any(|name| env(name).is_some_and(|v| !v.trim().is_empty()));
    endpoint && !disabled
}

/// Spans batched and sent from the SDK's own thread, under the manager's service name.
fn provider(exporter: impl ExportSpans + 'static, service: &str) -> SdkTracerProvider {
    let mut resource = Resource::builder();
    if ::std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(service.to_owned());
    }
    SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build()
}

fn tracing_layer<S>(provider: &SdkTracerProvider) -> impl Layer<S> + use<S>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    ::tracing_opentelemetry::layer().with_tracer(provider.tracer(env!("CARGO_PKG_NAME")))
}

/// Sends the spans still buffered and stops the exporter; the manager calls it as it exits.
pub(crate) fn shutdown() {
    if let Some(provider) = PROVIDER.get()
        && let Err(err) = provider.shutdown()
    {
        eprintln!("cannot send the last traces: {err}");
    }
}

#[cfg(test)]
mod tests {
    use ::std::sync::Arc;

    use ::k8s_openapi::api::core::v1::ConfigMap;
    use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use ::kube::runtime::controller::Action;
    use ::opentelemetry_sdk::trace::InMemorySpanExporter;
    use ::tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    #[test]
    fn traces_are_exported_only_to_a_named_collector() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            }
        };
        assert!(!exporting(env(&[])));
        assert!(!exporting(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
        assert!(exporting(env(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://collector:4318"
        )])));
        assert!(exporting(env(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://collector:4318/v1/traces"
        )])));
        assert!(!exporting(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            ("OTEL_SDK_DISABLED", "TRUE"),
        ])));
    }

    /// Config maps, reconciled without a request.
    struct ConfigMaps;

    impl crate::Reconcile for ConfigMaps {
        type Object = ConfigMap;
        const FINALIZER: bool = false;

        async fn apply(&self, _: &ConfigMap, _: &crate::Context) -> Result<Action, crate::Error> {
            Ok(Action::await_change())
        }
    }

    #[::tokio::test]
    async fn a_reconcile_is_a_span_with_the_objects_kind_and_namespace() {
        let exporter = InMemorySpanExporter::default();
        let provider = provider(exporter.clone(), "widget-operator");
        let subscriber = ::tracing_subscriber::registry().with(tracing_layer(&provider));
        let _default = ::tracing::subscriber::set_default(subscriber);
        let (ctx, _server) = crate::testing::context();
        let driver = crate::reconcile::Driver::new(ConfigMaps, ctx);
        let config_map = ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                namespace: Some("shop".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };

        driver.reconcile(Arc::new(config_map)).await.unwrap();
        provider.force_flush().unwrap();

        let spans = exporter.get_finished_spans().unwrap();
        let reconciles: Vec<_> = spans.iter().filter(|s| s.name == "reconcile").collect();
        assert_eq!(reconciles.len(), 1, "{spans:#?}");
        let attribute = |key: &str| {
            reconciles[0]
                .attributes
                .iter()
                .find(|kv| kv.key.as_str() == key)
                .map(|kv| kv.value.to_string())
        };
        assert_eq!(attribute("kind").as_deref(), Some("ConfigMap"));
        assert_eq!(attribute("namespace").as_deref(), Some("shop"));
        assert_eq!(attribute("name").as_deref(), Some("settings"));
        assert_eq!(attribute("controller").as_deref(), Some("configmap.core"));
    }
}
