//! A kind the project watches but does not own, as `PROJECT` records it under `foreignKinds`:
//! a built-in Kubernetes kind (ConfigMap, Deployment, …) or a kind of another project's CRD
//! (cert-manager's Certificate, …). The project has a controller for it and RBAC to reach it,
//! but never its types' source nor its CRD.

use heck::ToSnakeCase;
use serde::{Deserialize, Serialize};

use super::{InvalidValue, Version, dns, rust_ident};

/// Where the types of a foreign kind come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// Kubernetes serves it; its type is k8s-openapi's.
    BuiltIn,
    /// Another project's CRD, stored under `config/external/`; its types are generated into
    /// the api crate from that copy.
    External,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForeignKind {
    pub origin: Origin,
    /// The full API group, empty for the core group.
    pub group: ApiGroup,
    pub version: Version,
    pub kind: ForeignKindName,
    pub plural: String,
    pub namespaced: bool,
    /// The stored copy of the CRD, for an external kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crd: Option<String>,
}

/// The API group of a kind the project does not own: a DNS subdomain such as
/// `networking.k8s.io` or `cert-manager.io`, or empty for the core group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiGroup(String);

impl std::str::FromStr for ApiGroup {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if value.is_empty() {
            return Ok(Self(String::new()));
        }
        if let Some(problem) = dns::subdomain_problem(value) {
            return Err(InvalidValue::new("API group", value, problem));
        }
        let module = module_of(value);
        if !module.starts_with(|c: char| c.is_ascii_lowercase()) || rust_ident::is_keyword(&module)
        {
            return Err(InvalidValue::new(
                "API group",
                value,
                format!("its first part `{module}` cannot name a Rust module"),
            ));
        }
        Ok(Self(value.to_owned()))
    }
}

impl ApiGroup {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The module of the group's controllers and types: `core` for the core group, else the
    /// group's first part (`networking.k8s.io` → `networking`, `cert-manager.io` →
    /// `cert_manager`).
    pub fn module(&self) -> String {
        if self.0.is_empty() {
            "core".to_owned()
        } else {
            module_of(&self.0)
        }
    }

    /// The group as `kubectl` and documentation name it: `core` for the core group.
    pub fn shown(&self) -> &str {
        if self.0.is_empty() { "core" } else { &self.0 }
    }
}

fn module_of(group: &str) -> String {
    group.split('.').next().unwrap_or(group).replace('-', "_")
}

super::string_newtype!(ApiGroup);

/// The kind of a foreign object, as its owner named it: PascalCase ASCII. Unlike an owned
/// [`super::Kind`], it may be any name (`Event`, `Secret`): the generated code reaches its
/// type through a module alias, so it clashes with nothing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ForeignKindName(String);

impl std::str::FromStr for ForeignKindName {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if !value.starts_with(|c: char| c.is_ascii_uppercase())
            || !value.chars().all(|c| c.is_ascii_alphanumeric())
        {
            return Err(InvalidValue::new(
                "kind",
                value,
                "a kind is PascalCase ASCII letters and digits, e.g. `ConfigMap`",
            ));
        }
        Ok(Self(value.to_owned()))
    }
}

impl ForeignKindName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

super::string_newtype!(ForeignKindName);

impl ForeignKind {
    /// Whether `self` and `other` are the same kind, whatever their versions.
    pub fn same_kind(&self, other: &ForeignKind) -> bool {
        self.group == other.group && self.kind == other.kind
    }

    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.as_str().is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The kind's module: `config_map`.
    pub fn module(&self) -> String {
        self.kind.as_str().to_snake_case()
    }

    pub fn controller_file(&self) -> String {
        format!(
            "src/controllers/{}/{}.rs",
            self.group.module(),
            self.module()
        )
    }

    /// The module of an external kind's generated types in the api crate, below
    /// `external`: `cert_manager::v1`.
    pub fn external_module(&self) -> String {
        format!("{}::{}", self.group.module(), self.version)
    }

    /// The file of an external kind's generated types in the api crate.
    pub fn external_types_file(&self) -> String {
        format!(
            "api/src/external/{}/{}.rs",
            self.group.module(),
            self.version
        )
    }

    /// Where `create api --external-crd` stores the CRD: `config/external/<crd name>.yaml`.
    pub fn stored_crd_file(plural: &str, group: &str) -> String {
        format!("config/external/{plural}.{group}.yaml")
    }
}

#[cfg(test)]
impl ForeignKind {
    pub fn built_in_for_test(group: &str, version: &str, kind: &str) -> Self {
        let found = super::BuiltInKind::find(group, version, kind, Default::default()).unwrap();
        Self {
            origin: Origin::BuiltIn,
            group: found.group.parse().unwrap(),
            version: version.parse().unwrap(),
            kind: kind.parse().unwrap(),
            plural: found.plural.to_owned(),
            namespaced: found.namespaced,
            crd: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_modules_files_and_versions() {
        let config_map = ForeignKind::built_in_for_test("core", "v1", "ConfigMap");
        assert_eq!(config_map.api_version(), "v1");
        assert_eq!(
            config_map.controller_file(),
            "src/controllers/core/config_map.rs"
        );
        let ingress = ForeignKind::built_in_for_test("networking.k8s.io", "v1", "Ingress");
        assert_eq!(ingress.api_version(), "networking.k8s.io/v1");
        assert_eq!(
            ingress.controller_file(),
            "src/controllers/networking/ingress.rs"
        );
        let group: ApiGroup = "cert-manager.io".parse().unwrap();
        assert_eq!(group.module(), "cert_manager");
    }

    #[test]
    fn refuses_groups_that_are_no_subdomain_or_no_module() {
        for bad in ["Apps", "a..b", "1x.io", "type.example.com"] {
            assert!(bad.parse::<ApiGroup>().is_err(), "{bad}");
        }
        assert!("Secret".parse::<ForeignKindName>().is_ok());
        assert!("configMap".parse::<ForeignKindName>().is_err());
    }
}
