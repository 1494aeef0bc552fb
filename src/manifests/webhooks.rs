//! The webhook configurations `generate manifests` writes (`config/webhook/manifests.yaml`)
//! from the `// +opgen:webhook:` markers of the webhook files (read by
//! [`super::markers::webhook`]), and the development overlay that calls them on a manager
//! run on the developer's machine.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{
    model::{CONFIGURATION_NAMES, deployed_configuration_names},
    plan::{Owner, PlannedFile},
    project::Project,
};

/// Where `generate manifests` writes the webhook configurations.
pub const MANIFESTS_FILE: &str = "config/webhook/manifests.yaml";

/// The Service in front of the manager's webhook server (`config/webhook/service.yaml`),
/// before kustomize's name prefix and namespace.
pub(super) const SERVICE_NAME: &str = "webhook-service";
pub(super) const SERVICE_NAMESPACE: &str = "system";

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

/// The label of the objects whose `caBundle` the manager's self-managed certificate keeps
/// (and that the cert-manager component injects into): the project's name is its value.
pub const CA_LABEL: &str = "opgen.io/webhook-ca";

/// The two webhook configurations: whether each is the mutating one, its kind and its name.
const CONFIGURATIONS: [(bool, &str, &str); 2] = [
    (true, "MutatingWebhookConfiguration", CONFIGURATION_NAMES[0]),
    (
        false,
        "ValidatingWebhookConfiguration",
        CONFIGURATION_NAMES[1],
    ),
];

/// The names of the project's webhook configurations as the cluster has them (see
/// [`deployed_configuration_names`]).
pub fn configuration_names(project: &Project) -> [String; 2] {
    deployed_configuration_names(&project.project_name)
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
    use crate::manifests::markers::webhook::parse_marker;

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
}
