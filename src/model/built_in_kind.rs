//! The kinds Kubernetes serves itself (ConfigMap, Deployment, Namespace, …), which a project
//! may watch without owning their types: `create api --resource=false` for a group that is not
//! the project's. The table is data, generated from the sources of the pinned k8s-openapi by
//! `scripts/builtin-kinds.py`, so that opgen knows exactly the kinds the generated code can
//! name, in the Kubernetes versions that have them.

mod table;

use std::ops::RangeInclusive;

use super::KubernetesVersion;

/// One version of a built-in kind, as k8s-openapi has it.
#[derive(Debug, PartialEq, Eq)]
pub struct BuiltInKind {
    /// The API group, empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// The resource name RBAC rules and URLs use.
    pub plural: &'static str,
    pub namespaced: bool,
    /// The type's path inside the `k8s_openapi` crate: `api::apps::v1::Deployment`.
    pub rust_type: &'static str,
    /// The Kubernetes minor versions whose k8s-openapi feature has the type.
    pub minors: RangeInclusive<u32>,
}

/// A kind of Kubernetes that a controller cannot watch, as k8s-openapi has it.
#[derive(Debug, PartialEq, Eq)]
pub struct UnwatchableKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub why: Unwatchable,
    pub minors: RangeInclusive<u32>,
}

/// Why a kind of Kubernetes cannot be watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unwatchable {
    /// It is read and written through another kind's objects (`Scale`, `Eviction`).
    Subresource,
    /// Its objects are only created, answered and never stored (`TokenReview`,
    /// `SubjectAccessReview`, `Binding`): there is no list to watch.
    CreateOnly,
}

/// Why a group, version and kind name no built-in kind, with the closest one there is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}{}", suggestion.as_ref().map(|s| format!("\n\n{s}")).unwrap_or_default())]
pub struct UnknownBuiltIn {
    pub problem: String,
    pub suggestion: Option<String>,
}

/// The core group as `--group` may spell it: `core` (Kubebuilder's name) or empty.
pub fn core_group(group: &str) -> bool {
    group.is_empty() || group == "core"
}

