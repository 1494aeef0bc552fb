use ::k8s_openapi::api::core::v1::ConfigMap;
use ::serde_json::json;

use super::*;
use crate::webhook::tests::response;

fn conversion_review(objects: Value) -> Vec<u8> {
    ::serde_json::to_vec(&json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c0ffee00-1d1b-4bd7-9a1c-0d1f4f1c0c01", "desiredAPIVersion": "db.example.com/v2", "objects": objects}
    }))
    .unwrap()
}

fn relabel(mut object: Value, desired: &str) -> Result<Value, String> {
    if object["spec"]["broken"] == true {
        return Err("spec.broken cannot be converted".to_owned());
    }
    object["apiVersion"] = json!(desired);
    Ok(object)
}

#[test]
fn conversion_answers_every_object_or_fails_the_review() {
    let object = json!({"apiVersion": "db.example.com/v1", "kind": "Backup", "metadata": {"name": "a"}, "spec": {}});
    let answer = response(convert(&conversion_review(json!([object])), relabel));
    assert_eq!(answer["uid"], "c0ffee00-1d1b-4bd7-9a1c-0d1f4f1c0c01");
    assert_eq!(answer["result"]["status"], "Success");
    assert_eq!(
        answer["convertedObjects"][0]["apiVersion"],
        "db.example.com/v2"
    );
    assert_eq!(
        answer["convertedObjects"][0]["metadata"],
        json!({"name": "a"})
    );

    let broken =
        json!({"apiVersion": "db.example.com/v1", "kind": "Backup", "spec": {"broken": true}});
    let answer = response(convert(
        &conversion_review(json!([object, broken])),
        relabel,
    ));
    assert_eq!(answer["result"]["status"], "Failure");
    assert_eq!(
        answer["result"]["message"],
        "spec.broken cannot be converted"
    );

    let answer = response(convert(&conversion_review(json!([object])), |_, _| {
        panic!("spec.size is gone")
    }));
    assert_eq!(answer["result"]["status"], "Failure");
    assert_eq!(
        answer["result"]["message"],
        "the conversion failed: spec.size is gone"
    );
    assert!(
        read::<ConfigMap>(json!({"kind": "ConfigMap", "data": 7}))
            .unwrap_err()
            .contains("does not match its schema")
    );
    assert!(unknown_version("db.example.com/v9").contains("`db.example.com/v9`"));

    let answer = response(convert(b"{", relabel));
    assert_eq!(answer["result"]["status"], "Failure");
    assert!(
        answer["result"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot read the ConversionReview")
    );
}
