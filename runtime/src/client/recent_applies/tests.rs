use ::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::client::fingerprint::{FINGERPRINT_ANNOTATION, fingerprinted};

fn config_map(name: &str, size: &str) -> ConfigMap {
    fingerprinted(&ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        data: Some([("size".to_owned(), size.to_owned())].into()),
        ..ConfigMap::default()
    })
}

#[test]
fn an_apply_is_awaited_until_it_is_seen() {
    let recent = RecentApplies::default();
    let applied = config_map("db", "3");
    assert!(!recent.awaits(&applied));
    recent.record(&applied);
    assert!(recent.awaits(&applied));
    recent.seen(&applied);
    assert!(!recent.awaits(&applied));
    assert!(recent.lock().applied.is_empty());
}

#[test]
fn another_desired_object_is_not_the_apply_awaited() {
    let recent = RecentApplies::default();
    recent.record(&config_map("db", "3"));
    assert!(
        !recent.awaits(&config_map("db", "5")),
        "another fingerprint: the object changed since"
    );
    assert!(!recent.awaits(&config_map("web", "3")), "another object");
    let secret = fingerprinted(&Secret {
        metadata: config_map("db", "3").metadata,
        ..Secret::default()
    });
    assert!(!recent.awaits(&secret), "another kind of the same name");
}

#[test]
fn an_object_without_a_fingerprint_is_not_remembered() {
    let recent = RecentApplies::default();
    let mut applied = config_map("db", "3");
    applied.annotations_mut().clear();
    recent.record(&applied);
    assert!(recent.lock().applied.is_empty());
}

#[test]
fn old_applies_are_dropped_when_another_is_recorded_at_most_every_few_seconds() {
    let recent = RecentApplies::default();
    let old = config_map("old", "1");
    let long_ago = Instant::now()
        .checked_sub(REMEMBERED_FOR)
        .expect("the clock reaches back that far");
    let fingerprint = old.annotations()[FINGERPRINT_ANNOTATION].clone();
    recent
        .lock()
        .applied
        .insert(key(&old), (fingerprint.clone(), long_ago));
    assert!(!recent.awaits(&old), "too old to be awaited");
    recent.record(&config_map("new", "1"));
    assert_eq!(recent.lock().applied.len(), 1, "only the new apply is left");

    // Pruned a moment ago: the next apply leaves the old entry for a later one.
    recent
        .lock()
        .applied
        .insert(key(&old), (fingerprint, long_ago));
    recent.record(&config_map("newer", "1"));
    assert_eq!(recent.lock().applied.len(), 3, "not walked again so soon");
    let pruned = recent.lock().pruned.expect("pruned once");
    recent.lock().pruned = pruned.checked_sub(PRUNED_EVERY);
    recent.record(&config_map("newest", "1"));
    assert_eq!(recent.lock().applied.len(), 3, "the old entry is gone");
}
