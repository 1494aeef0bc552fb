use ::k8s_openapi::api::core::v1::ConfigMap;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};

use ::kube::ResourceExt as _;

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

#[test]
fn cached_objects_lose_what_no_controller_reads() {
    let mut obj = config_map(&[("size", "3")]);
    obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
    obj.annotations_mut()
        .insert(LAST_APPLIED_ANNOTATION.to_owned(), "{}".to_owned());
    obj.annotations_mut()
        .insert("kept.example/a".to_owned(), "b".to_owned());
    trimmed(&mut obj);
    assert_eq!(obj.metadata.managed_fields, None);
    assert_eq!(
        obj.annotations().keys().collect::<Vec<_>>(),
        ["kept.example/a"]
    );
}
