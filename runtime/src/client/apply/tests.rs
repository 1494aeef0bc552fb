use ::std::collections::BTreeMap;

use ::k8s_openapi::api::core::v1::ConfigMap;

use crate::object::{AppLabels, owned_by};
use crate::{test_kinds, testing};

fn config_map(owner: &test_kinds::Widget) -> ConfigMap {
    let labels = AppLabels::new("widget", "settings", owner);
    ConfigMap {
        metadata: owned_by(owner, labels.all()),
        data: Some(BTreeMap::from([("size".to_owned(), "3".to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn objects_are_applied_server_side_by_the_field_manager() {
    let (ctx, mut server) = testing::context();
    let desired = config_map(&test_kinds::widget());

    let stored = server
        .run(ctx.apply(&desired), async |server| {
            let request = server.expect_applied(&desired).await;
            request.reply(::http::StatusCode::OK, &desired);
        })
        .await
        .expect("the object is applied");
    assert_eq!(stored, desired);
}

#[tokio::test]
async fn an_object_without_its_namespace_is_not_applied() {
    let (ctx, mut server) = testing::context();
    let mut desired = config_map(&test_kinds::widget());
    desired.metadata.namespace = None;

    let error = server
        .run(ctx.apply(&desired), async |_| {})
        .await
        .expect_err("no namespace");
    assert_eq!(error.reason(), "invalid_object");
}

#[tokio::test]
async fn a_missing_object_reads_as_none() {
    let (ctx, mut server) = testing::context();
    let desired = config_map(&test_kinds::widget());

    let stored = server
        .run(ctx.get_stored(&desired), async |server| {
            server.expect_get(&desired, None).await;
        })
        .await
        .expect("a missing object is no error");
    assert_eq!(stored, None);
}
