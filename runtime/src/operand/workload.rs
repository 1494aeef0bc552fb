//! What the controllers of operand kinds (`opgen create api --image`) share: the workload (a
//! Deployment or a StatefulSet) that runs their application, its hardened pods, the changes to
//! it worth an event, and how far its rollout has come.
//!
//! The shapes of these types differ between Kubernetes versions: from 1.37 (k8s-openapi's
//! `v1_37` feature) a workload's `spec` is required and the `type`/`status` of its conditions
//! are optional; before, the reverse. Everything here compiles either way, so a project keeps
//! building when the version feature in Cargo.toml changes.

use ::std::collections::BTreeMap;
use ::std::fmt::Debug;

use ::k8s_openapi::NamespaceResourceScope;
use ::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, StatefulSet, StatefulSetSpec};
use ::k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext, Volume, VolumeMount,
};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use ::k8s_openapi::jiff::Timestamp;
use ::kube::Resource;
use ::kube::core::object::HasStatus;
use ::kube::runtime::controller::Action;
use ::kube::runtime::reflector::Store;
use ::serde::Serialize;

use crate::apply::Applied;
use crate::cache::{cached, fingerprinted, is_synced, is_up_to_date};
use crate::compact::unpacked;
use crate::context::{ApiObject, field_manager};
use crate::reconcile::RESYNC_PERIOD;
use crate::{Context, Error, status::Conditions};

/// The condition that says whether enough pods are ready.
pub const AVAILABLE: &str = "Available";
/// The condition that says whether a rollout or a scaling is under way.
pub const PROGRESSING: &str = "Progressing";
/// The condition that says whether the application is stuck: an operand publishes a `Warning`
/// event when it turns `True`.
pub const DEGRADED: &str = "Degraded";

/// A workload that runs an operand's pods: a Deployment or a StatefulSet.
pub trait Workload: ApiObject + Resource<Scope = NamespaceResourceScope> {
    /// The spec type: `DeploymentSpec` or `StatefulSetSpec`.
    type Spec;

    /// Whether the Service in front of its pods is headless: a StatefulSet's governs it and
    /// gives each pod a DNS name.
    const HEADLESS_SERVICE: bool;

    /// A workload with `metadata` and `spec`.
    fn with_spec(metadata: ObjectMeta, spec: Self::Spec) -> Self;

    /// The number of pods the spec asks for (1 when unset, as Kubernetes defaults it).
    fn replicas(&self) -> i32;

    /// The spec of its pods.
    fn pod_spec(&self) -> Option<&PodSpec>;

    /// The template of its pods, for [`crate::compact`] to pack and unpack.
    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec>;

    /// The selector of its pods.
    fn selector(&self) -> Option<&LabelSelector>;

    /// How far it has come, from what it reports in its status.
    fn progress(&self) -> Progress;
}

// `spec.into()` wraps the spec in `Some` before Kubernetes 1.37, and is the spec itself after.
#[allow(clippy::useless_conversion)]
impl Workload for Deployment {
    type Spec = DeploymentSpec;
    const HEADLESS_SERVICE: bool = false;

    fn with_spec(metadata: ObjectMeta, spec: DeploymentSpec) -> Self {
        Deployment {
            metadata,
            spec: spec.into(),
            ..Deployment::default()
        }
    }

    fn replicas(&self) -> i32 {
        let spec: Option<&DeploymentSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.replicas).unwrap_or(1)
    }

    fn pod_spec(&self) -> Option<&PodSpec> {
        let spec: Option<&DeploymentSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.template.spec.as_ref())
    }

    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        let spec: Option<&mut DeploymentSpec> = Option::from(&mut self.spec);
        spec.map(|spec| &mut spec.template)
    }

    fn selector(&self) -> Option<&LabelSelector> {
        let spec: Option<&DeploymentSpec> = Option::from(&self.spec);
        spec.map(|spec| &spec.selector)
    }

    fn progress(&self) -> Progress {
        let status = self.status.clone().unwrap_or_default();
        Progress {
            workload: "Deployment",
            replicas: status.replicas.unwrap_or(0),
            ready: status.ready_replicas.unwrap_or(0),
            updated: status.updated_replicas.unwrap_or(0),
            pending: status.observed_generation < self.metadata.generation,
            rolling: false,
        }
    }
}

#[allow(clippy::useless_conversion)]
impl Workload for StatefulSet {
    type Spec = StatefulSetSpec;
    const HEADLESS_SERVICE: bool = true;

    fn with_spec(metadata: ObjectMeta, spec: StatefulSetSpec) -> Self {
        StatefulSet {
            metadata,
            spec: spec.into(),
            ..StatefulSet::default()
        }
    }

