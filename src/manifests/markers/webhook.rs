//! `// +opgen:webhook:` markers, in Kubebuilder's syntax with opgen's prefix:
//!
//! ```text
//! // +opgen:webhook:path=/mutate-db-example-com-v1-backup,mutating=true,failurePolicy=fail,sideEffects=None,groups=db.example.com,resources=backups,verbs=create;update,versions=v1,name=mbackup-v1.db.example.com,admissionReviewVersions=v1
//! ```
//!
//! They are read from the webhook files under `src/webhooks/`, with the strictness of the RBAC
//! markers and their grammar ([`super::syntax`]): a marker that does not parse is an error with
//! its file and line, since a typo would otherwise surface only as a webhook the API server
//! never calls.

use std::path::Path;

use super::syntax::{
    Arguments, InvalidMarkers, Place, Problem, Reader, common_hint, is_name_char, list,
};
use crate::{
    files::rust_files,
    manifests::webhooks::{
        ClientConfig, RuleWithOperations, SERVICE_NAME, SERVICE_NAMESPACE, ServiceReference,
        Webhook,
    },
};

/// Where the webhook markers are read from, relative to the project root.
pub const WEBHOOKS_DIR: &str = "src/webhooks";

const KEYS: [&str; 10] = [
    "path",
    "mutating",
    "failurePolicy",
    "sideEffects",
    "groups",
    "resources",
    "verbs",
    "versions",
    "name",
    "admissionReviewVersions",
];

/// The marker's verbs, and the operations of the webhook's rule they stand for.
const VERBS: [(&str, &str); 5] = [
    ("create", "CREATE"),
    ("update", "UPDATE"),
    ("delete", "DELETE"),
    ("connect", "CONNECT"),
    ("*", "*"),
];

/// The advice under a webhook marker's error, when there is one.
fn hint(problem: &Problem) -> Option<String> {
    let hint = match problem {
        Problem::UnknownMarker(_) | Problem::NoArguments => {
            "In a webhook file, the marker is `+opgen:webhook:path=…,mutating=…,failurePolicy=…,sideEffects=None,groups=…,resources=…,verbs=…,versions=…,name=…,admissionReviewVersions=v1`".to_owned()
        }
        Problem::NotKeyValue(_) | Problem::UnknownKey(_) => {
            format!("Expected keys: {}", KEYS.join(", "))
        }
        Problem::UnknownVerb { .. } => {
            let verbs: Vec<&str> = VERBS.iter().map(|(verb, _)| *verb).collect();
            format!("Expected verbs: {}", verbs.join(", "))
        }
        Problem::DuplicateName { .. } => "Rename one of them".to_owned(),
        other => return common_hint(other),
    };
    Some(hint)
}

const READER: Reader<Webhook> = Reader {
    parse: parse_marker,
    hint,
};

/// Reads the webhook markers of every `.rs` file under `src/webhooks/`, in path order.
pub fn read_webhooks(root: &Path) -> anyhow::Result<Vec<Webhook>> {
    let dir = root.join(WEBHOOKS_DIR);
    if !dir.exists() {
        return Ok(Vec::new());
    }
    webhooks_of(&rust_files(root, &dir)?)
}

/// The webhooks of the markers of `files` (path and text, in path order), as
/// [`read_webhooks`] reads them from disk.
pub fn webhooks_of(files: &[(String, String)]) -> anyhow::Result<Vec<Webhook>> {
    let mut webhooks: Vec<(Place, Webhook)> = Vec::new();
    let mut errors = Vec::new();
    for (file, text) in files {
        let (found, bad) = READER.read(file, text);
        webhooks.extend(found);
        errors.extend(bad);
    }
    for (index, (place, webhook)) in webhooks.iter().enumerate() {
        if let Some((first, _)) = webhooks[..index]
            .iter()
            .find(|(_, other)| other.name == webhook.name)
        {
            let problem = Problem::DuplicateName {
                name: webhook.name.clone(),
                first: format!("{}:{}", first.file, first.line),
            };
            errors.push(READER.error(place.clone(), problem));
        }
    }
    if !errors.is_empty() {
        return Err(InvalidMarkers(errors).into());
    }
    Ok(webhooks.into_iter().map(|(_, webhook)| webhook).collect())
}

