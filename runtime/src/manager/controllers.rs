//! The controllers of the manager, run side by side until one fails or the shutdown comes.

use ::std::future::Future;

use ::tokio::task::JoinSet;

use crate::client::Context;

/// The controllers of the manager, run side by side until `ctx.shutdown` is cancelled.
pub struct Controllers {
    ctx: Context,
    running: JoinSet<::anyhow::Result<()>>,
}

impl Controllers {
    /// No controllers yet; each runs with a clone of `ctx`.
    pub fn new(ctx: Context) -> Self {
        Self {
            ctx,
            running: JoinSet::new(),
        }
    }

    /// Starts a controller: `run` runs it until `ctx.shutdown` is cancelled.
    pub fn spawn<F, Fut>(&mut self, run: F)
    where
        F: FnOnce(Context) -> Fut,
        Fut: Future<Output = ::anyhow::Result<()>> + Send + 'static,
    {
        self.running.spawn(run(self.ctx.clone()));
    }

    /// Waits for every controller to stop. When one fails (for example because its CRD is not
    /// installed), the others are asked to shut down gracefully and the first error is
    /// returned. Without controllers, waits for the shutdown.
    pub async fn run(mut self) -> ::anyhow::Result<()> {
        if self.running.is_empty() {
            self.ctx.shutdown.cancelled().await;
            return Ok(());
        }
        let mut first_error = None;
        while let Some(joined) = self.running.join_next().await {
            if let Err(err) = joined
                .map_err(::anyhow::Error::from)
                .and_then(|result| result)
            {
                self.ctx.shutdown.cancel();
                first_error.get_or_insert(err);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests;
