//! The one edit opgen makes to `config/default/kustomization.yaml`: the first webhook adds
//! `../webhook` to its resources, the patch of the manager's self-managed certificate, and the
//! cert-manager component as a commented choice (selected in a namespaced project, whose
//! manager cannot be given the permissions of the self-managed certificate). The file is the
//! user's, so lines are only added, next to the ones they follow; when the last webhook goes
//! (`delete webhook`), or the scope changes what the wiring is (`edit`), exactly those lines
//! are taken out again.

use anyhow::bail;

const WEBHOOK: &str = "\
# [WEBHOOK] The webhook configurations and the Service of the manager's webhook server.
- ../webhook";

const SELF_MANAGED: &str = "
# [WEBHOOK] The manager makes the webhooks' certificate itself, keeps it in a Secret and puts
# its CA into the webhook configurations and CRDs (no cert-manager needed).
patches:
- path: manager_webhook_patch.yaml
";

const SELF_MANAGED_PATCH: &str = "- path: manager_webhook_patch.yaml";

const CERT_MANAGER: &str = "
# [CERT-MANAGER] Uncomment to have cert-manager issue the webhook server's certificate and
# inject its CA into the webhook configurations and CRDs (install cert-manager first); it
# takes over from the manager's own certificate.
#components:
#- ../certmanager
";

const CERT_MANAGER_SELECTED: &str = "
# [CERT-MANAGER] cert-manager issues the webhook server's certificate and injects its CA into
# the webhook configurations and CRDs (install cert-manager first).
components:
- ../certmanager
";

/// `kustomization` with the webhook wiring added, with the manager's own certificate when
/// `self_managed` (else cert-manager's); the same text when it has it.
pub fn with_webhook_wiring(kustomization: &str, self_managed: bool) -> anyhow::Result<String> {
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
    // A `patches:` list of the user's gets the entry; else the block adds one.
    let patches = out.iter().position(|line| line.trim_end() == "patches:");
    if self_managed && patches.is_none() && out.iter().any(|line| line.starts_with("patches:")) {
        bail!(
            "config/default/kustomization.yaml has a `patches:` key that is not a list opgen can add to\n\nWrite it as a block list (`patches:` on a line of its own), or add `- ../webhook` to its resources and `- path: manager_webhook_patch.yaml` to its patches yourself, and run the command again"
        );
    }
    if let (true, Some(patches)) = (self_managed, patches) {
        out.insert(patches + 1, SELF_MANAGED_PATCH);
    }
    let mut text = out.join("\n");
    text.push('\n');
    match (self_managed, patches) {
        (true, None) => {
            text.push_str(SELF_MANAGED);
            text.push_str(CERT_MANAGER);
        }
        (true, Some(_)) => text.push_str(CERT_MANAGER),
        (false, _) => text.push_str(CERT_MANAGER_SELECTED),
    }
    Ok(text)
}

/// The lines that refer to the webhooks' kustomize files, wherever they are.
const WEBHOOK_LINES: [&str; 3] = ["- ../webhook", SELF_MANAGED_PATCH, "- ../certmanager"];

/// `kustomization` without the webhook wiring [`with_webhook_wiring`] adds: its blocks when
/// they are as opgen wrote them, and otherwise every line that refers to the webhooks' files
/// (commented or not), with a `patches:` or `components:` key left without entries.
pub fn without_webhook_wiring(kustomization: &str) -> String {
    let mut text = kustomization.to_owned();
    for block in [SELF_MANAGED, CERT_MANAGER, CERT_MANAGER_SELECTED] {
        text = text.replacen(block, "\n", 1);
    }
    text = text.replacen(&format!("\n{WEBHOOK}\n"), "\n", 1);
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| {
            let entry = line.trim_start_matches('#').trim();
            !WEBHOOK_LINES.contains(&entry)
        })
        .collect();
    let mut kept: Vec<&str> = Vec::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        let key = line.trim_start_matches('#').trim_end();
        let has_entries = lines
            .get(index + 1)
            .is_some_and(|next| next.trim_start_matches('#').starts_with('-'));
        if matches!(key, "patches:" | "components:") && !has_entries {
            continue;
        }
        kept.push(line);
    }
    while kept.last().is_some_and(|line| line.trim().is_empty()) {
        kept.pop();
    }
    let mut text = kept.join("\n");
    text.push('\n');
    text
}

