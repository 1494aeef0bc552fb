//! The parts of the user's files that follow the record, changed in place and nothing else of
//! them: the lines opgen added for the webhooks, the version a controller watches, the markers
//! of a combined webhook file, the install modes of the CSV base, the Helm chart's watched
//! namespace, and the license of `Cargo.toml` and the README.

use std::path::Path;

use super::{UserFile, license_lines};
use crate::{
    bundle,
    files::read_existing,
    helm,
    model::{AdmissionWebhook, Resource},
    plan::{Owner, PlannedFile},
    project::{
        Project,
        edit::{KindVersion, Refusal},
    },
    scaffold::{Tree, combined_webhook_file, kustomization, webhook_values::WebhookFiles},
};

/// What the change does to parts of the user's files.
#[derive(Debug, Default)]
pub struct Amendments {
    /// Written whatever the conflict policy: nothing of the user's is lost.
    pub files: Vec<PlannedFile>,
    /// Written only with `--force`: the user's code changes with them.
    pub forced: Vec<(PlannedFile, UserFile)>,
    /// Combined webhook files that serve nothing any more (removed only with `--force`).
    pub retired: Vec<UserFile>,
    /// What the user must change themselves, said after the change.
    pub notes: Vec<String>,
    /// The files of which these amendments change a part: the comparison of scaffolded files
    /// leaves them alone, the rest of them being the user's to keep (a README the user
    /// rewrote does not stop `edit --license`).
    pub handled: Vec<String>,
}

impl Amendments {
    fn amend(
        &mut self,
        root: &Path,
        path: &str,
        change: impl FnOnce(&str) -> anyhow::Result<String>,
    ) -> anyhow::Result<()> {
        self.handled.push(path.to_owned());
        if let Some(text) = read_existing(&root.join(path))? {
            let amended = change(&text)?;
            if amended != text {
                self.files
                    .push(PlannedFile::new(path, amended, Owner::Amended));
            }
        }
        Ok(())
    }
}

/// The amendments of the change from `before` to `after` in the project at `root`.
pub fn plan(root: &Path, before: &Project, after: &Project) -> anyhow::Result<Amendments> {
    let mut amendments = Amendments::default();
    webhook_wiring(root, before, after, &mut amendments)?;
    combined_webhook_files(root, before, after, &mut amendments)?;
    controllers_moved(root, before, after, &mut amendments)?;
    if before.operator_scope != after.operator_scope {
        install_modes(root, after, &mut amendments)?;
        watched_namespace(root, after, &mut amendments)?;
    }
    if before.license != after.license {
        let spdx = after.license.spdx();
        amendments.amend(root, "Cargo.toml", |text| {
            license_lines::workspace(text, spdx)
        })?;
        amendments.amend(root, "api/Cargo.toml", |text| {
            Ok(license_lines::member(text, spdx))
        })?;
        let mut said = true;
        amendments.amend(root, "README.md", |text| {
            let amended = license_lines::readme(text, spdx);
            said = amended != text || license_lines::readme(text, before.license.spdx()) == text;
            Ok(amended)
        })?;
        if !said && root.join("README.md").is_file() {
            amendments.notes.push(format!(
                "README.md has no license sentence opgen wrote: say there that the project is {}",
                spdx.map_or("not licensed".to_owned(), |spdx| format!(
                    "licensed under {spdx}"
                ))
            ));
        }
    }
    let holder = |project: &Project| {
        let name = project
            .owner
            .clone()
            .unwrap_or_else(|| format!("The {} Authors", project.project_name));
        serde_json::to_string(&name).expect("a string serializes")
    };
    let (old, new) = (holder(before), holder(after));
    if old != new {
        for path in bases(root) {
            amendments.amend(root, &path, |text| {
                Ok(text.replace(&format!("name: {old}\n"), &format!("name: {new}\n")))
            })?;
        }
    }
    Ok(amendments)
}

fn has_webhooks(project: &Project) -> bool {
    project.resources.iter().any(|r| r.webhooks.is_some())
}

/// The lines the first webhook added to the kustomizations: taken out with the last one, and
/// chosen again for a new scope (the self-managed certificate, or cert-manager's).
fn webhook_wiring(
    root: &Path,
    before: &Project,
    after: &Project,
    amendments: &mut Amendments,
) -> anyhow::Result<()> {
    let default = "config/default/kustomization.yaml";
    if has_webhooks(before) && !has_webhooks(after) {
        amendments.amend(root, default, |text| {
            Ok(kustomization::without_webhook_wiring(text))
        })?;
        amendments.amend(root, "config/network-policy/kustomization.yaml", |text| {
            Ok(kustomization::without_webhook_policy(text))
        })?;
    } else if has_webhooks(after) && before.operator_scope != after.operator_scope {
        amendments.amend(root, default, |text| {
            kustomization::with_webhook_wiring(
                &kustomization::without_webhook_wiring(text),
                !after.namespaced(),
            )
        })?;
    }
    Ok(())
}

