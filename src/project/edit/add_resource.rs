//! `create api`'s edit of `PROJECT` for a kind the project owns: a new kind, a new version
//! of one, or the controller of a version that has only types. Every version of a kind
//! agrees on its names, scope and operand, one version is stored, and a converting kind
//! keeps its hub.

use super::{KindVersion, Refusal};
use crate::{
    model::{Group, Kind, KindReference, Operand, Resource, ResourceName, Version, Workload},
    project::Project,
};

/// What `create api` asks of `PROJECT` for a kind of its own: the model's types, and the flags
/// left out as `None`.
#[derive(Debug, Clone)]
pub struct AddResource {
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    /// The version's Rust types (`--resource`, default true).
    pub types: bool,
    pub controller: Option<bool>,
    pub plural: Option<ResourceName>,
    pub short_name: Option<ResourceName>,
    pub namespaced: Option<bool>,
    pub storage: Option<bool>,
    /// The application the kind runs (`--image` and its companion flags).
    pub operand: Option<Operand>,
    /// The kind its objects reference (`--references`), as typed.
    pub references: Option<RequestedReference>,
}

/// `--references [GROUP/]KIND`, before it is looked up in `PROJECT`.
#[derive(Debug, Clone)]
pub struct RequestedReference {
    pub group: Option<Group>,
    pub kind: Kind,
}

/// The project after the change, the resource added or given a controller, and what of it
/// is new.
#[derive(Debug)]
pub struct ResourceChange {
    pub project: Project,
    pub resource: Resource,
    /// The version's types are new.
    pub types: bool,
    /// The kind's controller is new.
    pub controller: bool,
    /// The version is the kind's first.
    pub first_of_kind: bool,
}

/// Adds the resource `request` asks for, refusing anything that would leave `PROJECT`
/// inconsistent.
pub fn add_resource(project: &Project, mut request: AddResource) -> anyhow::Result<ResourceChange> {
    if let Some(asked) = request.references.take() {
        let reference = resolve_reference(project, &request, &asked)?;
        if let Some(operand) = request.operand.as_mut() {
            operand.references = Some(reference);
        }
    }
    let (group, version, kind) = (
        request.group.clone(),
        request.version.clone(),
        request.kind.clone(),
    );
    let versions: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| r.group == group && r.kind == kind)
        .collect();
    let existing = versions.iter().find(|r| r.version == version).copied();
    let first = versions.first().copied();
    let with_types = request.types;
    if !with_types && request.operand.is_some() {
        return Err(Refusal::ImageWithoutTypes.into());
    }
    let other_controller = versions
        .iter()
        .find(|r| r.controller && r.version != version)
        .map(|r| r.version.clone());
    let with_controller = request.controller.unwrap_or(other_controller.is_none());

    let asked = || KindVersion::new(&kind, &group, &version);
    if let Some(watching) = other_controller.filter(|_| with_controller) {
        let watching = watching.to_string();
        return Err(Refusal::SecondController {
            asked: asked(),
            watching,
        }
        .into());
    }
    let mut resource = match (existing, with_types) {
        (Some(_), true) => return Err(Refusal::VersionExists(asked()).into()),
        (Some(existing), false) if existing.controller => {
            return Err(Refusal::ControllerExists(asked()).into());
        }
        (Some(_), false) if !with_controller => return Err(Refusal::AsksForNothing.into()),
        (Some(existing), false) => existing.clone(),
        (None, false) => return Err(Refusal::NoTypes(asked()).into()),
        (None, true) => new_resource(project, first, &request)?,
    };
    resource.controller = resource.controller || with_controller;

    let mut updated = project.clone();
    match updated
        .resources
        .iter_mut()
        .find(|r| r.same_kind(&resource) && r.version == resource.version)
    {
        Some(slot) => *slot = resource.clone(),
        None => updated.resources.push(resource.clone()),
    }
    if existing.is_none() {
        choose_storage(&mut updated, &resource, request.storage);
        check_hub_kept(project, &updated, &resource)?;
    }
    // The flags were checked above with messages that name them; this is the rule book every
    // PROJECT follows (names Kubernetes refuses, Rust types two kinds would share, …).
    updated.check()?;
    let resource = updated
        .resources
        .iter()
        .find(|r| r.same_kind(&resource) && r.version == resource.version)
        .cloned()
        .expect("the resource was just added");
    Ok(ResourceChange {
        types: existing.is_none(),
        controller: with_controller,
        first_of_kind: first.is_none(),
        project: updated,
        resource,
    })
}

