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
