//! `edit`'s change of `PROJECT`: the project-wide choices `init` made that can change later,
//! the operator's scope and the license and its owner. (The Kubernetes release is `opgen
//! update`'s; the project name and the domain are in every kind's files, and stay.)

use super::Refusal;
use crate::{
    model::License,
    project::{Project, Scope},
};

/// What `edit` asks: `None` keeps what the project has.
#[derive(Debug, Clone, Default)]
pub struct ChangeSettings {
    pub scope: Option<Scope>,
    pub license: Option<License>,
    pub owner: Option<String>,
}

/// The project after the change.
#[derive(Debug)]
pub struct SettingsChange {
    pub project: Project,
}

impl SettingsChange {
    /// Whether nothing changes: the project has the settings asked already.
    pub fn is_noop(&self, before: &Project) -> bool {
        self.project == *before
    }
}

/// The project with the settings of `request`, refusing a request for nothing and a scope
/// that the project's kinds cannot have.
pub fn change_settings(
    project: &Project,
    request: &ChangeSettings,
) -> anyhow::Result<SettingsChange> {
    if request.scope.is_none() && request.license.is_none() && request.owner.is_none() {
        return Err(Refusal::NoEditAsked {
            scope: match project.operator_scope {
                Scope::Cluster => "cluster-wide",
                Scope::Namespace => "namespaced",
            },
            license: license_name(project.license).to_owned(),
            owner: project
                .owner
                .clone()
                .unwrap_or_else(|| format!("none given: \"The {} Authors\"", project.project_name)),
        }
        .into());
    }
    let mut updated = project.clone();
    if let Some(scope) = request.scope {
        updated.operator_scope = scope;
    }
    if let Some(license) = request.license {
        updated.license = license;
    }
    if let Some(owner) = &request.owner {
        updated.owner = Some(owner.clone());
    }
    if updated.namespaced() {
        let owned = updated
            .kinds()
            .filter(|r| !r.namespaced)
            .map(|r| format!("{} ({})", r.kind, r.group));
        let foreign = updated
            .foreign_kinds
            .iter()
            .filter(|f| !f.namespaced)
            .map(|f| {
                let group = if f.group.as_str().is_empty() {
                    "core"
                } else {
                    f.group.as_str()
                };
                format!("{} ({group})", f.kind)
            });
        let kinds: Vec<String> = owned.chain(foreign).collect();
        if !kinds.is_empty() {
            return Err(Refusal::ClusterScopedKinds { kinds }.into());
        }
    }
    updated.check()?;
    Ok(SettingsChange { project: updated })
}

/// The license as `--license` names it.
pub fn license_name(license: License) -> &'static str {
    match license {
        License::Apache2 => "apache2",
        License::Mit => "mit",
        License::None => "none",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ForeignKind, Resource};

    #[test]
    fn changes_only_what_is_asked() {
        let project = Project::for_test("demo", Scope::Cluster);
        let change = change_settings(
            &project,
            &ChangeSettings {
                license: Some(License::Mit),
                ..ChangeSettings::default()
            },
        )
        .unwrap();
        assert_eq!(change.project.license, License::Mit);
        assert_eq!(change.project.operator_scope, Scope::Cluster);
        assert!(!change.is_noop(&project));
        let same = change_settings(
            &project,
            &ChangeSettings {
                scope: Some(Scope::Cluster),
                ..ChangeSettings::default()
            },
        )
        .unwrap();
        assert!(same.is_noop(&project));
    }

    #[test]
    fn refuses_nothing_asked_and_cluster_scoped_kinds_in_a_namespaced_operator() {
        let project = Project {
            resources: vec![Resource {
                namespaced: false,
                ..Resource::for_test("ops", "v1", "Policy")
            }],
            foreign_kinds: vec![ForeignKind::built_in_for_test("core", "v1", "Namespace")],
            ..Project::for_test("demo", Scope::Cluster)
        };
        let nothing = change_settings(&project, &ChangeSettings::default())
            .unwrap_err()
            .to_string();
        assert!(
            nothing
                .contains("--namespaced, --cluster-wide   the operator's scope (now cluster-wide)"),
            "{nothing}"
        );
        assert!(nothing.contains("(now apache2)") && nothing.contains("The demo Authors"));
        let scoped = change_settings(
            &project,
            &ChangeSettings {
                scope: Some(Scope::Namespace),
                ..ChangeSettings::default()
            },
        )
        .unwrap_err()
        .downcast::<Refusal>()
        .unwrap();
        assert_eq!(
            scoped,
            Refusal::ClusterScopedKinds {
                kinds: vec!["Policy (ops)".to_owned(), "Namespace (core)".to_owned()]
            }
        );
    }
}