/// A new version of a kind, agreeing with the kind's other versions on names and scope.
fn new_resource(
    project: &Project,
    first: Option<&Resource>,
    request: &AddResource,
) -> anyhow::Result<Resource> {
    let (group, version, kind) = (
        request.group.clone(),
        request.version.clone(),
        request.kind.clone(),
    );
    let plural = match &request.plural {
        Some(plural) => plural.clone(),
        None => first.map_or_else(|| ResourceName::plural_of(&kind), |f| f.plural.clone()),
    };
    let short_name = match &request.short_name {
        Some(short) => short.clone(),
        None => first.map_or_else(
            || kind.default_short_name().parse(),
            |f| Ok(f.short_name.clone()),
        )?,
    };
    let namespaced = request
        .namespaced
        .unwrap_or(first.is_none_or(|f| f.namespaced));
    if !namespaced && request.operand.is_some() {
        let kind = kind.to_string();
        return Err(Refusal::ClusterScopedOperand { kind }.into());
    }
    if !namespaced && project.namespaced() {
        let kind = kind.to_string();
        return Err(Refusal::ClusterScopedInNamespaced { kind }.into());
    }
    if let Some(first) = first {
        let differs = |flag, given: String, kept: String| Refusal::DiffersFromFirst {
            flag,
            given,
            kept,
            kind: kind.to_string(),
            group: group.to_string(),
            first: first.version.to_string(),
        };
        if plural != first.plural {
            return Err(differs("--plural", plural.to_string(), first.plural.to_string()).into());
        }
        if short_name != first.short_name {
            let kept = first.short_name.to_string();
            return Err(differs("--short-name", short_name.to_string(), kept).into());
        }
        if namespaced != first.namespaced {
            let kept = first.namespaced.to_string();
            return Err(differs("--namespaced", namespaced.to_string(), kept).into());
        }
    } else if let Some(clash) = project
        .resources
        .iter()
        .find(|r| r.group == group && (r.plural == plural || r.short_name == short_name))
    {
        return Err(Refusal::NamesTaken {
            kind: kind.to_string(),
            plural: plural.to_string(),
            short_name: short_name.to_string(),
            other: clash.kind.to_string(),
            group: group.to_string(),
        }
        .into());
    }
    let operand = match (&request.operand, first) {
        (Some(_), Some(first)) => {
            return Err(Refusal::OperandExists {
                kind: kind.to_string(),
                group: group.to_string(),
                first: first.version.to_string(),
            }
            .into());
        }
        (Some(operand), None) => Some(operand.clone()),
        (None, first) => first.and_then(|f| f.operand.clone()),
    };
    Ok(Resource {
        group,
        version,
        kind,
        plural,
        short_name,
        namespaced,
        controller: false,
        storage: false,
        operand,
        webhooks: None,
    })
}

/// Marks the storage version of the kind of `added`: `--storage` decides when given;
/// otherwise the newest version by Kubernetes priority is stored.
fn choose_storage(project: &mut Project, added: &Resource, storage: Option<bool>) {
    let newest = project
        .versions_of(added)
        .map(|r| r.version.clone())
        .max()
        .expect("the kind has the added version");
    let current = project
        .versions_of(added)
        .find(|r| r.storage)
        .map(|r| r.version.clone());
    let stored = match (storage, current) {
        (Some(true), _) | (None, None) => added.version.clone(),
        (Some(false), Some(current)) => current,
        (Some(false), None) => added.version.clone(),
        (None, Some(_)) => newest,
    };
    for resource in project.resources.iter_mut().filter(|r| r.same_kind(added)) {
        resource.storage = resource.version == stored;
    }
}

/// A kind that converts through a webhook keeps its hub, the storage version: the
/// conversions of its other versions are written against it.
fn check_hub_kept(before: &Project, after: &Project, added: &Resource) -> anyhow::Result<()> {
    if !before.converts(added) {
        return Ok(());
    }
    let stored = |project: &Project| {
        project
            .versions_of(added)
            .find(|r| r.storage)
            .map(|r| r.version.clone())
    };
    if let (Some(hub), Some(new)) = (stored(before), stored(after))
        && hub != new
    {
        return Err(Refusal::HubKept {
            kind: added.kind.to_string(),
            hub: hub.to_string(),
            new: new.to_string(),
        }
        .into());
    }
    Ok(())
}

