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

/// kube's watches list 500 objects a page; the runtime's, 100, and a page size a caller chose
/// stays.
#[test]
fn watches_list_small_pages_unless_told_otherwise() {
    assert_eq!(
        in_small_pages(watcher::Config::default()).page_size,
        Some(LIST_PAGE_SIZE)
    );
    assert_eq!(
        in_small_pages(watcher::Config::default().page_size(7)).page_size,
        Some(7)
    );
}

/// The list a cached watch sends asks for a small page.
#[tokio::test]
async fn a_cached_watch_lists_a_small_page() {
    let (ctx, mut server) = testing::context();
    let (_store, writer) = ::kube::runtime::reflector::store::<ConfigMap>();
    let mut watch = cached_watch(
        ctx.watched::<ConfigMap>(),
        watcher::Config::default(),
        writer,
    );
    let watching = ::tokio::spawn(async move { while watch.next().await.is_some() {} });
    let list = server.next().await;
    watching.abort();
    assert_eq!(list.path, "/api/v1/configmaps");
    assert!(
        list.has_query("limit", &LIST_PAGE_SIZE.to_string()),
        "{:?}",
        list.query
    );
}
