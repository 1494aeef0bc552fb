//! The command line, as clap parses it. Nothing here is validated beyond its shape: the
//! commands turn these raw values into the model.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::{
    model::{License, Workload},
    plan::Output,
};

#[derive(Debug, Parser)]
#[command(
    name = "opgen",
    version = version(),
    about = "Scaffold and maintain Kubernetes operators in Rust, on kube-rs",
    long_about = "Scaffold and maintain Kubernetes operators in Rust, on kube-rs.\n\n\
        Start with `opgen init --domain example.com`, add a custom resource with \
        `opgen create api --group db --version v1alpha1 --kind MySQLCluster`, and keep \
        CRDs and RBAC in sync with `opgen generate manifests`."
)]
pub struct Cli {
    /// Print only errors
    #[arg(long, short, global = true, display_order = 1000)]
    pub quiet: bool,

    /// When to colour messages: `auto` colours on a terminal unless NO_COLOR is set (or
    /// CLICOLOR_FORCE asks for colour anyway)
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value_t = ColorWhen::Auto,
        global = true,
        display_order = 1001
    )]
    pub color: ColorWhen,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl From<ColorWhen> for anstream::ColorChoice {
    fn from(when: ColorWhen) -> Self {
        match when {
            ColorWhen::Auto => Self::Auto,
            ColorWhen::Always => Self::Always,
            ColorWhen::Never => Self::Never,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scaffold a new operator project
    Init(InitArgs),
    /// Add something to the project
    #[command(subcommand)]
    Create(CreateCommand),
    /// Remove something from the project
    #[command(subcommand)]
    Delete(DeleteCommand),
    /// Change a project-wide choice made at `init`: the operator's scope, the license
    Edit(EditArgs),
    /// Regenerate files from the project's sources
    #[command(subcommand)]
    Generate(GenerateCommand),
    /// Bring a project made by an older opgen up to this one
    Update(UpdateArgs),
    /// Run the operator on a development control plane of this machine, as its own
    /// ServiceAccount, rebuilt and restarted on every change
    Dev(DevArgs),
    /// Print a shell completion script
    Completions {
        /// The shell to complete for
        shell: clap_complete::Shell,
    },
    /// Print opgen's man page (roff), e.g. into `man1/opgen.1`
    Man,
    /// List, show and check template overrides (`.opgen/templates/`, or OPGEN_TEMPLATES)
    #[command(subcommand)]
    Templates(TemplatesCommand),
}

#[derive(Debug, Subcommand)]
pub enum TemplatesCommand {
    /// List every template that can be overridden, and the overrides in effect
    List,
    /// Print a built-in template, to start an override from
    Show {
        /// The template's name, as `list` prints it (e.g. project/Dockerfile)
        name: String,
    },
    /// Render every override with the values of this project; report errors and overrides
    /// made from a built-in template that changed since
    Check,
}

/// What `--version` prints after `opgen`: the release and the Kubernetes releases a project
/// can target, so that a user sees which `--kubernetes-version` this build accepts.
fn version() -> &'static str {
    use crate::model::KubernetesVersion;
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "{} (Kubernetes {} to {}; {} to {} past their end of life)",
            env!("CARGO_PKG_VERSION"),
            KubernetesVersion::OLDEST_SUPPORTED,
            KubernetesVersion::NEWEST,
            KubernetesVersion::OLDEST,
            KubernetesVersion::OLDEST_SUPPORTED.previous(),
        )
    })
}

#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Add a custom resource kind (a new version of one) and its controller
    Api(CreateApiArgs),
    /// Add defaulting, validation or conversion webhooks to a kind
    Webhook(CreateWebhookArgs),
}

#[derive(Debug, Subcommand)]
pub enum DeleteCommand {
    /// Remove a version of a kind (the whole kind with its last version), or a controller of a
    /// kind the project does not own, with everything opgen made for it
    Api(DeleteApiArgs),
    /// Remove defaulting, validation or conversion webhooks of a kind
    Webhook(DeleteWebhookArgs),
}

