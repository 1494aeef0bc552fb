//! The rules a `PROJECT` must follow, checked whenever one is read and before `create api`
//! writes one, so that a hand edit and a command meet the same rules with the same messages.
//!
//! Each rule has a reason outside opgen's taste: Kubernetes would refuse the CRD (names that
//! conflict within a group, names too long), the generated code would not compile (two kinds
//! defining one Rust type in one module, two kinds in one file), or the operator could not
//! work (a cluster-scoped kind watched through a Role).

use super::Project;
pub use super::broken_rule::{BrokenRule, Violation};
use crate::model::{KindReference, Operand, Resource};

/// The longest DNS-1123 subdomain, which CRD names and API groups are.
const MAX_SUBDOMAIN: usize = 253;

/// The first rule `project` breaks, if any. Resources are checked in order, each against
/// those before it, so the violation points at the later of two clashing entries.
pub fn check(project: &Project) -> Result<(), Violation> {
    for (index, resource) in project.resources.iter().enumerate() {
        let violation = |rule: BrokenRule| Violation {
            resource: index,
            rule: Box::new(rule),
        };
        let earlier = &project.resources[..index];
        check_alone(project, resource).map_err(violation)?;
        for other in earlier {
            if resource.same_kind(other) {
                check_versions(resource, other).map_err(violation)?;
            } else if resource.group == other.group {
                check_neighbours(resource, other).map_err(violation)?;
            }
        }
        let versions: Vec<&Resource> = project.versions_of(resource).collect();
        let is_last_version = versions
            .last()
            .is_some_and(|last| std::ptr::eq(*last, resource));
        if is_last_version {
            check_kind(resource, &versions).map_err(violation)?;
        }
    }
    Ok(())
}

/// What one entry must be, whatever the others are.
fn check_alone(project: &Project, resource: &Resource) -> Result<(), BrokenRule> {
    let kind = &resource.kind;
    if !resource.namespaced && project.namespaced() {
        return Err(BrokenRule::ClusterScopedKind {
            kind: kind.to_string(),
        });
    }
    if let Some(operand) = &resource.operand {
        if !resource.namespaced {
            return Err(BrokenRule::ClusterScopedOperand {
                kind: kind.to_string(),
            });
        }
        check_operand(operand)?;
        if let Some(reference) = &operand.references {
            check_reference(project, resource, operand, reference)?;
        }
    }
    if resource
        .webhooks
        .is_some_and(|webhooks| webhooks.is_empty())
    {
        return Err(BrokenRule::NoWebhooks {
            kind: kind.to_string(),
            group: resource.group.to_string(),
            version: resource.version.to_string(),
        });
    }
    let group = resource.qualified_group(&project.domain);
    if group.len() > MAX_SUBDOMAIN {
        return Err(BrokenRule::GroupTooLong {
            length: group.len(),
            group,
            kind: kind.to_string(),
            max: MAX_SUBDOMAIN,
        });
    }
    let crd = resource.crd_name(&project.domain);
    if crd.len() > MAX_SUBDOMAIN {
        return Err(BrokenRule::CrdNameTooLong {
            length: crd.len(),
            crd,
            kind: kind.to_string(),
            max: MAX_SUBDOMAIN,
        });
    }
    Ok(())
}

fn check_operand(operand: &Operand) -> Result<(), BrokenRule> {
    if operand.port == Some(0) {
        return Err(BrokenRule::PortZero);
    }
    // `runAsUser` is a `NonRootId`: reading PROJECT already refused root and out-of-range IDs.
    if operand.command.iter().any(String::is_empty) {
        return Err(BrokenRule::EmptyCommandArgument);
    }
    if operand.autoscale && operand.workload.runs_to_completion() {
        return Err(BrokenRule::AutoscaledBatch {
            workload: operand.workload.kind(),
        });
    }
    Ok(())
}