    fn replicas(&self) -> i32 {
        let spec: Option<&StatefulSetSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.replicas).unwrap_or(1)
    }

    fn pod_spec(&self) -> Option<&PodSpec> {
        let spec: Option<&StatefulSetSpec> = Option::from(&self.spec);
        spec.and_then(|spec| spec.template.spec.as_ref())
    }

    fn template_mut(&mut self) -> Option<&mut PodTemplateSpec> {
        let spec: Option<&mut StatefulSetSpec> = Option::from(&mut self.spec);
        spec.map(|spec| &mut spec.template)
    }

    fn selector(&self) -> Option<&LabelSelector> {
        let spec: Option<&StatefulSetSpec> = Option::from(&self.spec);
        spec.map(|spec| &spec.selector)
    }

    fn progress(&self) -> Progress {
        let status = self.status.clone().unwrap_or_default();
        Progress {
            workload: "StatefulSet",
            replicas: status.replicas,
            ready: status.ready_replicas.unwrap_or(0),
            updated: status.updated_replicas.unwrap_or(0),
            pending: status.observed_generation < self.metadata.generation,
            rolling: status.current_revision != status.update_revision,
        }
    }
}

/// How far a workload has come towards the replicas its owner wants, from what it reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// `Deployment` or `StatefulSet`.
    pub workload: &'static str,
    /// Its pods, …
    pub replicas: i32,
    /// … those of them that are ready, …
    pub ready: i32,
    /// … and those that run its current spec.
    pub updated: i32,
    /// Its controller has not acted on its latest spec yet.
    pub pending: bool,
    /// A rollout is under way that the counts do not show (a StatefulSet whose update
    /// revision is not its current one).
    pub rolling: bool,
}

impl Progress {
    /// The [`AVAILABLE`] condition: whether enough pods are ready, all `wanted` of them
    /// (none are needed at 0).
    pub fn available(&self, conditions: &Conditions, wanted: i32) -> Condition {
        let ready = self.ready;
        let message = format!("{ready} of {wanted} replicas ready");
        if wanted == 0 {
            conditions.set(AVAILABLE, true, "ScaledToZero", "Scaled to 0 replicas")
        } else if ready >= wanted {
            conditions.set(AVAILABLE, true, "ReplicasReady", message)
        } else {
            conditions.set(AVAILABLE, false, "ReplicasNotReady", message)
        }
    }

    /// The [`PROGRESSING`] condition: whether a rollout or a scaling is under way, or pods are
    /// not ready yet.
    pub fn progressing(&self, conditions: &Conditions, wanted: i32) -> Condition {
        let Self {
            workload,
            replicas,
            ready,
            updated,
            ..
        } = *self;
        let (progressing, reason, message) = if self.pending {
            let message = format!("The {workload} controller has not acted on the new spec yet");
            (true, "Updating", message)
        } else if updated < replicas || self.rolling {
            let message = format!("{updated} of {replicas} replicas run the current spec");
            (true, "RollingOut", message)
        } else if replicas != wanted {
            let message = format!("Scaling from {replicas} to {wanted} replicas");
            (true, "Scaling", message)
        } else if ready < wanted {
            let message = format!("{ready} of {wanted} replicas ready");
            (true, "WaitingForReadyReplicas", message)
        } else {
            let message = format!("{wanted} replicas run the current spec");
            (false, "Complete", message)
        };
        conditions.set(PROGRESSING, progressing, reason, message)
    }
}

/// A failure a Deployment reports: its progress deadline passed (`Progressing` is `False`), or
/// it cannot create pods (`ReplicaFailure`, e.g. over a quota). StatefulSets report none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The condition's reason.
    pub reason: String,
    /// Its message.
    pub message: String,
}

/// The failure `deployment` reports, if any.
pub fn failure(deployment: &Deployment) -> Option<Failure> {
    let status = deployment.status.as_ref()?;
    let failed = status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| {
            matches!(
                (condition_field(&c.type_), condition_field(&c.status)),
                (Some("Progressing"), Some("False")) | (Some("ReplicaFailure"), Some("True"))
            )
        })?;
    Some(Failure {
        reason: failed
            .reason
            .clone()
            .unwrap_or_else(|| "DeploymentFailed".to_owned()),
        message: failed.message.clone().unwrap_or_default(),
    })
}

/// A field of a workload condition: `&String` before Kubernetes 1.37, `&Option<String>` from it.
fn condition_field<'a>(field: impl Into<Option<&'a String>>) -> Option<&'a str> {
    field.into().map(String::as_str)
}

/// A change that applying a desired workload makes to the running application: worth an
/// event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The workload did not exist.
    Created {
        /// Its kind.
        workload: &'static str,
        /// The pods it asks for.
        replicas: i32,
        /// The image they run.
        image: String,
    },
    /// The number of pods changed.
    Scaled {
        /// From this many.
        from: i32,
        /// To this many.
        to: i32,
    },
    /// The image changed.
    Upgraded {
        /// From this one.
        from: String,
        /// To this one.
        to: String,
    },
}

