//! A custom object's status, written through its status subresource with server-side apply,
//! and what the write changed (to decide on events).

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use ::kube::api::{Patch, PatchParams};
use ::kube::core::object::HasStatus;
use ::kube::{Resource, ResourceExt as _};
use ::serde::Serialize;
use ::serde_json::json;

use super::context::Context;
use super::fingerprint::{hash, is_same_status};
use super::recent_applies;
use crate::conditions::conditions_in;
use crate::error::Error;
use crate::identity::field_manager;
use crate::object::ApiObject;

/// What applying a status changed: the conditions before and after, to decide on events.
pub struct StatusUpdate<'a, K> {
    ctx: &'a Context,
    obj: &'a K,
    before: Vec<Condition>,
    after: Vec<Condition>,
}

impl<K: Resource<DynamicType = ()>> StatusUpdate<'_, K> {
    /// Whether the status reports something new: a condition that is new, or whose status,
    /// reason, message or observed generation changed. That is worth an event; a status that
    /// did not change is not, so that the periodic resync does not flood them.
    pub fn changed(&self) -> bool {
        self.after
            .iter()
            .any(|condition| !self.before.contains(condition))
    }

    /// The condition `type_` if it has just turned `True`.
    pub fn turned_true(&self, type_: &str) -> Option<&Condition> {
        let is_true = |c: &&Condition| c.type_ == type_ && c.status == "True";
        let condition = self.after.iter().find(is_true)?;
        self.before
            .iter()
            .find(is_true)
            .is_none()
            .then_some(condition)
    }

    /// Publishes a `Warning` event, with the condition type as its reason and the condition's
    /// message as its note, when the condition `type_` has just turned `True` (such as
    /// `Degraded`): once, not on every reconcile while it stays `True`.
    pub async fn warn_if_turned_true(&self, type_: &str) {
        if let Some(condition) = self.turned_true(type_) {
            let note = condition.message.clone();
            self.ctx
                .events
                .warning(self.obj, type_, "Reconcile", note)
                .await;
        }
    }
}

impl Context {
    /// Applies `status` to the status subresource of `obj` with server-side apply, under the
    /// manager's field manager, taking back any field someone else changed; returns what
    /// changed, to decide on events.
    ///
    /// Build `status` from scratch, not from the current one: the field manager owns exactly
    /// the fields it sends. A status equal to the current one of `obj` is not sent (even a
    /// no-op apply costs the API server an admission pass and a read), so a reconcile can call
    /// this every time; one that differs, stale or hand-edited, is applied. Nor is the status
    /// this manager applied last when `obj` is still the version it was judged against then:
    /// that copy only lags behind the write (a reconcile its workload's watch started before
    /// the object's own watch showed the status), and writing again would change nothing.
    pub async fn apply_status<'a, K>(
        &'a self,
        obj: &'a K,
        status: &K::Status,
    ) -> Result<StatusUpdate<'a, K>, Error>
    where
        K: ApiObject + HasStatus<Status: Serialize>,
    {
        let before = conditions_in(obj.status());
        let after = conditions_in(Some(status));
        let current = serde_json::to_value(obj.status()).expect("a status serializes to JSON");
        let desired = serde_json::to_value(status).expect("a status serializes to JSON");
        let key = recent_applies::key(obj);
        if is_same_status(&current, &desired) {
            self.recent_statuses.forget(&key);
            return Ok(StatusUpdate {
                ctx: self,
                obj,
                before,
                after,
            });
        }
        // The status, and the version of the object it is judged against: an object without
        // a version (never stored) is not remembered.
        let applied = obj.resource_version().map(|version| {
            let status = serde_json::to_vec(&desired).expect("a status serializes to JSON");
            format!("{}@{version}", hash(&status))
        });
        if let Some(applied) = &applied
            && self.recent_statuses.remembers(&key, applied)
        {
            return Ok(StatusUpdate {
                ctx: self,
                obj,
                before: after.clone(),
                after,
            });
        }
        let body = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "status": status,
        });
        let params = PatchParams::apply(field_manager()).force();
        self.api_of(obj)?
            .patch_status(&obj.name_any(), &params, &Patch::Apply(body))
            .await?;
        if let Some(applied) = applied {
            self.recent_statuses.remember(key, applied);
        }
        Ok(StatusUpdate {
            ctx: self,
            obj,
            before,
            after,
        })
    }
}

#[cfg(test)]
mod tests;
