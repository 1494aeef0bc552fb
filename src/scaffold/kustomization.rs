//! The one edit opgen makes to `config/default/kustomization.yaml`: the first webhook adds
//! `../webhook` to its resources, and the cert-manager component as a commented choice. The
//! file is the user's, so lines are only added, next to the ones they follow.

use anyhow::bail;

const WEBHOOK: &str = "\
# [WEBHOOK] The webhook configurations and the Service of the manager's webhook server.
- ../webhook";

const CERT_MANAGER: &str = "
# [CERT-MANAGER] Uncomment to have cert-manager issue the webhook server's certificate and
# inject its CA into the webhook configurations (install cert-manager first).
#components:
#- ../certmanager
";

/// `kustomization` with the webhook wiring added; the same text when it has it.
pub fn with_webhook_wiring(kustomization: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = kustomization.lines().collect();
    if lines
        .iter()
        .any(|line| line.trim_start_matches('#').trim() == "- ../webhook")
    {
        return Ok(kustomization.to_owned());
    }
    let Some(manager) = lines.iter().position(|line| line.trim() == "- ../manager") else {
        bail!(
            "config/default/kustomization.yaml lists no `- ../manager` resource, after which the webhooks go\n\nAdd `- ../webhook` to its resources yourself, and run the command again"
        );
    };
    let mut out: Vec<&str> = lines[..=manager].to_vec();
    out.push(WEBHOOK);
    out.extend(&lines[manager + 1..]);
    let mut text = out.join("\n");
    text.push('\n');
    text.push_str(CERT_MANAGER);
    Ok(text)
}

/// The network policies' `kustomization` with the webhook policy in its resources; the same
/// text when it has it, or when it has no `resources:` list to add to (the user's layout).
pub fn with_webhook_policy(kustomization: &str) -> String {
    const POLICY: &str = "- allow-webhook-traffic.yaml";
    let lines: Vec<&str> = kustomization.lines().collect();
    let Some(start) = lines.iter().position(|line| line.trim() == "resources:") else {
        return kustomization.to_owned();
    };
    if lines
        .iter()
        .any(|line| line.trim_start_matches('#').trim() == POLICY)
    {
        return kustomization.to_owned();
    }
    let end = lines[start + 1..]
        .iter()
        .position(|line| !line.starts_with('-'))
        .map_or(lines.len(), |offset| start + 1 + offset);
    let mut out: Vec<&str> = lines[..end].to_vec();
    out.push(POLICY);
    out.extend(&lines[end..]);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_webhooks_after_the_manager_once() {
        let before = "resources:\n- ../crd\n- ../manager\n#- ../prometheus\n";
        let after = with_webhook_wiring(before).unwrap();
        assert!(
            after.starts_with("resources:\n- ../crd\n- ../manager\n# [WEBHOOK] The webhook configurations and the Service of the manager's webhook server.\n- ../webhook\n#- ../prometheus\n"),
            "{after}"
        );
        assert!(
            after.ends_with("#components:\n#- ../certmanager\n"),
            "{after}"
        );
        assert_eq!(with_webhook_wiring(&after).unwrap(), after);
        // A user who commented the webhooks out keeps them out.
        let commented = "resources:\n- ../manager\n#- ../webhook\n";
        assert_eq!(with_webhook_wiring(commented).unwrap(), commented);
    }

    #[test]
    fn the_webhook_policy_joins_the_resources_once() {
        let before = "resources:\n- allow-manager-traffic.yaml\n";
        let after = with_webhook_policy(before);
        assert_eq!(
            after,
            "resources:\n- allow-manager-traffic.yaml\n- allow-webhook-traffic.yaml\n"
        );
        assert_eq!(with_webhook_policy(&after), after);
        assert_eq!(with_webhook_policy("patches: []\n"), "patches: []\n");
    }

    #[test]
    fn without_the_manager_it_says_what_to_add() {
        let err = with_webhook_wiring("resources:\n- ../crd\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("Add `- ../webhook`"), "{err}");
    }
}
