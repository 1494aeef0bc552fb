use ::serde_json::json;

use super::*;
use crate::webhook::tests::{Modes, config_map, response, review};

#[test]
fn defaults_become_a_json_patch() {
    let answer = response(mutate(
        &Modes,
        &review("CREATE", config_map(json!({"owner": "me"}))),
    ));
    assert_eq!(answer["uid"], "3f6ad9a5-1d1b-4bd7-9a1c-0d1f4f1c0c01");
    assert_eq!(answer["allowed"], true);
    assert_eq!(answer["patchType"], "JSONPatch");
    // kube sends the patch's bytes as a list of numbers, which the API server reads as bytes.
    let patch: Vec<u8> = ::serde_json::from_value(answer["patch"].clone()).unwrap();
    let patch: Value = ::serde_json::from_slice(&patch).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/data/mode", "value": "safe"}])
    );

    let nothing = response(mutate(
        &Modes,
        &review("CREATE", config_map(json!({"mode": "fast"}))),
    ));
    assert_eq!(nothing["allowed"], true);
    assert_eq!(nothing.get("patch"), None);
}

#[test]
fn field_errors_deny_with_the_api_servers_message_and_warnings_pass() {
    let answer = response(validate(
        &Modes,
        &review("CREATE", config_map(json!({"mode": "slow"}))),
    ));
    assert_eq!(answer["allowed"], false);
    assert_eq!(answer["status"]["code"], 422);
    assert_eq!(answer["status"]["reason"], "Invalid");
    assert_eq!(
        answer["status"]["message"],
        "ConfigMap \"settings\" is invalid: data.mode: must be fast or safe, not slow"
    );
    assert_eq!(answer["warnings"], json!(["data.owner is not set"]));

    let allowed = response(validate(
        &Modes,
        &review("CREATE", config_map(json!({"owner": "me"}))),
    ));
    assert_eq!(allowed["allowed"], true);
    assert_eq!(allowed.get("warnings"), None);
}

#[test]
fn malformed_reviews_are_refused_with_a_message() {
    for (body, needle) in [
        (b"not json".to_vec(), "cannot read the AdmissionReview"),
        (
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
            "has no request",
        ),
    ] {
        for answer in [
            response(mutate(&Modes, &body)),
            response(validate(&Modes, &body)),
        ] {
            assert_eq!(answer["allowed"], false);
            let message = answer["status"]["message"].as_str().unwrap();
            assert!(message.contains(needle), "{message}");
        }
    }
    // An object that does not fit the webhook's type keeps the request's uid.
    let wrong = review("CREATE", config_map(json!({"mode": 7})));
    let answer = response(validate(&Modes, &wrong));
    assert_eq!(answer["uid"], "3f6ad9a5-1d1b-4bd7-9a1c-0d1f4f1c0c01");
    assert_eq!(answer["allowed"], false);
    assert_eq!(answer["status"]["code"], 400);
    // An update without its old object.
    let answer = response(validate(&Modes, &review("UPDATE", config_map(json!({})))));
    assert_eq!(answer["allowed"], false);
    assert!(
        answer["status"]["message"]
            .as_str()
            .unwrap()
            .contains("no oldObject")
    );
}
