//! `// +opgen:webhook:` markers, in Kubebuilder's syntax with opgen's prefix, and the webhook
//! configurations `generate manifests` writes from them (`config/webhook/manifests.yaml`):
//!
//! ```text
//! // +opgen:webhook:path=/mutate-db-example-com-v1-backup,mutating=true,failurePolicy=fail,sideEffects=None,groups=db.example.com,resources=backups,verbs=create;update,versions=v1,name=mbackup-v1.db.example.com,admissionReviewVersions=v1
//! ```
//!
//! They are read from the webhook files under `src/webhooks/`, with the strictness of the RBAC
//! markers: a marker that does not parse is an error with its file and line, since a typo would
//! otherwise surface only as a webhook the API server never calls.

use std::{collections::BTreeMap, path::Path};

use serde::Serialize;

use super::markers::{Place, marker_lines, rust_files};
use crate::{
    plan::{Owner, PlannedFile},
    project::Project,
};

/// Where the webhook markers are read from, relative to the project root.
pub const WEBHOOKS_DIR: &str = "src/webhooks";

/// Where `generate manifests` writes the webhook configurations.
pub const MANIFESTS_FILE: &str = "config/webhook/manifests.yaml";

/// The Service in front of the manager's webhook server (`config/webhook/service.yaml`),
/// before kustomize's name prefix and namespace.
const SERVICE_NAME: &str = "webhook-service";
const SERVICE_NAMESPACE: &str = "system";

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

