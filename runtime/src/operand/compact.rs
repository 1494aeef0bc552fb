//! Cached workloads keep their pod template as JSON text.
//!
//! A workload's pod template is most of its size in memory: k8s-openapi's types are trees of
//! optional fields, so a small Deployment takes about 14 KiB, half of it the template, which
//! is under 2 KiB as JSON. Only a reconcile that compares a desired workload with its copy reads
//! the template, so the copy keeps it packed in an annotation, and [`unpacked`] restores it for
//! that reconcile. What else reads the copies (replicas, status) is left as it is.

use ::std::collections::BTreeMap;

use ::k8s_openapi::api::core::v1::PodTemplateSpec;
use ::kube::ResourceExt as _;

use crate::workload::Workload;

/// The annotation of a cached copy that holds its pod template as JSON. It exists only in
/// this manager's memory, never on the API server.
pub const PACKED_TEMPLATE_ANNOTATION: &str = "opgen.io/packed-pod-template";

/// `workload`, as its watch delivered it, with its pod template packed into
/// [`PACKED_TEMPLATE_ANNOTATION`].
pub fn packed<W: Workload>(workload: &mut W) {
    let Some(template) = workload.template_mut() else {
        return;
    };
    let text = serde_json::to_string(template).expect("a pod template serializes to JSON");
    *template = PodTemplateSpec::default();
    workload
        .annotations_mut()
        .insert(PACKED_TEMPLATE_ANNOTATION.to_owned(), text);
}

/// A cached copy as the API server stores it: its pod template unpacked (see [`packed`]).
pub fn unpacked<W: Workload>(mut workload: W) -> W {
    let annotations = &mut workload.meta_mut().annotations;
    let Some(text) = annotations
        .as_mut()
        .and_then(|annotations| annotations.remove(PACKED_TEMPLATE_ANNOTATION))
    else {
        return workload;
    };
    if annotations.as_ref().is_some_and(BTreeMap::is_empty) {
        // The API server sends no map rather than an empty one.
        *annotations = None;
    }
    if let Some(template) = workload.template_mut() {
        *template = serde_json::from_str(&text).expect("a packed pod template is JSON of one");
    }
    workload
}

#[cfg(test)]
mod tests {
    use ::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
    use ::k8s_openapi::api::core::v1::Container;

    use super::*;
    use crate::apply::{AppLabels, owned_by};
    use crate::test_kinds;
    use crate::workload::RestrictedPods;

    fn workload<W: Workload>(spec: impl FnOnce(PodTemplateSpec) -> W::Spec) -> W {
        let owner = test_kinds::widget();
        let labels = AppLabels::new("app", "server", &owner);
        let container = Container {
            name: "app".to_owned(),
            image: Some("example.com/app:1".to_owned()),
            ..Container::default()
        };
        let template = RestrictedPods::new(labels.all(), container)
            .scratch_dirs(&[("tmp", "/tmp")])
            .template();
        W::with_spec(owned_by(&owner, labels.all()), spec(template))
    }

    fn deployment() -> Deployment {
        workload(|template| ::k8s_openapi::api::apps::v1::DeploymentSpec {
            template,
            ..Default::default()
        })
    }

    #[test]
    fn a_packed_workload_has_no_pod_template_until_it_is_unpacked() {
        let stored = deployment();
        let mut copy = stored.clone();
        packed(&mut copy);
        assert_eq!(copy.pod_spec(), None);
        assert!(copy.annotations().contains_key(PACKED_TEMPLATE_ANNOTATION));
        assert_eq!(copy.replicas(), stored.replicas(), "the replicas stay");
        assert_eq!(copy.selector(), stored.selector(), "the selector stays");
        assert_eq!(unpacked(copy), stored);
    }

    #[test]
    fn statefulsets_are_packed_too_and_annotations_survive() {
        let mut stored: StatefulSet =
            workload(|template| ::k8s_openapi::api::apps::v1::StatefulSetSpec {
                template,
                ..Default::default()
            });
        stored
            .annotations_mut()
            .insert("example.com/kept".to_owned(), "yes".to_owned());
        let mut copy = stored.clone();
        packed(&mut copy);
        assert_eq!(copy.pod_spec(), None);
        assert_eq!(unpacked(copy), stored);
    }

    #[test]
    fn a_copy_never_packed_is_unpacked_as_it_is() {
        let stored = deployment();
        assert_eq!(unpacked(stored.clone()), stored);
    }
}
