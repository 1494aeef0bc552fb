//! The reconciler of a kind whose objects each run a Job once (`opgen create api --workload
//! job`), such as a backup: [`JobOperand`] creates the Job the kind's pure function describes,
//! never writes it again (a Job's pods cannot change), and reports its run in the status.
//!
//! A spec changed after the Job was made is not applied: the status says so with the
//! [`OUTDATED`] condition, with a `Warning` event, instead of silently doing nothing or
//! starting a second Job. The Job records the spec it was made from in an annotation.

use ::k8s_openapi::api::batch::v1::Job;
use ::k8s_openapi::api::core::v1::{Container, PodTemplateSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ::k8s_openapi::jiff::Timestamp;
use ::kube::core::object::HasStatus;
use ::kube::runtime::controller::Action;
use ::serde::Serialize;

use crate::client::Context;
use crate::client::fingerprint::hash;
use crate::conditions::Conditions;
use crate::controller::reference::{self, Reference, Resolution, Resolve};
use crate::controller::{RESYNC_PERIOD, Reconcile, Setup, controller};
use crate::error::Error;
use crate::object::ApiObject;
use crate::object::made_for;

/// The condition that says whether the Job has succeeded.
pub const COMPLETE: &str = "Complete";
/// The condition that says whether the Job has failed for good: a `Warning` event when it
/// turns `True`.
pub const FAILED: &str = "Failed";
/// The condition that says whether the spec changed after the Job was made, so that the Job
/// does not run it: a `Warning` event when it turns `True`.
pub const OUTDATED: &str = "Outdated";
/// The annotation of a Job with the fingerprint of the spec it was made from.
pub(crate) const SPEC_ANNOTATION: &str = "opgen.io/spec-fingerprint";

/// The object `K`'s Job, from `K`.
pub type DesiredJob<K> = fn(&K) -> Job;
/// The status of `K`, from its Job's run.
pub type JobStatus<K> = fn(&K, &JobRun, &Conditions) -> <K as HasStatus>::Status;

/// The container of a Job's pods: named `name` (the app's name), running `image`.
pub fn container(name: &str, image: &str) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image.to_owned()),
        ..Container::default()
    }
}

/// `pods` as a Job runs them: a failed pod is replaced by a new one (up to the Job's
/// `backoffLimit`), never restarted in place, so each attempt shows as a pod of its own.
pub fn run_once(mut pods: PodTemplateSpec) -> PodTemplateSpec {
    if let Some(spec) = pods.spec.as_mut() {
        spec.restart_policy = Some("Never".to_owned());
    }
    pods
}

/// Where a Job's run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No pod of it exists yet.
    Pending,
    /// Its pods are running, or waiting to.
    Running,
    /// It has succeeded.
    Succeeded,
    /// It has failed for good.
    Failed,
}

impl Phase {
    /// The phase as the status spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Running => "Running",
            Phase::Succeeded => "Succeeded",
            Phase::Failed => "Failed",
        }
    }
}

/// What a Job reports of its run, and whether it runs the current spec.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRun {
    /// Where it stands.
    pub phase: Phase,
    /// When the Job controller started it.
    pub start_time: Option<Time>,
    /// When it succeeded.
    pub completion_time: Option<Time>,
    /// Its pods so far: running, succeeded or failed.
    pub attempts: i32,
    /// The reason and message of its `Complete` or `Failed` condition, once it finished.
    pub outcome: Option<(String, String)>,
    /// The spec changed after the Job was made.
    pub outdated: bool,
    /// What the object's reference resolved to, for a kind that has one
    /// ([`JobOperand::references`]).
    pub reference: Option<Resolution>,
}

