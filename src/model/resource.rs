use serde::{Deserialize, Serialize};

use super::{Domain, Group, Kind, Operand, ResourceName, Version, Webhooks, Workload};

/// One version of one kind, as `PROJECT` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resource {
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    pub plural: ResourceName,
    pub short_name: ResourceName,
    pub namespaced: bool,
    /// This version's types are the ones the kind's controller watches (`--controller`).
    pub controller: bool,
    /// The version etcd stores; exactly one version of each kind has it.
    pub storage: bool,
    /// The application the kind runs (`create api --image`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operand: Option<Operand>,
    /// The webhooks of this version (`create webhook`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Webhooks>,
}

impl Resource {
    /// Whether `self` and `other` are versions of the same kind.
    pub fn same_kind(&self, other: &Resource) -> bool {
        self.group == other.group && self.kind == other.kind
    }

    /// The public Rust types the kind's file defines in the module of its version, which the
    /// other kinds of that version must not define too: the kind's (see [`Kind::rust_type`]),
    /// its `Spec` and `Status`, the `Storage` of a StatefulSet's volumes, and the
    /// `Autoscaling` of an autoscaled kind.
    pub fn rust_type_names(&self) -> Vec<String> {
        let kind = &self.kind;
        let mut names = vec![
            kind.rust_type(),
            format!("{kind}Spec"),
            format!("{kind}Status"),
        ];
        if let Some(operand) = &self.operand {
            if operand.workload == Workload::StatefulSet {
                names.push(format!("{kind}Storage"));
            }
            if operand.autoscale {
                names.push(format!("{kind}Autoscaling"));
            }
        }
        if self
            .operand
            .as_ref()
            .is_some_and(|operand| operand.references.is_some())
        {
            names.push(format!("{kind}Reference"));
        }
        names
    }

    /// The API group as Kubernetes knows it: `db.example.com`.
    pub fn qualified_group(&self, domain: &Domain) -> String {
        self.group.qualified(domain)
    }

    /// The CRD's name: `mysqlclusters.db.example.com`.
    pub fn crd_name(&self, domain: &Domain) -> String {
        format!("{}.{}", self.plural, self.qualified_group(domain))
    }

    /// Where `generate manifests` writes the kind's CRD, as Kubebuilder names it.
    pub fn crd_file(&self, domain: &Domain) -> String {
        format!(
            "config/crd/bases/{}_{}.yaml",
            self.qualified_group(domain),
            self.plural
        )
    }

    /// The Rust types of this version, in the api crate.
    pub fn api_file(&self) -> String {
        format!(
            "api/src/{}/{}/{}.rs",
            self.group.module(),
            self.version,
            self.kind.module()
        )
    }

    /// The kind's controller (one per kind, whatever the number of versions).
    pub fn controller_file(&self) -> String {
        format!(
            "src/controllers/{}/{}.rs",
            self.group.module(),
            self.kind.module()
        )
    }

    /// The kind's integration test, beside the harness of `tests/integration/`.
    pub fn integration_test_file(&self) -> String {
        format!(
            "tests/integration/{}/{}.rs",
            self.group.module(),
            self.kind.module()
        )
    }

    pub fn sample_file(&self) -> String {
        format!(
            "config/samples/{}_{}_{}.yaml",
            self.group,
            self.version,
            self.kind.singular()
        )
    }

    /// The editor and viewer ClusterRoles for users of the kind. Named with the group, as
    /// Kubebuilder's multi-group layout does, so equal kinds in two groups never clash.
    pub fn role_file(&self, role: &str) -> String {
        format!(
            "config/rbac/{}_{}_{role}_role.yaml",
            self.group,
            self.kind.singular()
        )
    }
}

#[cfg(test)]
impl Resource {
    /// A namespaced, stored version with a controller, with the default plural and short
    /// name; tests change what they need.
    pub fn for_test(group: &str, version: &str, kind: &str) -> Self {
        let kind: Kind = kind.parse().unwrap();
        Self {
            group: group.parse().unwrap(),
            version: version.parse().unwrap(),
            plural: ResourceName::plural_of(&kind),
            short_name: kind.default_short_name().parse().unwrap(),
            kind,
            namespaced: true,
            controller: true,
            storage: true,
            operand: None,
            webhooks: None,
        }
    }
}
