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

use super::workload::Workload;

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
mod tests;