#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// Regenerate CRDs from the api crate and RBAC from `+opgen:rbac` markers
    Manifests(ManifestsArgs),
    /// Generate the OLM bundle (bundle/, bundle.Dockerfile) and the OLM install manifests (config/olm)
    Bundle(BundleArgs),
    /// Generate the Helm chart of the operator (dist/chart) from the rendered config/default
    Helm(HelmArgs),
}

/// Flags every writing command shares.
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// Show what would be created or changed (a diff for changed files), write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Never prompt: use defaults, and fail naming any required flag that is missing
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Directory to create the project in (default: the current directory)
    pub dir: Option<PathBuf>,
    /// Domain of the project's API groups, e.g. example.com
    #[arg(long)]
    pub domain: Option<String>,
    /// Project name (default: the directory's name)
    #[arg(long)]
    pub project_name: Option<String>,
    /// Copyright owner, for the license
    #[arg(long)]
    pub owner: Option<String>,
    /// License of the generated project
    #[arg(long, value_enum)]
    pub license: Option<License>,
    /// Watch only the operator's own namespace (Role instead of ClusterRole)
    #[arg(long)]
    pub namespaced: bool,
    /// Kubernetes version to build against (1.35 to 1.37, default 1.35; 1.33 and 1.34 are end-of-life)
    #[arg(long, value_name = "1.NN")]
    pub kubernetes_version: Option<String>,
    /// Allow a directory that already holds other files (existing files are kept as they are)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

// The kind a command is about, as typed: `create api` and `create webhook` share the flags,
// and each command turns the words into the model's types. (A `//` comment: a doc comment
// on a flattened struct would become the about text of every command that flattens it.)
#[derive(Debug, Args)]
pub struct KindArgs {
    /// API group, without the domain, e.g. db
    #[arg(long)]
    pub group: Option<String>,
    /// API version, e.g. v1alpha1
    #[arg(long)]
    pub version: Option<String>,
    /// Kind, in PascalCase, e.g. MySQLCluster
    #[arg(long)]
    pub kind: Option<String>,
}

#[derive(Debug, Args)]
pub struct CreateApiArgs {
    #[command(flatten)]
    pub kind: KindArgs,
    /// Plural resource name (default: the English plural of the lowercase kind)
    #[arg(long)]
    pub plural: Option<String>,
    /// Short name for kubectl (default: the initials of the kind's words)
    #[arg(long)]
    pub short_name: Option<String>,
    /// Whether objects of the kind live in a namespace
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub namespaced: Option<bool>,
    /// Scaffold the kind's Rust types
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub resource: Option<bool>,
    /// Scaffold a controller for the kind
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub controller: Option<bool>,
    /// With --resource=false: the kind is defined by this CustomResourceDefinition of another
    /// project (a YAML file); opgen stores a copy and generates its Rust types
    #[arg(long, value_name = "FILE")]
    pub external_crd: Option<std::path::PathBuf>,
    /// Make this version the one etcd stores (default: the newest version of the kind)
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub storage: Option<bool>,
    /// Scaffold an operand: the kind runs this container image (e.g. mysql:8.0) in a
    /// Deployment or StatefulSet that its controller keeps at the declared state
    #[arg(long, help_heading = "Operand")]
    pub image: Option<String>,
    /// The workload that runs the image
    #[arg(long, value_enum, requires = "image", help_heading = "Operand")]
    pub workload: Option<Workload>,
    /// The container port; a Service exposes it (no port: no Service)
    #[arg(long, requires = "image", value_parser = clap::value_parser!(u16).range(1..), help_heading = "Operand")]
    pub port: Option<u16>,
    /// Add an optional spec.autoscaling (min and max replicas, target CPU utilization) from
    /// which the controller keeps a HorizontalPodAutoscaler that scales the object
    #[arg(long, requires = "image", help_heading = "Operand")]
    pub autoscale: bool,
    /// The UID the container runs as (default: the service user of an image opgen knows,
    /// else the image's own user, which must then be a non-root number)
    #[arg(
        long,
        value_name = "UID",
        requires = "image",
        allow_negative_numbers = true,
        value_parser = non_root_uid,
        help_heading = "Operand"
    )]
    pub run_as_user: Option<crate::model::NonRootId>,
    /// One argument of the container's command, repeated for each (`--command memcached
    /// --command -m=64`); an argument may hold commas. Or give the command after `--`
    #[arg(
        long,
        value_name = "ARG",
        requires = "image",
        allow_hyphen_values = true,
        conflicts_with = "command_args",
        help_heading = "Operand"
    )]
    pub command: Vec<String>,
    /// The container's command, after `--` (e.g. `-- memcached -m 64 -vv`)
    #[arg(
        last = true,
        value_name = "COMMAND",
        requires = "image",
        help_heading = "Operand"
    )]
    pub command_args: Vec<String>,
    /// With --workload job or cronjob: each object names an object of this kind of the project
    /// in its namespace (`spec.<kind>Ref.name`), and its Jobs get that object's address (a
    /// CronJob is suspended while it is missing); `GROUP/KIND` when the project has the kind in
    /// several groups
    #[arg(
        long,
        value_name = "KIND",
        requires = "image",
        help_heading = "Operand"
    )]
    pub references: Option<String>,
    /// Overwrite scaffolded files that already exist (see the diff first with --dry-run)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

