use ::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use ::k8s_openapi::api::core::v1::Container;

use super::*;
use crate::object::{AppLabels, owned_by};
use crate::operand::RestrictedPods;
use crate::test_kinds;

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
