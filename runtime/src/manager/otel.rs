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
mod tests;
