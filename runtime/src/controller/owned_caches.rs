//! The caches of what a controller makes, which its first reconcile waits for.
//!
//! A reconcile compares each object it wants with the copy in its cache, and applies the
//! object when there is none. Before a cache's watch has listed what exists, a missing copy
//! says nothing: right after the manager starts, that would write every Service or budget that
//! is up to date already. So the controller's queue opens once every owned cache has listed,
//! as controller-runtime's controllers wait for their caches to sync.

use ::std::time::Duration;

use ::futures::FutureExt as _;
use ::futures::future::{BoxFuture, Shared, join_all};
use ::kube::runtime::reflector::Store;
use ::tracing::warn;

use crate::object::ApiObject;

/// How long the caches may take to list before the manager says which have not: a watch that
/// cannot list (its RBAC rule is missing, its CRD is not installed) retries for ever.
const PATIENCE: Duration = Duration::from_secs(30);

/// The owned caches of one controller, as they are added to it.
#[derive(Default)]
pub(crate) struct OwnedCaches {
    caches: Vec<(String, Shared<BoxFuture<'static, ()>>)>,
}

impl OwnedCaches {
    /// Adds the cache `store` of `C` objects.
    pub(crate) fn add<C: ApiObject>(&mut self, store: Store<C>) {
        let listed = async move {
            // An error means its writer is gone: nothing will ever fill it, so nothing to wait for.
            let _ = store.wait_until_ready().await;
        };
        self.caches
            .push((C::plural(&()).into_owned(), listed.boxed().shared()));
    }

    /// Completes once every cache has listed, and says, once, which ones it still waits for
    /// after [`PATIENCE`]. Every reconcile of the controller awaits a clone of it.
    pub(crate) fn listed(self) -> Shared<BoxFuture<'static, ()>> {
        async move {
            let all = join_all(self.caches.iter().map(|(_, listed)| listed.clone()));
            if ::tokio::time::timeout(PATIENCE, all).await.is_ok() {
                return;
            }
            let waiting: Vec<&str> = self
                .caches
                .iter()
                .filter(|(_, listed)| listed.peek().is_none())
                .map(|(plural, _)| plural.as_str())
                .collect();
            warn!(
                ?waiting,
                "reconciles wait until these watches have listed what exists (check the manager's RBAC rules for them)"
            );
            join_all(self.caches.iter().map(|(_, listed)| listed.clone())).await;
        }
        .boxed()
        .shared()
    }
}

#[cfg(test)]
mod tests;
