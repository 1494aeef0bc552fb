//! The reconciler of a kind whose objects each run a Job on a schedule (`opgen create api
//! --workload cronjob`), such as scheduled backups: [`CronJobOperand`] keeps the CronJob the
//! kind's pure function describes with server-side apply, and reports its schedule's runs.
//!
//! `CronJob.spec` is required from Kubernetes 1.37 (k8s-openapi's `v1_37` feature) and
//! optional before; [`with_spec`] and [`spec_of`] compile either way.

use ::k8s_openapi::api::batch::v1::{CronJob, CronJobSpec};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use ::k8s_openapi::jiff::Timestamp;
use ::kube::core::object::HasStatus;
use ::kube::runtime::controller::Action;
use ::serde::Serialize;

use crate::client::Context;
use crate::conditions::Conditions;
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
        }
    }

    /// The [`SCHEDULED`] condition.
    pub fn scheduled(&self, conditions: &Conditions) -> Condition {
        let schedule = &self.schedule;
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
}

/// A CronJob operand kind's reconciler: see the module's documentation.
pub struct CronJobOperand<K: HasStatus> {
    app: &'static str,
    cronjob: DesiredCronJob<K>,
    status: ScheduleStatus<K>,
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
        }
    }

    /// The controller of the kind, which also watches the CronJobs this manager made for the
    /// app: a Job that starts or ends reconciles its owner.
    pub fn controller(self, ctx: Context) -> Setup<Self> {
        let made = made_for(self.app);
        controller(ctx, self).owns::<CronJob>(made)
    }
}

/// The event worth publishing when `desired` replaces `observed` (`None`: there was none).
fn change(observed: Option<&CronJob>, desired: &CronJob) -> Option<(&'static str, String)> {
    let desired = Schedule::of(desired);
    let Some(observed) = observed.map(Schedule::of) else {
        let note = format!("Created CronJob on the schedule `{}`", desired.schedule);
        return Some(("Created", note));
    };
    if observed.suspended != desired.suspended {
        return Some(match desired.suspended {
            true => ("Suspended", "Suspended: no new Job starts".to_owned()),
            false => ("Resumed", "Resumed: Jobs start on the schedule".to_owned()),
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
        let desired = (self.cronjob)(obj);
        let observed = ctx.get_stored(&desired).await?;
        let applied = ctx.apply(&desired).await?;
        if let Some((reason, note)) = change(observed.as_ref(), &desired) {
            let action = if reason == "Created" {
                "Create"
            } else {
                "Update"
            };
            ctx.events.normal(obj, reason, action, note).await;
        }
        let schedule = Schedule::of(&applied);
        let status = (self.status)(obj, &schedule, &Conditions::of(obj, Timestamp::now()));
        ctx.apply_status(obj, &status).await?;
        Ok(Action::requeue(RESYNC_PERIOD))
    }
}

#[cfg(test)]
mod tests;
