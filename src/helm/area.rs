//! The template file of the chart an object goes to, and the value that switches it on.

use crate::bundle::object::Object;

/// One file under the chart's `templates/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Area {
    Crd,
    Rbac,
    Manager,
    Metrics,
    Webhook,
    NetworkPolicy,
    Prometheus,
    /// Anything else the user's kustomization renders, templated by the common rules.
    Other,
}

/// What an object of an area needs to be rendered: always, or behind a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Always,
    CrdsInstall,
    ServiceAccountCreate,
    RbacHelpers,
    MetricsEnabled,
    SelfManagedCertificate,
    NetworkPolicyEnabled,
    ServiceMonitorEnabled,
}

impl Area {
    /// The template's file name under `templates/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Area::Crd => "crd.yaml",
            Area::Rbac => "rbac.yaml",
            Area::Manager => "manager.yaml",
            Area::Metrics => "metrics.yaml",
            Area::Webhook => "webhook.yaml",
            Area::NetworkPolicy => "network-policy.yaml",
            Area::Prometheus => "prometheus.yaml",
            Area::Other => "other.yaml",
        }
    }
}

/// The area of `object` of a project whose names start with `prefix` (`demo-`) and whose
/// webhooks call the Service `webhook_service`, and when it is rendered.
pub fn classify(object: &Object, prefix: &str, webhook_service: Option<&str>) -> (Area, Condition) {
    let suffix = object.name().strip_prefix(prefix).unwrap_or(object.name());
    let aggregated = object
        .0
        .pointer("/metadata/labels")
        .and_then(|labels| labels.as_object())
        .is_some_and(|labels| {
            labels
                .keys()
                .any(|key| key.starts_with("rbac.authorization.k8s.io/aggregate-to-"))
        });
    match object.kind() {
        "CustomResourceDefinition" => (Area::Crd, Condition::CrdsInstall),
        "Deployment" => (Area::Manager, Condition::Always),
        "ServiceAccount" => (Area::Rbac, Condition::ServiceAccountCreate),
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            (Area::Webhook, Condition::Always)
        }
        "NetworkPolicy" => (Area::NetworkPolicy, Condition::NetworkPolicyEnabled),
        // The alerts go with the ServiceMonitor: both need the Prometheus Operator, and rules
        // about metrics nothing scrapes would only fire `Absent`.
        "ServiceMonitor" | "PrometheusRule" => (Area::Prometheus, Condition::ServiceMonitorEnabled),
        "Service" if Some(object.name()) == webhook_service => (Area::Webhook, Condition::Always),
        "Service" if suffix.contains("metrics") => (Area::Metrics, Condition::MetricsEnabled),
        "Role" | "RoleBinding" if suffix.starts_with("webhook-certificate") => {
            (Area::Webhook, Condition::SelfManagedCertificate)
        }
        // The metrics reviews' role and its binding come and go together: a binding to a
        // role the chart does not render would fail nothing, and grant nothing.
        "ClusterRole" | "ClusterRoleBinding" if suffix.starts_with("metrics-") => {
            (Area::Metrics, Condition::MetricsEnabled)
        }
        "ClusterRole" if aggregated => (Area::Rbac, Condition::RbacHelpers),
        "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding" => {
            (Area::Rbac, Condition::Always)
        }
        _ => (Area::Other, Condition::Always),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(kind: &str, name: &str, labels: serde_json::Value) -> Object {
        Object(json!({"kind": kind, "metadata": {"name": name, "labels": labels}}))
    }

    #[test]
    fn sorts_objects_by_area() {
        let of = |kind: &str, name: &str| {
            classify(
                &object(kind, name, json!({})),
                "demo-",
                Some("demo-webhook-service"),
            )
        };
        assert_eq!(
            of("Service", "demo-webhook-service"),
            (Area::Webhook, Condition::Always)
        );
        assert_eq!(
            of("Service", "demo-controller-manager-metrics-service"),
            (Area::Metrics, Condition::MetricsEnabled)
        );
        assert_eq!(
            of("Role", "demo-webhook-certificate-role"),
            (Area::Webhook, Condition::SelfManagedCertificate)
        );
        assert_eq!(
            of("ClusterRole", "demo-metrics-reader"),
            (Area::Metrics, Condition::MetricsEnabled)
        );
        assert_eq!(
            of("ClusterRole", "demo-metrics-auth-role"),
            (Area::Metrics, Condition::MetricsEnabled)
        );
        assert_eq!(
            of("ClusterRoleBinding", "demo-metrics-auth-rolebinding"),
            (Area::Metrics, Condition::MetricsEnabled),
            "the binding is rendered when its role is"
        );
        assert_eq!(
            of("ClusterRole", "demo-manager-role"),
            (Area::Rbac, Condition::Always)
        );
        assert_eq!(of("ConfigMap", "demo-settings").0, Area::Other);
        assert_eq!(
            of("Service", "demo-webhook-proxy").0,
            Area::Other,
            "only the Service the webhooks call is the webhook server's"
        );
        let editor = object(
            "ClusterRole",
            "demo-db-mysqlcluster-editor-role",
            json!({"rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
        );
        assert_eq!(
            classify(&editor, "demo-", None),
            (Area::Rbac, Condition::RbacHelpers)
        );
    }
}
