//! The changes that applying a desired workload makes to the running application, which are
//! worth an event: `Created`, `Scaled`, `Upgraded`.

use super::workload::Workload;

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

    /// The event's note when what the workload was before the change is unknown (the copy it
    /// was compared with missed someone else's change): the new value only, such as "Scaled
    /// to 5 replicas", rather than a "from" that may be wrong.
    pub fn note_without_from(&self) -> String {
        match self {
            Change::Created { .. } => self.note(),
            Change::Scaled { to, .. } => format!("Scaled to {to} replicas"),
            Change::Upgraded { to, .. } => format!("Rolling out {to}"),
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

#[cfg(test)]
mod tests;
