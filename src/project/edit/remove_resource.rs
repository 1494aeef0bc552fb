//! `delete api`'s edit of `PROJECT`: a version of a kind the project owns (the whole kind with
//! its last version), or a kind it watches without owning it. What is left is what `init` and
//! the remaining `create` commands would have recorded: a version that keeps the kind's
//! controller or conversion takes them over from the one deleted.

use super::{KindVersion, Refusal};
use crate::{
    model::{ApiGroup, ForeignKind, Group, Kind, Resource, Version, core_group},
    project::Project,
};

/// What `delete api` asks of `PROJECT`: the words as typed, since the kind may be one the
/// project does not own (`core` for the core group).
#[derive(Debug, Clone)]
pub struct RemoveResource {
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// The project after the change, and what went.
#[derive(Debug)]
pub struct Removal {
    pub project: Project,
    pub removed: Removed,
}

#[derive(Debug)]
pub enum Removed {
    /// A version of a kind of the project's own.
    Version {
        resource: Resource,
        /// It was the kind's last version: the kind is gone.
        last: bool,
        /// The version that watches the kind now, when the deleted one had its controller.
        controller_moved_to: Option<Version>,
    },
    /// A kind with a controller here that the project does not own.
    Foreign(ForeignKind),
}

/// Removes what `request` names, refusing what would leave the project without a storage
/// version, or with kinds that reference one that is gone.
pub fn remove_resource(project: &Project, request: &RemoveResource) -> anyhow::Result<Removal> {
    if let Some(index) = foreign_index(project, request) {
        let mut updated = project.clone();
        let foreign = updated.foreign_kinds.remove(index);
        updated.check()?;
        return Ok(Removal {
            project: updated,
            removed: Removed::Foreign(foreign),
        });
    }
    let asked = KindVersion::new(&request.kind, &request.group, &request.version);
    let not_in_project = || Refusal::NotInProject {
        asked: asked.clone(),
        known: known(project),
    };
    let (Ok(group), Ok(version), Ok(kind)) = (
        request.group.parse::<Group>(),
        request.version.parse::<Version>(),
        request.kind.parse::<Kind>(),
    ) else {
        return Err(not_in_project().into());
    };
    let versions: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| r.group == group && r.kind == kind)
        .collect();
    let Some(&resource) = versions.iter().find(|r| r.version == version) else {
        return Err(not_in_project().into());
    };
    let others: Vec<&Resource> = versions
        .iter()
        .copied()
        .filter(|r| r.version != version)
        .collect();
    if resource.storage && !others.is_empty() {
        return Err(Refusal::StorageVersionKept {
            asked,
            others: others.iter().map(|r| r.version.to_string()).collect(),
            hub: project.converts(resource),
        }
        .into());
    }
    if others.is_empty() {
        let referrers: Vec<String> = project
            .kinds()
            .filter(|other| !other.same_kind(resource))
            .filter(|other| {
                project.versions_of(other).any(|r| {
                    r.operand
                        .as_ref()
                        .and_then(|operand| operand.references.as_ref())
                        .is_some_and(|reference| reference.group == group && reference.kind == kind)
                })
            })
            .map(|other| format!("{} ({})", other.kind, other.group))
            .collect();
        if !referrers.is_empty() {
            return Err(Refusal::ReferencedBy {
                kind: kind.to_string(),
                group: group.to_string(),
                referrers,
            }
            .into());
        }
    }

    let mut updated = project.clone();
    updated
        .resources
        .retain(|r| !(r.same_kind(resource) && r.version == version));
    // What a later version would have had, made without the deleted one: the controller of
    // the kind, and the conversion of a kind that still has versions to convert between.
    let storage = others.iter().find(|r| r.storage).map(|r| r.version.clone());
    let mut controller_moved_to = None;
    let webhooks = resource.webhooks.unwrap_or_default();
    if let Some(storage) = &storage {
        let remaining = others.len();
        for slot in updated
            .resources
            .iter_mut()
            .filter(|r| r.same_kind(resource) && &r.version == storage)
        {
            if resource.controller {
                slot.controller = true;
                controller_moved_to = Some(storage.clone());
            }
            if webhooks.conversion && remaining > 1 {
                let mut kept = slot.webhooks.unwrap_or_default();
                kept.conversion = true;
                slot.webhooks = Some(kept);
            }
        }
        if remaining == 1 {
            // One version converts to nothing: its conversion goes, wherever it was recorded.
            for slot in updated
                .resources
                .iter_mut()
                .filter(|r| r.same_kind(resource))
            {
                if let Some(mut kept) = slot.webhooks {
                    kept.conversion = false;
                    slot.webhooks = Some(kept).filter(|w| !w.is_empty());
                }
            }
        }
    }
    updated.check()?;
    Ok(Removal {
        project: updated,
        removed: Removed::Version {
            resource: resource.clone(),
            last: others.is_empty(),
            controller_moved_to,
        },
    })
}

