//! Graceful shutdown on SIGTERM (what the kubelet sends) and SIGINT (Ctrl-C).

use ::anyhow::Context as _;
use ::tokio_util::sync::CancellationToken;
use ::tracing::{info, warn};

/// Cancels `shutdown` on the first SIGTERM or SIGINT, which lets the controllers finish their
/// work; a second one exits at once, for a developer whose Ctrl-C seems stuck.
pub fn stop_on_signal(shutdown: CancellationToken) -> ::anyhow::Result<()> {
    let mut signals = Signals::new().context("cannot install the signal handlers")?;
    ::tokio::spawn(async move {
        let signal = signals.recv().await;
        info!(signal, "shutting down: waiting for controllers to finish");
        shutdown.cancel();
        let signal = signals.recv().await;
        warn!(signal, "second signal: exiting without waiting");
        ::std::process::exit(1);
    });
    Ok(())
}

#[cfg(unix)]
struct Signals {
    terminate: ::tokio::signal::unix::Signal,
    interrupt: ::tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> ::std::io::Result<Self> {
        use ::tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    async fn recv(&mut self) -> &'static str {
        ::tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}

/// Local runs on Windows: Ctrl-C only.
#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> ::std::io::Result<Self> {
        Ok(Self)
    }

    async fn recv(&mut self) -> &'static str {
        if ::tokio::signal::ctrl_c().await.is_err() {
            ::std::future::pending::<()>().await;
        }
        "Ctrl-C"
    }
}
