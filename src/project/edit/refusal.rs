//! What an edit of `PROJECT` refuses to do with the command line's request, typed like a
//! broken rule ([`BrokenRule`]): the problem with the names it is about, and the advice
//! printed under it.
//!
//! A refusal is its own type, not more rules: a rule is about an entry of `PROJECT` as the
//! file spells it, and has an entry to point at; a refusal is about the flags as the user
//! typed them, before anything is recorded. Where both say the same, the refusal holds the
//! rule.

use crate::{model::UnknownBuiltIn, project::BrokenRule};

/// What a request asks that `PROJECT` cannot take. Flags are named as typed. It prints as
/// the problem, then the advice under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    // ---- create api, a kind of the project's own.
    ImageWithoutTypes,
    SecondController {
        asked: KindVersion,
        /// The version the kind's controller watches.
        watching: String,
    },
    VersionExists(KindVersion),
    ControllerExists(KindVersion),
    AsksForNothing,
    /// `--resource=false` for a version without types; also a kind of the project's group
    /// that is not built in.
    NoTypes(KindVersion),
    ClusterScopedOperand {
        kind: String,
    },
    ClusterScopedInNamespaced {
        kind: String,
    },
    /// `flag` gives `given` where the kind's first version, `first`, has `kept`.
    DiffersFromFirst {
        flag: &'static str,
        given: String,
        kept: String,
        kind: String,
        group: String,
        first: String,
    },
    NamesTaken {
        kind: String,
        plural: String,
        short_name: String,
        other: String,
        group: String,
    },
    OperandExists {
        kind: String,
        group: String,
        first: String,
    },
    /// `--references` with another workload than a Job or CronJob (`none` without `--image`).
    ReferencesWithoutBatch {
        workload: &'static str,
    },
    /// `--references` names a kind that is not among the project's own.
    ReferencedKindNotOwned {
        named: String,
        owned: Vec<String>,
    },
    ReferencedKindAmbiguous {
        kind: String,
        groups: Vec<String>,
    },
    /// `--references` names a cluster-scoped kind, while the new `kind` is namespaced.
    ReferencedClusterScoped {
        named: String,
        kind: String,
    },
    HubKept {
        kind: String,
        hub: String,
        new: String,
    },

    // ---- create webhook.
    NotOwned {
        kind: String,
        /// The group as shown: `core` for the core group.
        group: String,
        owner: Owner,
    },
    NoWebhookAsked,
    NoSuchVersion {
        asked: KindVersion,
        /// The versions the kind has, if any.
        known: Vec<String>,
    },
    OneVersionConversion(KindVersion),
    WebhooksExist {
        asked: KindVersion,
        flags: Vec<&'static str>,
    },

    // ---- delete api, delete webhook.
    /// A kind or version to delete that `PROJECT` does not have; `known` lists what it has.
    NotInProject {
        asked: KindVersion,
        known: Vec<String>,
    },
    /// The storage version (the hub, when the kind converts) of a kind with other versions.
    StorageVersionKept {
        asked: KindVersion,
        others: Vec<String>,
        hub: bool,
    },
    /// Kinds whose objects reference the kind to delete (`create api --references`).
    ReferencedBy {
        kind: String,
        group: String,
        referrers: Vec<String>,
    },
    /// The version the kind's controller watches, whose `use` line opgen cannot find in `file`.
    ControllerWatches {
        asked: KindVersion,
        file: String,
        storage: String,
    },
    /// Webhooks asked for deletion that the version does not have.
    NoSuchWebhook {
        asked: KindVersion,
        flags: Vec<&'static str>,
        /// The flags of the webhooks it has.
        has: Vec<&'static str>,
    },
    /// A version without webhooks; `elsewhere` lists the versions that have some.
    HasNoWebhooks {
        asked: KindVersion,
        elsewhere: Vec<String>,
    },

    // ---- edit.
    /// `--namespaced` for a project with cluster-scoped kinds, which a Role cannot grant.
    ClusterScopedKinds {
        kinds: Vec<String>,
    },
    /// `edit` without a flag: what it can change, and what the project has now.
    NoEditAsked {
        scope: &'static str,
        license: String,
        owner: String,
    },

    // ---- create api --resource=false, a kind the project does not own.
    UnknownKind {
        kind: String,
        unknown: UnknownBuiltIn,
    },
    NotACrd {
        file: String,
        problem: String,
    },
    CrdGroup {
        file: String,
        defined: String,
        asked: String,
    },
    CrdKind {
        file: String,
        defined: String,
        asked: String,
    },
    CrdVersion {
        file: String,
        kind: String,
        /// The versions the CRD defines, listed.
        versions: String,
        asked: String,
    },
    /// A kind watched already: the rule `PROJECT` would break, said before it is recorded.
    Breaks(BrokenRule),
}