/// A Job or CronJob operand's reference: to a namespaced kind of the project's own.
fn check_reference(
    project: &Project,
    resource: &Resource,
    operand: &Operand,
    reference: &KindReference,
) -> Result<(), BrokenRule> {
    let kind = resource.kind.to_string();
    if !operand.workload.runs_to_completion() {
        return Err(BrokenRule::ReferenceWithoutBatch { kind });
    }
    let referenced = format!("{}/{}", reference.group, reference.kind);
    match project
        .resources
        .iter()
        .find(|r| r.group == reference.group && r.kind == reference.kind)
    {
        None => Err(BrokenRule::UnknownReference { kind, referenced }),
        Some(target) if !target.namespaced => {
            Err(BrokenRule::ClusterScopedReference { kind, referenced })
        }
        Some(_) => Ok(()),
    }
}

/// Two versions of one kind: one CRD holds them, so they share its names and scope, and the
/// operand recorded with the first.
fn check_versions(resource: &Resource, other: &Resource) -> Result<(), BrokenRule> {
    let kind = &resource.kind;
    let (group, version, first) = (&resource.group, &resource.version, &other.version);
    if version == first {
        return Err(BrokenRule::ListedTwice {
            kind: kind.to_string(),
            group: group.to_string(),
            version: version.to_string(),
        });
    }
    let differs = |what: &'static str, this: String, that: String| BrokenRule::VersionsDiffer {
        entry: format!("{kind} {group}/{version}"),
        first: format!("{kind} {group}/{first}"),
        what,
        this,
        that,
    };
    if resource.plural != other.plural {
        return Err(differs(
            "plural",
            resource.plural.to_string(),
            other.plural.to_string(),
        ));
    }
    if resource.short_name != other.short_name {
        return Err(differs(
            "shortName",
            resource.short_name.to_string(),
            other.short_name.to_string(),
        ));
    }
    if resource.namespaced != other.namespaced {
        return Err(differs(
            "namespaced",
            resource.namespaced.to_string(),
            other.namespaced.to_string(),
        ));
    }
    if resource.operand != other.operand {
        return Err(BrokenRule::OperandsDiffer {
            kind: kind.to_string(),
            group: group.to_string(),
            version: version.to_string(),
            first: first.to_string(),
        });
    }
    Ok(())
}

/// Two kinds of one group: Kubernetes refuses a CRD whose names another CRD of the group
/// already uses, and the generated files and Rust types of the two must not collide.
fn check_neighbours(resource: &Resource, other: &Resource) -> Result<(), BrokenRule> {
    let (kind, group) = (&resource.kind, &resource.group);
    let clash = |what: &'static str, name: &str| BrokenRule::SameName {
        kind: kind.to_string(),
        other: other.kind.to_string(),
        group: group.to_string(),
        what,
        name: name.to_owned(),
    };
    if kind.singular() == other.kind.singular() {
        return Err(BrokenRule::CaseOnly {
            kind: kind.to_string(),
            other: other.kind.to_string(),
            group: group.to_string(),
            singular: kind.singular(),
        });
    }
    if resource.plural == other.plural {
        return Err(clash("plural", resource.plural.as_str()));
    }
    if resource.short_name == other.short_name {
        return Err(clash("shortName", resource.short_name.as_str()));
    }
    for (this, that) in [(resource, other), (other, resource)] {
        if this.kind.as_str() == format!("{}List", that.kind) {
            return Err(BrokenRule::ListName {
                kind: resource.kind.to_string(),
                other: other.kind.to_string(),
                group: group.to_string(),
                listed: that.kind.to_string(),
            });
        }
    }
    if resource.version == other.version {
        let theirs = other.rust_type_names();
        if let Some(shared) = resource
            .rust_type_names()
            .into_iter()
            .find(|name| theirs.contains(name))
        {
            return Err(BrokenRule::SharedRustType {
                kind: kind.to_string(),
                other: other.kind.to_string(),
                group_version: format!("{group}/{}", resource.version),
                shared: shared.to_string(),
            });
        }
    }
    Ok(())
}