/// The webhooks of the markers of one file's `text`; `file` is only for messages.
pub fn parse_source(file: &str, text: &str) -> Result<Vec<Webhook>, InvalidMarkers> {
    let (found, errors) = READER.read(file, text);
    if errors.is_empty() {
        Ok(found.into_iter().map(|(_, webhook)| webhook).collect())
    } else {
        Err(InvalidMarkers(errors))
    }
}

pub(crate) fn parse_marker(body: &str) -> Result<Webhook, Problem> {
    let arguments = Arguments::parse(body, "webhook", &KEYS)?;
    let get = |key: &'static str| {
        arguments
            .get(key)
            .map(str::trim)
            .ok_or(Problem::MissingKey(key))
    };
    let invalid = |key: &'static str, value: &str, why: &'static str| Problem::InvalidValue {
        key,
        value: value.to_owned(),
        why,
    };
    let path = get("path")?;
    if !path.starts_with('/') || path.contains(char::is_whitespace) {
        return Err(invalid(
            "path",
            path,
            "use a URL path such as `/validate-db-example-com-v1-backup`",
        ));
    }
    let mutating = match get("mutating")? {
        "true" => true,
        "false" => false,
        other => return Err(invalid("mutating", other, "use true or false")),
    };
    let failure_policy = match get("failurePolicy")? {
        policy if policy.eq_ignore_ascii_case("fail") => "Fail",
        policy if policy.eq_ignore_ascii_case("ignore") => "Ignore",
        other => return Err(invalid("failurePolicy", other, "use fail or ignore")),
    };
    let side_effects = match get("sideEffects")? {
        value @ ("None" | "NoneOnDryRun") => value,
        other => {
            return Err(invalid(
                "sideEffects",
                other,
                "admission webhooks v1 take None or NoneOnDryRun",
            ));
        }
    };
    let name = get("name")?;
    if name.split('.').count() < 3 || !name.chars().all(is_name_char) {
        return Err(invalid(
            "name",
            name,
            "the API server wants a qualified name of three parts or more, such as `vbackup-v1.db.example.com`",
        ));
    }
    let operations = list("verbs", Some(get("verbs")?), |verb| {
        VERBS
            .iter()
            .find(|(marker, _)| *marker == verb)
            .map(|(_, operation)| (*operation).to_owned())
            .ok_or_else(|| Problem::UnknownVerb {
                verb: verb.to_owned(),
                urls: false,
            })
    })?;
    // The core group is `""` (or `core`), the one name that may be empty.
    let names = |key: &'static str| {
        move |value: &str| {
            let value = if key == "group" && value == "core" {
                ""
            } else {
                value
            };
            if value.chars().all(is_name_char) || value == "*" {
                Ok(value.to_owned())
            } else {
                Err(invalid(
                    key,
                    value,
                    "use lowercase letters, digits, `-` and `.`",
                ))
            }
        }
    };
    let review_versions = list(
        "admissionReviewVersions",
        Some(get("admissionReviewVersions")?),
        |v| match v {
            "v1" | "v1beta1" => Ok(v.to_owned()),
            _ => Err(invalid(
                "admissionReviewVersions",
                v,
                "the runtime answers v1",
            )),
        },
    )?;
    let rule = RuleWithOperations {
        api_groups: list("groups", Some(get("groups")?), names("group"))?,
        api_versions: list("versions", Some(get("versions")?), names("version"))?,
        operations,
        resources: list("resources", Some(get("resources")?), names("resource"))?,
    };
    Ok(Webhook {
        mutating,
        admission_review_versions: review_versions,
        client_config: ClientConfig {
            service: ServiceReference {
                name: SERVICE_NAME.to_owned(),
                namespace: SERVICE_NAMESPACE.to_owned(),
                path: path.to_owned(),
            },
        },
        failure_policy: failure_policy.to_owned(),
        name: name.to_owned(),
        rules: vec![rule],
        side_effects: side_effects.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MUTATE: &str = "webhook:path=/mutate-db-example-com-v1-backup,mutating=true,failurePolicy=fail,sideEffects=None,groups=db.example.com,resources=backups,verbs=create;update,versions=v1,name=mbackup-v1.db.example.com,admissionReviewVersions=v1";

    #[test]
    fn bad_markers_say_what_is_wrong() {
        for (marker, needle) in [
            (
                MUTATE.replace("mutating=true", "mutating=yes"),
                "invalid mutating `yes`",
            ),
            (
                MUTATE.replace("failurePolicy=fail", "failurePolicy=never"),
                "invalid failurePolicy",
            ),
            (
                MUTATE.replace("sideEffects=None", "sideEffects=Some"),
                "invalid sideEffects",
            ),
            (
                MUTATE.replace("verbs=create;update", "verbs=create;patch"),
                "unknown verb `patch`",
            ),
            (
                MUTATE.replace(",versions=v1", ""),
                "key `versions` is missing",
            ),
            (
                MUTATE.replace("name=mbackup-v1.db.example.com", "name=mbackup"),
                "invalid name `mbackup`",
            ),
            (format!("{MUTATE},colour=blue"), "unknown key `colour`"),
            (
                MUTATE.replace("webhook:", "webhooks:"),
                "unknown marker `+opgen:webhooks`",
            ),
            (MUTATE.replace("path=/", "path="), "invalid path"),
        ] {
            let problem = parse_marker(&marker).unwrap_err().to_string();
            assert!(problem.contains(needle), "{needle}: {problem}");
        }
    }

    #[test]
    fn reading_reports_every_bad_marker_with_file_and_line_and_duplicate_names() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("src/webhooks/db");
        std::fs::create_dir_all(&dir).unwrap();
        let validate = MUTATE.replace("mutating=true", "mutating=false");
        std::fs::write(
            dir.join("backup_v1.rs"),
            format!("//! Webhooks.\n\n// +opgen:{MUTATE}\n// +opgen:{validate}\n// +opgen:webhook:path=/x\n"),
        )
        .unwrap();
        let err = read_webhooks(root.path()).unwrap_err().to_string();
        assert!(
            err.contains("src/webhooks/db/backup_v1.rs:5: key `mutating` is missing"),
            "{err}"
        );
        assert!(err.contains("src/webhooks/db/backup_v1.rs:4: webhook name `mbackup-v1.db.example.com` is used by src/webhooks/db/backup_v1.rs:3 too"), "{err}");
        std::fs::write(dir.join("backup_v1.rs"), format!("// +opgen:{MUTATE}\n")).unwrap();
        assert_eq!(read_webhooks(root.path()).unwrap().len(), 1);
    }

    #[test]
    fn errors_read_as_the_rbac_markers_do() {
        let marker = format!("// +opgen:{MUTATE},colour=blue");
        let errors = parse_source("src/webhooks/db/backup_v1.rs", &marker).unwrap_err();
        assert_eq!(
            errors.to_string(),
            format!(
                "src/webhooks/db/backup_v1.rs:1: unknown key `colour` in marker\n  {marker}\nExpected keys: {}",
                KEYS.join(", ")
            )
        );
        let patch = format!("// +opgen:{}", MUTATE.replace("create;update", "patch"));
        let verbs = parse_source("f.rs", &patch).unwrap_err().to_string();
        assert!(
            verbs.ends_with("\nExpected verbs: create, update, delete, connect, *"),
            "{verbs}"
        );
    }
}