/// The kind of the project `--references` names, which must suit a Job or CronJob operand kind:
/// one the project owns, namespaced like the new kind, and unambiguous.
fn resolve_reference(
    project: &Project,
    request: &AddResource,
    asked: &RequestedReference,
) -> anyhow::Result<KindReference> {
    let workload = request.operand.as_ref().map(|operand| operand.workload);
    if !workload.is_some_and(Workload::runs_to_completion) {
        let workload = workload.map_or("none", Workload::flag);
        return Err(Refusal::ReferencesWithoutBatch { workload }.into());
    }
    let named = asked.group.as_ref().map_or_else(
        || asked.kind.to_string(),
        |group| format!("{group}/{}", asked.kind),
    );
    let candidates: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| r.kind == asked.kind && asked.group.as_ref().is_none_or(|g| *g == r.group))
        .collect();
    let mut groups: Vec<&Group> = candidates.iter().map(|r| &r.group).collect();
    groups.sort_by_key(|g| g.to_string());
    groups.dedup();
    let group = match groups.as_slice() {
        [] => {
            let mut owned: Vec<String> = project
                .resources
                .iter()
                .map(|r| r.kind.to_string())
                .collect();
            owned.sort();
            owned.dedup();
            return Err(Refusal::ReferencedKindNotOwned { named, owned }.into());
        }
        [group] => (*group).clone(),
        _ if groups.contains(&&request.group) => request.group.clone(),
        _ => {
            return Err(Refusal::ReferencedKindAmbiguous {
                kind: asked.kind.to_string(),
                groups: groups.iter().map(ToString::to_string).collect(),
            }
            .into());
        }
    };
    let referenced = candidates
        .iter()
        .find(|r| r.group == group)
        .expect("a candidate of the group");
    if !referenced.namespaced {
        return Err(Refusal::ReferencedClusterScoped {
            named,
            kind: request.kind.to_string(),
        }
        .into());
    }
    Ok(KindReference {
        group,
        kind: asked.kind.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    fn request(version: &str, kind: &str) -> AddResource {
        AddResource {
            group: "db".parse().unwrap(),
            version: version.parse().unwrap(),
            kind: kind.parse().unwrap(),
            types: true,
            controller: None,
            plural: None,
            short_name: None,
            namespaced: None,
            storage: None,
            operand: None,
            references: None,
        }
    }

    fn refusal(project: &Project, request: AddResource) -> Refusal {
        let err = add_resource(project, request).unwrap_err();
        err.downcast_ref::<Refusal>()
            .unwrap_or_else(|| panic!("not a refusal: {err}"))
            .clone()
    }

    #[test]
    fn refuses_with_the_names_of_the_request() {
        let project = Project {
            resources: vec![Resource::for_test("db", "v1", "Thing")],
            ..Project::for_test("demo", Scope::Cluster)
        };
        assert_eq!(
            refusal(&project, request("v1", "Thing")),
            Refusal::VersionExists(KindVersion::new("Thing", "db", "v1"))
        );
        let plural = AddResource {
            plural: Some("stuff".parse().unwrap()),
            ..request("v2", "Thing")
        };
        assert_eq!(
            refusal(&project, plural),
            Refusal::DiffersFromFirst {
                flag: "--plural",
                given: "stuff".to_owned(),
                kept: "things".to_owned(),
                kind: "Thing".to_owned(),
                group: "db".to_owned(),
                first: "v1".to_owned(),
            }
        );
    }

    fn job_referencing(kind: &str, group: Option<&str>) -> AddResource {
        AddResource {
            operand: Some(Operand {
                image: "mysql:8.0".parse().unwrap(),
                workload: Workload::Job,
                port: None,
                run_as_user: None,
                command: Vec::new(),
                references: None,
                autoscale: false,
            }),
            references: Some(RequestedReference {
                group: group.map(|g| g.parse().unwrap()),
                kind: kind.parse().unwrap(),
            }),
            ..request("v1", "Backup")
        }
    }

    #[test]
    fn a_reference_is_resolved_to_a_kind_of_the_project() {
        let mut global = Resource::for_test("ops", "v1", "Policy");
        global.namespaced = false;
        let project = Project {
            resources: vec![
                Resource::for_test("db", "v1", "Cluster"),
                Resource::for_test("ops", "v1", "Cluster"),
                Resource::for_test("ops", "v1", "Server"),
                global,
            ],
            ..Project::for_test("demo", Scope::Cluster)
        };
        let referenced = |request| {
            let change = add_resource(&project, request).unwrap();
            let reference = change.resource.operand.unwrap().references.unwrap();
            format!("{}/{}", reference.group, reference.kind)
        };
        // Its own group first, then the one group that has it, or the group named.
        assert_eq!(referenced(job_referencing("Cluster", None)), "db/Cluster");
        assert_eq!(referenced(job_referencing("Server", None)), "ops/Server");
        assert_eq!(
            referenced(job_referencing("Cluster", Some("ops"))),
            "ops/Cluster"
        );

        let refused = |request| refusal(&project, request).to_string();
        let unknown = refused(job_referencing("Deployment", None));
        assert!(
            unknown.starts_with("--references Deployment: the project owns no such kind (it owns Cluster, Policy, Server)"),
            "{unknown}"
        );
        let global = refused(job_referencing("Policy", None));
        assert!(
            global.contains("--references Policy: it is cluster-scoped, and Backup is namespaced"),
            "{global}"
        );
        let mut cronjob = job_referencing("Server", None);
        cronjob.operand.as_mut().unwrap().workload = Workload::CronJob;
        assert_eq!(referenced(cronjob), "ops/Server");
        let mut deployment = job_referencing("Cluster", None);
        deployment.operand.as_mut().unwrap().workload = Workload::Deployment;
        let deployment = refused(deployment);
        assert!(
            deployment.contains(
                "--references works with --workload job or cronjob (this kind's workload: deployment)"
            ),
            "{deployment}"
        );

        let elsewhere = Project {
            resources: project.resources[1..].to_vec(),
            ..project.clone()
        };
        let mut in_two = elsewhere.clone();
        in_two
            .resources
            .push(Resource::for_test("cache", "v1", "Cluster"));
        let ambiguous = refusal(&in_two, job_referencing("Cluster", None)).to_string();
        assert!(
            ambiguous.ends_with("Name its group: --references cache/Cluster"),
            "{ambiguous}"
        );
    }
}
