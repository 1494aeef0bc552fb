//! The validated model: every raw string from the command line or `PROJECT` becomes one of
//! these types exactly once, and every derived name (plural, module, file, RBAC resource, CRD
//! name) is a method here, so that all generated files agree with each other.

mod built_in_kind;
mod crd_documents;
pub(crate) mod dns;
mod domain;
mod escaped;
mod external_crd;
mod foreign_kind;
mod group;
mod image;
mod kind;
mod kind_reference;
mod known_image;
mod kubernetes_version;
mod license;
mod non_root_id;
mod operand;
mod operand_warnings;
mod opgen_version;
mod project_name;
mod resource;
mod resource_name;
mod rust_ident;
mod version;
mod webhooks;

pub use built_in_kind::{BuiltInKind, UnknownBuiltIn, core_group};
pub use domain::Domain;
pub use escaped::Escaped;
pub use external_crd::{CrdVersion, ExternalCrd};
pub use foreign_kind::{ApiGroup, ForeignKind, ForeignKindName, Origin};
pub use group::Group;
pub use image::ImageRef;
pub use kind::Kind;
pub use kind_reference::KindReference;
pub use known_image::{KnownImage, SampleEnv, WritableDir};
pub use kubernetes_version::KubernetesVersion;
pub use license::License;
pub use non_root_id::NonRootId;
pub use operand::{Operand, RunAs, Workload};
pub use opgen_version::{NewerProject, OpgenVersion};
pub use project_name::{METRICS_SERVICE, NewProjectName, ProjectName, SERVICE_NAME_LIMIT};
pub use resource::Resource;
pub use resource_name::ResourceName;
pub use rust_ident::is_keyword as is_rust_keyword;
pub use version::Version;
pub use webhooks::{AdmissionWebhook, CONFIGURATION_NAMES, Webhooks, deployed_configuration_names};

/// Why a value given on the command line or in `PROJECT` is not acceptable.
///
/// Every message names the rule that was broken and, where one exists, the way out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{}`: {problem}", Escaped(.value))]
pub struct InvalidValue {
    pub what: &'static str,
    pub value: String,
    pub problem: String,
}

impl InvalidValue {
    pub(crate) fn new(what: &'static str, value: &str, problem: impl Into<String>) -> Self {
        Self {
            what,
            value: value.to_owned(),
            problem: problem.into(),
        }
    }
}

/// Implements the traits every model type shares: it displays, compares and (de)serializes as
/// the string it was parsed from, and parses through `FromStr`.
macro_rules! string_newtype {
    ($ty:ident) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                raw.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use string_newtype;

/// Implements serde for a model type through its text: it serializes as its `Display` and
/// deserializes through `FromStr`, so that a bad value in `PROJECT` fails with the model's
/// own message.
macro_rules! serde_as_text {
    ($ty:ident) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer)?
                    .parse()
                    .map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use serde_as_text;
