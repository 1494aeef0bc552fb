//! The apply of an operand: its workload, with an event for each change to the running
//! application, then its status.

use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::jiff::Timestamp;
use ::kube::core::object::HasStatus;
use ::kube::runtime::controller::Action;
use ::kube::runtime::reflector::Store;
use ::kube::{Resource, ResourceExt as _};
use ::serde::Serialize;

use super::changes::changes;
use super::workload::Workload;
use super::workload_cache::{Judgment, WorkloadCache};
use crate::client::Applied;
use crate::client::Context;
use crate::client::cache::is_synced;
use crate::client::fingerprint::fingerprinted;
use crate::conditions::{AVAILABLE, Conditions, DEGRADED, conditions_in};
use crate::controller::RESYNC_PERIOD;
use crate::error::Error;
use crate::identity::field_manager;
use crate::object::ApiObject;

impl Context {
    /// The reconcile of an operand `owner`: applies `workload` (see
    /// [`Context::apply_workload`]), then the status that `status` makes of what the workload
    /// reports, and publishes a `Warning` event when its [`DEGRADED`] condition turns `True`.
    /// Reconciles again after [`RESYNC_PERIOD`] to correct drift.
    ///
    /// While the object is not [`AVAILABLE`] and stays so, a status whose conditions keep their
    /// status and reason is not written: the workload's steps on its way up (pods created, a
    /// first of several ready) would each rewrite it. An object therefore costs one status
    /// write when it is created and one when it becomes available, and its counts and messages
    /// are those of the last write until then.
    pub async fn apply_operand<K, W, S>(
        &self,
        owner: &K,
        workload: &W,
        cache: &WorkloadCache<W>,
        container: &str,
        status: S,
    ) -> Result<Action, Error>
    where
        K: ApiObject + HasStatus<Status: Serialize>,
        W: Workload,
        S: FnOnce(&K, &W, &Conditions) -> K::Status,
    {
        let applied = self
            .apply_workload(owner, workload, cache, container)
            .await?;
        let status = status(owner, &applied, &Conditions::of(owner, Timestamp::now()));
        if is_still_unavailable(owner.status(), &status) {
            return Ok(Action::requeue(RESYNC_PERIOD));
        }
        let update = self.apply_status(owner, &status).await?;
        update.warn_if_turned_true(DEGRADED).await;
        Ok(Action::requeue(RESYNC_PERIOD))
    }

    /// Applies `desired`, the workload of an operand, unless its copy in `cache` shows it
    /// unchanged (see [`WorkloadCache`]), and publishes an event about `owner` for each change
    /// that makes to the running application (see [`changes`]); returns the workload as
    /// stored, with the status it reports (or its cached copy, which keeps what the status
    /// reads: the replicas, the containers' images and the whole status).
    ///
    /// The workload is written without being read when the watch has listed everything and
    /// nothing says the copy lags behind this manager's own last apply (see
    /// the `recent_applies` module) or that it may be up to date; otherwise it is read first,
    /// so that the events say what changes now, once, and an up-to-date one is not written.
    pub async fn apply_workload<K, W>(
        &self,
        owner: &K,
        desired: &W,
        cache: &WorkloadCache<W>,
        container: &str,
    ) -> Result<W, Error>
    where
        K: Resource<DynamicType = ()>,
        W: Workload,
    {
        let desired = fingerprinted(desired);
        let copy = cache.copy_of(&desired);
        let judgment = copy.as_deref().map(|copy| cache.judge(copy, &desired));
        let applied = match copy {
            Some(copy) if judgment == Some(Judgment::UpToDate) => {
                self.recent_applies.seen(&desired);
                Applied::unchanged(copy.restored())
            }
            copy if judgment != Some(Judgment::Unproven)
                && is_synced(cache.store())
                && !self.recent_applies.awaits(&desired) =>
            {
                let observed = copy.map(|copy| copy.restored());
                // Boxed, like the read and apply below: a workload is kilobytes, and the
                // future holding several would crowd a test thread's stack in a debug build.
                let stored = Box::pin(self.apply(&desired)).await?;
                // A workload the watch does not select (someone removed this manager's labels,
                // or made it) existed before if other managers wrote it. What it was is
                // unknown: reporting no change beats reporting a creation.
                let before = match observed {
                    None if written_by_others(&stored) => Some(stored.clone()),
                    observed => observed,
                };
                cache.prove(&stored);
                Applied {
                    object: stored,
                    before,
                    written: true,
                }
            }
            _ => {
                let observed = Box::pin(self.get_stored(&desired)).await?;
                let applied = Box::pin(self.apply_unless_up_to_date(&desired, observed)).await?;
                if !applied.written {
                    self.recent_applies.seen(&desired);
                }
                cache.prove(&applied.object);
                applied
            }
        };
        if applied.written {
            self.recent_applies.record(&desired);
            // What the workload was before is unknown when the copy (of the watch, or read a
            // moment ago) missed someone else's change: the events then give new values only.
            let from_known = applied
                .before
                .as_ref()
                .is_none_or(|before| !missed_a_change(before, &applied.object));
            for change in changes(applied.before.as_ref(), &desired, container) {
                let note = match from_known {
                    true => change.note(),
                    false => change.note_without_from(),
                };
                self.events
                    .normal(owner, change.reason(), change.action(), note)
                    .await;
            }
        }
        Ok(applied.object)
    }
}