/// The entry of `foreignKinds` that `request` names, if any.
fn foreign_index(project: &Project, request: &RemoveResource) -> Option<usize> {
    let same_group = |api_group: &ApiGroup| {
        api_group.as_str() == request.group
            || (api_group.as_str().is_empty() && core_group(&request.group))
    };
    project.foreign_kinds.iter().position(|foreign| {
        same_group(&foreign.group)
            && foreign.version.as_str() == request.version
            && foreign.kind.as_str() == request.kind
    })
}

/// Every kind and version of the project, as a refusal lists them: `Thing db/v1`, and the
/// foreign kinds in their groups (`ConfigMap core/v1`).
pub fn known(project: &Project) -> Vec<String> {
    let owned = project
        .resources
        .iter()
        .map(|r| KindVersion::new(&r.kind, &r.group, &r.version).to_string());
    let foreign = project
        .foreign_kinds
        .iter()
        .map(|f| KindVersion::new(&f.kind, f.group.shown(), &f.version).to_string());
    owned.chain(foreign).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        model::{KindReference, Operand, Webhooks, Workload},
        project::Scope,
    };

    fn request(group: &str, version: &str, kind: &str) -> RemoveResource {
        RemoveResource {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    /// Thing in db: v1alpha1 with the controller, v1beta1, and v1 stored and converting.
    fn project() -> Project {
        let conversion = Webhooks {
            conversion: true,
            ..Webhooks::default()
        };
        Project {
            resources: vec![
                Resource {
                    storage: false,
                    ..Resource::for_test("db", "v1alpha1", "Thing")
                },
                Resource {
                    storage: false,
                    controller: false,
                    ..Resource::for_test("db", "v1beta1", "Thing")
                },
                Resource {
                    controller: false,
                    webhooks: Some(conversion),
                    ..Resource::for_test("db", "v1", "Thing")
                },
                Resource::for_test("ops", "v1", "Backup"),
            ],
            ..Project::for_test("demo", Scope::Cluster)
        }
    }

    fn error(project: &Project, group: &str, version: &str, kind: &str) -> Refusal {
        remove_resource(project, &request(group, version, kind))
            .unwrap_err()
            .downcast::<Refusal>()
            .unwrap()
    }

    #[test]
    fn a_version_goes_and_the_storage_version_takes_the_controller() {
        let removal = remove_resource(&project(), &request("db", "v1alpha1", "Thing")).unwrap();
        let versions: Vec<(String, bool, bool)> = removal
            .project
            .resources
            .iter()
            .filter(|r| r.kind.as_str() == "Thing")
            .map(|r| (r.version.to_string(), r.controller, r.storage))
            .collect();
        assert_eq!(
            versions,
            [
                ("v1beta1".to_owned(), false, false),
                ("v1".to_owned(), true, true)
            ]
        );
        assert!(matches!(
            removal.removed,
            Removed::Version {
                last: false,
                controller_moved_to: Some(ref moved),
                ..
            } if moved.as_str() == "v1"
        ));
        // Two versions left: they still convert. One left: the conversion goes.
        assert!(removal.project.converts(&removal.project.resources[1]));
        let again = remove_resource(&removal.project, &request("db", "v1beta1", "Thing")).unwrap();
        assert_eq!(again.project.resources[0].webhooks, None);
        assert!(!again.project.converts(&again.project.resources[0]));
    }

    #[test]
    fn the_last_version_takes_the_kind() {
        let removal = remove_resource(&project(), &request("ops", "v1", "Backup")).unwrap();
        assert!(matches!(
            removal.removed,
            Removed::Version { last: true, .. }
        ));
        assert!(
            removal
                .project
                .resources
                .iter()
                .all(|r| r.kind.as_str() == "Thing")
        );
    }

    #[test]
    fn refuses_what_cannot_go() {
        let project = project();
        assert_eq!(
            error(&project, "db", "v2", "Thing"),
            Refusal::NotInProject {
                asked: KindVersion::new("Thing", "db", "v2"),
                known: vec![
                    "Thing db/v1alpha1".to_owned(),
                    "Thing db/v1beta1".to_owned(),
                    "Thing db/v1".to_owned(),
                    "Backup ops/v1".to_owned(),
                ],
            }
        );
        let storage = error(&project, "db", "v1", "Thing").to_string();
        assert!(
            storage.starts_with("v1 is the storage version of Thing and the hub its other versions convert through, which has other versions (v1alpha1, v1beta1)"),
            "{storage}"
        );
        let mut referenced = project.clone();
        let mut backup = referenced.resources.pop().unwrap();
        backup.operand = Some(Operand {
            image: "mysql:8.0".parse().unwrap(),
            workload: Workload::Job,
            port: None,
            run_as_user: None,
            command: Vec::new(),
            references: Some(KindReference {
                group: "db".parse().unwrap(),
                kind: "Thing".parse().unwrap(),
            }),
            autoscale: false,
        });
        referenced.resources.retain(|r| r.version.as_str() == "v1");
        for r in &mut referenced.resources {
            r.controller = true;
            r.webhooks = None;
        }
        referenced.resources.push(backup);
        assert_eq!(
            error(&referenced, "db", "v1", "Thing"),
            Refusal::ReferencedBy {
                kind: "Thing".to_owned(),
                group: "db".to_owned(),
                referrers: vec!["Backup (ops)".to_owned()],
            }
        );
    }
}
