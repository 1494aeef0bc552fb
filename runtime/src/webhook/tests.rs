//! What the webhook tests share: a webhook for ConfigMaps, and the reviews the API server
//! sends it.

use ::k8s_openapi::api::core::v1::ConfigMap;
use ::serde::Serialize;
use ::serde_json::{Value, json};

use super::{Admission, Verdict};

/// A webhook for ConfigMaps: it defaults `data.mode`, refuses a `mode` other than `fast`
/// or `safe`, and warns of a missing `owner`.
pub(super) struct Modes;

impl Admission for Modes {
    type Object = ConfigMap;

    fn default(&self, mut object: ConfigMap) -> ConfigMap {
        let data = object.data.get_or_insert_with(Default::default);
        data.entry("mode".to_owned())
            .or_insert_with(|| "safe".to_owned());
        object
    }

    fn validate_create(&self, object: &ConfigMap) -> Verdict {
        let data = object.data.clone().unwrap_or_default();
        let mut verdict = Verdict::allow();
        if let Some(mode) = data
            .get("mode")
            .filter(|mode| !["fast", "safe"].contains(&mode.as_str()))
        {
            verdict = verdict.error("data.mode", format!("must be fast or safe, not {mode}"));
        }
        if !data.contains_key("owner") {
            verdict = verdict.warn("data.owner is not set");
        }
        verdict
    }
}

pub(super) fn review(operation: &str, object: Value) -> Vec<u8> {
    let gvk = json!({"group": "", "version": "v1", "kind": "ConfigMap"});
    let gvr = json!({"group": "", "version": "v1", "resource": "configmaps"});
    let review = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "3f6ad9a5-1d1b-4bd7-9a1c-0d1f4f1c0c01",
            "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
            "name": "settings", "namespace": "default", "operation": operation,
            "userInfo": {"username": "admin"},
            "object": object, "oldObject": null, "dryRun": false,
        }
    });
    ::serde_json::to_vec(&review).unwrap()
}

pub(super) fn config_map(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"}, "data": data})
}

/// The response of `review` as the API server reads it.
pub(super) fn response<T: Serialize>(review: T) -> Value {
    ::serde_json::to_value(review).unwrap()["response"].clone()
}