/// All versions of one kind, checked once with the last of them.
fn check_kind(resource: &Resource, versions: &[&Resource]) -> Result<(), BrokenRule> {
    let (kind, group) = (&resource.kind, &resource.group);
    let stored: Vec<String> = versions
        .iter()
        .filter(|r| r.storage)
        .map(|r| r.version.to_string())
        .collect();
    if stored.len() != 1 {
        return Err(BrokenRule::StorageVersions {
            kind: kind.to_string(),
            group: group.to_string(),
            stored,
        });
    }
    let controlled: Vec<String> = versions
        .iter()
        .filter(|r| r.controller)
        .map(|r| r.version.to_string())
        .collect();
    if controlled.len() > 1 {
        return Err(BrokenRule::Controllers {
            kind: kind.to_string(),
            group: group.to_string(),
            controlled,
        });
    }
    let converting = versions
        .iter()
        .find(|r| r.webhooks.is_some_and(|webhooks| webhooks.conversion));
    if let (Some(converting), [_]) = (converting, versions) {
        return Err(BrokenRule::NothingToConvert {
            kind: kind.to_string(),
            group: group.to_string(),
            version: converting.version.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        model::{Operand, Webhooks, Workload},
        project::Scope,
    };

    fn project(resources: Vec<Resource>) -> Project {
        Project {
            resources,
            ..Project::for_test("demo", Scope::Cluster)
        }
    }

    fn resource(group: &str, version: &str, kind: &str) -> Resource {
        Resource::for_test(group, version, kind)
    }

    fn second_version(group: &str, version: &str, kind: &str) -> Resource {
        Resource {
            storage: false,
            controller: false,
            ..resource(group, version, kind)
        }
    }

    fn fails(resources: Vec<Resource>, index: usize, needle: &str) {
        let violation = check(&project(resources)).unwrap_err();
        assert_eq!(violation.resource, index, "{violation}");
        assert!(
            violation.to_string().contains(needle),
            "{needle:?} not in: {violation}"
        );
    }

    #[test]
    fn a_consistent_project_passes() {
        check(&project(vec![
            resource("db", "v1", "MySQLCluster"),
            second_version("db", "v1alpha1", "MySQLCluster"),
            resource("db", "v1", "Backup"),
            resource("ops", "v1", "Backup"),
            resource("db", "v1", "Foo"),
            resource("db", "v2", "FooSpec"),
            resource("db", "v1", "Option"),
            resource("db", "v1", "OptionSpecification"),
        ]))
        .unwrap();
    }

    #[test]
    fn versions_of_a_kind_agree() {
        fails(
            vec![resource("db", "v1", "Thing"), resource("db", "v1", "Thing")],
            1,
            "listed twice",
        );
        let mut other_plural = second_version("db", "v2", "Thing");
        other_plural.plural = "thingies".parse().unwrap();
        fails(
            vec![resource("db", "v1", "Thing"), other_plural],
            1,
            "has plural `thingies`, but Thing db/v1 has `things`",
        );
        let mut other_short = second_version("db", "v2", "Thing");
        other_short.short_name = "tg".parse().unwrap();
        fails(
            vec![resource("db", "v1", "Thing"), other_short],
            1,
            "shortName `tg`",
        );
        let mut cluster = second_version("db", "v2", "Thing");
        cluster.namespaced = false;
        fails(
            vec![resource("db", "v1", "Thing"), cluster],
            1,
            "namespaced `false`",
        );
    }

    #[test]
    fn one_storage_version_and_at_most_one_controller() {
        fails(
            vec![
                resource("db", "v1", "Thing"),
                Resource {
                    controller: false,
                    ..resource("db", "v2", "Thing")
                },
            ],
            1,
            "2 storage versions (v1, v2)",
        );
        fails(
            vec![second_version("db", "v1", "Thing")],
            0,
            "0 storage versions",
        );
        fails(
            vec![
                resource("db", "v1", "Thing"),
                Resource {
                    storage: false,
                    ..resource("db", "v2", "Thing")
                },
            ],
            1,
            "`controller: true` on v1 and v2",
        );
    }

    #[test]
    fn webhooks_are_recorded_only_when_there_are_some() {
        let with = |webhooks: Webhooks| Resource {
            webhooks: Some(webhooks),
            ..resource("db", "v1", "Thing")
        };
        fails(
            vec![with(Webhooks::default())],
            0,
            "records `webhooks` without any",
        );
        check(&project(vec![with(Webhooks {
            defaulting: true,
            ..Webhooks::default()
        })]))
        .unwrap();
    }

    #[test]
    fn conversion_needs_two_versions() {
        let conversion = Some(Webhooks {
            conversion: true,
            ..Webhooks::default()
        });
        let single = Resource {
            webhooks: conversion,
            ..resource("db", "v1", "Thing")
        };
        fails(vec![single.clone()], 0, "has only one version");
        check(&project(vec![
            single,
            second_version("db", "v1alpha1", "Thing"),
        ]))
        .unwrap();
    }

    #[test]
    fn kinds_of_a_group_keep_their_names_apart() {
        fails(
            vec![
                resource("db", "v1", "MySQLCluster"),
                resource("db", "v1", "MySqlCluster"),
            ],
            1,
            "differ only in letter case",
        );
        let mut same_plural = resource("db", "v1", "Other");
        same_plural.plural = "things".parse().unwrap();
        fails(
            vec![resource("db", "v1", "Thing"), same_plural],
            1,
            "same plural `things`",
        );
        let mut same_short = resource("db", "v1", "Thong");
        same_short.short_name = "thi".parse().unwrap();
        fails(
            vec![resource("db", "v1", "Thing"), same_short],
            1,
            "same shortName `thi`",
        );
        // The same names in two groups are two CRDs that never meet.
        check(&project(vec![
            resource("db", "v1", "Thing"),
            resource("ops", "v1", "Thing"),
        ]))
        .unwrap();
    }

    #[test]
    fn a_kind_is_not_named_like_the_list_of_another() {
        for (first, second) in [("Thing", "ThingList"), ("ThingList", "Thing")] {
            fails(
                vec![resource("db", "v1", first), resource("db", "v2", second)],
                1,
                "Kubernetes names the lists of Thing `ThingList`",
            );
        }
        // Two groups are two sets of names.
        check(&project(vec![
            resource("db", "v1", "Thing"),
            resource("ops", "v1", "ThingList"),
        ]))
        .unwrap();
    }

    #[test]
    fn kinds_sharing_a_version_module_define_distinct_types() {
        fails(
            vec![resource("db", "v1", "Foo"), resource("db", "v1", "FooSpec")],
            1,
            "FooSpec and Foo of db/v1 would both define the Rust type `FooSpec`",
        );
        fails(
            vec![
                resource("db", "v1", "FooStatus"),
                resource("db", "v1", "Foo"),
            ],
            1,
            "both define the Rust type `FooStatus`",
        );
        // `Option`'s objects are `OptionResource`, since `Option` is the prelude's.
        fails(
            vec![
                resource("db", "v1", "Option"),
                resource("db", "v1", "OptionResource"),
            ],
            1,
            "both define the Rust type `OptionResource`",
        );
        let mut statefulset = resource("db", "v1", "Cache");
        statefulset.operand = Some(Operand {
            workload: Workload::StatefulSet,
            ..operand()
        });
        fails(
            vec![statefulset, resource("db", "v1", "CacheStorage")],
            1,
            "both define the Rust type `CacheStorage`",
        );
        let mut autoscaled = resource("db", "v1", "Web");
        autoscaled.operand = Some(Operand {
            autoscale: true,
            ..operand()
        });
        fails(
            vec![autoscaled, resource("db", "v1", "WebAutoscaling")],
            1,
            "both define the Rust type `WebAutoscaling`",
        );
        let mut batch = resource("db", "v1", "Backup");
        batch.operand = Some(Operand {
            workload: Workload::Job,
            autoscale: true,
            ..operand()
        });
        fails(vec![batch], 0, "`autoscale` is set on a Job");
    }

    #[test]
    fn scope_rules() {
        let mut cluster = resource("ops", "v1", "Thing");
        cluster.namespaced = false;
        let namespaced_operator = Project {
            resources: vec![cluster.clone()],
            ..Project::for_test("demo", Scope::Namespace)
        };
        let violation = check(&namespaced_operator).unwrap_err();
        assert!(
            violation.to_string().contains("a Role cannot grant access"),
            "{violation}"
        );
        cluster.operand = Some(operand());
        fails(vec![cluster], 0, "must be namespaced");
    }

    #[test]
    fn a_violation_names_its_rule_and_prints_the_hint_under_the_problem() {
        let (first, mut twin) = (resource("db", "v1", "Cache"), resource("db", "v2", "Cache"));
        twin.plural = "caches2".parse().unwrap();
        twin.storage = false;
        let violation = check(&project(vec![first, twin])).unwrap_err();
        let BrokenRule::VersionsDiffer { what, this, .. } = &*violation.rule else {
            panic!("{violation:?}");
        };
        assert_eq!((*what, this.as_str()), ("plural", "caches2"));
        assert_eq!(violation.rule.hint(), None);

        let mut cluster = resource("ops", "v1", "Thing");
        cluster.namespaced = false;
        let namespaced_operator = Project {
            resources: vec![cluster],
            ..Project::for_test("demo", Scope::Namespace)
        };
        let violation = check(&namespaced_operator).unwrap_err();
        let hint = violation.rule.hint().expect("a hint");
        assert_eq!(
            hint,
            "Make the kind namespaced, or the operator cluster-wide"
        );
        assert_eq!(
            violation.to_string(),
            format!("{}\n\n{hint}", violation.rule)
        );
    }

    fn operand() -> Operand {
        Operand {
            image: "nginx:1".parse().unwrap(),
            workload: Workload::Deployment,
            port: None,
            run_as_user: None,
            command: Vec::new(),
            references: None,
            autoscale: false,
        }
    }

    #[test]
    fn operands_are_checked_like_the_flags() {
        for (change, needle) in [
            (
                (|o: &mut Operand| o.port = Some(0)) as fn(&mut Operand),
                "`port` is 0",
            ),
            (|o| o.command = vec![String::new()], "empty argument"),
        ] {
            let mut bad = operand();
            change(&mut bad);
            let mut thing = resource("db", "v1", "Thing");
            thing.operand = Some(bad);
            fails(vec![thing], 0, needle);
        }
        let mut first = resource("db", "v1", "Thing");
        first.operand = Some(operand());
        fails(
            vec![first, second_version("db", "v2", "Thing")],
            1,
            "different operands",
        );
    }

    #[test]
    fn a_reference_names_a_namespaced_kind_of_the_project_from_a_job_or_cronjob() {
        let backup = |workload, kind: &str| {
            let mut backup = resource("db", "v1", "Backup");
            backup.operand = Some(Operand {
                workload,
                references: Some(KindReference {
                    group: "db".parse().unwrap(),
                    kind: kind.parse().unwrap(),
                }),
                ..operand()
            });
            backup
        };
        let cluster = resource("db", "v1", "Cluster");
        check(&project(vec![
            cluster.clone(),
            backup(Workload::Job, "Cluster"),
        ]))
        .unwrap();
        fails(
            vec![cluster.clone(), backup(Workload::Job, "Database")],
            1,
            "`references` db/Database, which is not a kind of the project",
        );
        check(&project(vec![
            cluster.clone(),
            backup(Workload::CronJob, "Cluster"),
        ]))
        .unwrap();
        fails(
            vec![cluster.clone(), backup(Workload::StatefulSet, "Cluster")],
            1,
            "only a Job or CronJob operand can",
        );
        let global = Resource {
            namespaced: false,
            ..cluster
        };
        fails(
            vec![global, backup(Workload::Job, "Cluster")],
            1,
            "which is cluster-scoped",
        );
    }

    #[test]
    fn derived_names_stay_within_kubernetes_limits() {
        let labels = vec!["a".repeat(60); 4].join(".");
        let mut project = project(vec![resource("db", "v1", "Thing")]);
        // `db.<domain>` fits in 253 characters, `things.db.<domain>` does not.
        project.domain = format!("{labels}.abcd").parse().unwrap();
        let violation = check(&project).unwrap_err();
        assert!(
            violation
                .to_string()
                .contains("the CRD name `things.db.aaa"),
            "{violation}"
        );
        assert!(violation.to_string().contains("253"), "{violation}");

        project.domain = format!("{labels}.abcdefg").parse().unwrap();
        let violation = check(&project).unwrap_err();
        assert!(
            violation.to_string().contains("the API group `db.aaa"),
            "{violation}"
        );
    }
}