impl BuiltInKind {
    /// The versions of `group`'s `kind` that Kubernetes `kubernetes` serves: `["v1"]`.
    pub fn versions_of(
        group: &str,
        kind: &str,
        kubernetes: KubernetesVersion,
    ) -> Vec<&'static str> {
        let group = if core_group(group) { "" } else { group };
        table::TABLE
            .iter()
            .filter(|k| k.group == group && k.kind == kind)
            .filter(|k| k.minors.contains(&kubernetes.minor()))
            .map(|k| k.version)
            .collect()
    }

    /// Whether some built-in kind of Kubernetes `kubernetes` is served as `group`'s resource
    /// `plural`, the way an RBAC rule names it.
    pub fn serves(group: &str, plural: &str, kubernetes: KubernetesVersion) -> bool {
        let group = if core_group(group) { "" } else { group };
        table::TABLE.iter().any(|k| {
            k.group == group && k.plural == plural && k.minors.contains(&kubernetes.minor())
        })
    }

    /// The built-in kind `group`/`version` `kind` of Kubernetes `kubernetes`. `group` is the
    /// full API group; the core group is `core` or empty.
    pub fn find(
        group: &str,
        version: &str,
        kind: &str,
        kubernetes: KubernetesVersion,
    ) -> Result<&'static BuiltInKind, UnknownBuiltIn> {
        let group = if core_group(group) { "" } else { group };
        let served: Vec<&'static BuiltInKind> = table::TABLE
            .iter()
            .filter(|k| k.minors.contains(&kubernetes.minor()))
            .collect();
        let shown = |group: &str| if group.is_empty() { "core" } else { group }.to_owned();
        let unknown = |problem: String, suggestion: Option<String>| UnknownBuiltIn {
            problem,
            suggestion,
        };
        if let Some(found) = served
            .iter()
            .find(|k| k.group == group && k.version == version && k.kind == kind)
        {
            return Ok(found);
        }
        if let Some(unwatchable) = table::UNWATCHABLE
            .iter()
            .find(|k| k.group == group && k.kind == kind && k.minors.contains(&kubernetes.minor()))
        {
            let named = format!("{kind} {}/{}", shown(group), unwatchable.version);
            return Err(match unwatchable.why {
                Unwatchable::Subresource => unknown(
                    format!(
                        "{named} is a subresource of other kinds, with no objects of its own, so a controller cannot watch it"
                    ),
                    Some(
                        "Watch the kind whose objects have it, and read it through them".to_owned(),
                    ),
                ),
                Unwatchable::CreateOnly => unknown(
                    format!(
                        "{named} cannot be watched: Kubernetes answers each one as it is created and stores none, so there is no list of them to watch"
                    ),
                    Some(
                        "Create them from your controller's code where it needs an answer"
                            .to_owned(),
                    ),
                ),
            });
        }
        // A kind of another Kubernetes version is worth naming as such.
        if let Some(elsewhere) = table::TABLE
            .iter()
            .find(|k| k.group == group && k.version == version && k.kind == kind)
        {
            return Err(unknown(
                format!(
                    "{kind} {}/{version} is not served by Kubernetes {kubernetes}: k8s-openapi has it in Kubernetes 1.{} to 1.{}",
                    shown(group),
                    elsewhere.minors.start(),
                    elsewhere.minors.end()
                ),
                Some("Use a version of it that this Kubernetes serves, or change `kubernetesVersion` in PROJECT".to_owned()),
            ));
        }
        let in_group: Vec<&&BuiltInKind> = served.iter().filter(|k| k.group == group).collect();
        if in_group.is_empty() {
            let groups = served.iter().map(|k| shown(k.group));
            return Err(unknown(
                format!(
                    "`{}` is not an API group of Kubernetes {kubernetes}",
                    shown(group)
                ),
                closest(&shown(group), groups).map(|g| format!("Did you mean --group {g}?")),
            ));
        }
        let versions_of_kind: Vec<&&&BuiltInKind> =
            in_group.iter().filter(|k| k.kind == kind).collect();
        if let Some(newest) = versions_of_kind.iter().max_by_key(|k| priority(k.version)) {
            let others = versions_of_kind
                .iter()
                .map(|k| format!("{}/{}", shown(group), k.version))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(unknown(
                format!(
                    "Kubernetes {kubernetes} has no {kind} in {}/{version}; it serves {kind} as {others}",
                    shown(group)
                ),
                Some(format!(
                    "Did you mean {}/{}? Pass --version {}",
                    shown(group),
                    newest.version,
                    newest.version
                )),
            ));
        }
        if let Some(other) = served.iter().find(|k| k.kind == kind) {
            return Err(unknown(
                format!("{kind} is not in the `{}` API group", shown(group)),
                Some(format!(
                    "Did you mean --group {} --version {}?",
                    shown(other.group),
                    other.version
                )),
            ));
        }
        let kinds = in_group.iter().map(|k| k.kind.to_owned());
        Err(unknown(
            format!(
                "the `{}` API group of Kubernetes {kubernetes} has no kind {kind}",
                shown(group)
            ),
            closest(kind, kinds).map(|k| format!("Did you mean --kind {k}?")),
        ))
    }

    /// The Rust path of the type, from the root of the crate namespace.
    pub fn rust_path(&self) -> String {
        format!("::k8s_openapi::{}", self.rust_type)
    }
}

/// Orders versions as Kubernetes does (GA above beta above alpha); unparsable ones last.
fn priority(version: &str) -> Option<super::Version> {
    version.parse().ok()
}

