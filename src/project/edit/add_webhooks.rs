//! `create webhook`'s edit of `PROJECT`: defaulting, validation or conversion webhooks on a
//! version of a kind the project owns.

use super::{KindVersion, Owner, Refusal};
use crate::{
    model::{ApiGroup, BuiltInKind, Group, Kind, Origin, Resource, Version, Webhooks, core_group},
    project::Project,
};

/// The project after the change, and the version whose webhooks changed.
#[derive(Debug)]
pub struct WebhookChange {
    pub project: Project,
    pub resource: Resource,
}

/// Refuses a kind the project watches but does not own, or a built-in one: the API server
/// calls an admission or conversion webhook for the kinds whose CRD the project installs.
pub fn refuse_foreign(
    project: &Project,
    group: &str,
    version: &str,
    kind: &str,
) -> anyhow::Result<()> {
    let owned = project
        .resources
        .iter()
        .any(|r| r.group.as_str() == group && r.kind.as_str() == kind);
    if owned {
        return Ok(());
    }
    let same_group = |api_group: &ApiGroup| {
        api_group.as_str() == group || (api_group.as_str().is_empty() && core_group(group))
    };
    let recorded = project
        .foreign_kinds
        .iter()
        .find(|f| same_group(&f.group) && f.kind.as_str() == kind);
    let owner = match recorded {
        Some(foreign) => match (&foreign.origin, &foreign.crd) {
            (Origin::External, Some(crd)) => Owner::ExternalCrd(crd.clone()),
            _ => Owner::RecordedBuiltIn,
        },
        None if BuiltInKind::find(group, version, kind, project.kubernetes_version).is_ok() => {
            Owner::BuiltIn
        }
        None => return Ok(()),
    };
    let shown = if core_group(group) { "core" } else { group };
    Err(Refusal::NotOwned {
        kind: kind.to_owned(),
        group: shown.to_owned(),
        owner,
    }
    .into())
}

/// What `create webhook` asks of `PROJECT`: the webhooks of one version of an owned kind,
/// the model's types already.
#[derive(Debug, Clone)]
pub struct AddWebhooks {
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    pub webhooks: Webhooks,
    /// Scaffold webhooks that exist already again.
    pub force: bool,
}

