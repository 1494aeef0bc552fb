use std::str::FromStr;

use heck::ToSnakeCase;

use super::{InvalidValue, dns, rust_ident, string_newtype};

/// The operator's name: a DNS-1123 label (it prefixes every Kubernetes object the operator
/// deploys) that is also a valid crate name (it names the Cargo packages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectName(String);

/// Crate names cargo itself refuses, beyond Rust keywords.
const RESERVED_CRATE_NAMES: &[&str] = &["alloc", "core", "proc-macro", "std", "test"];

/// The longest base name `config/` gives an object whose name is a DNS-1035 label (at most 63
/// characters): the metrics Service, named `<project>-controller-manager-metrics-service`.
pub const METRICS_SERVICE: &str = "controller-manager-metrics-service";
/// The limit of a Service's name (a DNS-1035 label).
pub const SERVICE_NAME_LIMIT: usize = 63;
/// The longest name `init` gives a project: `<name>-` and the longest Service's base name fit
/// the limit of a Service's name.
pub const NEW_PROJECT_NAME_LIMIT: usize = SERVICE_NAME_LIMIT - 1 - METRICS_SERVICE.len();
/// The longest name of a project an older opgen made (it allowed 40 characters), still read.
const PROJECT_NAME_LIMIT: usize = 40;

impl FromStr for ProjectName {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: String| InvalidValue::new("project name", value, problem);
        if let Some(problem) = dns::label_problem(value) {
            return Err(invalid(format!(
                "{problem} (a project name must be a DNS-1123 label); choose another with --project-name"
            )));
        }
        if !value.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(invalid(
                "a crate name must start with a letter; choose another with --project-name".into(),
            ));
        }
        if rust_ident::is_keyword(&value.to_snake_case()) || RESERVED_CRATE_NAMES.contains(&value) {
            return Err(invalid(
                "it is reserved by Rust or cargo; choose another with --project-name".into(),
            ));
        }
        if value.len() > PROJECT_NAME_LIMIT {
            return Err(invalid(too_long(value)));
        }
        Ok(Self(value.to_owned()))
    }
}

/// Why a project name is too long: kustomize prefixes every object's name with `<name>-`.
fn too_long(value: &str) -> String {
    format!(
        "it is {} characters long; keep it to {NEW_PROJECT_NAME_LIMIT}, so that `{value}-{METRICS_SERVICE}`, the longest Service name `make deploy` gives, stays within the {SERVICE_NAME_LIMIT} characters Kubernetes allows; choose another with --project-name",
        value.len()
    )
}

impl ProjectName {
    /// Why `make deploy` fails for a project an older opgen named with more characters than a
    /// new project may have: its metrics Service's name is over the limit.
    pub fn deploy_problem(&self) -> Option<String> {
        let service = self.deployed_name(METRICS_SERVICE);
        (self.0.len() > NEW_PROJECT_NAME_LIMIT).then(|| {
            format!(
                "the project's name, `{}`, is {} characters long (an older opgen allowed 40): `make deploy` names its metrics Service `{service}`, {} characters, and Kubernetes refuses a Service name over {SERVICE_NAME_LIMIT}. Install with the Helm chart (`make helm`), which cuts the names it makes to fit; a project made today keeps its name to {NEW_PROJECT_NAME_LIMIT} characters",
                self.0,
                self.0.len(),
                service.len()
            )
        })
    }
}

/// The name of a project `init` makes: a [`ProjectName`] short enough that every object
/// `make deploy` names after it is a valid name. A project an older opgen made with a longer
/// name is still read (see [`ProjectName`]), but no new one gets one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProjectName(ProjectName);

impl FromStr for NewProjectName {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let name: ProjectName = value.parse()?;
        if value.len() > NEW_PROJECT_NAME_LIMIT {
            return Err(InvalidValue::new("project name", value, too_long(value)));
        }
        Ok(Self(name))
    }
}

impl From<NewProjectName> for ProjectName {
    fn from(name: NewProjectName) -> Self {
        name.0
    }
}

impl ProjectName {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The package holding the custom resource types.
    pub fn api_crate(&self) -> String {
        format!("{}-api", self.0)
    }

    /// The identifier Rust code uses for the manager's own crate.
    pub fn crate_ident(&self) -> String {
        self.0.replace('-', "_")
    }

    /// The identifier Rust code uses for the api crate.
    pub fn api_crate_ident(&self) -> String {
        self.api_crate().replace('-', "_")
    }

    /// The namespace the manager is deployed into, as Kubebuilder names it.
    pub fn system_namespace(&self) -> String {
        format!("{}-system", self.0)
    }

    /// The name an object named `base` in `config/` is deployed under: `config/default`'s
    /// `namePrefix`. Needed where kustomize does not rename, such as RBAC `resourceNames`.
    pub fn deployed_name(&self, base: &str) -> String {
        format!("{}-{base}", self.0)
    }
}

string_newtype!(ProjectName);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_dns_label_that_is_a_crate_name() {
        let name: ProjectName = "demo-operator".parse().unwrap();
        assert_eq!(name.api_crate(), "demo-operator-api");
        assert_eq!(name.api_crate_ident(), "demo_operator_api");
        assert_eq!(name.crate_ident(), "demo_operator");
        assert_eq!(name.system_namespace(), "demo-operator-system");
        assert_eq!(
            name.deployed_name("webhook-service"),
            "demo-operator-webhook-service"
        );
    }

    #[test]
    fn refuses_bad_names_with_the_way_out() {
        for (bad, why) in [
            ("Demo", "`D` is not allowed"),
            ("demo_op", "`_` is not allowed"),
            ("1demo", "must start with a letter"),
            ("-demo", "start and end"),
            ("type", "reserved"),
            ("test", "reserved"),
            ("", "empty"),
        ] {
            let err = bad.parse::<ProjectName>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains("--project-name"), "{bad}: {err}");
        }
        assert!(
            "a".repeat(41)
                .parse::<ProjectName>()
                .unwrap_err()
                .to_string()
                .contains("keep it to 28")
        );
    }

    #[test]
    fn a_new_project_name_leaves_room_for_the_longest_service_name() {
        let longest = "a".repeat(NEW_PROJECT_NAME_LIMIT);
        let name: ProjectName = longest.parse::<NewProjectName>().unwrap().into();
        assert_eq!(name.deployed_name(METRICS_SERVICE).len(), 63);
        let err = format!("{longest}b")
            .parse::<NewProjectName>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("it is 29 characters long; keep it to 28"),
            "{err}"
        );
        assert!(err.contains("within the 63 characters"), "{err}");
        assert!(err.contains("--project-name"), "{err}");
        // A project an older opgen made with a longer name is still read, and told why
        // `make deploy` fails for it.
        let older: ProjectName = format!("{longest}b").parse().unwrap();
        let problem = older.deploy_problem().unwrap();
        assert!(
            problem.contains(&format!(
                "`{longest}b-controller-manager-metrics-service`, 64 characters"
            )),
            "{problem}"
        );
        assert!(problem.contains("`make helm`"), "{problem}");
        assert_eq!(name.deploy_problem(), None);
    }
}
