use ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::*;

fn hosts(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

/// Whether a client trusting `bundle` accepts `cert` for `host` now.
fn mutating() -> MutatingWebhookConfiguration {
    ::serde_json::from_value(json!({
        "metadata": {"name": "operator-mutating-webhook-configuration"},
        "webhooks": [
            {
                "name": "mthing-v1.db.example.com",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "clientConfig": {"service": {"name": "operator-webhook-service", "namespace": "operator-system", "path": "/mutate"}},
            },
            {
                "name": "mother-v1.db.example.com",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "clientConfig": {"url": "https://[::1]:9443/mutate-other", "caBundle": "Q0E="},
            },
        ],
    }))
    .unwrap()
}

#[test]
fn hosts_come_from_services_and_urls() {
    let target = Target::webhooks(TargetKind::Mutating, &mutating()).unwrap();
    assert_eq!(
        Targets(vec![target]).hosts(),
        hosts(&[
            "::1",
            "operator-webhook-service.operator-system.svc",
            "operator-webhook-service.operator-system.svc.cluster.local",
        ])
    );
    assert_eq!(
        url_host("https://127.0.0.1:9443/convert"),
        Some("127.0.0.1".to_owned())
    );
    assert_eq!(
        url_host("https://host.docker.internal/x?y"),
        Some("host.docker.internal".to_owned())
    );
    assert_eq!(url_host("http://insecure/"), None);
    assert_eq!(url_host("https://"), None);
}

#[test]
fn the_patch_sets_only_the_bundles_that_differ_and_checks_their_place() {
    let target = Target::webhooks(TargetKind::Mutating, &mutating()).unwrap();
    let encoded = json!("Q0E=");
    let Some(Patch::Json(patch)) = target.patch(&encoded) else {
        panic!("the first webhook lacks the bundle");
    };
    assert_eq!(
        ::serde_json::to_value(patch).unwrap(),
        json!([
            {"op": "test", "path": "/webhooks/0/name", "value": "mthing-v1.db.example.com"},
            {"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "Q0E="},
        ])
    );
    assert!(target.patch(&json!("other")).is_some());

    let mut crd: CustomResourceDefinition = ::serde_json::from_value(json!({
        "metadata": {"name": "things.db.example.com"},
        "spec": {
            "group": "db.example.com",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": "https://127.0.0.1:9443/convert", "caBundle": "Q0E="},
                },
            },
        },
    }))
    .unwrap();
    let target = Target::crd(&crd).unwrap();
    assert!(
        target.patch(&encoded).is_none(),
        "the CRD has the bundle already"
    );
    assert_eq!(Targets(vec![target]).hosts(), hosts(&["127.0.0.1"]));
    crd.spec.conversion.as_mut().unwrap().strategy = "None".to_owned();
    assert!(Target::crd(&crd).unwrap().configs.is_empty());
}