// The webhooks `create webhook` adds and `delete webhook` removes, as typed (a `//` comment,
// as for `KindArgs`).
#[derive(Debug, Args)]
pub struct WebhookArgs {
    /// The defaulting webhook: a mutating webhook that sets defaults on create and update
    #[arg(long)]
    pub defaulting: bool,
    /// The validating webhook, for create, update and delete
    #[arg(long, alias = "programmatic-validation")]
    pub validation: bool,
    /// The conversion webhook between the kind's versions (the storage version is the hub;
    /// without one, the versions' schemas must agree)
    #[arg(long)]
    pub conversion: bool,
}

impl From<&WebhookArgs> for crate::model::Webhooks {
    fn from(args: &WebhookArgs) -> Self {
        Self {
            defaulting: args.defaulting,
            validation: args.validation,
            conversion: args.conversion,
        }
    }
}

#[derive(Debug, Args)]
#[command(
    mut_arg("group", |arg| arg.help("API group of the kind, without the domain, e.g. db")),
    mut_arg("version", |arg| arg.help("API version the admission webhooks receive objects in, e.g. v1alpha1")),
    mut_arg("kind", |arg| arg.help("Kind, in PascalCase, as created with `opgen create api`")),
)]
pub struct CreateWebhookArgs {
    #[command(flatten)]
    pub kind: KindArgs,
    #[command(flatten)]
    pub webhooks: WebhookArgs,
    /// Overwrite the scaffolded webhook files, and scaffold webhooks that exist already
    /// (see the changes first with --dry-run)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Debug, Args)]
#[command(
    mut_arg("group", |arg| arg.help("API group of the kind, without the domain, e.g. db (`core` for the core group)")),
    mut_arg("version", |arg| arg.help("The version to remove, e.g. v1alpha1")),
    mut_arg("kind", |arg| arg.help("Kind, in PascalCase, as created with `opgen create api`")),
    long_about = "Remove a version of a kind from PROJECT, and everything opgen made for it: its types, \
        sample and webhooks, and with the kind's last version its controller, integration test, \
        roles, CRD and bundle entries. A kind the project does not own (`create api \
        --resource=false`) loses its controller. opgen's own files (wiring, kustomizations, \
        alerts, dashboard, RBAC, webhook configurations, CRDs) are rebuilt without it.\n\n\
        Files you changed since opgen scaffolded them are listed and kept, and nothing is \
        done, unless --force is given; --dry-run shows every file it would remove or change."
)]
pub struct DeleteApiArgs {
    #[command(flatten)]
    pub kind: KindArgs,
    /// Also remove or rewrite the files you changed since opgen scaffolded them (see them
    /// first with --dry-run --force)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Debug, Args)]
#[command(
    mut_arg("group", |arg| arg.help("API group of the kind, without the domain, e.g. db")),
    mut_arg("version", |arg| arg.help("API version of the webhooks, e.g. v1alpha1")),
    mut_arg("kind", |arg| arg.help("Kind, in PascalCase, as created with `opgen create api`")),
)]
pub struct DeleteWebhookArgs {
    #[command(flatten)]
    pub kind: KindArgs,
    #[command(flatten)]
    pub webhooks: WebhookArgs,
    /// Also remove or rewrite the files you changed since opgen scaffolded them (see them
    /// first with --dry-run --force)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Debug, Args)]
#[command(
    long_about = "Change a project-wide choice that `opgen init` made, and what follows from it: \
        opgen rewrites its own files from PROJECT, the lines of yours that carry the choice \
        (the webhook wiring of config/default, the CSV base's install modes, the Helm values' \
        watchNamespace, the license in Cargo.toml and the README), and the scaffolded files you \
        have not changed; a scaffolded file you changed that must change is listed, and nothing \
        is done, unless --force is given. opgen has one layout, with a folder per API group \
        (Kubebuilder's multi-group layout), so there is no --multigroup; the Kubernetes \
        release is `opgen update`'s."
)]
pub struct EditArgs {
    /// Watch only the operator's own namespace (a Role instead of a ClusterRole)
    #[arg(long, conflicts_with = "cluster_wide")]
    pub namespaced: bool,
    /// Watch every namespace (a ClusterRole)
    #[arg(long)]
    pub cluster_wide: bool,
    /// The project's license (LICENSE, Cargo.toml, the README)
    #[arg(long, value_enum)]
    pub license: Option<License>,
    /// Copyright owner, for the license and the CSV base's maintainer
    #[arg(long)]
    pub owner: Option<String>,
    /// Also rewrite the files you changed since opgen scaffolded them (see them first with
    /// --dry-run --force)
    #[arg(long)]
    pub force: bool,
    /// Show what would be changed (a diff for changed files), write nothing
    #[arg(long)]
    pub dry_run: bool,
}

