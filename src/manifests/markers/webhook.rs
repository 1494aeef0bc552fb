//! `// +opgen:webhook:` markers, in Kubebuilder's syntax with opgen's prefix:
//!
//! ```text
//! // +opgen:webhook:path=/mutate-db-example-com-v1-backup,mutating=true,failurePolicy=fail,sideEffects=None,groups=db.example.com,resources=backups,verbs=create;update,versions=v1,name=mbackup-v1.db.example.com,admissionReviewVersions=v1
//! ```
//!
//! They are read from the webhook files under `src/webhooks/`, with the strictness of the RBAC
//! markers: a marker that does not parse is an error with its file and line, since a typo would
//! otherwise surface only as a webhook the API server never calls.

use std::{collections::BTreeMap, path::Path};

use super::{Place, marker_lines, rust_files};
use crate::manifests::webhooks::{
    ClientConfig, RuleWithOperations, SERVICE_NAME, SERVICE_NAMESPACE, ServiceReference, Webhook,
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

const VERBS: [(&str, &str); 5] = [
    ("create", "CREATE"),
    ("update", "UPDATE"),
    ("delete", "DELETE"),
    ("connect", "CONNECT"),
    ("*", "*"),
];

/// A marker that cannot be used, where it is and why; all of them are reported at once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(|(place, problem)| format!("{}:{}: {problem}\n  {}", place.file, place.line, place.text)).collect::<Vec<_>>().join("\n\n"))]
pub struct InvalidWebhookMarkers(pub Vec<(Place, String)>);

/// Reads the webhook markers of every `.rs` file under `src/webhooks/`, in path order.
pub fn read_webhooks(root: &Path) -> anyhow::Result<Vec<Webhook>> {
    let dir = root.join(WEBHOOKS_DIR);
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut webhooks: Vec<(Place, Webhook)> = Vec::new();
    let mut errors = Vec::new();
    for (file, text) in rust_files(root, &dir)? {
        parse_markers(&file, &text, &mut webhooks, &mut errors);
    }
    for (index, (place, webhook)) in webhooks.iter().enumerate() {
        if let Some((first, _)) = webhooks[..index]
            .iter()
            .find(|(_, other)| other.name == webhook.name)
        {
            errors.push((
                place.clone(),
                format!(
                    "webhook name `{}` is used by {}:{} too; every webhook has its own name\n  Rename one of them",
                    webhook.name, first.file, first.line
                ),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(InvalidWebhookMarkers(errors).into());
    }
    Ok(webhooks.into_iter().map(|(_, webhook)| webhook).collect())
}

/// The webhooks of the markers of one file's `text`; `file` is only for messages.
pub fn parse_source(file: &str, text: &str) -> Result<Vec<Webhook>, InvalidWebhookMarkers> {
    let (mut webhooks, mut errors) = (Vec::new(), Vec::new());
    parse_markers(file, text, &mut webhooks, &mut errors);
    if errors.is_empty() {
        Ok(webhooks.into_iter().map(|(_, webhook)| webhook).collect())
    } else {
        Err(InvalidWebhookMarkers(errors))
    }
}

fn parse_markers(
    file: &str,
    text: &str,
    webhooks: &mut Vec<(Place, Webhook)>,
    errors: &mut Vec<(Place, String)>,
) {
    for (place, body) in marker_lines(file, text) {
        match parse_marker(body) {
            Ok(webhook) => webhooks.push((place, webhook)),
            Err(problem) => errors.push((place, problem)),
        }
    }
}

pub(crate) fn parse_marker(body: &str) -> Result<Webhook, String> {
    let (name, arguments) = body.split_once(':').unwrap_or((body, ""));
    if name != "webhook" {
        return Err(format!(
            "unknown marker `+opgen:{name}` in a webhook file\nThe webhook marker is `+opgen:webhook:path=…,mutating=…,failurePolicy=…,sideEffects=None,groups=…,resources=…,verbs=…,versions=…,name=…,admissionReviewVersions=v1`"
        ));
    }
    let mut values: BTreeMap<&str, &str> = BTreeMap::new();
    for pair in arguments.split(',') {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!(
                "`{}` is not a `key=value` pair in marker\nExpected keys: {}",
                pair.trim(),
                KEYS.join(", ")
            ));
        };
        let key = key.trim();
        if !KEYS.contains(&key) {
            return Err(format!(
                "unknown key `{key}` in marker\nExpected keys: {}",
                KEYS.join(", ")
            ));
        }
        if values.insert(key, value.trim()).is_some() {
            return Err(format!("key `{key}` is given twice in marker"));
        }
    }
    let get = |key: &str| {
        values
            .get(key)
            .copied()
            .ok_or_else(|| format!("key `{key}` is missing from marker"))
    };
    let path = get("path")?;
    if !path.starts_with('/') || path.contains(char::is_whitespace) {
        return Err(format!(
            "invalid path `{path}` in marker: use a URL path such as `/validate-db-example-com-v1-backup`"
        ));
    }
    let mutating = match get("mutating")? {
        "true" => true,
        "false" => false,
        other => {
            return Err(format!(
                "invalid mutating `{other}` in marker: use true or false"
            ));
        }
    };
    let failure_policy = match get("failurePolicy")?.to_ascii_lowercase().as_str() {
        "fail" => "Fail",
        "ignore" => "Ignore",
        _ => {
            return Err(format!(
                "invalid failurePolicy `{}` in marker: use fail or ignore",
                get("failurePolicy")?
            ));
        }
    };
    let side_effects = match get("sideEffects")? {
        value @ ("None" | "NoneOnDryRun") => value,
        other => {
            return Err(format!(
                "invalid sideEffects `{other}` in marker: admission webhooks v1 take None or NoneOnDryRun"
            ));
        }
    };
    let name = get("name")?;
    if name.split('.').count() < 3 || !name.chars().all(is_name_char) {
        return Err(format!(
            "invalid name `{name}` in marker: the API server wants a qualified name of three parts or more, such as `vbackup-v1.db.example.com`"
        ));
    }
    let operations = list("verbs", get("verbs")?, |verb| {
        VERBS
            .iter()
            .find(|(marker, _)| *marker == verb)
            .map(|(_, operation)| (*operation).to_owned())
            .ok_or_else(|| {
                format!("unknown verb `{verb}` in marker\nExpected verbs: create, update, delete, connect, *")
            })
    })?;
    let names = |key: &'static str| {
        move |value: &str| {
            if value.chars().all(is_name_char) || value == "*" {
                Ok(value.to_owned())
            } else {
                Err(format!(
                    "invalid {key} `{value}` in marker: use lowercase letters, digits, `-` and `.`"
                ))
            }
        }
    };
    let review_versions = list(
        "admissionReviewVersions",
        get("admissionReviewVersions")?,
        |v| match v {
            "v1" | "v1beta1" => Ok(v.to_owned()),
            _ => Err(format!(
                "invalid admissionReviewVersions `{v}` in marker: the runtime answers v1"
            )),
        },
    )?;
    let rule = RuleWithOperations {
        api_groups: list("groups", get("groups")?, |group| {
            names("group")(if group == "core" { "" } else { group })
        })?,
        api_versions: list("versions", get("versions")?, names("version"))?,
        operations,
        resources: list("resources", get("resources")?, names("resource"))?,
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

fn is_name_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'
}

/// A `;`-separated list whose items are checked by `item`.
fn list(
    key: &str,
    raw: &str,
    item: impl Fn(&str) -> Result<String, String>,
) -> Result<Vec<String>, String> {
    raw.split(';')
        .map(|part| {
            let part = part.trim().trim_matches('"');
            if part.is_empty() && key != "groups" {
                return Err(format!("`{key}` has an empty item in marker"));
            }
            item(part)
        })
        .collect()
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
            let problem = parse_marker(&marker).unwrap_err();
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
}
