//! `opgen update --kubernetes-version`: moving a project to another Kubernetes release.
//!
//! The release is named in three places a user owns: k8s-openapi's version feature in
//! `Cargo.toml`, the envtest release the CI workflow fetches for the integration tests, and
//! `PROJECT`. opgen changes the one token in each of the first two and keeps the rest of the
//! files as they are. It also reads what the project uses that one of the releases does not
//! serve: a built-in kind a controller watches (which makes the move impossible until that
//! controller moves to a version both serve) and a resource an RBAC marker grants (a note).

use std::path::Path;

use anyhow::bail;

use crate::{
    manifests::{markers::rbac, rbac::Rule},
    model::{BuiltInKind, KubernetesVersion, Origin},
    project::Project,
    scaffold::runtime_dependency::{Found, find_line},
};

/// The CI workflow `init` scaffolds, which fetches the envtest binaries of the project's release.
pub const CI_WORKFLOW: &str = ".github/workflows/ci.yml";

/// A move of a project from one Kubernetes release to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    pub from: KubernetesVersion,
    pub to: KubernetesVersion,
}

impl Move {
    /// The move `project` makes to `to`; `None` when it targets that release already.
    pub fn of(project: &Project, to: KubernetesVersion) -> Option<Self> {
        let from = project.kubernetes_version;
        (from != to).then_some(Self { from, to })
    }

    /// Whether the project goes to an older release, which loses APIs.
    pub fn is_downgrade(self) -> bool {
        self.to < self.from
    }

    /// What a move to an older release loses, for the user to confirm.
    pub fn losses(self) -> String {
        format!(
            "Moving from Kubernetes {} to {} builds the project against an older API: the kinds and fields Kubernetes added after {} are not in k8s-openapi's `{}` types, so code of yours that uses them stops compiling, and the operator is then meant for clusters of {} or newer",
            self.from,
            self.to,
            self.to,
            self.to.feature(),
            self.to
        )
    }

    /// Refuses the move when a built-in kind the project watches is not served by the target
    /// release: its controller would not compile, and `PROJECT` would not be valid.
    pub fn check_kinds(self, project: &Project) -> anyhow::Result<()> {
        let missing: Vec<String> = project
            .foreign_kinds
            .iter()
            .filter(|kind| kind.origin == Origin::BuiltIn)
            .filter(|kind| {
                BuiltInKind::find(
                    kind.group.as_str(),
                    kind.version.as_str(),
                    kind.kind.as_str(),
                    self.to,
                )
                .is_err()
            })
            .map(|kind| {
                let others =
                    BuiltInKind::versions_of(kind.group.as_str(), kind.kind.as_str(), self.to);
                let served = if others.is_empty() {
                    "no version of it".to_owned()
                } else {
                    format!("only {}", others.join(", "))
                };
                format!(
                    "{} {}: Kubernetes {} serves {served}",
                    kind.kind,
                    kind.api_version(),
                    self.to
                )
            })
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        bail!(
            "cannot move the project to Kubernetes {}: it watches built-in kinds that release does not serve:\n  {}\n\nMove each controller to a version both releases serve first (`opgen delete api` and `opgen create api --resource=false` with the other version), or keep Kubernetes {}",
            self.to,
            missing.join("\n  "),
            self.from
        )
    }

    /// Notes on the resources the project's RBAC markers grant that one release serves and the
    /// other does not (they stay in the role; the API server then has no such resource).
    pub fn rbac_notes(self, root: &Path, project: &Project) -> anyhow::Result<Vec<String>> {
        let rules = rbac::read_controllers(root, project)?;
        Ok(gone_resources(&rules, self.from, self.to)
            .into_iter()
            .map(|(group, resource)| {
                let group = if group.is_empty() { "core" } else { &group };
                format!(
                    "an RBAC marker grants `{resource}` of the API group `{group}`, which Kubernetes {} serves and {} does not: the rule stays in the role, and the controller that uses it will find no such resource",
                    self.from, self.to
                )
            })
            .collect())
    }

    /// `manifest` (the workspace's `Cargo.toml`) with k8s-openapi's version feature moved:
    /// the one `"v1_NN"` of the `k8s-openapi` line of `[workspace.dependencies]`.
    pub fn cargo_manifest(self, manifest: &str) -> anyhow::Result<String> {
        let (from, to) = (self.from.feature(), self.to.feature());
        let (quoted_from, quoted_to) = (format!("\"{from}\""), format!("\"{to}\""));
        let mut lines: Vec<String> = manifest.lines().map(str::to_owned).collect();
        let found = find_line(&lines, "[workspace.dependencies]", |line| {
            line.starts_with("k8s-openapi") && line.contains(&quoted_from)
        });
        let Found::Line(index) = found else {
            bail!(
                "Cargo.toml's [workspace.dependencies] has no `k8s-openapi` line with the feature `{from}` of Kubernetes {}, which opgen would move to `{to}`\n\nSet k8s-openapi's features to [\"{to}\", \"schemars\"] by hand and `kubernetesVersion: \"{}\"` in PROJECT, or restore the line",
                self.from,
                self.to
            );
        };
        lines[index] = lines[index].replace(&quoted_from, &quoted_to);
        let mut text = lines.join("\n");
        if manifest.ends_with('\n') {
            text.push('\n');
        }
        Ok(text)
    }