/// Records the asked webhooks, refusing anything that would leave `PROJECT` inconsistent or
/// ask for nothing new (unless `force`, which scaffolds again).
pub fn add_webhooks(project: &Project, request: &AddWebhooks) -> anyhow::Result<WebhookChange> {
    let AddWebhooks {
        group,
        version,
        kind,
        webhooks: asked,
        force,
    } = request;
    let (asked, force) = (*asked, *force);
    if asked.is_empty() {
        return Err(Refusal::NoWebhookAsked.into());
    }
    let asked_for = || KindVersion::new(kind, group, version);
    let versions: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| &r.group == group && &r.kind == kind)
        .collect();
    let Some(existing) = versions.iter().find(|r| &r.version == version) else {
        let known = versions.iter().map(|r| r.version.to_string()).collect();
        return Err(Refusal::NoSuchVersion {
            asked: asked_for(),
            known,
        }
        .into());
    };
    if asked.conversion && versions.len() < 2 {
        return Err(Refusal::OneVersionConversion(asked_for()).into());
    }
    let recorded = existing.webhooks.unwrap_or_default();
    // Conversion is the kind's, whichever version recorded it.
    let kind_converts = versions
        .iter()
        .any(|r| r.webhooks.is_some_and(|webhooks| webhooks.conversion));
    let converts_elsewhere = kind_converts && !recorded.conversion;
    let mut already = asked.shared_flags(&recorded);
    if asked.conversion && converts_elsewhere {
        already.push("--conversion");
    }
    if !already.is_empty() && !force {
        return Err(Refusal::WebhooksExist {
            asked: asked_for(),
            flags: already,
        }
        .into());
    }

    let mut updated = project.clone();
    let slot = updated
        .resources
        .iter_mut()
        .find(|r| r.same_kind(existing) && &r.version == version)
        .expect("the version was found above");
    let mut webhooks = recorded.union(asked);
    // Forced again on another version, conversion stays where it was recorded.
    webhooks.conversion &= !converts_elsewhere;
    slot.webhooks = Some(webhooks).filter(|w| !w.is_empty());
    let resource = slot.clone();
    updated.check()?;
    Ok(WebhookChange {
        project: updated,
        resource,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    fn project() -> Project {
        let stored = Resource::for_test("db", "v1", "Thing");
        let older = Resource {
            storage: false,
            controller: false,
            ..Resource::for_test("db", "v1alpha1", "Thing")
        };
        let single = Resource::for_test("db", "v1", "Backup");
        Project {
            resources: vec![stored, older, single],
            ..Project::for_test("demo", Scope::Cluster)
        }
    }

    fn ask(defaulting: bool, validation: bool, conversion: bool) -> Webhooks {
        Webhooks {
            defaulting,
            validation,
            conversion,
        }
    }

    fn plan(
        project: &Project,
        version: &str,
        kind: &str,
        asked: Webhooks,
        force: bool,
    ) -> anyhow::Result<WebhookChange> {
        add_webhooks(
            project,
            &AddWebhooks {
                group: "db".parse().unwrap(),
                version: version.parse().unwrap(),
                kind: kind.parse().unwrap(),
                webhooks: asked,
                force,
            },
        )
    }

    fn error(project: &Project, version: &str, kind: &str, asked: Webhooks) -> String {
        plan(project, version, kind, asked, false)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn records_the_webhooks_on_the_version() {
        let change = plan(&project(), "v1", "Thing", ask(true, true, false), false).unwrap();
        assert_eq!(change.resource.webhooks, Some(ask(true, true, false)));
        let again = plan(
            &change.project,
            "v1",
            "Thing",
            ask(false, false, true),
            false,
        )
        .unwrap();
        assert_eq!(again.resource.webhooks, Some(ask(true, true, true)));
        assert_eq!(again.project.resources[1].webhooks, None);
    }

    #[test]
    fn refuses_what_cannot_be_added() {
        let project = project();
        let none = error(&project, "v1", "Thing", ask(false, false, false));
        assert!(
            none.contains("--defaulting, --validation and --conversion"),
            "{none}"
        );
        let missing = error(&project, "v2", "Thing", ask(true, false, false));
        assert!(
            missing.contains("Thing db/v2 is not in PROJECT (it has v1, v1alpha1)"),
            "{missing}"
        );
        assert!(missing.contains("opgen create api --group db --version v2 --kind Thing"));
        let typed = plan(&project, "v2", "Thing", ask(true, false, false), false).unwrap_err();
        assert_eq!(
            typed.downcast_ref::<Refusal>(),
            Some(&Refusal::NoSuchVersion {
                asked: KindVersion::new("Thing", "db", "v2"),
                known: vec!["v1".to_owned(), "v1alpha1".to_owned()],
            })
        );
        let single = error(&project, "v1", "Backup", ask(false, false, true));
        assert!(single.contains("Backup has only v1"), "{single}");
    }

    #[test]
    fn a_webhook_asked_twice_needs_force() {
        let first = plan(&project(), "v1", "Thing", ask(true, false, true), false).unwrap();
        let twice = error(&first.project, "v1", "Thing", ask(true, false, false));
        assert!(twice.contains("--defaulting already"), "{twice}");
        // Conversion is the kind's: asked again on its other version, it exists already.
        let other = error(&first.project, "v1alpha1", "Thing", ask(false, false, true));
        assert!(other.contains("--conversion already"), "{other}");
        let forced = plan(&first.project, "v1", "Thing", ask(true, false, false), true).unwrap();
        assert_eq!(forced.project, first.project);
    }
}
