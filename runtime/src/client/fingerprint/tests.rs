use ::k8s_openapi::api::core::v1::ConfigMap;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ::serde_json::json;

use super::*;

fn config_map(data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some("test".to_owned()),
            namespace: Some("team-a".to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

/// `desired` as the API server stores it: with what the server and others add.
fn stored(desired: &ConfigMap) -> ConfigMap {
    let mut stored = desired.clone();
    stored.metadata.uid = Some("0b4e".to_owned());
    stored.metadata.resource_version = Some("7".to_owned());
    stored
        .annotations_mut()
        .insert("someone.example/else".to_owned(), "x".to_owned());
    stored
}

#[test]
fn an_applied_object_is_up_to_date_until_someone_or_the_desired_object_changes() {
    let desired = fingerprinted(&config_map(&[("size", "3")]));
    let observed = stored(&desired);
    assert!(is_up_to_date(&observed, &desired));

    let mut edited = observed.clone();
    edited.data = Some([("size".to_owned(), "4".to_owned())].into());
    assert!(!is_up_to_date(&edited, &desired), "someone changed a field");

    let fewer = fingerprinted(&config_map(&[]));
    assert!(
        !is_up_to_date(&stored(&desired), &fewer),
        "a field the desired object no longer sets is to be removed"
    );

    let unapplied = stored(&config_map(&[("size", "3")]));
    assert!(
        !is_up_to_date(&unapplied, &desired),
        "applied by someone else"
    );
}

#[test]
fn fingerprints_depend_on_the_object_only() {
    let desired = fingerprinted(&config_map(&[("size", "3")]));
    let annotation = |obj: &ConfigMap| obj.annotations()[FINGERPRINT_ANNOTATION].clone();
    assert_eq!(annotation(&fingerprinted(&desired)), annotation(&desired));
    assert_ne!(
        annotation(&fingerprinted(&config_map(&[("size", "4")]))),
        annotation(&desired)
    );
    assert_eq!(annotation(&desired).len(), 16);
}

#[test]
fn unset_fields_match_missing_ones_and_lists_match_item_by_item() {
    let observed = json!({"a": 1, "list": [{"x": 1, "default": true}], "extra": "e"});
    assert!(contains(&observed, &json!({"a": 1, "b": null})));
    assert!(contains(&observed, &json!({"list": [{"x": 1}]})));
    assert!(!contains(&observed, &json!({"list": [{"x": 2}]})));
    assert!(!contains(&observed, &json!({"list": [{"x": 1}, {"x": 1}]})));
    assert!(!contains(&observed, &json!({"b": 1})));
    assert!(!contains(&observed, &json!({"a": "1"})));
    // The API server stores no empty list: `volumes: []` is what it returns as no field.
    assert!(contains(&observed, &json!({"volumes": []})));
    assert!(!contains(&observed, &json!({"volumes": [{"name": "tmp"}]})));
    assert!(
        !contains(&observed, &json!({"b": {"emptyDir": {}}})),
        "an empty map is a value"
    );
}

#[test]
fn a_status_is_the_same_when_it_has_the_same_fields() {
    let observed = json!({"observedGeneration": 3, "conditions": [{"type": "A"}]});
    let unset = json!({"observedGeneration": 3, "conditions": [{"type": "A"}], "x": null});
    assert!(is_same_status(&observed, &unset));
    assert!(!is_same_status(
        &observed,
        &json!({"observedGeneration": 3})
    ));
    assert!(!is_same_status(
        &json!({"observedGeneration": 3}),
        &observed
    ));
    assert!(!is_same_status(&Value::Null, &json!({})));
}

#[test]
fn entry_hashes_tell_whether_a_map_holds_every_desired_entry() {
    let map = |entries: &[(&str, &str)]| -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    };
    let held = EntryHashes::of(Some(&map(&[("app", "widget"), ("tier", "web")])));
    assert!(held.contain_all(Some(&map(&[("tier", "web")]))));
    assert!(held.contain_all(Some(&map(&[("app", "widget"), ("tier", "web")]))));
    assert!(held.contain_all(None), "nothing desired");
    assert!(
        !held.contain_all(Some(&map(&[("tier", "db")]))),
        "another value"
    );
    assert!(
        !held.contain_all(Some(&map(&[("zone", "web")]))),
        "another key"
    );
    assert!(
        !held.contain_all(Some(&map(&[("app", "widget"), ("owner", "me")]))),
        "one entry missing"
    );
    let split_elsewhere = EntryHashes::of(Some(&map(&[("ap", "pwidget")])));
    assert!(
        !split_elsewhere.contain_all(Some(&map(&[("app", "widget")]))),
        "the same bytes split elsewhere"
    );
    assert!(!EntryHashes::of(None).contain_all(Some(&map(&[("app", "widget")]))));
}