// What a `generate` command does with the files it computes: the flags all three share. (A
// `//` comment: a doc comment on a flattened struct would become the about text of every
// command that flattens it.)
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Write nothing; fail and show the diff if the files are out of date
    #[arg(long, conflicts_with = "dry_run")]
    pub check: bool,
    /// Show what would change, write nothing
    #[arg(long)]
    pub dry_run: bool,
}

impl OutputArgs {
    /// What the flags ask for; `--check` wins (clap refuses both together).
    pub fn output(&self) -> Output {
        match (self.check, self.dry_run) {
            (true, _) => Output::Check,
            (false, true) => Output::DryRun,
            (false, false) => Output::Write,
        }
    }
}

#[derive(Debug, Args)]
#[command(mut_arg("check", |arg| arg.help("Write nothing; fail and show the diff if the manifests are out of date")))]
pub struct ManifestsArgs {
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
#[command(
    long_about = "Bring a project made by an older opgen up to this one.\n\n\
        Rewrites every generated file (those that begin with opgen's `DO NOT EDIT` header) \
        with this opgen's templates and records this release as `opgenVersion` in PROJECT. \
        Scaffolded files are yours and are never touched: those that differ from what this \
        opgen would scaffold for the project today are listed, with their diffs under --diff."
)]
pub struct UpdateArgs {
    /// Also print, as a unified diff, how each listed scaffolded file differs from what this
    /// opgen would scaffold today
    #[arg(long)]
    pub diff: bool,
    /// Show what would be rewritten (a diff for changed files), write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Also write, to FILE, a patch of what this opgen's scaffold adds to your scaffolded
    /// files (added lines only, and the files you lack), to review and apply with `git apply`
    #[arg(long, value_name = "FILE", conflicts_with = "dry_run")]
    pub patch: Option<std::path::PathBuf>,
    /// Move the project to another Kubernetes release (1.33 to 1.37): k8s-openapi's feature
    /// in Cargo.toml, the envtest release of the CI workflow, and PROJECT
    #[arg(long, value_name = "1.NN")]
    pub kubernetes_version: Option<String>,
    /// Move to an older Kubernetes release without being asked
    #[arg(long, short = 'y', requires = "kubernetes_version")]
    pub yes: bool,
}

