use ::k8s_openapi::api::apps::v1::Deployment;
use ::kube::ResourceExt as _;
use ::kube::runtime::reflector::store;

use super::*;
use crate::client::fingerprint::{FINGERPRINT_ANNOTATION, fingerprinted};
use crate::operand::fixtures::{IMAGE, deployment, stored_deployment as stored};

fn copy_of(workload: &Deployment) -> WorkloadCopy<Deployment> {
    WorkloadCopy::of(workload)
}

#[test]
fn a_copy_is_unproven_until_the_manager_holds_its_generation_whole() {
    let cache = WorkloadCache::new(store().0);
    let desired = fingerprinted(&deployment(3, IMAGE));
    let copy = copy_of(&stored(2));
    assert_eq!(cache.judge(&copy, &desired), Judgment::Unproven);
    cache.prove(&stored(2));
    assert_eq!(cache.judge(&copy, &desired), Judgment::UpToDate);
    assert_eq!(
        cache.judge(&copy_of(&stored(1)), &desired),
        Judgment::UpToDate,
        "a copy behind the proof"
    );
    assert_eq!(
        cache.judge(&copy_of(&stored(3)), &desired),
        Judgment::Changed,
        "someone changed the spec since"
    );
}

#[test]
fn a_changed_desired_workload_or_metadata_needs_an_apply() {
    let cache = WorkloadCache::new(store().0);
    cache.prove(&stored(2));
    let scaled = fingerprinted(&deployment(4, IMAGE));
    assert_eq!(
        cache.judge(&copy_of(&stored(2)), &scaled),
        Judgment::Changed
    );
    let desired = fingerprinted(&deployment(3, IMAGE));
    let edited = |edit: fn(&mut Deployment)| {
        let mut workload = stored(2);
        edit(&mut workload);
        cache.judge(&copy_of(&workload), &desired)
    };
    assert_eq!(edited(|_| ()), Judgment::UpToDate);
    assert_eq!(
        edited(|w| w.labels_mut().clear()),
        Judgment::Changed,
        "labels removed"
    );
    assert_eq!(
        edited(|w| {
            let value = w.labels_mut().values_mut().next().expect("a label");
            value.push_str("-edited");
        }),
        Judgment::Changed,
        "a label's value changed"
    );
    assert_eq!(
        edited(|w| drop(w.annotations_mut().remove(FINGERPRINT_ANNOTATION))),
        Judgment::Changed,
        "no fingerprint"
    );
    assert_eq!(
        edited(|w| w.metadata.owner_references = None),
        Judgment::Changed,
        "no owner"
    );
    assert_eq!(
        edited(|w| {
            w.labels_mut()
                .insert("someone.example/else".to_owned(), "x".to_owned());
            w.annotations_mut().insert(
                "deployment.kubernetes.io/revision".to_owned(),
                "2".to_owned(),
            );
        }),
        Judgment::UpToDate,
        "what others add is not the manager's to remove"
    );
}

#[test]
fn a_recreated_workload_is_unproven() {
    let cache = WorkloadCache::new(store().0);
    cache.prove(&stored(5));
    let mut recreated = stored(1);
    recreated.metadata.uid = Some("5e0c-2".to_owned());
    let desired = fingerprinted(&deployment(3, IMAGE));
    assert_eq!(
        cache.judge(&copy_of(&recreated), &desired),
        Judgment::Unproven
    );
}

#[test]
fn proofs_of_workloads_gone_are_dropped() {
    let cache = WorkloadCache::new(store().0);
    for index in 0..=STALE_PROOFS {
        let mut workload = stored(1);
        workload.metadata.name = Some(format!("gone-{index}"));
        cache.prove(&workload);
    }
    assert!(
        cache.lock().len() <= 1,
        "the store holds none of them: {} kept",
        cache.lock().len()
    );
}

mod on_control_plane;
