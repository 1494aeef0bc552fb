use super::*;
use crate::test_kinds::{self, Gadget, Widget};
use crate::testing;

fn context(watch_namespace: Option<&str>) -> Context {
    let (mut ctx, _server) = testing::context();
    ctx.watch_namespace = watch_namespace.map(str::to_owned);
    ctx
}

#[tokio::test]
async fn namespaced_kinds_are_watched_in_the_watch_namespace_or_everywhere() {
    let everywhere = context(None).watched::<Widget>();
    assert_eq!(everywhere.resource_url(), "/apis/example.com/v1/widgets");
    let one = context(Some("team-a")).watched::<Widget>();
    assert_eq!(
        one.resource_url(),
        "/apis/example.com/v1/namespaces/team-a/widgets"
    );
}

#[tokio::test]
async fn cluster_scoped_kinds_are_watched_cluster_wide() {
    let api = context(Some("team-a")).watched::<Gadget>();
    assert_eq!(api.resource_url(), "/apis/example.com/v1/gadgets");
}

#[tokio::test]
async fn objects_are_written_in_their_own_namespace() {
    let ctx = context(None);
    let api = ctx
        .api_of(&test_kinds::widget())
        .expect("a namespaced widget");
    assert_eq!(
        api.resource_url(),
        "/apis/example.com/v1/namespaces/team-a/widgets"
    );
    let api = ctx.api_of(&test_kinds::gadget()).expect("a gadget");
    assert_eq!(api.resource_url(), "/apis/example.com/v1/gadgets");

    let mut homeless = test_kinds::widget();
    homeless.metadata.namespace = None;
    let error = ctx.api_of(&homeless).expect_err("no namespace");
    assert_eq!(error.reason(), "invalid_object");
    assert_eq!(error.to_string(), "object has no namespace");
}
