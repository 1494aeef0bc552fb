use ::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use ::k8s_openapi::api::core::v1::Container;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use ::serde_json::{Value, json};

use super::*;
use crate::operand::Change;
use crate::operand::changes::changes;
use crate::operand::fixtures::{IMAGE, deployment, rolling_statefulset, stored_deployment};
use crate::operand::progress::failure;

/// The keys of `workload`'s spec, of its pod template, and of its pod template's spec.
fn spec_keys<W: Workload>(workload: &W) -> [Vec<String>; 3] {
    let json = serde_json::to_value(workload).expect("a workload serializes");
    let keys = |value: &Value| {
        value
            .as_object()
            .map(|fields| fields.keys().cloned().collect())
            .unwrap_or_default()
    };
    [
        keys(&json["spec"]),
        keys(&json["spec"]["template"]),
        keys(&json["spec"]["template"]["spec"]),
    ]
}

#[test]
fn a_restored_deployment_keeps_what_the_status_and_the_events_read() {
    let stored = stored_deployment(2);
    let copy = WorkloadCopy::of(&stored);
    let restored = copy.restored();
    assert_eq!(copy.progress(), stored.progress());
    assert_eq!(restored.progress(), stored.progress());
    assert_eq!(failure(&restored), failure(&stored));
    assert!(
        failure(&restored).is_some(),
        "the fixture reports a failure"
    );
    assert_eq!(copy.replicas(), stored.replicas());
    assert_eq!(restored.replicas(), stored.replicas());
    assert_eq!(restored.selector(), stored.selector());
    let without_maps = ObjectMeta {
        labels: None,
        annotations: None,
        ..stored.metadata.clone()
    };
    assert_eq!(
        restored.metadata, without_maps,
        "labels and annotations kept as hashes"
    );
    assert!(copy.has_metadata_of(&stored.metadata));
    assert_eq!(restored.status, stored.status);
    let desired = deployment(1, "example.com/app:2");
    assert_eq!(
        changes(Some(&restored), &desired, "app"),
        vec![
            Change::Scaled { from: 3, to: 1 },
            Change::Upgraded {
                from: IMAGE.to_owned(),
                to: "example.com/app:2".to_owned()
            }
        ]
    );
}

#[test]
fn a_restored_statefulset_keeps_what_the_status_reads() {
    let stored = rolling_statefulset();
    let restored = WorkloadCopy::of(&stored).restored();
    assert_eq!(restored.progress(), stored.progress());
    assert!(restored.progress().rolling, "the fixture is rolling out");
    assert_eq!(restored.replicas(), stored.replicas());
    assert_eq!(restored.selector(), stored.selector());
    assert_eq!(restored.status, stored.status);
}

#[test]
fn a_copy_keeps_nothing_else_of_the_spec() {
    let expected = [
        vec![
            "replicas".to_owned(),
            "selector".to_owned(),
            "template".to_owned(),
        ],
        vec!["spec".to_owned()],
        vec!["containers".to_owned()],
    ];
    let deployment = WorkloadCopy::of(&stored_deployment(2)).restored();
    assert_eq!(spec_keys(&deployment), expected);
    let statefulset = WorkloadCopy::of(&rolling_statefulset()).restored();
    assert_eq!(spec_keys(&statefulset), expected, "no claim template");
    let containers = &statefulset.pod_spec().expect("a pod spec").containers;
    assert_eq!(
        containers,
        &[Container {
            name: "app".to_owned(),
            image: Some(IMAGE.to_owned()),
            ..Container::default()
        }],
        "no args"
    );
}

#[test]
fn a_copy_read_from_a_watch_is_the_copy_of_the_workload() {
    let mut stored = stored_deployment(2);
    stored.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("opgen-runtime".to_owned()),
        operation: Some("Apply".to_owned()),
        fields_v1: Some(FieldsV1(json!({"f:spec": {"f:replicas": {}}}))),
        ..ManagedFieldsEntry::default()
    }]);
    stored.metadata.resource_version = Some("42".to_owned());
    stored.metadata.finalizers = Some(vec!["example.com/keep".to_owned()]);
    let json = serde_json::to_value(&stored).expect("a workload serializes");
    let read: WorkloadCopy<Deployment> = serde_json::from_value(json).expect("a copy");
    assert_eq!(read, WorkloadCopy::of(&stored));
    assert_eq!(read.meta().managed_fields, None, "skipped as it is read");
    assert_eq!(read.meta().resource_version.as_deref(), Some("42"));
    assert_eq!(read.meta().finalizers, stored.metadata.finalizers);
    assert!(read.has_metadata_of(&stored.metadata));
    let stored = rolling_statefulset();
    let json = serde_json::to_value(&stored).expect("a workload serializes");
    let read: WorkloadCopy<StatefulSet> = serde_json::from_value(json).expect("a copy");
    assert_eq!(read, WorkloadCopy::of(&stored));
}

#[test]
fn a_workload_without_replicas_or_status_is_read_as_the_api_server_defaults_it() {
    let read: WorkloadCopy<Deployment> = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {"selector": {}, "template": {}},
    }))
    .expect("a copy");
    assert_eq!(read.replicas(), 1);
    let unknown = Progress {
        workload: "Deployment",
        ..Progress::default()
    };
    assert_eq!(read.progress(), unknown, "nothing reported yet");
}

#[test]
fn a_copy_is_named_as_its_workload_in_the_api() {
    assert_eq!(
        WorkloadCopy::<Deployment>::url_path(&(), Some("ns")),
        Deployment::url_path(&(), Some("ns"))
    );
    assert_eq!(
        WorkloadCopy::<StatefulSet>::api_version(&()),
        StatefulSet::api_version(&())
    );
    let stored = stored_deployment(2);
    assert_eq!(
        serde_json::to_value(WorkloadCopy::of(&stored)).expect("a copy serializes"),
        serde_json::to_value(WorkloadCopy::of(&stored).restored()).expect("a workload serializes"),
    );
}

#[test]
fn a_selector_is_restored_as_it_was() {
    let expression = LabelSelectorRequirement {
        key: "tier".to_owned(),
        operator: "In".to_owned(),
        values: Some(vec!["web".to_owned()]),
    };
    let selectors = [
        LabelSelector::default(),
        LabelSelector {
            match_labels: Some(Default::default()),
            match_expressions: Some(Vec::new()),
        },
        LabelSelector {
            match_labels: Some([("app".to_owned(), "widget".to_owned())].into()),
            match_expressions: Some(vec![expression]),
        },
    ];
    for selector in selectors {
        assert_eq!(Selector::of(selector.clone()).restored(), selector);
    }
}

#[test]
fn managed_fields_are_skipped_unparsed() {
    let mut json = serde_json::to_value(stored_deployment(2)).expect("a workload serializes");
    // Not the shape of managed fields: a copy that parsed them would fail here.
    json["metadata"]["managedFields"] = json!("skipped, not read");
    let read: WorkloadCopy<Deployment> = serde_json::from_value(json).expect("a copy");
    assert_eq!(read, WorkloadCopy::of(&stored_deployment(2)));
}
