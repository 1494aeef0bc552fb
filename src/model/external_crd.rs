//! Another project's CustomResourceDefinition, as `create api --external-crd` reads it: only
//! what opgen needs (group, names, scope, versions and their schemas), checked to be an
//! `apiextensions.k8s.io/v1` CRD.

use serde::Deserialize;
use serde_json::Value;

use super::crd_documents::{self, CrdDocument};

/// A CRD file's content, validated.
#[derive(Debug, Clone)]
pub struct ExternalCrd {
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    pub versions: Vec<CrdVersion>,
}

#[derive(Debug, Clone)]
pub struct CrdVersion {
    pub name: String,
    /// The version's `openAPIV3Schema`.
    pub schema: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCrd {
    api_version: Option<String>,
    kind: Option<String>,
    spec: Option<RawSpec>,
}

#[derive(Deserialize)]
struct RawSpec {
    group: Option<String>,
    names: Option<RawNames>,
    scope: Option<String>,
    #[serde(default)]
    versions: Vec<RawVersion>,
}

#[derive(Deserialize)]
struct RawNames {
    kind: Option<String>,
    plural: Option<String>,
}

#[derive(Deserialize)]
struct RawVersion {
    name: Option<String>,
    schema: Option<RawSchema>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSchema {
    #[serde(rename = "openAPIV3Schema")]
    open_api_v3_schema: Option<Value>,
}

impl ExternalCrd {
    /// Reads the CRD of `kind` of `group` from the YAML text of a CRD file (see
    /// [`crd_documents::select`]), with the text of its document: what to store, since
    /// whatever reads the stored copy (a project's integration tests, `kubectl`) then reads
    /// one document. A file of one CRD is read whatever it defines: the caller compares the
    /// group and kind, and says what the file has instead.
    pub fn read<'a>(text: &'a str, group: &str, kind: &str) -> Result<(Self, &'a str), String> {
        let documents = crd_documents::documents(text)?;
        let document = crd_documents::select(documents, group, kind)?;
        let crd = Self::from_document(&document)?;
        Ok((crd, document.text))
    }

    fn from_document(document: &CrdDocument) -> Result<Self, String> {
        let raw: RawCrd = document.read("it is not a CRD")?;
        let api_version = raw.api_version.unwrap_or_default();
        let kind = raw.kind.unwrap_or_default();
        if kind != "CustomResourceDefinition" || api_version != "apiextensions.k8s.io/v1" {
            let missing: Vec<&str> = [("`kind`", &kind), ("`apiVersion`", &api_version)]
                .into_iter()
                .filter(|(_, value)| value.is_empty())
                .map(|(name, _)| name)
                .collect();
            return Err(if missing.is_empty() {
                format!(
                    "it is a `{kind}` of `{api_version}`, not a `CustomResourceDefinition` of `apiextensions.k8s.io/v1`"
                )
            } else {
                format!(
                    "it has no {}: a CRD has `apiVersion: apiextensions.k8s.io/v1` and `kind: CustomResourceDefinition`",
                    missing.join(" and no ")
                )
            });
        }
        let spec = raw.spec.ok_or("it has no `spec`")?;
        let group = spec
            .group
            .filter(|g| !g.is_empty())
            .ok_or("it has no `spec.group`")?;
        let names = spec.names.ok_or("it has no `spec.names`")?;
        let crd_kind = names.kind.ok_or("it has no `spec.names.kind`")?;
        let plural = names.plural.ok_or("it has no `spec.names.plural`")?;
        let namespaced = match spec.scope.as_deref() {
            Some("Namespaced") => true,
            Some("Cluster") => false,
            other => {
                return Err(format!(
                    "`spec.scope` is {other:?}; a CRD's scope is `Namespaced` or `Cluster`"
                ));
            }
        };
        let mut versions = Vec::new();
        for version in spec.versions {
            let name = version
                .name
                .ok_or("a version in `spec.versions` has no `name`")?;
            let schema = version
                .schema
                .and_then(|s| s.open_api_v3_schema)
                .ok_or_else(|| format!("version {name} has no `schema.openAPIV3Schema`"))?;
            versions.push(CrdVersion { name, schema });
        }
        if versions.is_empty() {
            return Err("it has no `spec.versions`".to_owned());
        }
        Ok(Self {
            group,
            kind: crd_kind,
            plural,
            namespaced,
            versions,
        })
    }

    pub fn version(&self, name: &str) -> Option<&CrdVersion> {
        self.versions.iter().find(|v| v.name == name)
    }

    /// The versions the CRD defines, for messages: `v1, v1beta1`.
    pub fn version_names(&self) -> String {
        self.versions
            .iter()
            .map(|v| v.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ExternalCrd, String> {
        ExternalCrd::read(text, "example.org", "Widget").map(|(crd, _)| crd)
    }

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.org
spec:
  group: example.org
  names:
    kind: Widget
    plural: widgets
  scope: Cluster
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
";

    #[test]
    fn reads_group_names_scope_and_versions() {
        let crd = parse(CRD).unwrap();
        assert_eq!(
            (crd.group.as_str(), crd.kind.as_str(), crd.plural.as_str()),
            ("example.org", "Widget", "widgets")
        );
        assert!(!crd.namespaced);
        assert_eq!(crd.version_names(), "v1");
        assert_eq!(crd.version("v1").unwrap().schema["type"], "object");
    }

    #[test]
    fn refuses_what_is_not_a_v1_crd() {
        let beta = CRD.replace("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1");
        assert!(
            parse(&beta)
                .unwrap_err()
                .contains("not a `CustomResourceDefinition` of `apiextensions.k8s.io/v1`")
        );
        let no_schema = CRD.replace(
            "      schema:\n        openAPIV3Schema:\n          type: object\n",
            "",
        );
        assert!(
            parse(&no_schema)
                .unwrap_err()
                .contains("v1 has no `schema.openAPIV3Schema`")
        );
        assert!(
            parse("a: [")
                .unwrap_err()
                .starts_with("it is not valid YAML at line 1")
        );
        assert_eq!(
            parse("metadata:\n  name: x\n").unwrap_err(),
            "it has no `kind` and no `apiVersion`: a CRD has `apiVersion: apiextensions.k8s.io/v1` and `kind: CustomResourceDefinition`"
        );
        assert!(
            parse("")
                .unwrap_err()
                .starts_with("it holds no YAML document")
        );
        let list = parse("- a\n- b\n").unwrap_err();
        assert!(
            list.starts_with("it is not a CRD at line 1, column 1: "),
            "{list}"
        );
        assert!(!list.contains("Raw"), "{list}");
        let bad_scope = CRD.replace("scope: Cluster", "scope: Global");
        assert!(
            parse(&bad_scope)
                .unwrap_err()
                .contains("`Namespaced` or `Cluster`")
        );
    }

    #[test]
    fn a_file_of_several_documents_gives_the_kind_s_to_store() {
        let text = format!("{CRD}---\n");
        let (crd, stored) = ExternalCrd::read(&text, "example.org", "Widget").unwrap();
        assert_eq!((crd.kind.as_str(), stored), ("Widget", CRD));
        let (_, stored) = ExternalCrd::read(CRD, "example.org", "Widget").unwrap();
        assert_eq!(stored, CRD);
        let other = CRD
            .replace("Widget", "Gadget")
            .replace("widgets", "gadgets");
        let text = format!("{other}---\n{CRD}");
        let (crd, stored) = ExternalCrd::read(&text, "example.org", "Widget").unwrap();
        assert_eq!(crd.plural, "widgets");
        assert_eq!(stored, format!("---\n{CRD}"));
    }
}