impl Change {
    /// The event's reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Change::Created { .. } => "Created",
            Change::Scaled { .. } => "Scaled",
            Change::Upgraded { .. } => "Upgraded",
        }
    }

    /// The event's action.
    pub fn action(&self) -> &'static str {
        match self {
            Change::Created { .. } => "Create",
            Change::Scaled { .. } => "Scale",
            Change::Upgraded { .. } => "Upgrade",
        }
    }

    /// The event's note.
    pub fn note(&self) -> String {
        match self {
            Change::Created {
                workload,
                replicas,
                image,
            } => format!("Created {workload} running {image}, replicas: {replicas}"),
            Change::Scaled { from, to } => format!("Scaled from {from} to {to} replicas"),
            Change::Upgraded { from, to } => format!("Rolling out {to} (was {from})"),
        }
    }
}

/// What applying `desired` changes, compared with the `observed` workload (`None`: there is
/// none yet), judging the image by the container named `container`. Empty when nothing
/// changes, as after a restart of the operator.
pub fn changes<W: Workload>(observed: Option<&W>, desired: &W, container: &str) -> Vec<Change> {
    let image = |workload: &W| {
        workload
            .pod_spec()
            .and_then(|pod| pod.containers.iter().find(|c| c.name == container))
            .and_then(|container| container.image.clone())
            .unwrap_or_default()
    };
    let Some(observed) = observed else {
        return vec![Change::Created {
            workload: if W::kind(&()) == "StatefulSet" {
                "StatefulSet"
            } else {
                "Deployment"
            },
            replicas: desired.replicas(),
            image: image(desired),
        }];
    };
    let mut changes = Vec::new();
    let (from, to) = (observed.replicas(), desired.replicas());
    if from != to {
        changes.push(Change::Scaled { from, to });
    }
    let (from, to) = (image(observed), image(desired));
    if from != to {
        changes.push(Change::Upgraded { from, to });
    }
    changes
}

impl Context {
    /// The reconcile of an operand `owner`: applies `workload` (see
    /// [`Context::apply_workload`]), then the status that `status` makes of what the workload
    /// reports, and publishes a `Warning` event when its [`DEGRADED`] condition turns `True`.
    /// Reconciles again after [`RESYNC_PERIOD`] to correct drift.
    pub async fn apply_operand<K, W, S>(
        &self,
        owner: &K,
        workload: &W,
        cache: &Store<W>,
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
        let update = self.apply_status(owner, &status).await?;
        update.warn_if_turned_true(DEGRADED).await;
        Ok(Action::requeue(RESYNC_PERIOD))
    }