/// The version of a kind a request names, shown as `<kind> <group>/<version>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindVersion {
    pub kind: String,
    pub group: String,
    pub version: String,
}

impl KindVersion {
    pub fn new(kind: impl ToString, group: impl ToString, version: impl ToString) -> Self {
        KindVersion {
            kind: kind.to_string(),
            group: group.to_string(),
            version: version.to_string(),
        }
    }

    /// The command that creates it.
    fn create_api(&self) -> String {
        let KindVersion {
            kind,
            group,
            version,
        } = self;
        format!("opgen create api --group {group} --version {version} --kind {kind}")
    }
}

impl std::fmt::Display for KindVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.group, self.version)
    }
}

/// Whose kind one is that the project does not own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// Another project's, whose CRD is stored at this path.
    ExternalCrd(String),
    /// Kubernetes', recorded under `foreignKinds`.
    RecordedBuiltIn,
    /// Kubernetes', and not recorded.
    BuiltIn,
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Owner::ExternalCrd(crd) => write!(
                f,
                "a kind of another project's CRD ({crd}), recorded under `foreignKinds` in PROJECT"
            ),
            Owner::RecordedBuiltIn => {
                f.write_str("a built-in Kubernetes kind, recorded under `foreignKinds` in PROJECT")
            }
            Owner::BuiltIn => f.write_str("a built-in Kubernetes kind"),
        }
    }
}

impl std::error::Error for Refusal {}

// Written out rather than derived with the advice apart (as `BrokenRule` is, under
// `Violation`): however a refusal becomes an `anyhow::Error`, `?` included, its advice stays.
impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.problem(f)?;
        match self.hint() {
            Some(hint) => write!(f, "\n\n{hint}"),
            None => Ok(()),
        }
    }
}