/// One admission webhook, as a webhook configuration lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    #[serde(skip)]
    pub mutating: bool,
    pub admission_review_versions: Vec<String>,
    pub client_config: ClientConfig,
    pub failure_policy: String,
    pub name: String,
    pub rules: Vec<RuleWithOperations>,
    pub side_effects: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientConfig {
    pub service: ServiceReference,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceReference {
    pub name: String,
    pub namespace: String,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleWithOperations {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub operations: Vec<String>,
    pub resources: Vec<String>,
}

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

fn parse_marker(body: &str) -> Result<Webhook, String> {
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

/// The label of the objects whose `caBundle` the manager's self-managed certificate keeps
/// (and that the cert-manager component injects into): the project's name is its value.
pub const CA_LABEL: &str = "opgen.io/webhook-ca";

/// The two webhook configurations: whether each is the mutating one, its kind and its name.
const CONFIGURATIONS: [(bool, &str, &str); 2] = [
    (
        true,
        "MutatingWebhookConfiguration",
        "mutating-webhook-configuration",
    ),
    (
        false,
        "ValidatingWebhookConfiguration",
        "validating-webhook-configuration",
    ),
];

/// The names of the project's webhook configurations as the cluster has them: with the
/// project's prefix, which `config/default` and `config/dev` both give them (so that the
/// development overlay replaces the deployed pair, and two projects never share one). The
/// mutating one first.
pub fn configuration_names(project: &Project) -> [String; 2] {
    CONFIGURATIONS.map(|(_, _, name)| project.project_name.deployed_name(name))
}

/// The webhooks of one configuration, in the order it lists them.
fn listed(webhooks: &[Webhook], mutating: bool) -> Vec<&Webhook> {
    let mut listed: Vec<&Webhook> = webhooks.iter().filter(|w| w.mutating == mutating).collect();
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    listed
}

/// `config/webhook/manifests.yaml`: a MutatingWebhookConfiguration and a
/// ValidatingWebhookConfiguration with the webhooks of each kind, each left out when it has
/// none (the file then holds only its header, which kustomize reads as no objects). Both are
/// labelled for the injection of the webhook server's CA.
pub fn manifests_file(project: &Project, webhooks: &[Webhook]) -> PlannedFile {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Configuration<'a> {
        api_version: &'static str,
        kind: &'static str,
        metadata: Metadata<'a>,
        webhooks: Vec<&'a Webhook>,
    }
    #[derive(Serialize)]
    struct Metadata<'a> {
        labels: BTreeMap<&'static str, &'a str>,
        name: &'static str,
    }
    let mut text = format!("{}\n", super::rbac::HEADER);
    for (mutating, kind, name) in CONFIGURATIONS {
        let listed = listed(webhooks, mutating);
        if listed.is_empty() {
            continue;
        }
        let configuration = Configuration {
            api_version: "admissionregistration.k8s.io/v1",
            kind,
            metadata: Metadata {
                labels: BTreeMap::from([(CA_LABEL, project.project_name.as_str())]),
                name,
            },
            webhooks: listed,
        };
        text.push_str("---\n");
        text.push_str(
            &serde_saphyr::to_string(&configuration).expect("a configuration always serializes"),
        );
    }
    PlannedFile::new(MANIFESTS_FILE, text, Owner::Manifest)
}

/// Where `generate manifests` writes the development overlay.
pub const DEV_FILE: &str = "config/dev/kustomization.yaml";

/// Where the development overlay's webhooks are called; `make dev-webhooks WEBHOOK_HOST=…`
/// replaces it.
pub const DEV_URL: &str = "https://host.docker.internal:9443";

/// `config/dev/kustomization.yaml`: the CRDs and webhook configurations for a development
/// cluster that calls a manager run on the developer's machine (`make dev-webhooks`): every
/// client configuration becomes a URL at [`DEV_URL`], and the objects that belong to the
/// manager's namespace (the Service, the certificate's Role) are left out. The names are the
/// deployed ones ([`configuration_names`]), so `make dev-webhooks` and `make deploy` take the
/// same pair from one to the other.
pub fn dev_file(project: &Project, webhooks: &[Webhook]) -> PlannedFile {
    let mut text = format!(
        "{}\n\
         # For a development cluster (`make dev-webhooks`): the CRDs and webhook configurations,\n\
         # calling a manager run on this machine (`make run-webhooks`) instead of the Service,\n\
         # at {DEV_URL}. The manager puts its CA into them (they carry the\n\
         # {CA_LABEL} label).\n\
         apiVersion: kustomize.config.k8s.io/v1beta1\n\
         kind: Kustomization\n\
         \n\
         # The prefix of ../default: the configurations replace the deployed ones, and\n\
         # another project's cannot collide with them.\n\
         namePrefix: {name}-\n\
         \n\
         resources:\n\
         - ../crd\n\
         - ../webhook\n\
         \n\
         patches:\n",
        super::rbac::HEADER,
        name = project.project_name,
    );
    for (kind, name, api_version) in [
        ("Service", "webhook-service", "v1"),
        ("Role", CERTIFICATE_ROLE, "rbac.authorization.k8s.io/v1"),
        (
            "RoleBinding",
            CERTIFICATE_ROLE_BINDING,
            "rbac.authorization.k8s.io/v1",
        ),
    ] {
        text.push_str(&format!(
            "- target:\n    kind: {kind}\n    name: {name}\n  patch: |-\n    $patch: delete\n    apiVersion: {api_version}\n    kind: {kind}\n    metadata:\n      name: {name}\n"
        ));
    }
    let mut url = |kind: &str, name: &str, pointer: &str, path: &str| {
        text.push_str(&format!(
            "- target:\n    kind: {kind}\n    name: {name}\n  patch: |-\n    - op: replace\n      path: {pointer}\n      value:\n        url: {DEV_URL}{path}\n"
        ));
    };
    for (mutating, kind, name) in CONFIGURATIONS {
        for (index, webhook) in listed(webhooks, mutating).iter().enumerate() {
            let pointer = format!("/webhooks/{index}/clientConfig");
            url(kind, name, &pointer, &webhook.client_config.service.path);
        }
    }
    for kind in project.kinds().filter(|kind| project.converts(kind)) {
        url(
            "CustomResourceDefinition",
            &kind.crd_name(&project.domain),
            "/spec/conversion/webhook/clientConfig",
            &kind.conversion_path(&project.domain),
        );
    }
    PlannedFile::new(DEV_FILE, text, Owner::Manifest)
}

/// The Role and RoleBinding of the Secret that keeps the self-managed certificate
/// (`config/webhook/certificate_role.yaml`), before kustomize's name prefix.
const CERTIFICATE_ROLE: &str = "webhook-certificate-role";
const CERTIFICATE_ROLE_BINDING: &str = "webhook-certificate-rolebinding";

#[cfg(test)]
mod tests {
    use super::*;

    const MUTATE: &str = "webhook:path=/mutate-db-example-com-v1-backup,mutating=true,failurePolicy=fail,sideEffects=None,groups=db.example.com,resources=backups,verbs=create;update,versions=v1,name=mbackup-v1.db.example.com,admissionReviewVersions=v1";

    #[test]
    fn a_marker_becomes_a_webhook_entry() {
        let webhook = parse_marker(MUTATE).unwrap();
        assert!(webhook.mutating);
        assert_eq!(webhook.failure_policy, "Fail");
        assert_eq!(
            webhook.client_config.service.path,
            "/mutate-db-example-com-v1-backup"
        );
        assert_eq!(webhook.rules[0].operations, ["CREATE", "UPDATE"]);
        let project = Project::for_test("demo", crate::project::Scope::Cluster);
        let file = manifests_file(&project, std::slice::from_ref(&webhook));
        assert!(
            file.contents.contains(
                "  labels:\n    opgen.io/webhook-ca: demo\n  name: mutating-webhook-configuration\n"
            ),
            "{}",
            file.contents
        );
        assert!(
            file.contents.contains("kind: MutatingWebhookConfiguration"),
            "{}",
            file.contents
        );
        assert!(
            !file.contents.contains("ValidatingWebhookConfiguration"),
            "{}",
            file.contents
        );
        assert!(file.contents.contains("      name: webhook-service\n      namespace: system\n      path: /mutate-db-example-com-v1-backup\n"), "{}", file.contents);
        assert!(!manifests_file(&project, &[]).contents.contains("kind:"));
    }

    #[test]
    fn the_dev_overlay_calls_every_webhook_and_conversion_at_one_url() {
        use crate::model::{Resource, Webhooks};
        let converting = Webhooks {
            conversion: true,
            ..Webhooks::default()
        };
        let project = Project {
            resources: vec![
                Resource {
                    webhooks: Some(converting),
                    ..Resource::for_test("db", "v1", "Thing")
                },
                Resource {
                    storage: false,
                    ..Resource::for_test("db", "v1alpha1", "Thing")
                },
            ],
            ..Project::for_test("demo", crate::project::Scope::Cluster)
        };
        let validate = MUTATE
            .replace("mutating=true", "mutating=false")
            .replace("/mutate-", "/validate-")
            .replace("name=m", "name=v");
        let webhooks = [
            parse_marker(&validate).unwrap(),
            parse_marker(MUTATE).unwrap(),
        ];
        let text = dev_file(&project, &webhooks).contents;
        for expected in [
            "namePrefix: demo-\n\nresources:\n- ../crd\n- ../webhook\n",
            "    kind: Service\n    name: webhook-service\n  patch: |-\n    $patch: delete\n",
            "    kind: Role\n    name: webhook-certificate-role\n",
            "    kind: MutatingWebhookConfiguration\n    name: mutating-webhook-configuration\n  patch: |-\n    - op: replace\n      path: /webhooks/0/clientConfig\n      value:\n        url: https://host.docker.internal:9443/mutate-db-example-com-v1-backup\n",
            "    kind: ValidatingWebhookConfiguration\n    name: validating-webhook-configuration\n  patch: |-\n    - op: replace\n      path: /webhooks/0/clientConfig\n      value:\n        url: https://host.docker.internal:9443/validate-db-example-com-v1-backup\n",
            "    kind: CustomResourceDefinition\n    name: things.db.example.com\n  patch: |-\n    - op: replace\n      path: /spec/conversion/webhook/clientConfig\n      value:\n        url: https://host.docker.internal:9443/convert-",
        ] {
            assert!(text.contains(expected), "lacks {expected:?}:\n{text}");
        }
    }

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
