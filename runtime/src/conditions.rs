//! Conditions in the shape of `metav1.Condition`, with `observedGeneration` and a
//! `lastTransitionTime` that holds while the status does, and the condition types the
//! runtime's reconcilers report.

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ::k8s_openapi::jiff::{SignedDuration, Timestamp};
use ::kube::Resource;
use ::kube::core::object::HasStatus;
use ::serde::Serialize;

/// The condition that says whether a plain kind's object is reconciled, as the scaffolded
/// controllers report it.
pub const READY: &str = "Ready";
/// The condition that says whether enough of an operand's pods are ready.
pub const AVAILABLE: &str = "Available";
/// The condition that says whether an operand's rollout or scaling is under way.
pub const PROGRESSING: &str = "Progressing";
/// The condition that says whether an operand's application is stuck: an operand publishes a
/// `Warning` event when it turns `True`.
pub const DEGRADED: &str = "Degraded";

/// The conditions one reconcile reports, built against the object's current ones.
///
/// Every condition carries the object's generation as its `observedGeneration`, and keeps the
/// `lastTransitionTime` of the current condition of its type while its status holds, as
/// apimachinery's `meta.SetStatusCondition` does.
///
/// ```
/// use k8s_openapi::jiff::Timestamp;
/// use opgen_runtime::Conditions;
///
/// let conditions = Conditions::new(Vec::new(), Some(3), Timestamp::UNIX_EPOCH);
/// let ready = conditions.set("Ready", true, "Reconciled", "The backup is scheduled");
/// assert_eq!(ready.status, "True");
/// assert_eq!(ready.observed_generation, Some(3));
/// ```
pub struct Conditions {
    current: Vec<Condition>,
    generation: Option<i64>,
    now: Timestamp,
}

impl Conditions {
    /// Conditions of an object whose current ones are `current`, at `generation`, observed
    /// `now`.
    pub fn new(current: Vec<Condition>, generation: Option<i64>, now: Timestamp) -> Self {
        Self {
            current,
            generation,
            now,
        }
    }

    /// Conditions of `obj`, observed `now`: its current ones are those of its
    /// `status.conditions`, where Kubernetes' API conventions keep them.
    pub fn of<K>(obj: &K, now: Timestamp) -> Self
    where
        K: Resource + HasStatus<Status: Serialize>,
    {
        Self::new(conditions_in(obj.status()), obj.meta().generation, now)
    }

    /// The condition `type_`, `True` or `False` as `status` says, with a `reason` in
    /// PascalCase and a `message` for people.
    pub fn set(
        &self,
        type_: &str,
        status: bool,
        reason: &str,
        message: impl Into<String>,
    ) -> Condition {
        let status = if status { "True" } else { "False" };
        let held_since = self
            .current(type_)
            .filter(|current| current.status == status)
            .map(|current| current.last_transition_time.clone());
        Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.into(),
            observed_generation: self.generation,
            last_transition_time: held_since.unwrap_or(Time(self.now)),
        }
    }

    /// How long the current condition `type_` has held `status`, until now; `None` when it
    /// does not hold it.
    pub fn held_for(&self, type_: &str, status: bool) -> Option<SignedDuration> {
        let status = if status { "True" } else { "False" };
        let current = self.current(type_).filter(|c| c.status == status)?;
        Some(self.now.duration_since(current.last_transition_time.0))
    }

    fn current(&self, type_: &str) -> Option<&Condition> {
        self.current.iter().find(|c| c.type_ == type_)
    }
}

/// The conditions of `status`: its `conditions` field, as Kubernetes' API conventions name it;
/// none when it has no such field.
pub(crate) fn conditions_in<S: Serialize>(status: Option<&S>) -> Vec<Condition> {
    let Some(status) = status else {
        return Vec::new();
    };
    let mut status = serde_json::to_value(status).expect("a status serializes to JSON");
    serde_json::from_value(status["conditions"].take()).unwrap_or_default()
}

#[cfg(test)]
mod tests;
