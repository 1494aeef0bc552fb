//! The one webhook file per version that opgen 0.2.0 and earlier scaffolded, with both
//! admission webhooks of the version in it ([`Resource::combined_webhook_file`]). opgen keeps
//! serving it; when one of its webhooks moves to a file of its own (`create webhook --force`)
//! or is deleted, the file loses that webhook's `+opgen:webhook` marker, so that `generate
//! manifests` no longer configures it there. Its code stays: it is the user's.

use crate::{
    model::{AdmissionWebhook, Domain, Resource},
    plan::{Owner, PlannedFile},
};

/// `text`, the combined file of `resource`, without the markers of `webhooks`; `None` when it
/// has none of them.
pub fn without_markers(
    text: &str,
    resource: &Resource,
    domain: &Domain,
    webhooks: &[AdmissionWebhook],
) -> Option<PlannedFile> {
    let paths: Vec<String> = webhooks
        .iter()
        .map(|webhook| format!("path={},", resource.admission_path(webhook.verb(), domain)))
        .collect();
    let is_removed = |line: &str| {
        line.trim_start().starts_with("// +opgen:webhook:")
            && paths.iter().any(|path| line.contains(path.as_str()))
    };
    if !text.lines().any(is_removed) {
        return None;
    }
    let kept: String = text
        .split_inclusive('\n')
        .filter(|line| !is_removed(line))
        .collect();
    Some(PlannedFile::new(
        resource.combined_webhook_file(),
        kept,
        Owner::Amended,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_only_the_markers_of_the_webhooks_named() {
        let resource = Resource::for_test("db", "v1", "Thing");
        let domain: Domain = "example.com".parse().unwrap();
        let text = "//! Webhooks of Thing.\n\n// +opgen:webhook:path=/mutate-db-example-com-v1-thing,mutating=true\n// +opgen:webhook:path=/validate-db-example-com-v1-thing,mutating=false\n\nimpl Admission for Webhook {}\n";
        let file = without_markers(text, &resource, &domain, &[AdmissionWebhook::Validation])
            .expect("the file has the marker");
        assert_eq!(file.path, "src/webhooks/db/thing_v1.rs");
        assert_eq!(
            file.contents,
            "//! Webhooks of Thing.\n\n// +opgen:webhook:path=/mutate-db-example-com-v1-thing,mutating=true\n\nimpl Admission for Webhook {}\n"
        );
        assert!(
            without_markers(
                &file.contents,
                &resource,
                &domain,
                &[AdmissionWebhook::Validation]
            )
            .is_none()
        );
    }
}
