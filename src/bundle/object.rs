//! A Kubernetes object as kustomize renders it: plain JSON values, with the few accessors the
//! bundle needs. Every field opgen does not look at passes through untouched.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct Object(pub Value);

impl Object {
    /// The string at a JSON pointer (`/spec/group`), empty when there is none.
    pub fn str_at(&self, pointer: &str) -> &str {
        self.0
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn kind(&self) -> &str {
        self.str_at("/kind")
    }

    pub fn api_version(&self) -> &str {
        self.str_at("/apiVersion")
    }

    /// The API group: `apps` for `apps/v1`, empty for the core group's `v1`.
    pub fn group(&self) -> &str {
        self.api_version()
            .rsplit_once('/')
            .map_or("", |(group, _)| group)
    }

    pub fn name(&self) -> &str {
        self.str_at("/metadata/name")
    }

    /// `Kind/name`, for messages.
    pub fn describe(&self) -> String {
        format!("{} {}", self.kind(), self.name())
    }

    /// The file name Operator SDK gives a bundle object other than the CSV and CRDs:
    /// `<name>_<group>_<version>_<kind>.yaml`, the group left out for the core group.
    pub fn bundle_file_name(&self) -> String {
        let api_version = self.api_version().replace('/', "_");
        format!(
            "{}_{}_{}.yaml",
            self.name(),
            api_version,
            self.kind().to_lowercase()
        )
    }

    /// The object without `metadata.namespace`: OLM puts a bundle's objects in the namespace
    /// it installs the operator into.
    pub fn without_namespace(mut self) -> Self {
        if let Some(metadata) = self.0.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("namespace");
        }
        self
    }
}

/// Parses a YAML stream into its objects; documents that hold nothing are dropped.
pub fn parse_stream(stream: &str) -> Result<Vec<Object>, String> {
    let values: Vec<Value> = serde_saphyr::from_multiple(stream).map_err(|err| {
        err.render_with_options(serde_saphyr::render_options! {
            snippets: serde_saphyr::SnippetMode::Off,
        })
    })?;
    Ok(values
        .into_iter()
        .filter(|value| !value.is_null())
        .map(Object)
        .collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_and_groups() {
        let service = Object(json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "demo-metrics", "namespace": "demo-system"},
        }));
        assert_eq!(service.group(), "");
        assert_eq!(service.bundle_file_name(), "demo-metrics_v1_service.yaml");
        let role = Object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "demo-metrics-reader"},
        }));
        assert_eq!(role.group(), "rbac.authorization.k8s.io");
        assert_eq!(
            role.bundle_file_name(),
            "demo-metrics-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml"
        );
        assert_eq!(
            service.without_namespace().0["metadata"],
            json!({"name": "demo-metrics"})
        );
    }

    #[test]
    fn parses_a_stream() {
        let objects =
            parse_stream("---\nkind: A\n---\n---\nkind: B\nmetadata:\n  name: b\n").unwrap();
        let kinds: Vec<&str> = objects.iter().map(Object::kind).collect();
        assert_eq!(kinds, ["A", "B"]);
        assert!(parse_stream("kind: [").is_err());
    }
}
