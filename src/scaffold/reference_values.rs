//! What the templates of a kind that references another (`create api --references`) need to
//! know of the referenced kind.

use serde::Serialize;

use crate::model::{KindReference, Resource};
use crate::project::Project;

#[derive(Debug, Serialize)]
pub struct ReferenceValues {
    /// `MySQLCluster`
    pub kind: String,
    /// Its Rust type, from the api crate: `db::v1alpha1::MySQLCluster`.
    pub rust_path: String,
    /// The spec's field: `mySQLClusterRef`.
    pub field: String,
    /// `my_sql_cluster_ref`
    pub rust_field: String,
    /// The type of the field, defined with the referencing kind: `MySQLBackupReference`.
    pub type_name: String,
    /// `MY_SQL_CLUSTER`
    pub env_prefix: String,
    /// The port of the referenced kind's Service, when its operand has one.
    pub port: Option<u16>,
    /// `db.example.com`, for the RBAC marker.
    pub qualified_group: String,
    /// `mysqlclusters`
    pub plural: String,
    /// The name of the referenced kind's sample object, which the sample references.
    pub sample_name: String,
}

impl ReferenceValues {
    /// The values of `reference`, made by `referencing`; `None` when `PROJECT` has no such
    /// kind (its rules refuse that before anything is rendered).
    pub fn new(
        project: &Project,
        referencing: &Resource,
        reference: &KindReference,
    ) -> Option<Self> {
        let versions: Vec<&Resource> = project
            .resources
            .iter()
            .filter(|r| r.group == reference.group && r.kind == reference.kind)
            .collect();
        let watched = versions
            .iter()
            .find(|r| r.controller)
            .or_else(|| versions.iter().find(|r| r.storage))
            .or(versions.first())?;
        Some(Self {
            kind: reference.kind.to_string(),
            rust_path: format!(
                "{}::{}::{}",
                watched.group.module(),
                watched.version,
                watched.kind.rust_type()
            ),
            field: reference.field(),
            rust_field: reference.rust_field(),
            type_name: format!("{}Reference", referencing.kind),
            env_prefix: reference.env_prefix(),
            port: versions
                .iter()
                .find_map(|r| r.operand.as_ref())
                .and_then(|operand| operand.port),
            qualified_group: watched.qualified_group(&project.domain),
            plural: watched.plural.to_string(),
            sample_name: format!("{}-sample", watched.kind.singular()),
        })
    }
}
