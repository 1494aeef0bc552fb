//! What the rendered manager Deployment runs with: the defaults of the chart's values, so
//! that a release with default values installs what `make deploy` installs.

use serde_json::Value;

use crate::bundle::object::Object;

#[derive(Debug, Clone, PartialEq)]
pub struct ManagerSettings {
    pub image_repository: String,
    pub image_tag: String,
    pub image_digest: String,
    pub replicas: u64,
    pub leader_election: bool,
    pub log_format: String,
    pub metrics_port: u64,
    /// `WATCH_NAMESPACE` when it is a value (a cluster-wide operator); a namespaced operator
    /// watches its own namespace, from the downward API.
    pub watch_namespace: Option<String>,
    pub resources: Value,
    pub security_context: Value,
    pub pod_security_context: Value,
}

impl ManagerSettings {
    pub fn of(deployment: &Object) -> Self {
        let pod = deployment
            .0
            .pointer("/spec/template/spec")
            .cloned()
            .unwrap_or_default();
        let containers = pod["containers"].as_array().cloned().unwrap_or_default();
        let container = containers
            .iter()
            .find(|c| c["name"] == "manager")
            .or(containers.first())
            .cloned()
            .unwrap_or_default();
        let args: Vec<&str> = container["args"]
            .as_array()
            .map(|args| args.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let image = container["image"].as_str().unwrap_or_default();
        let (image_repository, image_tag, image_digest) = split_image(image);
        let metrics_port = container["ports"]
            .as_array()
            .and_then(|ports| ports.iter().find(|p| p["name"] == "http-metrics"))
            .and_then(|p| p["containerPort"].as_u64())
            .unwrap_or(8080);
        let watch_namespace = container["env"].as_array().and_then(|env| {
            env.iter()
                .find(|v| v["name"] == "WATCH_NAMESPACE")
                .and_then(|v| v.get("value"))
                .map(|v| v.as_str().unwrap_or_default().to_owned())
        });
        Self {
            image_repository,
            image_tag,
            image_digest,
            replicas: deployment
                .0
                .pointer("/spec/replicas")
                .and_then(Value::as_u64)
                .unwrap_or(1),
            leader_election: args.contains(&"--leader-elect"),
            log_format: args
                .iter()
                .find_map(|arg| arg.strip_prefix("--log-format="))
                .unwrap_or("text")
                .to_owned(),
            metrics_port,
            watch_namespace,
            resources: container.get("resources").cloned().unwrap_or(empty()),
            security_context: container.get("securityContext").cloned().unwrap_or(empty()),
            pod_security_context: pod.get("securityContext").cloned().unwrap_or(empty()),
        }
    }
}

fn empty() -> Value {
    Value::Object(serde_json::Map::new())
}

/// `repository:tag` or `repository@digest`; a port in the registry's host is not a tag.
fn split_image(image: &str) -> (String, String, String) {
    if let Some((repository, digest)) = image.split_once('@') {
        return (repository.to_owned(), String::new(), digest.to_owned());
    }
    match image.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => {
            (repository.to_owned(), tag.to_owned(), String::new())
        }
        _ => (image.to_owned(), String::new(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_the_manager_container() {
        let deployment = Object(json!({"spec": {"replicas": 2, "template": {"spec": {
            "securityContext": {"runAsNonRoot": true},
            "containers": [{
                "name": "manager",
                "image": "registry.example.com:5000/demo:1.2.3",
                "args": ["--leader-elect", "--log-format=json"],
                "env": [{"name": "WATCH_NAMESPACE", "value": ""}],
                "ports": [{"name": "http-metrics", "containerPort": 9090}],
                "resources": {"limits": {"cpu": "1"}},
            }],
        }}}}));
        let settings = ManagerSettings::of(&deployment);
        assert_eq!(settings.image_repository, "registry.example.com:5000/demo");
        assert_eq!(settings.image_tag, "1.2.3");
        assert_eq!(settings.replicas, 2);
        assert!(settings.leader_election);
        assert_eq!(settings.log_format, "json");
        assert_eq!(settings.metrics_port, 9090);
        assert_eq!(settings.watch_namespace.as_deref(), Some(""));
        assert_eq!(settings.pod_security_context, json!({"runAsNonRoot": true}));
        assert_eq!(settings.security_context, json!({}));
    }

    #[test]
    fn splits_images() {
        let split = |image: &str| split_image(image);
        assert_eq!(
            split("controller:0.1.0"),
            ("controller".into(), "0.1.0".into(), String::new())
        );
        assert_eq!(
            split("host:5000/demo"),
            ("host:5000/demo".into(), String::new(), String::new())
        );
        assert_eq!(
            split("demo@sha256:abc"),
            ("demo".into(), String::new(), "sha256:abc".into())
        );
    }
}
