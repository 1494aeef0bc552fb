//! Logging, and with the `otel` feature traces (see the `otel` module). The level comes
//! from RUST_LOG (`info` when unset) so it can be raised per module without a new image, e.g.
//! `RUST_LOG=info,kube=debug`; it applies to the spans exported as traces too.

use ::std::io::IsTerminal;

use ::anyhow::Context as _;
use ::tracing_subscriber::{
    EnvFilter, Layer as _, filter::LevelFilter, layer::SubscriberExt as _,
    util::SubscriberInitExt as _,
};

/// The format of the logs (`--log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ::clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Installs the global subscriber; call once, first thing in `main`. `service` names the
/// manager in its traces.
pub fn init(format: LogFormat, service: &str) -> ::anyhow::Result<()> {
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
    let subscriber = subscriber.with(crate::otel::layer(service)?);
    // Without the feature there are no traces to name.
    #[cfg(not(feature = "otel"))]
    let _ = service;
    subscriber
        .try_init()
        .map_err(|err| ::anyhow::anyhow!(err).context("cannot install the log subscriber"))
}

/// Sends what is still buffered (traces, with the `otel` feature) before the process exits.
pub fn flush() {
    #[cfg(feature = "otel")]
    crate::otel::shutdown();
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
mod tests {
    use super::*;

    #[test]
    fn defaults_to_info() {
        assert_eq!(
            env_filter("").unwrap().max_level_hint(),
            Some(LevelFilter::INFO)
        );
    }

    #[test]
    fn honours_rust_log() {
        assert_eq!(
            env_filter("debug").unwrap().max_level_hint(),
            Some(LevelFilter::DEBUG)
        );
        assert_eq!(
            env_filter("warn,kube=trace").unwrap().max_level_hint(),
            Some(LevelFilter::TRACE)
        );
    }

    #[test]
    fn rejects_an_invalid_filter() {
        let err = env_filter("kube=loud").unwrap_err();
        assert!(
            format!("{err:#}").contains("RUST_LOG=\"kube=loud\""),
            "{err:#}"
        );
    }
}
