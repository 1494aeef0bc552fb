//! Logging, and with the `otel` feature traces (see the `otel` module). The level comes
//! from RUST_LOG (`info` when unset) so it can be raised per module without a new image, e.g.
//! `RUST_LOG=info,kube=debug`; it applies to the spans exported as traces too.

use ::std::io::IsTerminal;

use ::anyhow::Context as _;
use ::tracing_subscriber::{
    EnvFilter, Layer as _, filter::LevelFilter, layer::SubscriberExt as _,
    util::SubscriberInitExt as _,
};

use super::settings::LogFormat;

/// Installs the global subscriber; call once, first thing in `main`. `service` names the
/// manager in its traces.
pub(crate) fn init(format: LogFormat, service: &str) -> ::anyhow::Result<()> {
    let filter = env_filter(&::std::env::var("RUST_LOG").unwrap_or_default())?;

    let logs = match format {
        LogFormat::Text => ::tracing_subscriber::fmt::layer()
            .with_ansi(::std::io::stdout().is_terminal())
            .boxed(),
        LogFormat::Json => ::tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .boxed(),
    };
    let subscriber = ::tracing_subscriber::registry().with(filter).with(logs);
    #[cfg(feature = "otel")]
    let subscriber = subscriber.with(super::otel::layer(service)?);
    // Without the feature there are no traces to name.
    #[cfg(not(feature = "otel"))]
    let _ = service;
    subscriber
        .try_init()
        .map_err(|err| ::anyhow::anyhow!(err).context("cannot install the log subscriber"))
}

/// Sends what is still buffered (traces, with the `otel` feature) before the process exits.
pub(crate) fn flush() {
    #[cfg(feature = "otel")]
    super::otel::shutdown();
}

/// A typo in RUST_LOG fails the start instead of silently logging at the wrong level.
fn env_filter(directives: &str) -> ::anyhow::Result<EnvFilter> {
    EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .parse(directives)
        .with_context(|| {
            format!("RUST_LOG={directives:?} is not a valid filter: use e.g. `info` or `info,kube=debug`")
        })
}

#[cfg(test)]
mod tests;
