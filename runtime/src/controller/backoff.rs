//! How long a failing object waits before its next reconcile: exponential backoff per object.

use ::std::time::Duration;

/// Delay before the first retry of a failed reconcile; doubles on every further failure.
pub(crate) const BACKOFF_INITIAL: Duration = Duration::from_secs(5);
/// Longest delay between retries of a failing reconcile.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// Delay before the next retry after `failures` consecutive failures (at least 1).
pub(crate) fn backoff(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1));
    BACKOFF_INITIAL.saturating_mul(factor).min(BACKOFF_MAX)
}
