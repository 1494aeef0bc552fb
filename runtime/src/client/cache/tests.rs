use ::k8s_openapi::api::core::v1::ConfigMap;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use ::kube::ResourceExt as _;

use super::*;
use crate::testing;

#[test]
fn cached_objects_lose_what_no_controller_reads() {
    let mut obj: ConfigMap = testing::new_object();
    obj.data = Some([("size".to_owned(), "3".to_owned())].into());
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