/// Whether the status `desired` only tells of steps on the way to available that the
/// `current` one does not: both not [`AVAILABLE`], with the same conditions but for their
/// messages and transition times (see [`Context::apply_operand`]). Without a current status,
/// or with a condition that changed status, reason or observed generation, it tells news.
fn is_still_unavailable<S: Serialize>(current: Option<&S>, desired: &S) -> bool {
    let Some(current) = current else {
        return false;
    };
    let summary = |status: Option<&S>| {
        let mut conditions: Vec<_> = conditions_in(status)
            .into_iter()
            .map(|c| (c.type_, c.status, c.reason, c.observed_generation))
            .collect();
        conditions.sort();
        conditions
    };
    let (before, after) = (summary(Some(current)), summary(Some(desired)));
    let unavailable = |conditions: &[(String, String, String, Option<i64>)]| {
        conditions
            .iter()
            .any(|(type_, status, ..)| type_ == AVAILABLE && status == "False")
    };
    unavailable(&before) && before == after
}

/// Whether the watch's `copy` of a workload missed a change someone else made to its spec
/// before this manager's apply returned `stored`: then the copy's values are not what the apply
/// changed, and an event must not name them as the "from" of a change.
///
/// The API server bumps `metadata.generation` once for each write that changes the spec, and
/// never otherwise: the apply accounts for at most one bump, so a stored generation more than
/// one above the copy's means another write changed the spec in between. (One above can also be
/// someone else's change with a no-op apply; the copy's values were then still the workload's
/// last ones before the write that set the values now stored, so the event stays true.) A copy
/// or a reply without a generation proves nothing, and the copy is trusted as before.
fn missed_a_change<W: Resource>(copy: &W, stored: &W) -> bool {
    match (copy.meta().generation, stored.meta().generation) {
        (Some(copy), Some(stored)) => stored > copy.saturating_add(1),
        _ => false,
    }
}

/// Whether a field manager other than this one's wrote `stored` (as the API server returned
/// it, with its managed fields).
fn written_by_others<K: Resource>(stored: &K) -> bool {
    stored
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .any(|entry| entry.manager.as_deref() != Some(field_manager()))
}

/// Applies `desired`, a companion of `workload` named after it (its budget, its autoscaler),
/// unless `cache` shows it up to date; when none is wanted, deletes the one `cache` holds (see
/// [`Context::delete_cached`]).
pub(super) async fn keep_companion<C, W>(
    ctx: &Context,
    workload: &W,
    desired: Option<C>,
    cache: &Store<C>,
) -> Result<(), Error>
where
    C: ApiObject + Resource<Scope = NamespaceResourceScope>,
    W: Workload,
{
    match desired {
        Some(companion) => ctx.apply_cached(&companion, cache).await.map(drop),
        None => {
            let namespace = workload.namespace().unwrap_or_default();
            ctx.delete_cached(&workload.name_any(), &namespace, cache)
                .await
        }
    }
}

#[cfg(test)]
mod tests;
