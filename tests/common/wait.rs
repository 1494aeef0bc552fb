//! Bounded waits: everything a test waits for on a live cluster has a deadline and a message.

use std::{
    ops::ControlFlow,
    time::{Duration, Instant},
};

/// How often a condition is checked again.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Calls `step` until it breaks, at most `timeout`. `Continue` carries what was last seen, for
/// the message when time runs out; `Break(Err)` gives up at once (a process died).
pub fn poll<T>(
    what: &str,
    timeout: Duration,
    mut step: impl FnMut() -> ControlFlow<anyhow::Result<T>, String>,
) -> anyhow::Result<T> {
    let deadline = Instant::now() + timeout;
    loop {
        match step() {
            ControlFlow::Break(result) => return result,
            ControlFlow::Continue(last) if Instant::now() >= deadline => {
                anyhow::bail!("{what}: not within {timeout:?}; last seen: {last}")
            }
            ControlFlow::Continue(_) => std::thread::sleep(POLL_INTERVAL),
        }
    }
}

/// Calls `check` until it returns `Ok`, at most `timeout`, and panics with what was awaited and
/// what `check` last reported if it never does.
#[track_caller]
pub fn wait_for<T>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Result<T, String>,
) -> T {
    let result = poll(what, timeout, || match check() {
        Ok(value) => ControlFlow::Break(Ok(value)),
        Err(last) => ControlFlow::Continue(last),
    });
    result.unwrap_or_else(|err| panic!("{err:#}"))
}