#[derive(Debug, Args)]
#[command(
    long_about = "Generate the Operator Lifecycle Manager bundle of the operator: bundle/manifests \
        (the ClusterServiceVersion, CRDs and other objects), bundle/metadata/annotations.yaml and \
        bundle.Dockerfile, from the rendered config/manifests and the CSV base in \
        config/manifests/bases; and config/olm, which installs the operator through OLM.\n\n\
        Flags left out keep the value of the bundle already in bundle/ (package, channels, \
        replaces and skips of the same version); a newer version replaces the bundle it supersedes."
)]
#[command(mut_arg("check", |arg| arg.help("Write nothing; fail and show the diff if the bundle is out of date")))]
pub struct BundleArgs {
    /// The bundle's version, the CSV's spec.version (semantic: X.Y.Z)
    #[arg(long, value_name = "X.Y.Z", required_unless_present = "init_base")]
    pub version: Option<String>,
    /// Channels the bundle is published in, comma-separated (default: the previous bundle's, else alpha)
    #[arg(long, value_delimiter = ',', value_name = "CHANNEL,...")]
    pub channels: Option<Vec<String>>,
    /// The channel a Subscription follows by default (default: the previous bundle's, else the first channel)
    #[arg(long, value_name = "CHANNEL")]
    pub default_channel: Option<String>,
    /// The OLM package name (default: the previous bundle's, else the project name)
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// The CSV this one replaces: a version (0.1.0) or a CSV name (<package>.v0.1.0); '' for none
    #[arg(long, value_name = "PREV")]
    pub replaces: Option<String>,
    /// The manager image (default: the image of the rendered manager Deployment)
    #[arg(long, value_name = "IMG")]
    pub image: Option<String>,
    /// Scaffold config/manifests (the CSV base and its kustomization) for you to edit, and stop
    #[arg(long, conflicts_with_all = ["check", "version", "channels", "default_channel", "replaces", "image"])]
    pub init_base: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
#[command(
    long_about = "Generate the Helm chart of the operator in dist/chart, from the objects \
        config/default renders (those of dist/install.yaml). Chart.yaml and values.yaml are \
        written once and are then yours; values.schema.json, the templates, _helpers.tpl, \
        NOTES.txt and .helmignore are rewritten on every run."
)]
#[command(mut_arg("check", |arg| arg.help("Write nothing; fail and show the diff if the chart is out of date")))]
pub struct HelmArgs {
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Parses `--run-as-user`, so that clap refuses root, negative and out-of-range IDs with the
/// reason and the way out.
fn non_root_uid(value: &str) -> Result<crate::model::NonRootId, String> {
    value.parse().map_err(|err: crate::model::InvalidValue| {
        format!(
            "{}\n\nPass the numeric UID of a non-root user the image can run as (e.g. 999 for mysql; see the `USER` or `useradd` line of its Dockerfile), or drop the flag to use the image's own user",
            err.problem
        )
    })
}

#[derive(Debug, Args)]
#[command(
    long_about = "Run the operator on a development control plane of this machine.\n\n\
        Starts etcd, kube-apiserver (RBAC on) and kube-controller-manager from --assets or \
        KUBEBUILDER_ASSETS on free loopback ports, installs config/default (CRDs, RBAC, the \
        manager's namespace and ServiceAccount), builds the manager and runs it with that \
        ServiceAccount's token, so only the generated role applies, then applies the samples \
        and streams the manager's log. A request the API server refuses is reported with the \
        `+opgen:rbac` marker to add. On every saved change it regenerates the manifests, \
        applies them again if they changed, rebuilds and restarts the manager; a failed build \
        keeps the old one. \
        Everything lives in target/opgen-dev/; Ctrl-C stops it all."
)]
pub struct DevArgs {
    /// Directory holding etcd, kube-apiserver and kube-controller-manager (default:
    /// KUBEBUILDER_ASSETS)
    #[arg(long, value_name = "DIR")]
    pub assets: Option<PathBuf>,

    /// Do not apply config/samples once the manager runs
    #[arg(long)]
    pub no_samples: bool,
}
