//! The reconciler of a kind whose objects each run a Job on a schedule (`opgen create api
//! --workload cronjob`), such as scheduled backups: [`CronJobOperand`] keeps the CronJob the
//! kind's pure function describes with server-side apply, and reports its schedule's runs.
//!
//! A kind whose objects each name an object of another kind ([`CronJobOperand::references`])
//! gets that object's address in the environment of its Jobs' containers. While the named
//! object does not exist, the CronJob is kept suspended (`spec.suspend: true`, whatever the
//! object's own spec says): no Job starts that could not reach it, the Jobs already running go
//! on, and the history the CronJob keeps stays. The status says so in the conditions
//! [`SCHEDULED`] and [`REFERENCED`](reference::REFERENCED), both with the reason
//! [`NOT_FOUND`], and an event says when the CronJob is suspended or
//! resumed. This covers a referenced object deleted later as well as one not made yet.
//!
//! `CronJob.spec` is required from Kubernetes 1.37 (k8s-openapi's `v1_37` feature) and
//! optional before; [`with_spec`], [`spec_of`] and [`spec_mut`] compile
//! either way.

use ::k8s_openapi::api::batch::v1::{CronJob, CronJobSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use ::k8s_openapi::jiff::Timestamp;
use ::kube::core::object::HasStatus;
use ::kube::runtime::controller::Action;
use ::serde::Serialize;

use crate::client::Context;
use crate::conditions::Conditions;
use crate::controller::reference::{self, NOT_FOUND, Reference, Resolution, Resolve};
use crate::controller::{RESYNC_PERIOD, Reconcile, Setup, controller};
use crate::error::Error;
use crate::object::ApiObject;
use crate::object::made_for;

/// The condition that says whether new Jobs start on the schedule (`False` while suspended).
pub const SCHEDULED: &str = "Scheduled";

/// The object `K`'s CronJob, from `K`.
pub type DesiredCronJob<K> = fn(&K) -> CronJob;
/// The status of `K`, from what its CronJob (as applied) reports.
pub type ScheduleStatus<K> = fn(&K, &Schedule, &Conditions) -> <K as HasStatus>::Status;

/// A CronJob with `metadata` and `spec`.
// `spec.into()` wraps the spec in `Some` before Kubernetes 1.37, and is the spec itself after.
#[allow(clippy::useless_conversion)]
pub fn with_spec(metadata: ObjectMeta, spec: CronJobSpec) -> CronJob {
    CronJob {
        metadata,
        spec: spec.into(),
        ..CronJob::default()
    }
}

/// The spec of `cronjob`, if it has one.
pub fn spec_of(cronjob: &CronJob) -> Option<&CronJobSpec> {
    Option::from(&cronjob.spec)
}

/// The spec of `cronjob` to change, if it has one.
pub fn spec_mut(cronjob: &mut CronJob) -> Option<&mut CronJobSpec> {
    Option::from(&mut cronjob.spec)
}

/// What a CronJob reports of its schedule's runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    /// Its schedule, in cron syntax.
    pub schedule: String,
    /// No new Jobs start while it is suspended.
    pub suspended: bool,
    /// When it last started a Job.
    pub last_schedule_time: Option<Time>,
    /// When a Job of it last succeeded.
    pub last_successful_time: Option<Time>,
    /// The names of its Jobs that are running.
    pub active: Vec<String>,
    /// What the object's reference resolved to, for a kind that has one
    /// ([`CronJobOperand::references`]): the CronJob is suspended while it is not found.
    pub reference: Option<Resolution>,
}

impl Schedule {
    /// What `cronjob` reports.
    pub fn of(cronjob: &CronJob) -> Self {
        let spec = spec_of(cronjob);
        let status = cronjob.status.clone().unwrap_or_default();
        Self {
            schedule: spec.map(|spec| spec.schedule.clone()).unwrap_or_default(),
            suspended: spec.and_then(|spec| spec.suspend).unwrap_or(false),
            last_schedule_time: status.last_schedule_time,
            last_successful_time: status.last_successful_time,
            active: status
                .active
                .unwrap_or_default()
                .into_iter()
                .filter_map(|job| job.name)
                .collect(),
            reference: None,
        }
    }

    /// Whether the CronJob is suspended because the object's reference is not found.
    fn waits_for_reference(&self) -> bool {
        self.reference.as_ref().is_some_and(|r| !r.found())
    }

    /// The [`SCHEDULED`] condition: `False` while suspended, by the spec or (with the reason
    /// [`NOT_FOUND`]) because the referenced object does not exist.
    pub fn scheduled(&self, conditions: &Conditions) -> Condition {
        let schedule = &self.schedule;
        if self.suspended && self.waits_for_reference() {
            return conditions.set(
                SCHEDULED,
                false,
                NOT_FOUND,
                "Suspended while the referenced object does not exist (see the Referenced \
                 condition): no Job starts until it does",
            );
        }
        match self.suspended {
            true => conditions.set(
                SCHEDULED,
                false,
                "Suspended",
                "Suspended: no new Job starts until spec.suspend is false",
            ),
            false => conditions.set(
                SCHEDULED,
                true,
                "OnSchedule",
                format!("A Job starts on the schedule `{schedule}`"),
            ),
        }
    }

    /// The conditions of the schedule: [`SCHEDULED`], and for a kind with a reference
    /// [`REFERENCED`](reference::REFERENCED).
    pub fn conditions(&self, conditions: &Conditions) -> Vec<Condition> {
        let mut all = vec![self.scheduled(conditions)];
        all.extend(self.reference.iter().map(|r| r.condition(conditions)));
        all
    }
}

