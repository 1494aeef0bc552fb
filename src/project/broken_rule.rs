//! A `PROJECT` rule an entry breaks (see `rules` and `foreign_rules`), typed like a marker's
//! problem (`manifests::markers::syntax`): what is wrong, with the names it is about, and the
//! advice printed under it.

/// A broken rule, and the entry that breaks it: its index in `PROJECT`'s `resources`, or past
/// them, in `foreignKinds`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}{}", .rule.hint().map(|hint| format!("\n\n{hint}")).unwrap_or_default())]
pub struct Violation {
    pub resource: usize,
    /// Boxed: a `Result` carries a violation on every read of `PROJECT`.
    pub rule: Box<BrokenRule>,
}

/// What an entry of `PROJECT` gets wrong. Names are as `PROJECT` spells them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokenRule {
    // ---- One owned kind.
    #[error(
        "{kind} is cluster-scoped (`namespaced: false`), but the operator is namespaced (`operatorScope: namespace`): it watches one namespace with a Role, and a Role cannot grant access to cluster-scoped objects"
    )]
    ClusterScopedKind { kind: String },
    #[error(
        "{kind} runs an application (it has an `operand`) in a workload in the namespace of each {kind} object, so it must be namespaced (`namespaced: true`)"
    )]
    ClusterScopedOperand { kind: String },
    #[error(
        "{kind} {group}/{version} records `webhooks` without any of `defaulting`, `validation` or `conversion`"
    )]
    NoWebhooks {
        kind: String,
        group: String,
        version: String,
    },
    #[error(
        "the API group `{group}` of {kind} is {length} characters long; Kubernetes allows {max}"
    )]
    GroupTooLong {
        group: String,
        kind: String,
        length: usize,
        max: usize,
    },
    #[error(
        "the CRD name `{crd}` of {kind} (`<plural>.<group>`) is {length} characters long; Kubernetes allows {max}"
    )]
    CrdNameTooLong {
        crd: String,
        kind: String,
        length: usize,
        max: usize,
    },
    #[error("the operand's `port` is 0; a container port is 1 to 65535")]
    PortZero,
    #[error("the operand's `command` has an empty argument")]
    EmptyCommandArgument,
    #[error(
        "{kind} `references` {referenced}, which is not a kind of the project (`resources` has no {referenced})"
    )]
    UnknownReference { kind: String, referenced: String },
    #[error(
        "{kind} `references` {referenced}, which is cluster-scoped: a namespaced object may only reference objects in its own namespace"
    )]
    ClusterScopedReference { kind: String, referenced: String },
    #[error(
        "{kind} `references` another kind, which only a Job or CronJob operand can (`workload: job` or `cronjob`): its Jobs get the referenced object's address"
    )]
    ReferenceWithoutBatch { kind: String },
    #[error(
        "the operand's `autoscale` is set on a {workload}, which runs to completion and has no replicas to scale"
    )]
    AutoscaledBatch { workload: &'static str },

    // ---- Two versions of one kind.
    #[error("{kind} {group}/{version} is listed twice")]
    ListedTwice {
        kind: String,
        group: String,
        version: String,
    },
    #[error(
        "{entry} has {what} `{this}`, but {first} has `{that}`: the versions of a kind are one CRD and share it"
    )]
    VersionsDiffer {
        /// The entry, `<kind> <group>/<version>`, and the kind's first entry.
        entry: String,
        first: String,
        what: &'static str,
        this: String,
        that: String,
    },
    #[error(
        "{kind} {group}/{version} and {group}/{first} record different operands; the kind's controller runs one application for every version"
    )]
    OperandsDiffer {
        kind: String,
        group: String,
        version: String,
        first: String,
    },

    // ---- Two kinds of one group.
    #[error(
        "{kind} and {other} of group {group} differ only in letter case: Kubernetes gives them the same singular name `{singular}`, and their files would have the same names"
    )]
    CaseOnly {
        kind: String,
        other: String,
        group: String,
        singular: String,
    },
    #[error(
        "{kind} and {other} of group {group} have the same {what} `{name}`; Kubernetes allows each {what} once per group"
    )]
    SameName {
        kind: String,
        other: String,
        group: String,
        what: &'static str,
        name: String,
    },
    #[error(
        "{kind} and {other} of group {group} clash: Kubernetes names the lists of {listed} `{listed}List`, so no kind of the group can have that name"
    )]
    ListName {
        kind: String,
        other: String,
        group: String,
        listed: String,
    },
    #[error(
        "{kind} and {other} of {group_version} would both define the Rust type `{shared}` in the api crate's module of that version"
    )]
    SharedRustType {
        kind: String,
        other: String,
        /// `<group>/<version>`
        group_version: String,
        shared: String,
    },

    // ---- All versions of one kind.
    #[error(
        "{kind} {group} has {} storage versions{}; exactly one version of a kind has `storage: true`",
        .stored.len(),
        if .stored.is_empty() { String::new() } else { format!(" ({})", .stored.join(", ")) }
    )]
    StorageVersions {
        kind: String,
        group: String,
        stored: Vec<String>,
    },
    #[error(
        "{kind} {group} has `controller: true` on {}; one controller runs per kind, watching one version",
        .controlled.join(" and ")
    )]
    Controllers {
        kind: String,
        group: String,
        controlled: Vec<String>,
    },
    #[error(
        "{kind} {group}/{version} records a conversion webhook, but {kind} has only one version: there is nothing to convert"
    )]
    NothingToConvert {
        kind: String,
        group: String,
        version: String,
    },

    // ---- A foreign kind.
    #[error(
        "{kind} {api_version} has `crd: {crd}`, which is not a file inside config/external/: the stored CRD of an external kind is a .yaml file there, named by a relative path without `.` or `..` parts"
    )]
    CrdOutsideExternal {
        kind: String,
        api_version: String,
        crd: String,
        stored: String,
    },
    #[error("{kind} {api_version} is built in (`origin: builtIn`), so it has no `crd`")]
    BuiltInWithCrd { kind: String, api_version: String },
    #[error(
        "{kind} {api_version} is external (`origin: external`), so `crd` must name its stored CRD under config/external/ (a .yaml file)"
    )]
    ExternalWithoutCrd { kind: String, api_version: String },
    #[error(
        "{kind} {api_version} is cluster-scoped, but the operator is namespaced (`operatorScope: namespace`): it watches one namespace with a Role, and a Role cannot grant access to cluster-scoped objects"
    )]
    ClusterScopedForeign { kind: String, api_version: String },
    #[error(
        "{kind} of `{group}` has a controller already (it watches {watched}); one controller runs per kind"
    )]
    SecondController {
        kind: String,
        group: String,
        watched: String,
        file: String,
    },
    #[error(
        "the controller of {kind} {api_version} would be {file}, which another kind's controller is"
    )]
    ControllerFileTaken {
        kind: String,
        api_version: String,
        file: String,
    },
    #[error(
        "the group `{group}` of {kind} is this project's own; its kinds are made with `opgen create api`, not from an external CRD"
    )]
    OwnGroupExternal { group: String, kind: String },
    #[error(
        "the external groups `{other}` and `{group}` would share the api crate's module `external::{module}`"
    )]
    SharedExternalModule {
        other: String,
        group: String,
        module: String,
    },
    #[error(
        "{kind} {api_version} needs the api crate's module `external`, which this project's group `external` has"
    )]
    ExternalModuleTaken { kind: String, api_version: String },
    #[error(
        "{kind} {api_version} has `crd: {crd}`, which resolves through a symbolic link to a file outside config/external/; opgen reads the stored CRDs of external kinds only from there"
    )]
    CrdThroughLink {
        kind: String,
        api_version: String,
        crd: String,
    },
    #[error(transparent)]
    UnknownBuiltIn(#[from] crate::model::UnknownBuiltIn),
    #[error("the plural of the built-in {kind} is `{plural}`, not `{given}`")]
    BuiltInPlural {
        kind: String,
        plural: String,
        given: String,
    },
    #[error(
        "the built-in {kind} is {}, so `namespaced: {namespaced}`",
        if *.namespaced { "namespaced" } else { "cluster-scoped" }
    )]
    BuiltInScope { kind: String, namespaced: bool },
}