/// The candidate closest to `wanted`, if any is close: equal ignoring case, or within a third
/// of its length in edits (so `Deployments` finds `Deployment`, `Pods` finds `Pod`).
fn closest(wanted: &str, candidates: impl Iterator<Item = String>) -> Option<String> {
    let wanted_lower = wanted.to_lowercase();
    candidates
        .map(|candidate| {
            let distance = strsim::levenshtein(&wanted_lower, &candidate.to_lowercase());
            (distance, candidate)
        })
        .filter(|(distance, _)| *distance <= wanted.len().div_ceil(3).max(1))
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)))
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn find(group: &str, version: &str, kind: &str) -> Result<&'static BuiltInKind, String> {
        BuiltInKind::find(group, version, kind, KubernetesVersion::default())
            .map_err(|err| err.to_string())
    }

    #[test]
    fn finds_kinds_of_the_core_group_by_either_name() {
        for group in ["core", ""] {
            let config_map = find(group, "v1", "ConfigMap").unwrap();
            assert_eq!(config_map.group, "");
            assert_eq!(config_map.plural, "configmaps");
            assert!(config_map.namespaced);
            assert_eq!(
                config_map.rust_path(),
                "::k8s_openapi::api::core::v1::ConfigMap"
            );
        }
    }

    #[test]
    fn knows_the_scope_and_plural_of_kinds_in_named_groups() {
        let namespace = find("core", "v1", "Namespace").unwrap();
        assert!(!namespace.namespaced);
        let deployment = find("apps", "v1", "Deployment").unwrap();
        assert_eq!(
            (deployment.plural, deployment.namespaced),
            ("deployments", true)
        );
        let ingress = find("networking.k8s.io", "v1", "Ingress").unwrap();
        assert_eq!(ingress.rust_type, "api::networking::v1::Ingress");
        let role = find("rbac.authorization.k8s.io", "v1", "ClusterRole").unwrap();
        assert!(!role.namespaced);
        let crd = find("apiextensions.k8s.io", "v1", "CustomResourceDefinition").unwrap();
        assert_eq!(crd.plural, "customresourcedefinitions");
        for (group, kind) in [
            ("batch", "CronJob"),
            ("policy", "PodDisruptionBudget"),
            ("coordination.k8s.io", "Lease"),
            ("autoscaling", "HorizontalPodAutoscaler"),
        ] {
            assert!(
                find(
                    group,
                    if group == "autoscaling" { "v2" } else { "v1" },
                    kind
                )
                .is_ok(),
                "{group} {kind}"
            );
        }
    }

    #[test]
    fn leaves_out_what_cannot_be_watched() {
        // Subresources and create-only kinds have no list to watch.
        assert!(find("autoscaling", "v1", "Scale").is_err());
        assert!(find("authentication.k8s.io", "v1", "TokenReview").is_err());
    }

    #[test]
    fn a_kind_that_cannot_be_watched_says_why() {
        let err = find("authentication.k8s.io", "v1", "TokenReview").unwrap_err();
        assert!(
            err.starts_with("TokenReview authentication.k8s.io/v1 cannot be watched: Kubernetes answers each one as it is created and stores none"),
            "{err}"
        );
        assert!(!err.contains("not an API group"), "{err}");
        let err = find("authorization.k8s.io", "v1beta1", "SubjectAccessReview").unwrap_err();
        assert!(
            err.contains("SubjectAccessReview authorization.k8s.io/v1 cannot be watched"),
            "{err}"
        );
        let err = find("autoscaling", "v1", "Scale").unwrap_err();
        assert!(
            err.starts_with("Scale autoscaling/v1 is a subresource of other kinds"),
            "{err}"
        );
        let err = find("core", "v1", "Binding").unwrap_err();
        assert!(
            err.starts_with("Binding core/v1 cannot be watched"),
            "{err}"
        );
    }

    #[test]
    fn the_table_has_each_kind_once_with_plausible_names() {
        let mut seen = HashSet::new();
        for kind in table::TABLE {
            assert!(
                seen.insert((kind.group, kind.version, kind.kind)),
                "{kind:?}"
            );
            assert_eq!(kind.plural, kind.plural.to_lowercase(), "{kind:?}");
            assert!(
                kind.rust_type.ends_with(&format!("::{}", kind.kind)),
                "{kind:?}"
            );
            assert!(kind.minors.start() >= &KubernetesVersion::OLDEST.minor());
            assert!(kind.minors.end() <= &KubernetesVersion::NEWEST.minor());
        }
        assert!(table::TABLE.len() > 60, "{}", table::TABLE.len());
    }

    #[test]
    fn a_misspelled_kind_gets_the_right_one() {
        let err = find("apps", "v1", "Deployments").unwrap_err();
        assert!(err.contains("has no kind Deployments"), "{err}");
        assert!(err.ends_with("Did you mean --kind Deployment?"), "{err}");
        let err = find("core", "v1", "configmap").unwrap_err();
        assert!(err.ends_with("Did you mean --kind ConfigMap?"), "{err}");
    }

    #[test]
    fn a_version_that_does_not_exist_gets_the_served_one() {
        let err = find("apps", "v1beta1", "Deployment").unwrap_err();
        assert!(err.contains("has no Deployment in apps/v1beta1"), "{err}");
        assert!(
            err.ends_with("Did you mean apps/v1? Pass --version v1"),
            "{err}"
        );
    }

    #[test]
    fn a_kind_in_the_wrong_group_or_an_unknown_group_is_pointed_right() {
        let err = find("batch", "v1", "Deployment").unwrap_err();
        assert!(
            err.ends_with("Did you mean --group apps --version v1?"),
            "{err}"
        );
        let err = find("app", "v1", "Deployment").unwrap_err();
        assert!(err.contains("`app` is not an API group"), "{err}");
        assert!(err.ends_with("Did you mean --group apps?"), "{err}");
    }

    #[test]
    fn a_kind_of_another_kubernetes_version_says_which() {
        let only_in_newer = table::TABLE
            .iter()
            .find(|k| *k.minors.start() > KubernetesVersion::default().minor())
            .expect("some kind is newer than the default version");
        let err = find(
            only_in_newer.group,
            only_in_newer.version,
            only_in_newer.kind,
        );
        assert!(
            err.unwrap_err()
                .contains("is not served by Kubernetes 1.35")
        );
    }
}