impl JobRun {
    /// The run `job` reports.
    pub fn of(job: &Job) -> Self {
        let status = job.status.clone().unwrap_or_default();
        let finished = |type_: &str| {
            status
                .conditions
                .iter()
                .flatten()
                .find(|c| c.type_ == type_ && c.status == "True")
                .map(|c| {
                    let reason = c.reason.clone().unwrap_or_else(|| type_.to_owned());
                    (reason, c.message.clone().unwrap_or_default())
                })
        };
        let (active, succeeded, failed) = (
            status.active.unwrap_or(0),
            status.succeeded.unwrap_or(0),
            status.failed.unwrap_or(0),
        );
        let (phase, outcome) = if let Some(outcome) = finished("Complete") {
            (Phase::Succeeded, Some(outcome))
        } else if let Some(outcome) = finished("Failed") {
            (Phase::Failed, Some(outcome))
        } else if active + succeeded + failed > 0 {
            (Phase::Running, None)
        } else {
            (Phase::Pending, None)
        };
        Self {
            phase,
            start_time: status.start_time,
            completion_time: status.completion_time,
            attempts: active + succeeded + failed,
            outcome,
            outdated: false,
            reference: None,
        }
    }

    /// The conditions of the run: [`COMPLETE`], [`FAILED`] and [`OUTDATED`], and for a kind
    /// with a reference [`REFERENCED`](reference::REFERENCED).
    pub fn conditions(&self, conditions: &Conditions) -> Vec<Condition> {
        let outcome = |phase: Phase, type_: &str| match (&self.outcome, self.phase == phase) {
            (Some((reason, message)), true) => conditions.set(type_, true, reason, message),
            _ => {
                let message = format!("The Job is {}", self.phase.as_str().to_lowercase());
                conditions.set(type_, false, self.phase.as_str(), message)
            }
        };
        let outdated = match self.outdated {
            true => conditions.set(
                OUTDATED,
                true,
                "JobImmutable",
                "The spec changed after the Job was made, and a Job's pods cannot change: it \
                 runs the spec it was made from. Delete and re-create the object to run the new \
                 spec",
            ),
            false => conditions.set(OUTDATED, false, "JobMatchesSpec", "The Job runs the spec"),
        };
        let mut all = vec![
            outcome(Phase::Succeeded, COMPLETE),
            outcome(Phase::Failed, FAILED),
            outdated,
        ];
        all.extend(self.reference.iter().map(|r| r.condition(conditions)));
        all
    }
}

/// The fingerprint of a Job's spec: a hash of its JSON that is stable across builds and Rust
/// versions (see [`hash`]).
pub(crate) fn fingerprint(job: &Job) -> String {
    hash(&serde_json::to_vec(&job.spec).expect("a Job serializes"))
}

/// `job` with the fingerprint of its spec in the annotation `opgen.io/spec-fingerprint`.
pub fn stamped(mut job: Job) -> Job {
    let fingerprint = fingerprint(&job);
    job.metadata
        .annotations
        .get_or_insert_default()
        .insert(SPEC_ANNOTATION.to_owned(), fingerprint);
    job
}

/// Whether the status of `obj` says its Job finished: its [`COMPLETE`] or [`FAILED`]
/// condition is `True`.
fn finished<K: HasStatus<Status: Serialize>>(obj: &K) -> bool {
    let status = serde_json::to_value(obj.status()).unwrap_or_default();
    status["conditions"].as_array().is_some_and(|conditions| {
        conditions
            .iter()
            .any(|c| (c["type"] == COMPLETE || c["type"] == FAILED) && c["status"] == "True")
    })
}

/// A Job operand kind's reconciler: see the module's documentation.
pub struct JobOperand<K: ApiObject + HasStatus> {
    app: &'static str,
    job: DesiredJob<K>,
    status: JobStatus<K>,
    reference: Option<Box<dyn Resolve<K>>>,
}