impl BrokenRule {
    /// The advice printed under the problem, when there is more to say than the rule.
    pub fn hint(&self) -> Option<String> {
        use BrokenRule::*;
        let hint = match self {
            ClusterScopedKind { .. } => {
                "Make the kind namespaced, or the operator cluster-wide".to_owned()
            }
            NoWebhooks { .. } => "Set the ones it has to true, or drop `webhooks`".to_owned(),
            GroupTooLong { .. } => "Shorten the group or the domain".to_owned(),
            CrdNameTooLong { .. } => "Shorten the plural, the group or the domain".to_owned(),
            CaseOnly { .. } => "Rename one of them".to_owned(),
            SameName { what, .. } => format!("Change the {what} of one of them"),
            ListName { listed, .. } => format!("Rename {listed}List"),
            SharedRustType { .. } => {
                "Rename one of them, or put it in another version or group".to_owned()
            }
            NothingToConvert { kind, group, .. } => format!(
                "Add a version first (opgen create api --group {group} --version <new> --kind {kind}), or drop `conversion`"
            ),
            CrdOutsideExternal { stored, .. } => format!("Put back `crd: {stored}`"),
            BuiltInWithCrd { .. } => "Remove `crd`, or make it `origin: external`".to_owned(),
            ExternalWithoutCrd { .. } => {
                "Add it again with `opgen create api --resource=false --external-crd <file>`"
                    .to_owned()
            }
            ClusterScopedForeign { kind, .. } => {
                format!("Watch {kind} from a cluster-wide operator")
            }
            SecondController { file, .. } => format!("Edit {file} instead"),
            ControllerFileTaken { .. } => {
                "A project cannot watch two kinds of the same name from groups that start alike"
                    .to_owned()
            }
            SharedExternalModule { .. } => "A project can use only one of them".to_owned(),
            CrdThroughLink { .. } => "Replace the link with a copy of the CRD".to_owned(),
            BuiltInPlural { plural, .. } => format!("Set `plural: {plural}`"),
            BuiltInScope { namespaced, .. } => format!("Set `namespaced: {namespaced}`"),
            UnknownReference { .. } | ClusterScopedReference { .. } => {
                "Name a namespaced kind of `resources` in `references`, or remove it".to_owned()
            }
            ReferenceWithoutBatch { .. } => "Remove `references`".to_owned(),
            AutoscaledBatch { .. } => "Remove `autoscale: true`".to_owned(),
            ClusterScopedOperand { .. }
            | PortZero
            | EmptyCommandArgument
            | ListedTwice { .. }
            | VersionsDiffer { .. }
            | OperandsDiffer { .. }
            | StorageVersions { .. }
            | Controllers { .. }
            | OwnGroupExternal { .. }
            | ExternalModuleTaken { .. }
            | UnknownBuiltIn(_) => return None,
        };
        Some(hint)
    }
}
