//! The status of a custom object: conditions in the shape of `metav1.Condition`, with
//! `observedGeneration`, written through the status subresource with server-side apply.

use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ::k8s_openapi::jiff::{SignedDuration, Timestamp};
use ::kube::api::{Patch, PatchParams};
use ::kube::core::object::HasStatus;
use ::kube::{Resource, ResourceExt as _};
use ::serde::Serialize;
use ::serde_json::json;

use crate::cache::is_same_status;
use crate::context::{ApiObject, field_manager};
use crate::{Context, Error};

/// The conditions one reconcile reports, built against the object's current ones.
///
/// Every condition carries the object's generation as its `observedGeneration`, and keeps the
/// `lastTransitionTime` of the current condition of its type while its status holds, as
/// apimachinery's `meta.SetStatusCondition` does.
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
fn conditions_in<S: Serialize>(status: Option<&S>) -> Vec<Condition> {
    let Some(status) = status else {
        return Vec::new();
    };
    let mut status = serde_json::to_value(status).expect("a status serializes to JSON");
    serde_json::from_value(status["conditions"].take()).unwrap_or_default()
}

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
    /// this every time; one that differs, stale or hand-edited, is applied.
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
        if is_same_status(&current, &desired) {
            return Ok(StatusUpdate {
                ctx: self,
                obj,
                before,
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
        Ok(StatusUpdate {
            ctx: self,
            obj,
            before,
            after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kinds::{self, WidgetStatus};
    use crate::testing;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).expect("valid timestamp")
    }

    fn status(conditions: Vec<Condition>) -> WidgetStatus {
        WidgetStatus {
            conditions,
            observed_generation: Some(testing::GENERATION),
        }
    }

    #[test]
    fn a_condition_records_the_generation_and_when_its_status_changed() {
        let conditions = Conditions::new(Vec::new(), Some(3), at(100));
        assert_eq!(
            conditions.set("Ready", true, "Reconciled", "all good"),
            Condition {
                type_: "Ready".to_owned(),
                status: "True".to_owned(),
                reason: "Reconciled".to_owned(),
                message: "all good".to_owned(),
                observed_generation: Some(3),
                last_transition_time: Time(at(100)),
            }
        );
    }

    #[test]
    fn the_transition_time_holds_while_the_status_does() {
        let earlier = Conditions::new(Vec::new(), Some(3), at(100));
        let current = vec![
            earlier.set("Ready", true, "Reconciled", ""),
            earlier.set("Degraded", false, "AsExpected", ""),
        ];
        let later = Conditions::new(current, Some(4), at(200));

        let ready = later.set("Ready", true, "StillReconciled", "new message");
        assert_eq!(ready.last_transition_time, Time(at(100)));
        assert_eq!(ready.observed_generation, Some(4));
        let degraded = later.set("Degraded", true, "Broken", "");
        assert_eq!(degraded.last_transition_time, Time(at(200)));
        let new = later.set("Progressing", false, "Complete", "");
        assert_eq!(new.last_transition_time, Time(at(200)));

        assert_eq!(
            later.held_for("Ready", true),
            Some(SignedDuration::from_secs(100))
        );
        assert_eq!(later.held_for("Ready", false), None);
        assert_eq!(later.held_for("Progressing", true), None);
    }

    #[test]
    fn the_current_conditions_are_those_of_the_status() {
        let mut widget = test_kinds::widget();
        let none = Conditions::of(&widget, at(200));
        assert_eq!(
            none.set("Ready", true, "R", "").last_transition_time,
            Time(at(200))
        );

        let earlier = Conditions::new(Vec::new(), Some(3), at(100));
        widget.status = Some(status(vec![earlier.set("Ready", true, "R", "")]));
        let conditions = Conditions::of(&widget, at(200));
        let ready = conditions.set("Ready", true, "R", "");
        assert_eq!(ready.last_transition_time, Time(at(100)));
        assert_eq!(ready.observed_generation, Some(testing::GENERATION));
    }

    /// Applies a status with `after` to a widget whose status has `before`, and returns what
    /// changed. Only a status that differs is sent.
    async fn update(before: &[Condition], after: &[Condition]) -> (bool, Option<String>) {
        let (ctx, mut server) = testing::context();
        let mut widget = test_kinds::widget();
        widget.status = Some(status(before.to_vec()));
        let applied = status(after.to_vec());
        let differs = before != after;
        let update = server
            .run(ctx.apply_status(&widget, &applied), async |server| {
                if differs {
                    server.expect_status_applied(&widget).await;
                }
            })
            .await
            .expect("the status is applied");
        let turned = update.turned_true("Degraded").map(|c| c.message.clone());
        (update.changed(), turned)
    }

    #[tokio::test]
    async fn only_new_generations_and_changed_conditions_are_news() {
        let first = Conditions::new(Vec::new(), Some(3), at(100));
        let current = [first.set("Ready", true, "Reconciled", "")];
        assert!(update(&[], &current).await.0, "no status yet");

        let resync = Conditions::new(current.to_vec(), Some(3), at(200));
        let same = [resync.set("Ready", true, "Reconciled", "")];
        assert!(!update(&current, &same).await.0);
        let failed = [resync.set("Ready", false, "Failed", "")];
        assert!(update(&current, &failed).await.0);
        let next_generation = Conditions::new(current.to_vec(), Some(4), at(200));
        let next = [next_generation.set("Ready", true, "Reconciled", "")];
        assert!(update(&current, &next).await.0);
    }

    #[tokio::test]
    async fn a_status_like_the_current_one_is_not_sent() {
        let (ctx, mut server) = testing::context();
        let mut widget = test_kinds::widget();
        let conditions = Conditions::new(Vec::new(), Some(3), at(100));
        widget.status = Some(status(vec![conditions.set(
            "Ready",
            true,
            "Reconciled",
            "",
        )]));
        let resync = Conditions::of(&widget, at(200));
        let same = status(vec![resync.set("Ready", true, "Reconciled", "")]);

        // Any request would fail the scenario.
        let update = server
            .run(ctx.apply_status(&widget, &same), async |_| {})
            .await
            .expect("nothing to apply");
        assert!(!update.changed());
    }

    #[tokio::test]
    async fn only_turning_true_is_worth_a_warning() {
        let conditions = Conditions::new(Vec::new(), Some(3), at(100));
        let healthy = [conditions.set("Degraded", false, "AsExpected", "")];
        let degraded = [conditions.set("Degraded", true, "Stuck", "stuck")];
        let stuck = Some("stuck".to_owned());

        assert_eq!(update(&[], &healthy).await.1, None);
        assert_eq!(update(&healthy, &healthy).await.1, None);
        assert_eq!(update(&[], &degraded).await.1, stuck);
        assert_eq!(update(&healthy, &degraded).await.1, stuck);
        assert_eq!(update(&degraded, &degraded).await.1, None);
    }

    #[tokio::test]
    async fn the_warning_names_the_condition_and_says_its_message() {
        let (ctx, mut server) = testing::context();
        let widget = test_kinds::widget();
        let conditions = Conditions::of(&widget, at(100));
        let degraded = status(vec![conditions.set("Degraded", true, "Stuck", "stuck")]);

        server
            .run(
                async {
                    let update = ctx.apply_status(&widget, &degraded).await?;
                    update.warn_if_turned_true("Degraded").await;
                    update.warn_if_turned_true("Ready").await;
                    Ok::<_, Error>(())
                },
                async |server| {
                    let applied = server.expect_status_applied(&widget).await;
                    assert_eq!(applied["observedGeneration"], testing::GENERATION);
                    assert_eq!(
                        applied["conditions"][0]["lastTransitionTime"],
                        "1970-01-01T00:01:40Z"
                    );
                    let event = server.expect_event(&widget, "Warning", "Degraded").await;
                    assert_eq!(event["note"], "stuck");
                    assert_eq!(event["action"], "Reconcile");
                },
            )
            .await
            .expect("the status is applied");
    }
}