impl<K> JobOperand<K>
where
    K: ApiObject + HasStatus<Status: Serialize + Send + Sync>,
{
    /// The reconciler of a kind whose Job's pods are labelled `app.kubernetes.io/name=<app>`.
    pub fn new(app: &'static str, job: DesiredJob<K>, status: JobStatus<K>) -> Self {
        Self {
            app,
            job,
            status,
            reference: None,
        }
    }

    /// Each object references an object of `T`: the Job is made only once that exists, with
    /// its address in the containers' environment; until then the status reports
    /// [`NOT_FOUND`](reference::NOT_FOUND), and the watch of `T` brings the object back when
    /// its referenced object appears.
    #[must_use]
    pub fn references<T>(mut self, reference: Reference<K, T>) -> Self
    where
        T: ApiObject + ::kube::Resource<Scope = ::k8s_openapi::NamespaceResourceScope>,
    {
        self.reference = Some(Box::new(reference));
        self
    }

    /// The controller of the kind, which also watches the Jobs this manager made for the app
    /// (a Job's progress reconciles its owner) and the referenced kind, if there is one.
    pub fn controller(self, ctx: Context) -> Setup<Self> {
        let made = made_for(self.app);
        let watch = self.reference.as_ref().map(|r| r.add_watch());
        let setup = controller(ctx, self).owns::<Job>(made);
        match watch {
            Some(watch) => setup.watching(watch),
            None => setup,
        }
    }

    /// The object's Job, with the referenced object's address in its environment when the
    /// reference resolved.
    fn desired(&self, obj: &K, resolution: Option<&Resolution>) -> Job {
        let mut job = (self.job)(obj);
        if let (Some(Resolution::Found { env }), Some(spec)) = (resolution, job.spec.as_mut()) {
            spec.template = reference::with_env(::std::mem::take(&mut spec.template), env);
        }
        stamped(job)
    }
}

impl<K> Reconcile for JobOperand<K>
where
    K: ApiObject + HasStatus<Status: Serialize + Send + Sync>,
{
    type Object = K;
    /// The Job carries its owner reference: the garbage collector deletes it with the object.
    const FINALIZER: bool = false;

    async fn apply(&self, obj: &K, ctx: &Context) -> Result<Action, Error> {
        let resolution = match &self.reference {
            Some(reference) => Some(reference.resolve(obj, ctx).await?),
            None => None,
        };
        let unresolved = resolution.as_ref().is_some_and(|r| !r.found());
        let desired = self.desired(obj, resolution.as_ref());
        let job = match ctx.get_stored(&desired).await? {
            Some(job) => job,
            // Its Job ran and is gone (`ttlSecondsAfterFinished`): the status keeps the
            // outcome, and the object never runs again.
            None if finished(obj) => return Ok(Action::await_change()),
            // No Job without what it must reach: the watch of the referenced kind brings the
            // object back when that appears, so there is nothing to poll for.
            None if unresolved => {
                let run = JobRun {
                    reference: resolution,
                    ..JobRun::of(&Job::default())
                };
                let status = (self.status)(obj, &run, &Conditions::of(obj, Timestamp::now()));
                ctx.apply_status(obj, &status).await?;
                return Ok(Action::await_change());
            }
            None => {
                let job = ctx.apply(&desired).await?;
                let image = desired
                    .spec
                    .as_ref()
                    .and_then(|spec| spec.template.spec.as_ref())
                    .and_then(|pod| pod.containers.first())
                    .and_then(|container| container.image.clone())
                    .unwrap_or_default();
                let note = format!("Created Job running {image}");
                ctx.events.normal(obj, "Created", "Create", note).await;
                job
            }
        };
        let mut run = JobRun::of(&job);
        let made_from = job.metadata.annotations.as_ref();
        // A reference gone after the Job was made leaves nothing to compare the Job with.
        run.outdated = !unresolved
            && made_from.and_then(|a| a.get(SPEC_ANNOTATION)) != Some(&fingerprint(&desired));
        run.reference = resolution;
        let status = (self.status)(obj, &run, &Conditions::of(obj, Timestamp::now()));
        let update = ctx.apply_status(obj, &status).await?;
        update.warn_if_turned_true(FAILED).await;
        update.warn_if_turned_true(OUTDATED).await;
        Ok(match run.phase {
            // The watch of the Job brings any later change.
            Phase::Succeeded | Phase::Failed => Action::await_change(),
            Phase::Pending | Phase::Running => Action::requeue(RESYNC_PERIOD),
        })
    }
}

#[cfg(test)]
mod tests;
