use ::k8s_openapi::api::core::v1::ConfigMap;

use super::*;
use crate::{test_kinds, testing};

fn config_map(owner: &test_kinds::Widget) -> ConfigMap {
    let labels = AppLabels::new("widget", "settings", owner);
    ConfigMap {
        metadata: owned_by(owner, labels.all()),
        data: Some(BTreeMap::from([("size".to_owned(), "3".to_owned())])),
        ..ConfigMap::default()
    }
}

#[test]
fn made_objects_are_named_after_and_owned_by_their_owner() {
    let widget = test_kinds::widget();
    let metadata = config_map(&widget).metadata;
    assert_eq!(metadata.name.as_deref(), Some(testing::NAME));
    assert_eq!(metadata.namespace.as_deref(), Some(testing::NAMESPACE));
    let owners = metadata.owner_references.expect("owner references");
    assert_eq!(owners.len(), 1);
    let owner = &owners[0];
    assert_eq!(owner.api_version, "example.com/v1");
    assert_eq!(owner.kind, "Widget");
    assert_eq!(owner.name, testing::NAME);
    assert_eq!(owner.uid, testing::UID);
    assert_eq!(owner.controller, Some(true));
}

#[test]
fn made_objects_carry_the_recommended_labels() {
    let labels = AppLabels::new("widget", "settings", &test_kinds::widget());
    let selector = BTreeMap::from([
        ("app.kubernetes.io/instance".to_owned(), "test".to_owned()),
        ("app.kubernetes.io/name".to_owned(), "widget".to_owned()),
    ]);
    assert_eq!(labels.selector(), selector);
    assert_eq!(labels.label_selector().match_labels, Some(selector));
    assert_eq!(labels.label_selector().match_expressions, None);
    assert_eq!(
        labels.selector_string(),
        "app.kubernetes.io/instance=test,app.kubernetes.io/name=widget"
    );
    assert_eq!(
        labels.all(),
        BTreeMap::from([
            (
                "app.kubernetes.io/component".to_owned(),
                "settings".to_owned()
            ),
            ("app.kubernetes.io/instance".to_owned(), "test".to_owned()),
            (
                "app.kubernetes.io/managed-by".to_owned(),
                field_manager().to_owned()
            ),
            ("app.kubernetes.io/name".to_owned(), "widget".to_owned()),
        ])
    );
}

#[test]
fn only_what_the_manager_made_for_the_app_is_watched() {
    let config = made_for("widget");
    assert_eq!(
        config.label_selector.as_deref(),
        Some(
            format!(
                "app.kubernetes.io/managed-by={},app.kubernetes.io/name=widget",
                field_manager()
            )
            .as_str()
        )
    );
}