impl Refusal {
    fn problem(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use Refusal::*;
        match self {
            ImageWithoutTypes => {
                f.write_str("--image describes new types, so it cannot go with --resource=false")
            }
            SecondController { asked, watching } => write!(
                f,
                "{} already has a controller (it watches {}/{watching}); one controller runs per kind",
                asked.kind, asked.group
            ),
            VersionExists(asked) => write!(f, "{asked} already exists in PROJECT"),
            ControllerExists(asked) => write!(
                f,
                "{asked} has a controller already; there is nothing to add"
            ),
            AsksForNothing => f.write_str(
                "--resource=false --controller=false asks for nothing; drop one of them",
            ),
            NoTypes(asked) => write!(
                f,
                "--resource=false needs the types of {asked} to exist, and PROJECT has none"
            ),
            ClusterScopedOperand { kind } => write!(
                f,
                "{kind} cannot be cluster-scoped: it runs its application (--image) in a workload in the namespace of each {kind} object"
            ),
            ClusterScopedInNamespaced { kind } => write!(
                f,
                "{kind} cannot be cluster-scoped in this project: its operator is namespaced (`opgen init --namespaced`), so it watches one namespace with a Role, and a Role cannot grant access to cluster-scoped objects"
            ),
            DiffersFromFirst {
                flag,
                given,
                kept,
                kind,
                group,
                first,
            } => write!(
                f,
                "{flag} `{given}` differs from `{kept}` of {kind} {group}/{first}: every version of a kind shares it"
            ),
            ReferencesWithoutBatch { workload } => write!(
                f,
                "--references works with --workload job or cronjob (this kind's workload: {workload}): the referenced object's address goes to the environment of the Jobs each object runs"
            ),
            ReferencedKindNotOwned { named, owned } => write!(
                f,
                "--references {named}: the project owns no such kind (it owns {})",
                if owned.is_empty() {
                    "none".to_owned()
                } else {
                    owned.join(", ")
                }
            ),
            ReferencedKindAmbiguous { kind, groups } => write!(
                f,
                "--references {kind}: the project has {kind} in the groups {}",
                groups.join(", ")
            ),
            ReferencedClusterScoped { named, kind } => write!(
                f,
                "--references {named}: it is cluster-scoped, and {kind} is namespaced: its objects may only reference objects in their own namespace"
            ),
            NamesTaken {
                kind,
                plural,
                short_name,
                other,
                group,
            } => write!(
                f,
                "{kind} would share its plural `{plural}` or short name `{short_name}` with {other} in group {group}"
            ),
            OperandExists { kind, group, first } => write!(
                f,
                "--image is set by the first version of a kind, and {kind} {group}/{first} has it already"
            ),
            HubKept { kind, hub, new } => write!(
                f,
                "{kind} converts through {hub}, its hub (the storage version), and the conversions of its other versions are written against it: {new} cannot become the storage version"
            ),
            NotOwned { kind, group, owner } => write!(
                f,
                "{kind} ({group}) is {owner}: webhooks are for the kinds this project owns, whose CRDs it installs, and {kind}'s admission and conversion belong to its owner"
            ),
            NoWebhookAsked => f.write_str("no webhook asked for"),
            NoSuchVersion { asked, known } => {
                write!(f, "{asked} is not in PROJECT")?;
                if !known.is_empty() {
                    write!(f, " (it has {})", known.join(", "))?;
                }
                f.write_str(": a webhook is added to a kind that exists")
            }
            OneVersionConversion(asked) => write!(
                f,
                "--conversion needs a kind with two versions or more, and {} has only {}: there is nothing to convert",
                asked.kind, asked.version
            ),
            WebhooksExist { asked, flags } => write!(
                f,
                "{asked} has the webhooks of {} already",
                flags.join(" and ")
            ),
            NotInProject { asked, known } => {
                write!(f, "{asked} is not in PROJECT")?;
                if known.is_empty() {
                    f.write_str(", which has no kinds")
                } else {
                    write!(f, ", which has {}", known.join(", "))
                }
            }
            StorageVersionKept { asked, others, hub } => write!(
                f,
                "{} is the storage version of {}{}, which has other versions ({}): the API server stores every {} as {}",
                asked.version,
                asked.kind,
                if *hub {
                    " and the hub its other versions convert through"
                } else {
                    ""
                },
                others.join(", "),
                asked.kind,
                asked.version
            ),
            ReferencedBy {
                kind,
                group,
                referrers,
            } => write!(
                f,
                "{kind} ({group}) is referenced by {} (`create api --references`): their objects name {kind} objects",
                referrers.join(", ")
            ),
            ControllerWatches {
                asked,
                file,
                storage,
            } => write!(
                f,
                "the controller of {} watches {}, and {file} has no `use` of that version's module that opgen can point at {storage}",
                asked.kind, asked.version
            ),
            NoSuchWebhook { asked, flags, has } => {
                write!(f, "{asked} has no webhook of {}", flags.join(" or "))?;
                if has.is_empty() {
                    Ok(())
                } else {
                    write!(f, " (it has {})", has.join(", "))
                }
            }
            HasNoWebhooks { asked, elsewhere } => {
                write!(f, "{asked} has no webhooks")?;
                if elsewhere.is_empty() {
                    f.write_str(", and neither has any other version of the project")
                } else {
                    write!(f, "; those of the project are on {}", elsewhere.join(", "))
                }
            }
            ClusterScopedKinds { kinds } => write!(
                f,
                "--namespaced: a namespaced operator watches one namespace with a Role, which grants nothing on cluster-scoped objects, and the project's controllers watch {}",
                kinds.join(", ")
            ),
            NoEditAsked {
                scope,
                license,
                owner,
            } => write!(
                f,
                "nothing to change: opgen edit changes the project-wide choices of `opgen init`, and is given none\n\n  --namespaced, --cluster-wide   the operator's scope (now {scope})\n  --license apache2|mit|none     the project's license (now {license})\n  --owner NAME                   the copyright owner of the license (now {owner})"
            ),
            UnknownKind { kind, unknown } => write!(
                f,
                "{kind} is not a kind of this project, nor a built-in kind: {unknown}"
            ),
            NotACrd { file, problem } => write!(
                f,
                "--external-crd {file} is not a CRD opgen can use: {problem}"
            ),
            CrdGroup {
                file,
                defined,
                asked,
            } => write!(f, "{file} defines group `{defined}`, not `{asked}`"),
            CrdKind {
                file,
                defined,
                asked,
            } => write!(f, "{file} defines the kind {defined}, not {asked}"),
            CrdVersion {
                file,
                kind,
                versions,
                asked,
            } => write!(
                f,
                "{file} defines {kind} in version(s) {versions}, not {asked}"
            ),
            Breaks(rule) => write!(f, "{rule}"),
        }
    }