/// The combined webhook files of an older opgen that serve fewer webhooks after the change:
/// without the markers of those that went, or retired when none is left.
fn combined_webhook_files(
    root: &Path,
    before: &Project,
    after: &Project,
    amendments: &mut Amendments,
) -> anyhow::Result<()> {
    let tree = Tree { root, pending: &[] };
    let (was, will) = (
        WebhookFiles::of(before, &tree),
        WebhookFiles::of(after, &tree),
    );
    for resource in &before.resources {
        let path = resource.combined_webhook_file();
        let served = |files: &WebhookFiles, project: &Project| -> Vec<AdmissionWebhook> {
            let Some(now) = project
                .resources
                .iter()
                .find(|r| r.same_kind(resource) && r.version == resource.version)
            else {
                return Vec::new();
            };
            now.webhooks
                .unwrap_or_default()
                .admission_webhooks()
                .filter(|webhook| files.in_combined_file(now, *webhook))
                .collect()
        };
        let (served_before, served_after) = (served(&was, before), served(&will, after));
        if served_before.len() == served_after.len() {
            continue;
        }
        let gone: Vec<AdmissionWebhook> = served_before
            .into_iter()
            .filter(|webhook| !served_after.contains(webhook))
            .collect();
        let flags: Vec<&str> = gone.iter().map(|webhook| webhook.flag()).collect();
        if served_after.is_empty() {
            amendments.retired.push(UserFile::new(
                &path,
                "holds the admission webhooks of the version in one file, as opgen 0.2.0 and earlier scaffolded them",
            ));
        } else if let Some(file) = combined_webhook_file::without_markers(
            &tree.read(&path)?,
            resource,
            &before.domain,
            &gone,
        ) {
            amendments.forced.push((
                file,
                UserFile::new(
                    &path,
                    format!(
                        "holds the webhook of {} beside the other one, as opgen 0.2.0 and earlier scaffolded them; --force takes out its marker, and leaves its code to you",
                        flags.join(" and ")
                    ),
                ),
            ));
        }
    }
    Ok(())
}

/// A kind whose controller watched the version that went watches the storage version: the
/// `use` of the version's module in its controller and integration test points there.
fn controllers_moved(
    root: &Path,
    before: &Project,
    after: &Project,
    amendments: &mut Amendments,
) -> anyhow::Result<()> {
    let api = before.project_name.api_crate_ident();
    for watched in before.resources.iter().filter(|r| r.controller) {
        let Some(now) = after
            .resources
            .iter()
            .find(|r| r.same_kind(watched) && r.controller)
        else {
            continue;
        };
        if now.version == watched.version {
            continue;
        }
        let group = watched.group.module();
        let old = format!("use ::{api}::{group}::{} as api;", watched.version);
        let new = format!("use ::{api}::{group}::{} as api;", now.version);
        let controller = watched.controller_file();
        let Some(text) = read_existing(&root.join(&controller))? else {
            continue;
        };
        if !text.contains(&old) {
            return Err(Refusal::ControllerWatches {
                asked: KindVersion::new(&watched.kind, &watched.group, &watched.version),
                file: controller,
                storage: now.version.to_string(),
            }
            .into());
        }
        for path in [controller, watched.integration_test_file()] {
            amendments.amend(root, &path, |text| {
                Ok(repoint(text, watched, now, &old, &new))
            })?;
        }
        amendments.notes.push(format!(
            "{} watches {} now (its `use` line changed): make it build against that version's types",
            watched.controller_file(),
            now.version
        ));
    }
    Ok(())
}

/// `text` with the `use` of `watched`'s module and its module comment pointed at `now`'s.
fn repoint(text: &str, watched: &Resource, now: &Resource, old: &str, new: &str) -> String {
    let from = format!("/{}`)", watched.version);
    let to = format!("/{}`)", now.version);
    text.split_inclusive('\n')
        .map(|line| {
            if line.starts_with(old) {
                line.replacen(old, new, 1)
            } else if line.starts_with("//! Controller for ") {
                line.replacen(&from, &to, 1)
            } else {
                line.to_owned()
            }
        })
        .collect()
}

/// The CSV bases under `config/manifests/bases` (one per OLM package).
fn bases(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join("config/manifests/bases")) else {
        return Vec::new();
    };
    let mut bases: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".clusterserviceversion.yaml"))
        .map(|name| format!("config/manifests/bases/{name}"))
        .collect();
    bases.sort();
    bases
}

/// The install modes of every CSV base follow the scope.
fn install_modes(root: &Path, after: &Project, amendments: &mut Amendments) -> anyhow::Result<()> {
    let supported = bundle::base::supported_modes(after);
    for path in bases(root) {
        let mut found = false;
        amendments.amend(root, &path, |text| {
            let (amended, any) = bundle::base::with_install_modes(text, after);
            found = any;
            Ok(amended)
        })?;
        if !found {
            amendments.notes.push(format!(
                "{path} lists no installModes opgen can set: support {} there",
                supported.join(" and ")
            ));
        }
    }
    Ok(())
}

/// The Helm chart's `watchNamespace` value, which only a cluster-wide operator has.
fn watched_namespace(
    root: &Path,
    after: &Project,
    amendments: &mut Amendments,
) -> anyhow::Result<()> {
    let mut found = true;
    amendments.amend(root, helm::VALUES_FILE, |text| {
        let (amended, done) = helm::with_watch_namespace(text, !after.namespaced());
        found = done;
        Ok(amended)
    })?;
    if !found {
        amendments.notes.push(format!(
            "{} has no `logging:` block to put `watchNamespace: \"\"` after: add it yourself",
            helm::VALUES_FILE
        ));
    }
    if root.join(helm::VALUES_FILE).is_file() {
        amendments
            .notes
            .push("the Helm chart follows the scope once regenerated: run `make helm`".to_owned());
    }
    Ok(())
}