/// A CronJob operand kind's reconciler: see the module's documentation.
pub struct CronJobOperand<K: ApiObject + HasStatus> {
    app: &'static str,
    cronjob: DesiredCronJob<K>,
    status: ScheduleStatus<K>,
    reference: Option<Box<dyn Resolve<K>>>,
}

impl<K> CronJobOperand<K>
where
    K: ApiObject + HasStatus<Status: Serialize + Send + Sync>,
{
    /// The reconciler of a kind whose Jobs' pods are labelled `app.kubernetes.io/name=<app>`.
    pub fn new(app: &'static str, cronjob: DesiredCronJob<K>, status: ScheduleStatus<K>) -> Self {
        Self {
            app,
            cronjob,
            status,
            reference: None,
        }
    }

    /// Each object references an object of `T`: the containers of the CronJob's Jobs get its
    /// address in their environment. While it does not exist the CronJob is suspended and the
    /// status reports [`NOT_FOUND`]; the watch of `T` brings the object back when its
    /// referenced object appears, and the CronJob is resumed (unless its spec suspends it).
    #[must_use]
    pub fn references<T>(mut self, reference: Reference<K, T>) -> Self
    where
        T: ApiObject + ::kube::Resource<Scope = ::k8s_openapi::NamespaceResourceScope>,
    {
        self.reference = Some(Box::new(reference));
        self
    }

    /// The controller of the kind, which also watches the CronJobs this manager made for the
    /// app (a Job that starts or ends reconciles its owner) and the referenced kind, if there
    /// is one.
    pub fn controller(self, ctx: Context) -> Setup<Self> {
        let made = made_for(self.app);
        let watch = self.reference.as_ref().map(|r| r.add_watch());
        let setup = controller(ctx, self).owns::<CronJob>(made);
        match watch {
            Some(watch) => setup.watching(watch),
            None => setup,
        }
    }

    /// The object's CronJob: with the referenced object's address in the environment of its
    /// Jobs when the reference resolved, suspended when it did not.
    fn desired(&self, obj: &K, resolution: Option<&Resolution>) -> CronJob {
        let mut cronjob = (self.cronjob)(obj);
        if let Some(spec) = spec_mut(&mut cronjob) {
            match resolution {
                Some(Resolution::Found { env }) => {
                    if let Some(job) = spec.job_template.spec.as_mut() {
                        let pods = ::std::mem::take(&mut job.template);
                        job.template = reference::with_env(pods, env);
                    }
                }
                Some(Resolution::NotFound { .. }) => spec.suspend = Some(true),
                None => {}
            }
        }
        cronjob
    }
}

/// The event worth publishing when `desired` replaces `observed` (`None`: there was none);
/// `missing` names the referenced kind while the reference is not found, which suspends it.
fn change(
    observed: Option<&CronJob>,
    desired: &CronJob,
    missing: Option<&str>,
) -> Option<(&'static str, String)> {
    let desired = Schedule::of(desired);
    let Some(observed) = observed.map(Schedule::of) else {
        let mut note = format!("Created CronJob on the schedule `{}`", desired.schedule);
        if let Some(kind) = missing {
            note.push_str(&format!(", suspended until its {kind} exists"));
        }
        return Some(("Created", note));
    };
    if observed.suspended != desired.suspended {
        return Some(match (desired.suspended, missing) {
            (true, Some(kind)) => (
                "Suspended",
                format!("Suspended until its {kind} exists: no new Job starts"),
            ),
            (true, None) => ("Suspended", "Suspended: no new Job starts".to_owned()),
            (false, _) => ("Resumed", "Resumed: Jobs start on the schedule".to_owned()),
        });
    }
    (observed.schedule != desired.schedule).then(|| {
        let note = format!(
            "Rescheduled from `{}` to `{}`",
            observed.schedule, desired.schedule
        );
        ("Rescheduled", note)
    })
}

impl<K> Reconcile for CronJobOperand<K>
where
    K: ApiObject + HasStatus<Status: Serialize + Send + Sync>,
{
    type Object = K;
    /// The CronJob carries its owner reference: the garbage collector deletes it (and its
    /// Jobs) with the object.
    const FINALIZER: bool = false;

    async fn apply(&self, obj: &K, ctx: &Context) -> Result<Action, Error> {
        let resolution = match &self.reference {
            Some(reference) => Some(suspending(reference.resolve(obj, ctx).await?)),
            None => None,
        };
        let missing = match (&self.reference, &resolution) {
            (Some(reference), Some(resolution)) if !resolution.found() => {
                Some(reference.referenced_kind())
            }
            _ => None,
        };
        let desired = self.desired(obj, resolution.as_ref());
        let observed = ctx.get_stored(&desired).await?;
        let applied = ctx.apply(&desired).await?;
        if let Some((reason, note)) = change(observed.as_ref(), &desired, missing.as_deref()) {
            let action = if reason == "Created" {
                "Create"
            } else {
                "Update"
            };
            ctx.events.normal(obj, reason, action, note).await;
        }
        let schedule = Schedule {
            reference: resolution,
            ..Schedule::of(&applied)
        };
        let status = (self.status)(obj, &schedule, &Conditions::of(obj, Timestamp::now()));
        ctx.apply_status(obj, &status).await?;
        Ok(Action::requeue(RESYNC_PERIOD))
    }
}

/// `resolution` with what a missing reference does to the CronJob added to its message: the
/// [`REFERENCED`](reference::REFERENCED) condition says it, not only [`SCHEDULED`].
fn suspending(resolution: Resolution) -> Resolution {
    match resolution {
        Resolution::NotFound { message } => Resolution::NotFound {
            message: format!(
                "{message}. Until then the CronJob is suspended: no Job starts (running ones go on)"
            ),
        },
        found => found,
    }
}

#[cfg(test)]
mod tests;
