//! The project's install on the development API server: everything `config/default` renders
//! (namespace, CRDs, ServiceAccount, roles and bindings) except what runs in a cluster only,
//! applied server-side, as `make install` and `make deploy` apply it. A project with webhooks
//! takes its CRDs and webhook configurations from `config/dev`, as `make dev-webhooks` does,
//! calling the manager on this machine.

use std::{
    hash::{Hash as _, Hasher as _},
    path::Path,
};

use anyhow::Context as _;

use super::kubectl::Kubectl;

/// Kinds of `config/default` that `opgen dev` leaves out: the manager runs on this machine,
/// not in a Deployment, and webhook configurations would call a Service that has no pods.
const LEFT_OUT: [&str; 3] = [
    "Deployment",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Where `config/dev` has its webhook configurations and CRDs call the manager.
const DEV_WEBHOOK_URL: &str = "https://host.docker.internal:9443/";

/// Whether the project has webhooks (`opgen create webhook` writes `config/dev`).
pub fn has_webhooks(root: &Path) -> bool {
    root.join("config/dev/kustomization.yaml").is_file()
}

/// Renders `config/default` and applies it (less [`LEFT_OUT`]), then, for a project with
/// webhooks, `config/dev` calling `127.0.0.1:webhook_port`; waits for the CRDs.
pub fn install(admin: &Kubectl, root: &Path, webhook_port: u16) -> anyhow::Result<()> {
    let default = render(admin, root, "config/default")?;
    let dev = if has_webhooks(root) {
        Some(render(admin, root, "config/dev")?)
    } else {
        None
    };
    for (dir, manifest) in manifests(&default, dev.as_deref(), webhook_port) {
        admin
            .apply(&manifest)
            .with_context(|| format!("the API server refused {dir}"))?;
    }
    admin
        .run(&[
            "wait",
            "--for=condition=Established",
            "crd",
            "--all",
            "--timeout=60s",
        ])
        .context("the CRDs were not established")?;
    Ok(())
}

/// What to apply, in order, from the rendered `config/default` and `config/dev`.
fn manifests(default: &str, dev: Option<&str>, webhook_port: u16) -> Vec<(&'static str, String)> {
    let mut left_out = LEFT_OUT.to_vec();
    let Some(dev) = dev else {
        return vec![("config/default", without_kinds(default, &left_out))];
    };
    // config/dev has the CRDs too, their conversion webhooks at this machine's URL.
    left_out.push("CustomResourceDefinition");
    let url = format!("https://127.0.0.1:{webhook_port}/");
    vec![
        ("config/default", without_kinds(default, &left_out)),
        ("config/dev", dev.replace(DEV_WEBHOOK_URL, &url)),
    ]
}

fn render(admin: &Kubectl, root: &Path, dir: &str) -> anyhow::Result<String> {
    admin
        .run(&["kustomize", &root.join(dir).to_string_lossy()])
        .with_context(|| format!("cannot render {dir}"))
}

/// What the install is made from: every file of `config/`, by path and content. The rendered
/// manifests depend on nothing else (the webhook port is fixed for a session), so an equal
/// fingerprint means that applying again would change nothing on the API server.
pub fn config_fingerprint(root: &Path) -> anyhow::Result<u64> {
    let mut hasher = std::hash::DefaultHasher::new();
    let config = root.join("config");
    for entry in walkdir::WalkDir::new(&config).sort_by_file_name() {
        let entry = entry.with_context(|| format!("cannot read {}", config.display()))?;
        if entry.file_type().is_file() {
            let content = std::fs::read(entry.path())
                .with_context(|| format!("cannot read {}", entry.path().display()))?;
            entry.path().hash(&mut hasher);
            content.hash(&mut hasher);
        }
    }
    Ok(hasher.finish())
}

/// `kubectl apply --server-side -k config/samples` in `namespace`.
pub fn apply_samples(admin: &Kubectl, root: &Path, namespace: &str) -> anyhow::Result<String> {
    let samples = root.join("config/samples");
    admin
        .run(&[
            "apply",
            "--server-side",
            "-k",
            &samples.to_string_lossy(),
            "-n",
            namespace,
        ])
        .context("the API server refused the samples of config/samples")
}

/// A token of the ServiceAccount `name` in `namespace`.
pub fn token(admin: &Kubectl, name: &str, namespace: &str) -> anyhow::Result<String> {
    let token = admin
        .run(&["create", "token", name, "-n", namespace, "--duration=24h"])
        .with_context(|| {
            format!("cannot make a token of ServiceAccount {namespace}/{name}: config/rbac should hold it")
        })?;
    Ok(token.trim().to_owned())
}

/// The YAML documents of `rendered` whose top-level `kind` is none of `kinds`.
fn without_kinds(rendered: &str, kinds: &[&str]) -> String {
    rendered
        .split("\n---\n")
        .filter(|document| {
            !document
                .lines()
                .filter_map(|line| line.strip_prefix("kind: "))
                .any(|kind| kinds.contains(&kind.trim()))
        })
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_changes_with_any_file_of_config_and_only_then() {
        let dir = tempfile::tempdir().unwrap();
        let rbac = dir.path().join("config/rbac");
        std::fs::create_dir_all(&rbac).unwrap();
        std::fs::write(rbac.join("role.yaml"), "rules: []\n").unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
        let first = config_fingerprint(dir.path()).unwrap();
        assert_eq!(config_fingerprint(dir.path()).unwrap(), first);

        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        assert_eq!(
            config_fingerprint(dir.path()).unwrap(),
            first,
            "outside config/"
        );

        std::fs::write(rbac.join("role.yaml"), "rules: [{}]\n").unwrap();
        let edited = config_fingerprint(dir.path()).unwrap();
        assert_ne!(edited, first, "an edited file");

        std::fs::rename(rbac.join("role.yaml"), rbac.join("other.yaml")).unwrap();
        assert_ne!(
            config_fingerprint(dir.path()).unwrap(),
            edited,
            "a renamed file"
        );
    }

    #[test]
    fn leaves_out_documents_of_the_given_kinds_only() {
        let rendered = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    kind: x\n---\napiVersion: v1\nkind: ServiceAccount\n";
        let kept = without_kinds(rendered, &LEFT_OUT);
        assert!(kept.contains("kind: Namespace"), "{kept}");
        assert!(kept.contains("kind: ServiceAccount"), "{kept}");
        assert!(!kept.contains("Deployment"), "{kept}");
    }

    #[test]
    fn with_webhooks_the_crds_and_configurations_come_from_config_dev_calling_this_machine() {
        let default = "kind: CustomResourceDefinition\n---\nkind: ServiceAccount\n---\nkind: ValidatingWebhookConfiguration\n";
        let dev = "kind: CustomResourceDefinition\n---\nkind: ValidatingWebhookConfiguration\nwebhooks:\n- clientConfig:\n    url: https://host.docker.internal:9443/validate-db\n";
        let plain = manifests(default, None, 4443);
        assert_eq!(plain.len(), 1);
        assert!(plain[0].1.contains("CustomResourceDefinition"));
        assert!(!plain[0].1.contains("WebhookConfiguration"));

        let with_webhooks = manifests(default, Some(dev), 4443);
        let [(first, default), (second, dev)] = &with_webhooks[..] else {
            panic!("{with_webhooks:?}");
        };
        assert_eq!((*first, *second), ("config/default", "config/dev"));
        assert_eq!(default, "kind: ServiceAccount");
        assert!(
            dev.contains("url: https://127.0.0.1:4443/validate-db"),
            "{dev}"
        );
    }
}