    /// The advice printed under the problem, when there is more to say.
    pub fn hint(&self) -> Option<String> {
        use Refusal::*;
        let hint = match self {
            SecondController { asked, .. } => format!(
                "Pass --controller=false to add only the types of {}",
                asked.version
            ),
            VersionExists(_) => "Use another --version to add a version, or --resource=false --controller to add its controller".to_owned(),
            NoTypes(asked) => format!("Create them first: {}", asked.create_api()),
            ClusterScopedOperand { .. } => "Drop --namespaced=false".to_owned(),
            ClusterScopedInNamespaced { .. } => {
                "Drop --namespaced=false, or keep cluster-scoped kinds in a cluster-wide operator"
                    .to_owned()
            }
            DiffersFromFirst { kept, .. } => format!("Drop the flag to keep `{kept}`"),
            NamesTaken { .. } => "Choose another with --plural or --short-name".to_owned(),
            ReferencesWithoutBatch { .. } => "Add --image and --workload job or cronjob, or drop --references".to_owned(),
            ReferencedKindNotOwned { .. } => "Name a kind made with `opgen create api` (without --resource=false), or create that kind first".to_owned(),
            ReferencedKindAmbiguous { kind, groups } => format!(
                "Name its group: --references {}/{kind}",
                groups.first().map_or("<group>", String::as_str)
            ),
            ReferencedClusterScoped { .. } => "Reference a namespaced kind, or drop --references".to_owned(),
            OperandExists { .. } => "Drop --image and the other operand flags: the new version keeps the kind's operand".to_owned(),
            HubKept { hub, new, .. } => format!(
                "Pass --storage=false to add {new} as a version that converts through {hub}"
            ),
            NotOwned { .. } => "opgen scaffolds webhooks for those only: add them to a kind made with `opgen create api` (without --resource=false)".to_owned(),
            NoWebhookAsked => {
                "Pass at least one of --defaulting, --validation and --conversion".to_owned()
            }
            NoSuchVersion { asked, .. } => format!("Create it first: {}", asked.create_api()),
            OneVersionConversion(asked) => format!(
                "Add a version first: opgen create api --group {} --version <new> --kind {}",
                asked.group, asked.kind
            ),
            WebhooksExist { flags, .. } => format!(
                "Drop {}, or pass --force to scaffold them again (see the changes first with --dry-run)",
                if flags.len() == 1 { "it" } else { "them" }
            ),
            NotInProject { .. } => "Name one of those with --group, --version and --kind".to_owned(),
            StorageVersionKept { asked, hub, .. } => format!(
                "Delete the other versions first, or make another one the storage version{}: set `storage: true` on its entry in PROJECT and `storage: false` on {}'s, run `make manifests`, and migrate the stored objects before you delete {}",
                if *hub { " (and so the hub: its conversions are written against it)" } else { "" },
                asked.version,
                asked.version
            ),
            ReferencedBy { referrers, .. } => format!(
                "Delete {} first, or remove the reference from it",
                if referrers.len() == 1 { "it" } else { "them" }
            ),
            ControllerWatches { asked, storage, .. } => format!(
                "Point the controller at {storage} yourself (its `use` of the {} module, `as api`), set `controller: true` on {storage}'s entry in PROJECT and `controller: false` on {}'s, then run this again",
                asked.version, asked.version
            ),
            NoSuchWebhook { has, .. } if has.is_empty() => {
                "Drop the flag".to_owned()
            }
            NoSuchWebhook { .. } => "Drop the flag, or name one it has".to_owned(),
            HasNoWebhooks { .. } => "Name a version that has webhooks".to_owned(),
            ClusterScopedKinds { kinds } => format!(
                "Delete {} first (`opgen delete api`), or keep the operator cluster-wide",
                if kinds.len() == 1 { "that kind" } else { "those kinds" }
            ),
            NoEditAsked { .. } => "Pass one of them or more".to_owned(),
            UnknownKind { .. } => "For a kind of your own, drop --resource=false; for another project's CRD, add --external-crd <file>".to_owned(),
            NotACrd { .. } => "Pass the file of an `apiextensions.k8s.io/v1` CustomResourceDefinition, as its project publishes it".to_owned(),
            CrdGroup { defined, .. } => format!("Pass --group {defined}"),
            CrdKind { defined, asked, .. } => {
                format!("Pass --kind {defined}, or the CRD file that defines {asked}")
            }
            CrdVersion { .. } => "Pass --version with one of them".to_owned(),
            Breaks(rule) => return rule.hint(),
            ImageWithoutTypes | ControllerExists(_) | AsksForNothing => return None,
        };
        Some(hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Violation;

    #[test]
    fn prints_the_problem_then_its_advice() {
        let asked = KindVersion::new("Thing", "db", "v1");
        assert_eq!(
            Refusal::NoTypes(asked).to_string(),
            "--resource=false needs the types of Thing db/v1 to exist, and PROJECT has none\n\nCreate them first: opgen create api --group db --version v1 --kind Thing"
        );
        assert_eq!(
            Refusal::AsksForNothing.to_string(),
            "--resource=false --controller=false asks for nothing; drop one of them"
        );
    }

    #[test]
    fn a_broken_rule_prints_as_its_violation_does() {
        let rule = BrokenRule::SecondController {
            kind: "Deployment".to_owned(),
            group: "apps".to_owned(),
            watched: "apps/v1".to_owned(),
            file: "src/controllers/apps/deployment.rs".to_owned(),
        };
        let violation = Violation {
            resource: 0,
            rule: Box::new(rule.clone()),
        };
        let refusal = Refusal::Breaks(rule).to_string();
        assert!(refusal.ends_with("\n\nEdit src/controllers/apps/deployment.rs instead"));
        assert_eq!(refusal, violation.to_string());
    }
}
