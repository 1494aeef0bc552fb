//! The objects `config/manifests` renders, sorted by what the bundle makes of them: CRDs, the
//! manager Deployment, its RBAC, the samples, webhook configurations, and the other objects OLM
//! installs as they are.

use std::collections::BTreeSet;

use anyhow::bail;

use super::object::{Object, parse_stream};
use crate::project::Project;

/// Kinds OLM installs from a bundle's `manifests/` as they are (besides the CSV and CRDs),
/// as operator-registry lists them.
const PLAIN_KINDS: &[&str] = &[
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "ConsolePlugin",
    "ConsoleQuickStart",
    "ConsoleYAMLSample",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "PodMonitor",
    "PriorityClass",
    "PrometheusRule",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "ServiceMonitor",
    "VerticalPodAutoscaler",
];

#[derive(Debug, Default)]
pub struct Rendered {
    pub crds: Vec<Object>,
    /// The manager's Deployment; exactly one.
    pub deployment: Option<Object>,
    /// Custom resources of the project's groups, from `config/samples`.
    pub samples: Vec<Object>,
    pub webhook_configurations: Vec<Object>,
    /// Everything else OLM accepts: RBAC, ServiceAccounts, Services, NetworkPolicies, …
    pub others: Vec<Object>,
}

impl Rendered {
    /// Sorts the objects of `stream`, the output of `kustomize_dir`.
    pub fn parse(stream: &str, kustomize_dir: &str, project: &Project) -> anyhow::Result<Self> {
        let objects = parse_stream(stream)
            .map_err(|err| anyhow::anyhow!("the rendered {kustomize_dir} is not YAML: {err}"))?;
        let groups: BTreeSet<String> = project
            .resources
            .iter()
            .map(|resource| resource.qualified_group(&project.domain))
            .collect();
        let mut rendered = Rendered::default();
        let mut deployments = Vec::new();
        let mut unsupported = Vec::new();
        for object in objects {
            match object.kind() {
                "CustomResourceDefinition" => rendered.crds.push(object),
                "Deployment" => deployments.push(object),
                "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
                    rendered.webhook_configurations.push(object)
                }
                // OLM creates the namespace it installs into.
                "Namespace" => {}
                _ if groups.contains(object.group()) => rendered.samples.push(object),
                kind if PLAIN_KINDS.contains(&kind) => rendered.others.push(object),
                _ => unsupported.push(object.describe()),
            }
        }
        if !unsupported.is_empty() {
            bail!(
                "{kustomize_dir} renders objects an OLM bundle cannot hold: {}\n\nA bundle holds the CSV, CRDs and a few kinds OLM installs as they are ({}); remove the others from {kustomize_dir}/kustomization.yaml or what it lists",
                unsupported.join(", "),
                PLAIN_KINDS.join(", ")
            );
        }
        match deployments.len() {
            1 => rendered.deployment = deployments.pop(),
            0 => bail!(
                "{kustomize_dir} renders no Deployment, so the bundle has no manager to install\n\nThe manager's Deployment comes from config/default: list `../default` in {kustomize_dir}/kustomization.yaml"
            ),
            _ => bail!(
                "{kustomize_dir} renders {} Deployments ({}), and a bundle installs one manager\n\nRender only the manager's Deployment from {kustomize_dir}",
                deployments.len(),
                deployments
                    .iter()
                    .map(Object::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
        Ok(rendered)
    }

    pub fn deployment(&self) -> &Object {
        self.deployment
            .as_ref()
            .expect("parse makes sure of exactly one Deployment")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{model::Resource, project::Scope};

    fn project() -> Project {
        let mut project = Project::for_test("demo", Scope::Cluster);
        project
            .resources
            .push(Resource::for_test("db", "v1", "MySQLCluster"));
        project
    }

    const DEPLOYMENT: &str =
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: demo-controller-manager\n";

    #[test]
    fn sorts_objects() {
        let stream = format!(
            "{DEPLOYMENT}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo-system\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: mysqlclusters.db.example.com\n---\napiVersion: db.example.com/v1\nkind: MySQLCluster\nmetadata:\n  name: sample\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: metrics\n"
        );
        let rendered = Rendered::parse(&stream, "config/manifests", &project()).unwrap();
        assert_eq!(rendered.deployment().name(), "demo-controller-manager");
        assert_eq!(rendered.crds.len(), 1);
        assert_eq!(rendered.samples[0].name(), "sample");
        assert_eq!(rendered.others.len(), 1, "the Namespace is dropped");
    }

    #[test]
    fn refuses_what_a_bundle_cannot_hold() {
        let err = |stream: &str| {
            Rendered::parse(stream, "config/manifests", &project())
                .unwrap_err()
                .to_string()
        };
        let message = err(&format!(
            "{DEPLOYMENT}---\napiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: selfsigned\n"
        ));
        assert!(
            message.starts_with(
                "config/manifests renders objects an OLM bundle cannot hold: Issuer selfsigned"
            ),
            "{message}"
        );
        let message = err("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n");
        assert!(message.contains("renders no Deployment"), "{message}");
        let message = err(&format!("{DEPLOYMENT}{DEPLOYMENT}"));
        assert!(message.contains("renders 2 Deployments"), "{message}");
        let message = err("kind: [");
        assert!(
            message.starts_with("the rendered config/manifests is not YAML"),
            "{message}"
        );
    }
}
