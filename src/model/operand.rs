use serde::{Deserialize, Serialize};

use super::ImageRef;

/// The workload an operand kind runs its application in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    #[default]
    Deployment,
    #[value(name = "statefulset")]
    StatefulSet,
}

impl Workload {
    /// The kind, as Kubernetes spells it.
    pub fn kind(self) -> &'static str {
        match self {
            Workload::Deployment => "Deployment",
            Workload::StatefulSet => "StatefulSet",
        }
    }

    /// Its resource name in the `apps` API group, as RBAC rules name it.
    pub fn resource(self) -> &'static str {
        match self {
            Workload::Deployment => "deployments",
            Workload::StatefulSet => "statefulsets",
        }
    }

    /// The longest name of an object whose workload this is: the workload takes its name, and
    /// the name must leave room for what Kubernetes derives from it. A label value holds at
    /// most 63 characters, and a StatefulSet's pods carry `controller-revision-hash:
    /// <name>-<10 characters>`, so its name has at most 63 - 11.
    pub fn max_name_len(self) -> usize {
        const LABEL_VALUE_MAX: usize = 63;
        match self {
            Workload::Deployment => LABEL_VALUE_MAX,
            Workload::StatefulSet => LABEL_VALUE_MAX - "-".len() - 10,
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
    /// The UID the container runs as; the image's user when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as_user: Option<i64>,
    /// The container's command; the image's entrypoint when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
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
    }
}
