//! What opgen writes: the files of a new project, the files of a new resource, and the
//! generated files that are rebuilt from `PROJECT` after every change to it.

mod cargo_toml;
pub mod combined_webhook_file;
mod crd_fields;
mod crd_types;
mod external_types;
mod foreign_values;
pub mod kustomization;
pub mod monitoring;
pub mod monitoring_values;
mod operand_values;
mod override_yaml;
mod reference_values;
pub mod retired_runtime;
mod runtime_alias;
pub mod runtime_dependency;
mod rust;
mod rust_order;
mod tree;
pub mod values;
pub mod vendored_runtime;
pub mod webhook_values;

use std::path::Path;

pub use tree::Tree;

use crate::{
    interrupt::Interrupt,
    model::{AdmissionWebhook, ForeignKind, Resource, Webhooks},
    plan::{Owner, PlannedFile},
    project::{self, Project},
    rustfmt,
    templates::Templates,
};
use values::{KindValues, ProjectValues, ResourceValues};
use webhook_values::WebhookFiles;

/// Everything `init` writes: the scaffolded project and the generated files.
///
/// Unlike later commands, `init` does not run rustfmt: a project without kinds has no name
/// that changes how its Rust code wraps (project names reach it through `env!` and `use`
/// lines), so its templates are rustfmt-clean as rendered, and `init` stays faster than
/// `cargo new`. `tests/formatting.rs` checks this for the shortest and longest names.
pub fn init_files(project: &Project) -> anyhow::Result<Vec<PlannedFile>> {
    let mut files = project_files(project)?;
    let tree = Tree {
        root: Path::new("."),
        pending: &[],
    };
    files.extend(render_generated(project, &tree, false)?);
    override_yaml::check(&files)?;
    Ok(files)
}

