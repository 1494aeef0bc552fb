use ::std::sync::Arc;

use ::k8s_openapi::api::core::v1::ConfigMap;
use ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ::kube::runtime::controller::Action;
use ::opentelemetry_sdk::trace::InMemorySpanExporter;
use ::tracing_subscriber::layer::SubscriberExt as _;

use super::*;

#[test]
fn traces_are_exported_only_to_a_named_collector() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    };
    assert!(!exporting(env(&[])));
    assert!(!exporting(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
    assert!(exporting(env(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "http://collector:4318"
    )])));
    assert!(exporting(env(&[(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "http://collector:4318/v1/traces"
    )])));
    assert!(!exporting(env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
        ("OTEL_SDK_DISABLED", "TRUE"),
    ])));
}

/// Config maps, reconciled without a request.
struct ConfigMaps;

impl crate::Reconcile for ConfigMaps {
    type Object = ConfigMap;
    const FINALIZER: bool = false;

    async fn apply(&self, _: &ConfigMap, _: &crate::Context) -> Result<Action, crate::Error> {
        Ok(Action::await_change())
    }
}

#[::tokio::test]
async fn a_reconcile_is_a_span_with_the_objects_kind_and_namespace() {
    let exporter = InMemorySpanExporter::default();
    let provider = provider(exporter.clone(), "widget-operator");
    let subscriber = ::tracing_subscriber::registry().with(tracing_layer(&provider));
    let _default = ::tracing::subscriber::set_default(subscriber);
    let (ctx, _server) = crate::testing::context();
    let driver = crate::controller::Driver::new(ConfigMaps, ctx);
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            namespace: Some("shop".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };

    driver.reconcile(Arc::new(config_map)).await.unwrap();
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let reconciles: Vec<_> = spans.iter().filter(|s| s.name == "reconcile").collect();
    assert_eq!(reconciles.len(), 1, "{spans:#?}");
    let attribute = |key: &str| {
        reconciles[0]
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(attribute("kind").as_deref(), Some("ConfigMap"));
    assert_eq!(attribute("namespace").as_deref(), Some("shop"));
    assert_eq!(attribute("name").as_deref(), Some("settings"));
    assert_eq!(attribute("controller").as_deref(), Some("configmap.core"));
}