    /// `workflow` (the CI workflow) fetching the target release's envtest binaries, or `None`
    /// when it names no `setup-envtest use <release>.x` of the project's release.
    pub fn ci_workflow(self, workflow: &str) -> Option<String> {
        let from = format!(" use {}.x", self.from);
        workflow
            .contains(&from)
            .then(|| workflow.replace(&from, &format!(" use {}.x", self.to)))
    }
}

/// The (group, resource) pairs of `rules` that built-in kinds of `from` serve and no built-in
/// kind of `to` does; resources no built-in kind serves (the project's own) are not judged.
fn gone_resources(
    rules: &[Rule],
    from: KubernetesVersion,
    to: KubernetesVersion,
) -> Vec<(String, String)> {
    let mut gone = Vec::new();
    for rule in rules {
        for group in &rule.groups {
            for resource in &rule.resources {
                let resource = resource.split('/').next().unwrap_or(resource);
                let pair = (group.clone(), resource.to_owned());
                if BuiltInKind::serves(group, resource, from)
                    && !BuiltInKind::serves(group, resource, to)
                    && !gone.contains(&pair)
                {
                    gone.push(pair);
                }
            }
        }
    }
    gone
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{model::ForeignKind, project::Scope};

    fn version(text: &str) -> KubernetesVersion {
        text.parse().unwrap()
    }

    fn project_on(release: &str) -> Project {
        let mut project = Project::for_test("demo", Scope::Cluster);
        project.kubernetes_version = version(release);
        project
    }

    const MANIFEST: &str = "[workspace]\nmembers = [\"api\"]\n\n[workspace.dependencies]\nkube = \"5\" # v1_35 stays in a comment\nk8s-openapi = { version = \"0.29.0\", features = [\"v1_35\", \"schemars\"] } # mine\n\n[dependencies]\nk8s-openapi = { workspace = true, features = [\"v1_35\"] }\n";

    #[test]
    fn moves_the_feature_of_the_workspace_dependency_alone() {
        let to_newest = Move::of(&project_on("1.35"), version("1.37")).unwrap();
        let moved = to_newest.cargo_manifest(MANIFEST).unwrap();
        assert_eq!(
            moved,
            MANIFEST.replacen(
                "features = [\"v1_35\", \"schemars\"] } # mine",
                "features = [\"v1_37\", \"schemars\"] } # mine",
                1
            )
        );
        let err = to_newest
            .cargo_manifest("[workspace.dependencies]\nk8s-openapi = \"0.29\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no `k8s-openapi` line with the feature `v1_35`"),
            "{err}"
        );
        assert!(err.contains("[\"v1_37\", \"schemars\"]"), "{err}");
    }

    #[test]
    fn moves_the_envtest_release_of_the_ci_workflow() {
        let up = Move::of(&project_on("1.35"), version("1.36")).unwrap();
        let workflow = "run: setup-envtest use 1.35.x -p path\n# 1.35 elsewhere\n";
        assert_eq!(
            up.ci_workflow(workflow).unwrap(),
            "run: setup-envtest use 1.36.x -p path\n# 1.35 elsewhere\n"
        );
        assert_eq!(up.ci_workflow("run: make test\n"), None);
    }

    #[test]
    fn the_same_release_is_no_move_and_an_older_one_is_a_downgrade() {
        assert_eq!(Move::of(&project_on("1.35"), version("1.35")), None);
        let down = Move::of(&project_on("1.37"), version("1.35")).unwrap();
        assert!(down.is_downgrade());
        assert!(
            !Move::of(&project_on("1.35"), version("1.37"))
                .unwrap()
                .is_downgrade()
        );
        let losses = down.losses();
        assert!(losses.contains("added after 1.35"), "{losses}");
        assert!(losses.contains("`v1_35`"), "{losses}");
    }

    #[test]
    fn refuses_a_release_that_does_not_serve_a_watched_kind() {
        // networking.k8s.io/v1beta1 ServiceCIDR is served up to 1.36.
        let mut project = project_on("1.35");
        project.foreign_kinds.push(ForeignKind::built_in_for_test(
            "networking.k8s.io",
            "v1beta1",
            "ServiceCIDR",
        ));
        Move::of(&project, version("1.36"))
            .unwrap()
            .check_kinds(&project)
            .unwrap();
        let err = Move::of(&project, version("1.37"))
            .unwrap()
            .check_kinds(&project)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ServiceCIDR networking.k8s.io/v1beta1: Kubernetes 1.37 serves only v1"),
            "{err}"
        );
        assert!(err.contains("or keep Kubernetes 1.35"), "{err}");
    }

    #[test]
    fn names_granted_resources_one_release_lacks() {
        let rule = |group: &str, resources: &[&str]| Rule {
            namespace: None,
            groups: vec![group.to_owned()],
            resources: resources.iter().map(|r| (*r).to_owned()).collect(),
            resource_names: vec![],
            urls: vec![],
            verbs: vec!["get".to_owned()],
        };
        let rules = [
            // Served from 1.37 only.
            rule(
                "lifecycle.k8s.io",
                &["evictionrequests", "evictionrequests/status"],
            ),
            rule("", &["configmaps"]),
            // The project's own kind: not judged.
            rule("db.example.com", &["backups"]),
        ];
        assert_eq!(
            gone_resources(&rules, version("1.37"), version("1.35")),
            [("lifecycle.k8s.io".to_owned(), "evictionrequests".to_owned())]
        );
        assert!(gone_resources(&rules, version("1.35"), version("1.37")).is_empty());
    }
}
