//! Requests the API server refused the manager (HTTP 403), read from its audit log, and the
//! `+opgen:rbac` marker that would allow each. The audit log is the API server's own record
//! of who was refused what, so this does not depend on how the manager logs its errors.

use std::{collections::BTreeSet, path::Path};

use serde::Deserialize;

use crate::project::Project;

/// Writes an audit policy that records the metadata of `user`'s requests, and nothing else.
pub fn write_audit_policy(path: &Path, user: &str) -> std::io::Result<()> {
    std::fs::write(
        path,
        format!(
            "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [\"{user}\"]
- level: None
"
        ),
    )
}

/// One refused kind of request: what the role lacks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Refusal {
    pub verb: String,
    /// `""` for the core group.
    pub group: String,
    /// With its subresource: `things/status`.
    pub resource: String,
    pub namespace: Option<String>,
}

impl Refusal {
    /// The refusal an audit event records: a 403 answered to `user`, else `None`.
    pub fn from_audit_line(line: &str, user: &str) -> Option<Self> {
        let event: AuditEvent = serde_json::from_str(line).ok()?;
        if event.response_status?.code != Some(403) || event.user?.username != user {
            return None;
        }
        let object = event.object_ref?;
        let resource = match object.subresource.filter(|s| !s.is_empty()) {
            Some(subresource) => format!("{}/{subresource}", object.resource?),
            None => object.resource?,
        };
        Some(Self {
            verb: event.verb?,
            group: object.api_group.unwrap_or_default(),
            resource,
            namespace: object.namespace.filter(|n| !n.is_empty()),
        })
    }

    /// The marker line that grants it.
    pub fn marker(&self) -> String {
        let group = if self.group.is_empty() {
            "\"\""
        } else {
            &self.group
        };
        format!(
            "// +opgen:rbac:groups={group},resources={},verbs={}",
            self.resource, self.verb
        )
    }

    /// The controller file of the project's kind that is this resource, when there is one.
    pub fn controller_file(&self, project: &Project) -> Option<String> {
        let plural = self.resource.split('/').next().unwrap_or_default();
        let own = project.kinds().find(|kind| {
            kind.controller
                && kind.plural.as_str() == plural
                && kind.qualified_group(&project.domain) == self.group
        });
        if let Some(kind) = own {
            return Some(kind.controller_file());
        }
        project
            .foreign_kinds
            .iter()
            .find(|kind| kind.plural == plural && kind.group.as_str() == self.group)
            .map(|kind| kind.controller_file())
    }

    /// The report: what was refused, and what to add where.
    pub fn report(&self, project: &Project) -> String {
        let group = if self.group.is_empty() {
            "the core group".to_owned()
        } else {
            self.group.clone()
        };
        let place = self.namespace.as_ref().map_or_else(
            || "cluster-wide".to_owned(),
            |ns| format!("in namespace {ns}"),
        );
        let file = self.controller_file(project).map_or_else(
            || "the controller that makes this request".to_owned(),
            |file| file.to_string(),
        );
        format!(
            "the API server refused the manager `{}` on {} ({group}) {place}: add `{}` to {file}; \
             saving it regenerates and re-applies the role",
            self.verb,
            self.resource,
            self.marker()
        )
    }
}

/// Follows refusals: each kind is reported once until [`Refusals::forget`].
#[derive(Default)]
pub struct Refusals {
    reported: BTreeSet<Refusal>,
}

impl Refusals {
    /// The refusals in `lines` not reported yet.
    pub fn new_in(&mut self, lines: &[String], user: &str) -> Vec<Refusal> {
        lines
            .iter()
            .filter_map(|line| Refusal::from_audit_line(line, user))
            .filter(|refusal| self.reported.insert(refusal.clone()))
            .collect()
    }

    /// A new role is in place: report whatever is still refused again.
    pub fn forget(&mut self) {
        self.reported.clear();
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuditEvent {
    verb: Option<String>,
    user: Option<AuditUser>,
    object_ref: Option<ObjectRef>,
    response_status: Option<ResponseStatus>,
}

#[derive(Deserialize)]
struct AuditUser {
    username: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRef {
    resource: Option<String>,
    subresource: Option<String>,
    namespace: Option<String>,
    api_group: Option<String>,
}

#[derive(Deserialize)]
struct ResponseStatus {
    code: Option<u16>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Scope;

    const USER: &str = "system:serviceaccount:demo-system:demo-controller-manager";

    fn event(user: &str, code: u16, object: &str) -> String {
        format!(
            r#"{{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"patch","user":{{"username":"{user}","groups":["system:serviceaccounts"]}},"objectRef":{object},"responseStatus":{{"metadata":{{}},"status":"Failure","reason":"Forbidden","code":{code}}}}}"#
        )
    }

    const STATUS: &str = r#"{"resource":"things","namespace":"default","name":"thing-sample","apiGroup":"db.example.com","apiVersion":"v1","subresource":"status"}"#;

    fn project() -> Project {
        let mut project = Project::for_test("demo", Scope::Cluster);
        project
            .resources
            .push(crate::model::Resource::for_test("db", "v1", "Thing"));
        project
    }

    #[test]
    fn a_403_to_the_manager_becomes_the_marker_to_add_in_its_controller() {
        let refusal = Refusal::from_audit_line(&event(USER, 403, STATUS), USER).unwrap();
        assert_eq!(
            refusal.marker(),
            "// +opgen:rbac:groups=db.example.com,resources=things/status,verbs=patch"
        );
        assert_eq!(refusal.namespace.as_deref(), Some("default"));
        let report = refusal.report(&project());
        assert!(
            report.contains("to src/controllers/db/thing.rs"),
            "{report}"
        );
        assert!(report.contains("in namespace default"), "{report}");
    }

    #[test]
    fn other_users_and_other_codes_are_not_refusals() {
        assert_eq!(
            Refusal::from_audit_line(&event("admin", 403, STATUS), USER),
            None
        );
        assert_eq!(
            Refusal::from_audit_line(&event(USER, 200, STATUS), USER),
            None
        );
        assert_eq!(Refusal::from_audit_line("not json", USER), None);
    }

    #[test]
    fn the_core_group_is_quoted_and_an_unknown_resource_has_no_file() {
        let object = r#"{"resource":"configmaps","apiVersion":"v1"}"#;
        let refusal = Refusal::from_audit_line(&event(USER, 403, object), USER).unwrap();
        assert_eq!(
            refusal.marker(),
            "// +opgen:rbac:groups=\"\",resources=configmaps,verbs=patch"
        );
        assert_eq!(refusal.controller_file(&project()), None);
        assert!(refusal.report(&project()).contains("cluster-wide"));
    }

    #[test]
    fn each_refusal_is_reported_once_until_the_role_changes() {
        let mut refusals = Refusals::default();
        let lines = vec![event(USER, 403, STATUS), event(USER, 403, STATUS)];
        assert_eq!(refusals.new_in(&lines, USER).len(), 1);
        assert!(refusals.new_in(&lines, USER).is_empty());
        refusals.forget();
        assert_eq!(refusals.new_in(&lines, USER).len(), 1);
    }
}
