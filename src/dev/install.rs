//! The project's install on the development API server: everything `config/default` renders
//! (namespace, CRDs, ServiceAccount, roles and bindings) except what runs in a cluster only,
//! applied server-side, as `make install` and `make deploy` apply it. A project with webhooks
//! takes its CRDs and webhook configurations from `config/dev`, as `make dev-webhooks` does,
//! calling the manager on this machine.

use std::path::Path;

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
    let rendered = render(admin, root, "config/default")?;
    let webhooks = has_webhooks(root);
    let mut left_out = LEFT_OUT.to_vec();
    if webhooks {
        // config/dev has them, with their webhooks at this machine's URL.
        left_out.push("CustomResourceDefinition");
    }
    admin
        .apply(&without_kinds(&rendered, &left_out))
        .context("the API server refused config/default")?;
    if webhooks {
        let url = format!("https://127.0.0.1:{webhook_port}/");
        let dev = render(admin, root, "config/dev")?.replace(DEV_WEBHOOK_URL, &url);
        admin
            .apply(&dev)
            .context("the API server refused config/dev")?;
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

fn render(admin: &Kubectl, root: &Path, dir: &str) -> anyhow::Result<String> {
    admin
        .run(&["kustomize", &root.join(dir).to_string_lossy()])
        .with_context(|| format!("cannot render {dir}"))
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
    fn leaves_out_documents_of_the_given_kinds_only() {
        let rendered = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    kind: x\n---\napiVersion: v1\nkind: ServiceAccount\n";
        let kept = without_kinds(rendered, &LEFT_OUT);
        assert!(kept.contains("kind: Namespace"), "{kept}");
        assert!(kept.contains("kind: ServiceAccount"), "{kept}");
        assert!(!kept.contains("Deployment"), "{kept}");
    }
}