/// The files opgen owns, rebuilt from `PROJECT` (see [`render_generated`]), for the project
/// at `root`. They are rustfmt-clean as rendered (see [`rustfmt`] for the exception).
pub fn generated_files(
    project: &Project,
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<Vec<PlannedFile>> {
    let tree = Tree { root, pending: &[] };
    let mut files = render_generated(project, &tree, runtime_alias(project, root)?)?;
    rustfmt::format(&mut files, root, interrupt)?;
    Ok(files)
}

/// Whether the generated `src/lib.rs` of the project at `root` keeps the runtime's old paths
/// for the project's files (see `runtime_alias`).
fn runtime_alias(project: &Project, root: &Path) -> anyhow::Result<bool> {
    runtime_alias::named_in(root, &ProjectValues::new(project).crate_ident)
}

/// The scaffolded files of a new project: everything under `templates/project/`, at the same
/// path, plus the license.
fn project_files(project: &Project) -> anyhow::Result<Vec<PlannedFile>> {
    let templates = Templates::get();
    let values = ProjectValues::new(project);
    let mut files = templates
        .names_under("project/")
        .map(|name| {
            let path = name.trim_start_matches("project/");
            Ok(PlannedFile::new(
                path,
                templates.render(name, &values)?,
                Owner::Scaffolded,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(license) = values::license_template(project.license) {
        files.push(PlannedFile::new(
            "LICENSE",
            templates.render(license, &values)?,
            Owner::Scaffolded,
        ));
    }
    Ok(files)
}

/// The files opgen owns, rebuilt from `PROJECT`: the api crate's module tree and CRD list,
/// the controllers' module tree, the kustomizations that list per-kind files, the alerts
/// and dashboard of the kinds' controllers, and the types of external CRDs and the module
/// tree of the webhook files that `tree` holds. With `runtime_alias`, `src/lib.rs` keeps the
/// runtime's paths of opgen 0.1 and 0.2 (see `runtime_alias`).
fn render_generated(
    project: &Project,
    tree: &Tree,
    runtime_alias: bool,
) -> anyhow::Result<Vec<PlannedFile>> {
    let templates = Templates::get();
    let mut values = ProjectValues::with_webhook_files(project, &WebhookFiles::of(project, tree));
    values.runtime_alias = runtime_alias;
    let mut files = vec![PlannedFile::new(
        project::FILE_NAME,
        project.render(),
        Owner::Record,
    )];
    for name in templates.names_under("generated/") {
        let path = name.trim_start_matches("generated/");
        files.push(PlannedFile::new(
            path,
            templates.render(name, &values)?,
            Owner::Generated,
        ));
    }
    /// The values of the per-group and per-version module files.
    #[derive(serde::Serialize)]
    struct GroupFile<'a> {
        project: &'a ProjectValues,
        group: &'a values::GroupValues,
        version: Option<&'a values::GroupVersionValues>,
    }
    for group in &values.groups {
        let group_values = GroupFile {
            project: &values,
            group,
            version: None,
        };
        if !group.versions.is_empty() {
            files.push(PlannedFile::new(
                format!("api/src/{}/mod.rs", group.module),
                templates.render("group/api_group_mod.rs", &group_values)?,
                Owner::Generated,
            ));
        }
        for version in &group.versions {
            let version_values = GroupFile {
                version: Some(version),
                ..group_values
            };
            files.push(PlannedFile::new(
                format!("api/src/{}/{}/mod.rs", group.module, version.version),
                templates.render("group/api_version_mod.rs", &version_values)?,
                Owner::Generated,
            ));
        }
        if !group.controllers.is_empty() {
            files.push(PlannedFile::new(
                format!("src/controllers/{}/mod.rs", group.module),
                templates.render("group/controllers_group_mod.rs", &group_values)?,
                Owner::Generated,
            ));
        }
    }
    files.extend(external_types::files(project, tree)?);
    files.extend(vendored_runtime::files());
    files.extend(render_webhook_machinery(&values)?);
    files.extend(monitoring::files(&values)?);
    Ok(files)
}

/// The webhook server and the module tree of the webhook files, when the project has webhooks.
fn render_webhook_machinery(values: &ProjectValues) -> anyhow::Result<Vec<PlannedFile>> {
    let templates = Templates::get();
    if !values.webhooks.any {
        return Ok(Vec::new());
    }
    let mut files = vec![PlannedFile::new(
        "src/webhooks/mod.rs",
        templates.render("webhook/mod.rs", values)?,
        Owner::Generated,
    )];
    if !values.webhooks.conversions.is_empty() {
        files.push(PlannedFile::new(
            "config/crd/kustomizeconfig.yaml",
            templates.render("webhook/crd_kustomizeconfig.yaml", values)?,
            Owner::Generated,
        ));
    }
    #[derive(serde::Serialize)]
    struct GroupFile<'a> {
        group: &'a webhook_values::WebhookGroupValues,
    }
    for group in &values.webhooks.groups {
        files.push(PlannedFile::new(
            format!("src/webhooks/{}/mod.rs", group.module),
            templates.render("webhook/group_mod.rs", &GroupFile { group })?,
            Owner::Generated,
        ));
    }
    Ok(files)
}

/// What `create api` scaffolds for one resource.
#[derive(Debug, Clone, Copy)]
pub struct ResourceParts {
    /// The version's Rust types and sample.
    pub types: bool,
    /// The kind's controller.
    pub controller: bool,
    /// The kind's editor and viewer roles (once per kind, with its first version).
    pub roles: bool,
}

/// Everything `create api` writes in the project at `root`: the resource's scaffolded files,
/// formatted with the project's rustfmt configuration, and the generated files of the updated
/// project. The second value is false when rustfmt is not installed and the scaffolded Rust
/// files were left as rendered.
pub fn resource_files(
    project: &Project,
    resource: &Resource,
    parts: ResourceParts,
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<(Vec<PlannedFile>, bool)> {
    let mut files = render_resource(project, resource, parts)?;
    // A new version of a kind that converts through a webhook converts through its hub too.
    let spoke = project
        .spokes(resource)
        .iter()
        .any(|spoke| spoke.version == resource.version);
    if parts.types && spoke {
        files.push(render_conversion_file(project, resource)?);
    }
    with_generated(project, files, &[], root, interrupt)
}

/// `files`, which a command writes in the project at `root`, with the generated files of the
/// updated `project` (reading the external CRDs it stores, and `pending` ones it is about to
/// store), formatted as the project formats its Rust. The second value is as for
/// [`resource_files`].
fn with_generated(
    project: &Project,
    mut files: Vec<PlannedFile>,
    pending: &[PlannedFile],
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<(Vec<PlannedFile>, bool)> {
    let tree = Tree { root, pending };
    files.extend(render_generated(
        project,
        &tree,
        runtime_alias(project, root)?,
    )?);
    override_yaml::check(&files)?;
    let formatted = rustfmt::format(&mut files, root, interrupt)?;
    Ok((files, formatted))
}

/// Everything `create webhook` writes in the project at `root` for the webhooks `asked` of
/// `resource`: the scaffolded file of each admission webhook asked, the conversions of a
/// kind asked to convert, the webhook server's crates added to `Cargo.toml`, the files
/// `first_manifests` makes of those planned so far, and the generated files of the updated
/// project (with `PROJECT`). The second value is as for [`resource_files`].
pub fn webhook_files(
    project: &Project,
    resource: &Resource,
    asked: Webhooks,
    root: &Path,
    interrupt: &Interrupt,
    first_manifests: impl FnOnce(&[PlannedFile]) -> anyhow::Result<Vec<PlannedFile>>,
) -> anyhow::Result<(Vec<PlannedFile>, bool)> {
    let mut files = render_admission_files(project, resource, asked)?;
    let webhook_files = files.clone();
    if asked.conversion {
        for spoke in project.spokes(resource) {
            files.push(render_conversion_file(project, spoke)?);
        }
    }
    let manifest = crate::files::read_to_string(&root.join("Cargo.toml"))?;
    files.push(PlannedFile::new(
        "Cargo.toml",
        cargo_toml::with_webhook_dependencies(&manifest)?,
        Owner::Amended,
    ));
    let default = "config/default/kustomization.yaml";
    let kustomization = crate::files::read_to_string(&root.join(default))?;
    files.push(PlannedFile::new(
        default,
        kustomization::with_webhook_wiring(&kustomization, !project.namespaced())?,
        Owner::Amended,
    ));
    let policies = "config/network-policy/kustomization.yaml";
    if let Some(policies_text) = crate::files::read_existing(&root.join(policies))? {
        files.push(PlannedFile::new(
            policies,
            kustomization::with_webhook_policy(&policies_text),
            Owner::Amended,
        ));
    }
    files.extend(render_webhook_config(project, root)?);
    let manifests = first_manifests(&files)?;
    files.extend(manifests);
    with_generated(project, files, &webhook_files, root, interrupt)
}

/// Every scaffolded file as this opgen would write it today for `project`: the project's own
/// and each resource's, formatted as `init` and `create api` leave them. `opgen update`
/// compares the user's files with these. The second value is as for [`resource_files`].
pub fn scaffolded_files(
    project: &Project,
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<(Vec<PlannedFile>, bool)> {
    let mut files = project_files(project)?;
    let webhook_files = WebhookFiles::of(project, &Tree { root, pending: &[] });
    let firsts: Vec<&Resource> = project.kinds().collect();
    for resource in &project.resources {
        let parts = ResourceParts {
            types: true,
            controller: resource.controller,
            roles: firsts.iter().any(|first| std::ptr::eq(*first, resource)),
        };
        files.extend(render_resource(project, resource, parts)?);
        // A webhook that a combined file of an older opgen serves has no file of its own.
        let combined = Webhooks {
            defaulting: webhook_files.in_combined_file(resource, AdmissionWebhook::Defaulting),
            validation: webhook_files.in_combined_file(resource, AdmissionWebhook::Validation),
            conversion: false,
        };
        let recorded = resource.webhooks.unwrap_or_default();
        files.extend(render_admission_files(
            project,
            resource,
            recorded.without(combined),
        )?);
        if project
            .spokes(resource)
            .iter()
            .any(|spoke| std::ptr::eq(*spoke, resource))
        {
            files.push(render_conversion_file(project, resource)?);
        }
    }
    for foreign in &project.foreign_kinds {
        files.push(render_foreign_controller(project, foreign)?);
    }
    override_yaml::check(&files)?;
    let formatted = rustfmt::format(&mut files, root, interrupt)?;
    Ok((files, formatted))
}

/// The kustomize files of the webhooks, written by the first webhook (and again by a later
/// one when they are gone): `config/webhook/` with its Service and the `config/certmanager`
/// component.
fn render_webhook_config(project: &Project, root: &Path) -> anyhow::Result<Vec<PlannedFile>> {
    Ok(webhook_config_files(project)?
        .into_iter()
        .filter(|file| !root.join(&file.path).exists())
        .collect())
}

/// Every kustomize file of the webhooks as this opgen scaffolds it for `project` (see
/// [`render_webhook_config`]).
pub fn webhook_config_files(project: &Project) -> anyhow::Result<Vec<PlannedFile>> {
    let templates = Templates::get();
    let values = ProjectValues::new(project);
    let mut files = Vec::new();
    // The self-managed certificate needs cluster-wide permissions (to inject its CA), which a
    // namespaced project's Role cannot grant: those projects use the cert-manager component.
    let self_managed: &[(&str, &str)] = if project.namespaced() {
        &[]
    } else {
        &[
            (
                "webhook/config/certificate_role.yaml",
                "config/webhook/certificate_role.yaml",
            ),
            (
                "webhook/config/manager_webhook_patch.yaml",
                "config/default/manager_webhook_patch.yaml",
            ),
        ]
    };
    for &(template, path) in [
        (
            "webhook/config/webhook_kustomization.yaml",
            "config/webhook/kustomization.yaml",
        ),
        ("webhook/config/service.yaml", "config/webhook/service.yaml"),
        (
            "webhook/config/allow_webhook_traffic.yaml",
            "config/network-policy/allow-webhook-traffic.yaml",
        ),
        (
            "webhook/config/certmanager_kustomization.yaml",
            "config/certmanager/kustomization.yaml",
        ),
        (
            "webhook/config/issuer.yaml",
            "config/certmanager/issuer.yaml",
        ),
        (
            "webhook/config/certificate.yaml",
            "config/certmanager/certificate.yaml",
        ),
    ]
    .iter()
    .chain(self_managed)
    {
        files.push(PlannedFile::new(
            path,
            templates.render(template, &values)?,
            Owner::Scaffolded,
        ));
    }
    Ok(files)
}

/// The scaffolded file of each admission webhook of `webhooks` for the version `resource`,
/// as rendered.
fn render_admission_files(
    project: &Project,
    resource: &Resource,
    webhooks: Webhooks,
) -> anyhow::Result<Vec<PlannedFile>> {
    let project_values = ProjectValues::new(project);
    #[derive(serde::Serialize)]
    struct WebhookFile<'a> {
        project: &'a ProjectValues,
        kind: KindValues,
        version: String,
        webhook: webhook_values::AdmissionValues,
    }
    let values = WebhookFile {
        project: &project_values,
        kind: KindValues::new(project, resource),
        version: resource.version.to_string(),
        webhook: webhook_values::AdmissionValues::new(project, resource, &WebhookFiles::default()),
    };
    webhooks
        .admission_webhooks()
        .map(|webhook| {
            let template = format!("webhook/{}.rs", webhook.name());
            Ok(PlannedFile::new(
                resource.admission_file(webhook),
                Templates::get().render(&template, &values)?,
                Owner::Scaffolded,
            ))
        })
        .collect()
}

/// The scaffolded `From` impls between `spoke` and its kind's hub, as rendered.
fn render_conversion_file(project: &Project, spoke: &Resource) -> anyhow::Result<PlannedFile> {
    let project_values = ProjectValues::new(project);
    let values = ResourceValues {
        project: &project_values,
        kind: KindValues::new(project, spoke),
        version: spoke.version.to_string(),
    };
    let contents = Templates::get().render("webhook/conversion.rs", &values)?;
    Ok(PlannedFile::new(
        spoke.conversion_file(),
        contents,
        Owner::Scaffolded,
    ))
}

/// Everything `create api` writes for a kind the project watches without owning it: the
/// kind's controller, `stored` (the copy of an external CRD), and the generated files of the
/// updated project. The second value is as for [`resource_files`].
pub fn foreign_files(
    project: &Project,
    foreign: &ForeignKind,
    stored: Vec<PlannedFile>,
    root: &Path,
    interrupt: &Interrupt,
) -> anyhow::Result<(Vec<PlannedFile>, bool)> {
    let mut files = vec![render_foreign_controller(project, foreign)?];
    files.extend(stored.iter().cloned());
    with_generated(project, files, &stored, root, interrupt)
}

/// The scaffolded controller of a foreign kind, as rendered.
fn render_foreign_controller(
    project: &Project,
    foreign: &ForeignKind,
) -> anyhow::Result<PlannedFile> {
    let project_values = ProjectValues::new(project);
    let values = foreign_values::ForeignControllerValues {
        project: &project_values,
        kind: foreign_values::ForeignKindValues::new(project, foreign),
    };
    let contents = Templates::get().render("foreign/controller.rs", &values)?;
    Ok(PlannedFile::new(
        foreign.controller_file(),
        contents,
        Owner::Scaffolded,
    ))
}

/// The scaffolded files of one resource, as rendered.
fn render_resource(
    project: &Project,
    resource: &Resource,
    parts: ResourceParts,
) -> anyhow::Result<Vec<PlannedFile>> {
    let templates = Templates::get();
    let project_values = ProjectValues::new(project);
    let values = ResourceValues {
        project: &project_values,
        kind: KindValues::new(project, resource),
        version: resource.version.to_string(),
    };
    // An operand kind (`--image`) has its own types, sample, controller and integration test,
    // by its workload.
    let operand_templates = values
        .kind
        .operand
        .as_ref()
        .map(|operand| operand.templates);
    let mut wanted: Vec<(String, String)> = Vec::new();
    if parts.types {
        let (types, sample) = operand_templates
            .map_or(("resource/types.rs", "resource/sample.yaml"), |t| {
                (t.types, t.sample)
            });
        wanted.push((types.to_owned(), resource.api_file()));
        wanted.push((sample.to_owned(), resource.sample_file()));
    }
    if parts.controller {
        let (controller, integration_test) = operand_templates.map_or(
            ("resource/controller.rs", "resource/integration_test.rs"),
            |t| (t.controller, t.integration_test),
        );
        wanted.push((controller.to_owned(), resource.controller_file()));
        wanted.push((
            integration_test.to_owned(),
            resource.integration_test_file(),
        ));
    }
    if parts.roles {
        wanted.push((
            "resource/editor_role.yaml".into(),
            resource.role_file("editor"),
        ));
        wanted.push((
            "resource/viewer_role.yaml".into(),
            resource.role_file("viewer"),
        ));
    }
    wanted
        .into_iter()
        .map(|(template, path)| {
            let contents = templates.render(&template, &values)?;
            Ok(PlannedFile::new(path, contents, Owner::Scaffolded))
        })
        .collect()
}
