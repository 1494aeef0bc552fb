//! `delete webhook`'s edit of `PROJECT`, the inverse of `create webhook`'s: admission webhooks
//! of a version, or the conversion of its kind.

use super::{KindVersion, Refusal, add_webhooks::AddWebhooks};
use crate::{
    model::{Resource, Webhooks},
    project::Project,
};

/// The project after the change, the version as it was, and the webhooks that went.
#[derive(Debug)]
pub struct WebhookRemoval {
    pub project: Project,
    pub resource: Resource,
    pub removed: Webhooks,
}

/// Removes the webhooks `request` names from its version (every webhook it recorded when it
/// names none; conversion, the kind's, wherever it is recorded), refusing webhooks it does not
/// have.
pub fn remove_webhooks(project: &Project, request: &AddWebhooks) -> anyhow::Result<WebhookRemoval> {
    let AddWebhooks {
        group,
        version,
        kind,
        webhooks: asked,
        ..
    } = request;
    let asked_for = || KindVersion::new(kind, group, version);
    let versions: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| &r.group == group && &r.kind == kind)
        .collect();
    let Some(&resource) = versions.iter().find(|r| &r.version == version) else {
        return Err(Refusal::NotInProject {
            asked: asked_for(),
            known: super::remove_resource::known(project),
        }
        .into());
    };
    // The version's own, and the kind's conversion wherever it is recorded.
    let has = Webhooks {
        conversion: project.converts(resource),
        ..resource.webhooks.unwrap_or_default()
    };
    // Without flags: what the version recorded, the kind's conversion only if it is there.
    let removed = if asked.is_empty() {
        resource.webhooks.unwrap_or_default()
    } else {
        *asked
    };
    if removed.is_empty() {
        let elsewhere = project
            .resources
            .iter()
            .filter(|r| r.webhooks.is_some())
            .map(|r| KindVersion::new(&r.kind, &r.group, &r.version).to_string())
            .collect();
        return Err(Refusal::HasNoWebhooks {
            asked: asked_for(),
            elsewhere,
        }
        .into());
    }
    let missing = removed.without(has);
    if !missing.is_empty() {
        return Err(Refusal::NoSuchWebhook {
            asked: asked_for(),
            flags: missing.shared_flags(&missing),
            has: has.shared_flags(&has),
        }
        .into());
    }
    let mut updated = project.clone();
    for slot in updated
        .resources
        .iter_mut()
        .filter(|r| r.same_kind(resource))
    {
        let Some(webhooks) = slot.webhooks else {
            continue;
        };
        let mine = Webhooks {
            conversion: removed.conversion,
            ..if slot.version == *version {
                removed
            } else {
                Webhooks::default()
            }
        };
        slot.webhooks = Some(webhooks.without(mine)).filter(|w| !w.is_empty());
    }
    updated.check()?;
    Ok(WebhookRemoval {
        project: updated,
        resource: resource.clone(),
        removed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    fn all() -> Webhooks {
        Webhooks {
            defaulting: true,
            validation: true,
            conversion: true,
        }
    }

    fn project() -> Project {
        Project {
            resources: vec![
                Resource {
                    webhooks: Some(all()),
                    ..Resource::for_test("db", "v1", "Thing")
                },
                Resource {
                    storage: false,
                    controller: false,
                    ..Resource::for_test("db", "v1alpha1", "Thing")
                },
            ],
            ..Project::for_test("demo", Scope::Cluster)
        }
    }

    fn remove(project: &Project, version: &str, asked: Webhooks) -> anyhow::Result<WebhookRemoval> {
        remove_webhooks(
            project,
            &AddWebhooks {
                group: "db".parse().unwrap(),
                version: version.parse().unwrap(),
                kind: "Thing".parse().unwrap(),
                webhooks: asked,
                force: false,
            },
        )
    }

    #[test]
    fn removes_what_is_named_or_everything_the_version_has() {
        let validation = Webhooks {
            validation: true,
            ..Webhooks::default()
        };
        let removal = remove(&project(), "v1", validation).unwrap();
        assert_eq!(removal.removed, validation);
        assert_eq!(
            removal.project.resources[0].webhooks,
            Some(all().without(validation))
        );
        // Conversion is the kind's: asked on the other version, it goes from where it is.
        let conversion = Webhooks {
            conversion: true,
            ..Webhooks::default()
        };
        let removal = remove(&project(), "v1alpha1", conversion).unwrap();
        assert_eq!(
            removal.project.resources[0].webhooks,
            Some(all().without(conversion))
        );
        let removal = remove(&project(), "v1", Webhooks::default()).unwrap();
        assert_eq!(removal.removed, all());
        assert_eq!(removal.project.resources[0].webhooks, None);
        // The other version recorded none: without flags, there is nothing to delete there.
        let none = remove(&project(), "v1alpha1", Webhooks::default())
            .unwrap_err()
            .to_string();
        assert!(
            none.starts_with(
                "Thing db/v1alpha1 has no webhooks; those of the project are on Thing db/v1"
            ),
            "{none}"
        );
    }

    #[test]
    fn refuses_webhooks_the_version_does_not_have() {
        let without = remove(&project(), "v1", Webhooks::default())
            .unwrap()
            .project;
        let none = remove(&without, "v1", Webhooks::default())
            .unwrap_err()
            .to_string();
        assert!(
            none.starts_with("Thing db/v1 has no webhooks, and neither"),
            "{none}"
        );
        let defaulting = Webhooks {
            defaulting: true,
            ..Webhooks::default()
        };
        let only_validation = remove(&project(), "v1", defaulting)
            .and_then(|r| remove(&r.project, "v1", defaulting))
            .unwrap_err()
            .to_string();
        assert!(
            only_validation.starts_with(
                "Thing db/v1 has no webhook of --defaulting (it has --validation, --conversion)"
            ),
            "{only_validation}"
        );
        let missing = remove(&project(), "v2", defaulting)
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("Thing db/v2 is not in PROJECT"),
            "{missing}"
        );
    }
}
