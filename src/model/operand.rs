use serde::{Deserialize, Serialize};

use super::{ImageRef, KindReference, KnownImage, NonRootId};

/// The workload an operand kind runs its application in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    #[default]
    Deployment,
    #[value(name = "statefulset")]
    StatefulSet,
    /// One Job per object, run once (a backup).
    Job,
    /// One CronJob per object, running a Job on a schedule (scheduled backups).
    #[value(name = "cronjob")]
    CronJob,
}

impl Workload {
    /// The kind, as Kubernetes spells it.
    pub fn kind(self) -> &'static str {
        match self {
            Workload::Deployment => "Deployment",
            Workload::StatefulSet => "StatefulSet",
            Workload::Job => "Job",
            Workload::CronJob => "CronJob",
        }
    }

    /// Its resource name in its API group, as RBAC rules name it.
    pub fn resource(self) -> &'static str {
        match self {
            Workload::Deployment => "deployments",
            Workload::StatefulSet => "statefulsets",
            Workload::Job => "jobs",
            Workload::CronJob => "cronjobs",
        }
    }

    /// The workload as `--workload` names it.
    pub fn flag(self) -> &'static str {
        match self {
            Workload::Deployment => "deployment",
            Workload::StatefulSet => "statefulset",
            Workload::Job => "job",
            Workload::CronJob => "cronjob",
        }
    }

    /// Its API group: `apps` for long-running pods, `batch` for pods that run to completion.
    pub fn api_group(self) -> &'static str {
        match self {
            Workload::Deployment | Workload::StatefulSet => "apps",
            Workload::Job | Workload::CronJob => "batch",
        }
    }

    /// Whether its pods run to completion (a Job, or the Jobs of a CronJob) rather than
    /// serve: such a kind has no replicas, no scale subresource and no Service.
    pub fn runs_to_completion(self) -> bool {
        matches!(self, Workload::Job | Workload::CronJob)
    }

    /// The longest name of an object whose workload this is: the workload takes its name, and
    /// the name must leave room for what Kubernetes derives from it. A label value holds at
    /// most 63 characters, and a StatefulSet's pods carry `controller-revision-hash:
    /// <name>-<10 characters>`, so its name has at most 63 - 11. A Job's pods carry its name
    /// as `job-name`; a CronJob names its Jobs `<name>-<8 digits>`, and Kubernetes keeps its
    /// name to 52 characters.
    pub fn max_name_len(self) -> usize {
        const LABEL_VALUE_MAX: usize = 63;
        match self {
            Workload::Deployment | Workload::Job => LABEL_VALUE_MAX,
            Workload::StatefulSet => LABEL_VALUE_MAX - "-".len() - 10,
            Workload::CronJob => 52,
        }
    }
}

/// The application a kind made with `create api --image` runs: its controller keeps a
/// Deployment or StatefulSet (and a Service when it has a port) at the declared state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Operand {
    /// The default image of new objects.
    pub image: ImageRef,
    pub workload: Workload,
    /// The container port; a Service is created only when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The UID the container runs as, as given; the known image's user, else the image's own,
    /// when absent (see [`Operand::run_as`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as_user: Option<NonRootId>,
    /// The container's command; the image's entrypoint when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The kind whose objects each object names in its spec (`--references`), for a Job or
    /// CronJob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<KindReference>,
    /// The kind has an optional `spec.autoscaling`, from which its controller keeps a
    /// HorizontalPodAutoscaler (`--autoscale`; a Deployment or StatefulSet only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub autoscale: bool,
}

/// The user and group the container's processes run as. The group also owns the
/// persistent volume (`fsGroup`), so that the user can write to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAs {
    pub user: NonRootId,
    pub group: NonRootId,
}

impl Operand {
    /// What opgen knows of the image, if it is a well-known one.
    pub fn known_image(&self) -> Option<&'static KnownImage> {
        KnownImage::find(&self.image)
    }

    /// The user and group the pods run as: the UID given with `--run-as-user` (with the known
    /// image's group when it is the image's own user, else the group of the same number), or
    /// the known image's user. `None` leaves the image's own user, which the kubelet must
    /// then find to be a non-root number.
    pub fn run_as(&self) -> Option<RunAs> {
        let image_user = self.known_image().map(|known| known.user_of(&self.image));
        match (self.run_as_user, image_user) {
            (Some(user), Some(image_user)) if user == image_user.uid() => Some(RunAs {
                user,
                group: image_user.gid(),
            }),
            (Some(user), _) => Some(RunAs { user, group: user }),
            (None, Some(image_user)) => Some(RunAs {
                user: image_user.uid(),
                group: image_user.gid(),
            }),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_workloads() {
        assert_eq!(Workload::Deployment.kind(), "Deployment");
        assert_eq!(Workload::StatefulSet.resource(), "statefulsets");
        assert_eq!(Workload::Deployment.max_name_len(), 63);
        assert_eq!(Workload::StatefulSet.max_name_len(), 52);
        assert_eq!(Workload::CronJob.resource(), "cronjobs");
        use clap::ValueEnum as _;
        for workload in Workload::value_variants() {
            let value = workload.to_possible_value().expect("a value");
            assert_eq!(value.get_name(), workload.flag());
        }
        assert_eq!(Workload::Job.api_group(), "batch");
        assert_eq!(Workload::CronJob.max_name_len(), 52);
        assert!(Workload::Job.runs_to_completion() && !Workload::Deployment.runs_to_completion());
    }

    fn operand(image: &str, run_as_user: Option<i64>) -> Operand {
        Operand {
            image: image.parse().unwrap(),
            workload: Workload::StatefulSet,
            port: None,
            run_as_user: run_as_user.map(|uid| uid.try_into().unwrap()),
            command: Vec::new(),
            references: None,
            autoscale: false,
        }
    }

    fn ids(operand: &Operand) -> Option<(i64, i64)> {
        operand.run_as().map(|r| (r.user.get(), r.group.get()))
    }

    #[test]
    fn a_known_image_runs_as_its_service_user() {
        assert_eq!(ids(&operand("mysql:8.0", None)), Some((999, 999)));
        assert_eq!(ids(&operand("redis:7-alpine", None)), Some((999, 1000)));
        assert_eq!(ids(&operand("memcached:1.6", None)), Some((11211, 11211)));
    }

    #[test]
    fn a_given_uid_wins_and_keeps_the_image_group_only_when_it_is_the_image_user() {
        assert_eq!(
            ids(&operand("redis:7-alpine", Some(999))),
            Some((999, 1000))
        );
        assert_eq!(ids(&operand("mysql:8.0", Some(1000))), Some((1000, 1000)));
        assert_eq!(ids(&operand("my-app:v1", Some(1234))), Some((1234, 1234)));
    }

    #[test]
    fn an_unknown_image_without_a_uid_keeps_its_own_user() {
        assert_eq!(ids(&operand("my-app:v1", None)), None);
        assert_eq!(ids(&operand("bitnami/mysql:8.0", None)), None);
    }
}