/// The network policies' `kustomization` without the webhook policy.
pub fn without_webhook_policy(kustomization: &str) -> String {
    kustomization
        .split_inclusive('\n')
        .filter(|line| line.trim_start_matches('#').trim() != "- allow-webhook-traffic.yaml")
        .collect()
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
        let after = with_webhook_wiring(before, true).unwrap();
        assert!(
            after.starts_with("resources:\n- ../crd\n- ../manager\n# [WEBHOOK] The webhook configurations and the Service of the manager's webhook server.\n- ../webhook\n#- ../prometheus\n"),
            "{after}"
        );
        assert!(
            after.contains("\npatches:\n- path: manager_webhook_patch.yaml\n"),
            "{after}"
        );
        assert!(
            after.ends_with("#components:\n#- ../certmanager\n"),
            "{after}"
        );
        assert_eq!(with_webhook_wiring(&after, true).unwrap(), after);
        // A user who commented the webhooks out keeps them out.
        let commented = "resources:\n- ../manager\n#- ../webhook\n";
        assert_eq!(with_webhook_wiring(commented, true).unwrap(), commented);
    }

    #[test]
    fn a_patch_list_of_the_users_gets_the_certificate_patch() {
        let before = "resources:\n- ../manager\npatches:\n- path: mine.yaml\n";
        let after = with_webhook_wiring(before, true).unwrap();
        assert!(
            after.contains("patches:\n- path: manager_webhook_patch.yaml\n- path: mine.yaml\n"),
            "{after}"
        );
        assert_eq!(after.matches("patches:").count(), 1, "{after}");
        let err = with_webhook_wiring("resources:\n- ../manager\npatches: []\n", true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`- path: manager_webhook_patch.yaml`"),
            "{err}"
        );
    }

    #[test]
    fn a_namespaced_project_selects_cert_manager() {
        let after = with_webhook_wiring("resources:\n- ../manager\n", false).unwrap();
        assert!(
            after.ends_with("\ncomponents:\n- ../certmanager\n"),
            "{after}"
        );
        assert!(!after.contains("manager_webhook_patch"), "{after}");
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
    fn the_wiring_comes_out_as_it_went_in() {
        let template = "namespace: demo-system\n\nresources:\n- ../crd\n- ../manager\n# [NETWORK POLICY] Admits only what the manager serves.\n- ../network-policy\n";
        let users = "resources:\n- ../manager\npatches:\n- path: mine.yaml\n";
        for before in [template, users] {
            for self_managed in [true, false] {
                let wired = with_webhook_wiring(before, self_managed).unwrap();
                assert_eq!(without_webhook_wiring(&wired), before, "{wired}");
            }
        }
        // A user's own arrangement of the lines: what refers to the webhooks goes, and the
        // keys that held only that.
        let rearranged = "resources:\n- ../manager\n- ../webhook\n\ncomponents:\n- ../certmanager\npatches:\n- path: manager_webhook_patch.yaml\n- path: mine.yaml\n";
        assert_eq!(
            without_webhook_wiring(rearranged),
            "resources:\n- ../manager\n\npatches:\n- path: mine.yaml\n"
        );
        let policies = with_webhook_policy("resources:\n- allow-manager-traffic.yaml\n");
        assert_eq!(
            without_webhook_policy(&policies),
            "resources:\n- allow-manager-traffic.yaml\n"
        );
    }

    #[test]
    fn without_the_manager_it_says_what_to_add() {
        let err = with_webhook_wiring("resources:\n- ../crd\n", true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Add `- ../webhook`"), "{err}");
    }
}