    /// Applies `desired`, the workload of an operand, unless its copy in `cache` shows it
    /// unchanged (see [`Context::apply_cached`]), and publishes an event about `owner` for
    /// each change that makes to the running application (see [`changes`]); returns the
    /// workload as stored, with the status it reports.
    ///
    /// The workload is written without being read when the watch has listed everything and
    /// nothing says the copy lags behind this manager's own last apply (see
    /// [`crate::recent_applies`]); otherwise it is read first, so that the events say what
    /// changes now, once.
    pub async fn apply_workload<K, W>(
        &self,
        owner: &K,
        desired: &W,
        cache: &Store<W>,
        container: &str,
    ) -> Result<W, Error>
    where
        K: Resource<DynamicType = ()>,
        W: Workload,
    {
        let desired = fingerprinted(desired);
        let applied = match cached(cache, &desired).map(unpacked) {
            Some(observed) if is_up_to_date(&observed, &desired) => {
                self.recent_applies.seen(&desired);
                Applied::unchanged(observed)
            }
            observed if is_synced(cache) && !self.recent_applies.awaits(&desired) => {
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
                applied
            }
        };
        if applied.written {
            self.recent_applies.record(&desired);
            for change in changes(applied.before.as_ref(), &desired, container) {
                self.events
                    .normal(owner, change.reason(), change.action(), change.note())
                    .await;
            }
        }
        Ok(applied.object)
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

/// The pods of an operand, hardened to the "restricted" Pod Security Standard: non-root, no
/// privilege escalation, every capability dropped, the runtime's default seccomp profile, and a
/// read-only root filesystem with an emptyDir volume for each directory the application writes
/// to. The application does not call the Kubernetes API, so it gets no service account token.
#[derive(Clone, Debug)]
pub struct RestrictedPods {
    labels: BTreeMap<String, String>,
    container: Container,
    run_as_user: Option<i64>,
    run_as_group: Option<i64>,
    fs_group: Option<i64>,
    scratch_dirs: Vec<(String, String)>,
}

impl RestrictedPods {
    /// Pods labelled `labels` that run `container`.
    pub fn new(labels: BTreeMap<String, String>, container: Container) -> Self {
        Self {
            labels,
            container,
            run_as_user: None,
            run_as_group: None,
            fs_group: None,
            scratch_dirs: Vec::new(),
        }
    }

    /// Runs the container as the user `uid` and the group `gid`; `None` keeps the image's,
    /// whose user must then be a UID (a user name cannot be checked to be non-root, and the
    /// pod is refused).
    pub fn run_as(mut self, uid: Option<i64>, gid: Option<i64>) -> Self {
        self.run_as_user = uid;
        self.run_as_group = gid;
        self
    }

    /// Gives the files of the pods' volumes to `gid`, so that a persistent volume is writable
    /// by a non-root user.
    pub fn volumes_owned_by(mut self, gid: Option<i64>) -> Self {
        self.fs_group = gid;
        self
    }

    /// Makes each directory writable with an emptyDir volume (volume name, mount path), which
    /// lasts as long as the pod.
    pub fn scratch_dirs(mut self, dirs: &[(&str, &str)]) -> Self {
        let dirs = dirs
            .iter()
            .map(|(name, path)| ((*name).to_owned(), (*path).to_owned()));
        self.scratch_dirs.extend(dirs);
        self
    }

    /// The pod template.
    pub fn template(self) -> PodTemplateSpec {
        let mut container = self.container;
        let scratch_mounts = self.scratch_dirs.iter().map(|(name, path)| VolumeMount {
            name: name.clone(),
            mount_path: path.clone(),
            ..VolumeMount::default()
        });
        let mounts: Vec<VolumeMount> = scratch_mounts
            .chain(container.volume_mounts.take().unwrap_or_default())
            .collect();
        container.volume_mounts = Some(mounts);
        container.security_context = Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Capabilities::default()
            }),
            read_only_root_filesystem: Some(true),
            run_as_non_root: Some(true),
            ..SecurityContext::default()
        });
        let volumes = self.scratch_dirs.into_iter().map(|(name, _)| Volume {
            name,
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        });
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(self.labels),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![container],
                security_context: Some(PodSecurityContext {
                    run_as_non_root: Some(true),
                    run_as_user: self.run_as_user,
                    run_as_group: self.run_as_group,
                    fs_group: self.fs_group,
                    fs_group_change_policy: self.fs_group.map(|_| "OnRootMismatch".to_owned()),
                    seccomp_profile: Some(SeccompProfile {
                        type_: "RuntimeDefault".to_owned(),
                        ..SeccompProfile::default()
                    }),
                    ..PodSecurityContext::default()
                }),
                automount_service_account_token: Some(false),
                enable_service_links: Some(false),
                volumes: Some(volumes.collect()),
                ..PodSpec::default()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use ::http::StatusCode;
    use ::k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus, StatefulSetStatus};
    use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
    use ::k8s_openapi::jiff::Timestamp;
    use ::kube::ResourceExt as _;
    use ::serde_json::json;

    use super::*;
    use crate::apply::{AppLabels, owned_by};
    use crate::{test_kinds, testing};

    const IMAGE: &str = "example.com/app:1";

    fn deployment(replicas: i32, image: &str) -> Deployment {
        let owner = test_kinds::widget();
        let labels = AppLabels::new("widget", "server", &owner);
        let container = Container {
            name: "app".to_owned(),
            image: Some(image.to_owned()),
            ..Container::default()
        };
        let spec = DeploymentSpec {
            replicas: Some(replicas),
            selector: labels.label_selector(),
            template: RestrictedPods::new(labels.all(), container).template(),
            ..DeploymentSpec::default()
        };
        Deployment::with_spec(owned_by(&owner, labels.all()), spec)
    }

    fn reporting(mut deployment: Deployment, status: DeploymentStatus) -> Deployment {
        deployment.status = Some(status);
        deployment
    }

    /// What a Deployment reports when `ready` of its `replicas` pods, all up to date, are ready.
    fn deployment_status(replicas: i32, ready: i32) -> DeploymentStatus {
        DeploymentStatus {
            replicas: Some(replicas),
            ready_replicas: Some(ready),
            updated_replicas: Some(replicas),
            ..DeploymentStatus::default()
        }
    }

    /// The status, reason and message of a condition.
    #[derive(Debug, PartialEq, Eq)]
    struct Summary {
        status: String,
        reason: String,
        message: String,
    }

    impl From<(&str, &str, &str)> for Summary {
        fn from((status, reason, message): (&str, &str, &str)) -> Self {
            Summary {
                status: status.to_owned(),
                reason: reason.to_owned(),
                message: message.to_owned(),
            }
        }
    }

    fn summary(condition: &Condition) -> Summary {
        let c = condition;
        (c.status.as_str(), c.reason.as_str(), c.message.as_str()).into()
    }

    fn progress(replicas: i32, ready: i32, updated: i32) -> Progress {
        Progress {
            workload: "Deployment",
            replicas,
            ready,
            updated,
            ..Progress::default()
        }
    }

    #[test]
    fn changes_are_what_users_care_about() {
        let running = deployment(1, IMAGE);
        assert_eq!(
            changes(None, &running, "app"),
            [Change::Created {
                workload: "Deployment",
                replicas: 1,
                image: IMAGE.to_owned()
            }]
        );
        assert!(changes(Some(&running), &running, "app").is_empty());
        // What the API server adds (a status) is no change.
        let reported = reporting(running.clone(), deployment_status(1, 1));
        assert!(changes(Some(&reported), &running, "app").is_empty());

        let next = deployment(2, "example.com/app:2");
        assert_eq!(
            changes(Some(&running), &next, "app"),
            [
                Change::Scaled { from: 1, to: 2 },
                Change::Upgraded {
                    from: IMAGE.to_owned(),
                    to: "example.com/app:2".to_owned()
                },
            ]
        );
        let notes: Vec<String> = changes(Some(&running), &next, "app")
            .iter()
            .map(Change::note)
            .collect();
        assert_eq!(
            notes,
            [
                "Scaled from 1 to 2 replicas",
                "Rolling out example.com/app:2 (was example.com/app:1)"
            ]
        );
        let created = &changes(None, &StatefulSet::default(), "app")[0];
        assert_eq!(
            (created.reason(), created.action(), created.note()),
            (
                "Created",
                "Create",
                "Created StatefulSet running , replicas: 1".to_owned()
            )
        );
    }

    #[test]
    fn availability_counts_ready_pods() {
        let conditions = Conditions::new(Vec::new(), Some(3), Timestamp::UNIX_EPOCH);
        let available = |progress: Progress, wanted| {
            let condition = progress.available(&conditions, wanted);
            summary(&condition)
        };
        assert_eq!(
            available(progress(3, 3, 3), 3),
            ("True", "ReplicasReady", "3 of 3 replicas ready").into()
        );
        assert_eq!(
            available(progress(3, 1, 3), 3),
            ("False", "ReplicasNotReady", "1 of 3 replicas ready").into()
        );
        assert_eq!(
            available(progress(0, 0, 0), 0),
            ("True", "ScaledToZero", "Scaled to 0 replicas").into()
        );
    }

    #[test]
    fn progressing_says_what_is_under_way() {
        let conditions = Conditions::new(Vec::new(), Some(3), Timestamp::UNIX_EPOCH);
        let progressing = |progress: Progress| {
            let condition = progress.progressing(&conditions, 3);
            summary(&condition)
        };

        assert_eq!(
            progressing(progress(3, 3, 3)),
            ("False", "Complete", "3 replicas run the current spec").into()
        );
        assert_eq!(
            progressing(progress(0, 0, 0)),
            ("True", "Scaling", "Scaling from 0 to 3 replicas").into()
        );
        assert_eq!(
            progressing(progress(3, 1, 3)),
            ("True", "WaitingForReadyReplicas", "1 of 3 replicas ready").into()
        );
        assert_eq!(
            progressing(progress(3, 3, 1)),
            ("True", "RollingOut", "1 of 3 replicas run the current spec").into()
        );
        let revisions = Progress {
            rolling: true,
            ..progress(3, 3, 3)
        };
        assert_eq!(progressing(revisions).reason, "RollingOut");
        let pending = Progress {
            pending: true,
            ..progress(3, 3, 3)
        };
        assert_eq!(
            progressing(pending),
            (
                "True",
                "Updating",
                "The Deployment controller has not acted on the new spec yet"
            )
                .into()
        );
    }

    #[test]
    fn workloads_report_their_progress() {
        let created = deployment(3, IMAGE);
        assert_eq!(created.progress(), progress(0, 0, 0));

        let mut updated = reporting(
            deployment(3, IMAGE),
            DeploymentStatus {
                observed_generation: Some(1),
                ..deployment_status(3, 2)
            },
        );
        updated.metadata.generation = Some(2);
        assert_eq!(
            updated.progress(),
            Progress {
                pending: true,
                ..progress(3, 2, 3)
            }
        );

        let statefulset = StatefulSet {
            status: Some(StatefulSetStatus {
                replicas: 2,
                ready_replicas: Some(2),
                updated_replicas: Some(2),
                current_revision: Some("test-1".to_owned()),
                update_revision: Some("test-2".to_owned()),
                ..StatefulSetStatus::default()
            }),
            ..StatefulSet::default()
        };
        assert_eq!(
            statefulset.progress(),
            Progress {
                workload: "StatefulSet",
                rolling: true,
                ..progress(2, 2, 2)
            }
        );
    }

    #[test]
    fn deployments_report_failures_in_their_conditions() {
        // Built from JSON: the shape of DeploymentCondition depends on the Kubernetes version.
        let with_conditions = |conditions| {
            let conditions: Vec<DeploymentCondition> =
                serde_json::from_value(conditions).expect("conditions");
            let status = DeploymentStatus {
                conditions: Some(conditions),
                ..deployment_status(1, 0)
            };
            reporting(deployment(1, IMAGE), status)
        };

        let stuck = with_conditions(json!([
            { "type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable" },
            {
                "type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                "message": "ReplicaSet \"test-5d9c\" has timed out progressing.",
            },
        ]));
        assert_eq!(
            failure(&stuck),
            Some(Failure {
                reason: "ProgressDeadlineExceeded".to_owned(),
                message: "ReplicaSet \"test-5d9c\" has timed out progressing.".to_owned(),
            })
        );

        let over_quota = with_conditions(json!([
            {
                "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                "message": "exceeded quota",
            },
        ]));
        assert_eq!(
            failure(&over_quota).map(|f| f.reason),
            Some("FailedCreate".to_owned())
        );

        let progressing = with_conditions(json!([
            { "type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable" },
        ]));
        assert_eq!(failure(&progressing), None);
        assert_eq!(failure(&deployment(1, IMAGE)), None);
    }

    #[test]
    fn pods_run_with_a_restricted_security_context() {
        let container = Container {
            name: "app".to_owned(),
            ..Container::default()
        };
        let template = RestrictedPods::new(BTreeMap::new(), container)
            .run_as(Some(999), Some(1000))
            .template();
        let pod = template.spec.expect("pod spec");
        let pod_context = pod.security_context.expect("pod security context");
        assert_eq!(pod_context.run_as_non_root, Some(true));
        assert_eq!(pod_context.run_as_user, Some(999));
        assert_eq!(pod_context.run_as_group, Some(1000));
        assert_eq!(pod_context.fs_group, None);
        assert_eq!(pod_context.fs_group_change_policy, None);
        assert_eq!(
            pod_context.seccomp_profile.map(|p| p.type_),
            Some("RuntimeDefault".to_owned())
        );
        assert_eq!(pod.automount_service_account_token, Some(false));
        assert_eq!(pod.enable_service_links, Some(false));

        let context = pod.containers[0]
            .security_context
            .clone()
            .expect("security context");
        assert_eq!(context.allow_privilege_escalation, Some(false));
        assert_eq!(context.read_only_root_filesystem, Some(true));
        assert_eq!(context.run_as_non_root, Some(true));
        assert_eq!(context.privileged, None);
        let capabilities = context.capabilities.expect("capabilities");
        assert_eq!(capabilities.drop, Some(vec!["ALL".to_owned()]));
        assert_eq!(capabilities.add, None);
    }

    #[test]
    fn the_read_only_root_filesystem_has_writable_volumes_where_needed() {
        let data = VolumeMount {
            name: "data".to_owned(),
            mount_path: "/data".to_owned(),
            ..VolumeMount::default()
        };
        let container = Container {
            name: "app".to_owned(),
            volume_mounts: Some(vec![data]),
            ..Container::default()
        };
        let template = RestrictedPods::new(BTreeMap::new(), container)
            .run_as(Some(999), Some(999))
            .volumes_owned_by(Some(999))
            .scratch_dirs(&[("tmp", "/tmp"), ("run", "/var/run/app")])
            .template();
        let pod = template.spec.expect("pod spec");

        let mounts: Vec<(&str, &str)> = pod.containers[0]
            .volume_mounts
            .iter()
            .flatten()
            .map(|m| (m.name.as_str(), m.mount_path.as_str()))
            .collect();
        assert_eq!(
            mounts,
            [("tmp", "/tmp"), ("run", "/var/run/app"), ("data", "/data")]
        );
        let volumes = pod.volumes.expect("volumes");
        let names: Vec<&str> = volumes.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            ["tmp", "run"],
            "the data volume comes from elsewhere"
        );
        assert!(volumes.iter().all(|v| v.empty_dir.is_some()));
        let pod_context = pod.security_context.expect("pod security context");
        assert_eq!(pod_context.fs_group, Some(999));
        assert_eq!(
            pod_context.fs_group_change_policy.as_deref(),
            Some("OnRootMismatch")
        );
    }

    #[tokio::test]
    async fn applying_a_workload_publishes_an_event_per_change() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let running = reporting(deployment(1, IMAGE), deployment_status(1, 1));
        let desired = deployment(3, "example.com/app:2");

        let applied = server
            .run(
                ctx.apply_workload(&owner, &desired, &nothing_cached(), "app"),
                async |server| {
                    server.expect_get(&desired, Some(&running)).await;
                    let request = server.expect_applied(&desired).await;
                    request.reply(
                        StatusCode::OK,
                        &reporting(desired.clone(), deployment_status(3, 1)),
                    );
                    let event = server.expect_event(&owner, "Normal", "Scaled").await;
                    assert_eq!(event["note"], "Scaled from 1 to 3 replicas");
                    assert_eq!(event["action"], "Scale");
                    let event = server.expect_event(&owner, "Normal", "Upgraded").await;
                    assert_eq!(
                        event["note"],
                        "Rolling out example.com/app:2 (was example.com/app:1)"
                    );
                },
            )
            .await
            .expect("the workload is applied");
        assert_eq!(applied.progress(), progress(3, 1, 3));
    }

    #[tokio::test]
    async fn a_new_workload_is_created_with_an_event() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let desired = deployment(1, IMAGE);

        server
            .run(
                ctx.apply_workload(&owner, &desired, &nothing_cached(), "app"),
                async |server| {
                    server.expect_get(&desired, None).await;
                    let request = server.expect_applied(&desired).await;
                    request.reply(StatusCode::CREATED, &desired);
                    let event = server.expect_event(&owner, "Normal", "Created").await;
                    assert_eq!(
                        event["note"],
                        format!("Created Deployment running {IMAGE}, replicas: 1")
                    );
                },
            )
            .await
            .expect("the workload is applied");
    }

    /// A status for widgets run by a Deployment of one pod: `Available`, and `Degraded` when
    /// the Deployment reports a failure.
    fn widget_status(
        widget: &test_kinds::Widget,
        deployment: &Deployment,
        conditions: &Conditions,
    ) -> test_kinds::WidgetStatus {
        let degraded = match failure(deployment) {
            Some(failure) => conditions.set(DEGRADED, true, &failure.reason, failure.message),
            None => conditions.set(DEGRADED, false, "AsExpected", ""),
        };
        test_kinds::WidgetStatus {
            conditions: vec![deployment.progress().available(conditions, 1), degraded],
            observed_generation: widget.metadata.generation,
        }
    }

    #[tokio::test]
    async fn an_operand_applies_its_workload_then_its_status_and_warns_when_degraded() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let desired = deployment(1, IMAGE);
        let conditions: Vec<DeploymentCondition> = serde_json::from_value(json!([{
            "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
            "message": "exceeded quota",
        }]))
        .expect("conditions");
        let failing = reporting(
            desired.clone(),
            DeploymentStatus {
                conditions: Some(conditions),
                ..deployment_status(1, 0)
            },
        );

        let action = server
            .run(
                ctx.apply_operand(&owner, &desired, &nothing_cached(), "app", widget_status),
                async |server| {
                    server.expect_get(&desired, None).await;
                    let request = server.expect_applied(&desired).await;
                    request.reply(StatusCode::CREATED, &failing);
                    server.expect_event(&owner, "Normal", "Created").await;
                    let status = server.expect_status_applied(&owner).await;
                    assert_eq!(status["conditions"][0]["reason"], "ReplicasNotReady");
                    assert_eq!(status["conditions"][1]["reason"], "FailedCreate");
                    let event = server.expect_event(&owner, "Warning", "Degraded").await;
                    assert_eq!(event["note"], "exceeded quota");
                },
            )
            .await
            .expect("the operand is applied");
        assert_eq!(action, Action::requeue(RESYNC_PERIOD));
    }

    #[tokio::test]
    async fn a_failed_apply_fails_without_an_event() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let desired = deployment(1, IMAGE);

        let error = server
            .run(
                ctx.apply_workload(&owner, &desired, &nothing_cached(), "app"),
                async |server| {
                    server.expect_get(&desired, None).await;
                    let request = server.expect_applied(&desired).await;
                    request.fail(StatusCode::CONFLICT);
                },
            )
            .await
            .expect_err("the apply fails");
        assert_eq!(error.reason(), "kube_api");
    }

    fn nothing_cached() -> Store<Deployment> {
        ::kube::runtime::reflector::store().0
    }

    /// A cache holding `workload`, as its watch would: packed (see [`crate::compact`]).
    fn cache_of(workload: &Deployment) -> Store<Deployment> {
        let (store, mut writer) = ::kube::runtime::reflector::store();
        writer.apply_watcher_event(&::kube::runtime::watcher::Event::Apply(packed_copy(
            workload,
        )));
        store
    }

    fn packed_copy(workload: &Deployment) -> Deployment {
        let mut copy = workload.clone();
        crate::compact::packed(&mut copy);
        copy
    }

    /// A cache whose watch has listed everything: `workloads` are all there is.
    fn synced_cache_of(workloads: &[Deployment]) -> Store<Deployment> {
        use ::kube::runtime::watcher::Event;
        let (store, mut writer) = ::kube::runtime::reflector::store();
        writer.apply_watcher_event(&Event::Init);
        for workload in workloads {
            writer.apply_watcher_event(&Event::InitApply(packed_copy(workload)));
        }
        writer.apply_watcher_event(&Event::InitDone);
        store
    }

    #[tokio::test]
    async fn a_synced_cache_that_lacks_the_workload_creates_it_without_a_read() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let desired = deployment(1, IMAGE);
        let cache = synced_cache_of(&[]);

        server
            .run(
                ctx.apply_workload(&owner, &desired, &cache, "app"),
                async |server| {
                    let request = server.expect_applied(&desired).await;
                    request.reply(StatusCode::CREATED, &desired);
                    server.expect_event(&owner, "Normal", "Created").await;
                },
            )
            .await
            .expect("the workload is created");
        // The watch has not shown the apply yet: the next reconcile reads before writing, and
        // finds nothing to do.
        let applied = crate::cache::fingerprinted(&desired);
        assert!(ctx.recent_applies.awaits(&applied));
        server
            .run(
                ctx.apply_workload(&owner, &desired, &cache, "app"),
                async |server| server.expect_get(&desired, Some(&applied)).await,
            )
            .await
            .expect("nothing to apply");
        assert!(ctx.recent_applies.is_empty(), "the read showed the apply");
    }

    #[tokio::test]
    async fn a_changed_workload_is_written_without_a_read_and_reported_against_its_copy() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let running = reporting(
            crate::cache::fingerprinted(&deployment(1, IMAGE)),
            deployment_status(1, 1),
        );
        let desired = deployment(2, IMAGE);

        server
            .run(
                ctx.apply_workload(&owner, &desired, &synced_cache_of(&[running]), "app"),
                async |server| {
                    let request = server.expect_applied(&desired).await;
                    request.reply(StatusCode::OK, &desired);
                    let event = server.expect_event(&owner, "Normal", "Scaled").await;
                    assert_eq!(event["note"], "Scaled from 1 to 2 replicas");
                },
            )
            .await
            .expect("the workload is applied");
    }

    #[tokio::test]
    async fn a_workload_the_watch_does_not_select_is_taken_over_without_a_created_event() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let desired = deployment(1, IMAGE);
        let mut stored = crate::cache::fingerprinted(&desired);
        stored.metadata.managed_fields = Some(
            ["kubectl-create", crate::context::field_manager()]
                .map(|manager| ManagedFieldsEntry {
                    manager: Some(manager.to_owned()),
                    operation: Some("Apply".to_owned()),
                    ..ManagedFieldsEntry::default()
                })
                .to_vec(),
        );

        // Any event would fail the scenario: the script ends after the apply.
        let applied = server
            .run(
                ctx.apply_workload(&owner, &desired, &synced_cache_of(&[]), "app"),
                async |server| {
                    let request = server.expect_applied(&desired).await;
                    request.reply(StatusCode::OK, &stored);
                },
            )
            .await
            .expect("the workload is applied");
        assert_eq!(applied, stored);
    }

    #[tokio::test]
    async fn a_steady_reconcile_of_an_unchanged_operand_sends_nothing() {
        let (ctx, mut server) = testing::context();
        let mut owner = test_kinds::widget();
        let desired = deployment(1, IMAGE);
        let running = reporting(
            crate::cache::fingerprinted(&desired),
            deployment_status(1, 1),
        );
        let conditions = Conditions::of(&owner, Timestamp::now());
        owner.status = Some(widget_status(&owner, &running, &conditions));

        // Any request, a read or a write, would fail the scenario.
        let action = server
            .run(
                ctx.apply_operand(&owner, &desired, &cache_of(&running), "app", widget_status),
                async |_| {},
            )
            .await
            .expect("the operand is reconciled");
        assert_eq!(action, Action::requeue(RESYNC_PERIOD));
    }

    #[tokio::test]
    async fn a_workload_someone_changed_is_applied_again() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let desired = deployment(1, IMAGE);
        // Scaled to 5 by someone, after this manager applied `desired`.
        let fingerprint = crate::cache::FINGERPRINT_ANNOTATION.to_owned();
        let applied = crate::cache::fingerprinted(&desired).annotations()[&fingerprint].clone();
        let mut edited = reporting(deployment(5, IMAGE), deployment_status(5, 5));
        edited.annotations_mut().insert(fingerprint, applied);

        server
            .run(
                ctx.apply_workload(&owner, &desired, &cache_of(&edited), "app"),
                async |server| {
                    server.expect_get(&desired, Some(&edited)).await;
                    let request = server.expect_applied(&desired).await;
                    request.reply(StatusCode::OK, &desired);
                    let event = server.expect_event(&owner, "Normal", "Scaled").await;
                    assert_eq!(event["note"], "Scaled from 5 to 1 replicas");
                },
            )
            .await
            .expect("the workload is applied");
    }

    #[tokio::test]
    async fn a_cache_behind_the_last_apply_costs_a_read_not_a_second_write_or_event() {
        let (ctx, mut server) = testing::context();
        let owner = test_kinds::widget();
        let before = crate::cache::fingerprinted(&deployment(1, IMAGE));
        let desired = deployment(3, IMAGE);
        let applied = reporting(
            crate::cache::fingerprinted(&desired),
            deployment_status(3, 1),
        );

        let stored = server
            .run(
                ctx.apply_workload(&owner, &desired, &cache_of(&before), "app"),
                async |server| {
                    server.expect_get(&desired, Some(&applied)).await;
                },
            )
            .await
            .expect("nothing to apply");
        assert_eq!(stored, applied);
    }
}
