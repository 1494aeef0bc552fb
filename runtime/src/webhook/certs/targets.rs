//! The objects whose `caBundle` the manager keeps (its labelled webhook configurations and
//! CRDs), the host names they call, and the patch that puts the CA into them.

use ::std::collections::BTreeSet;

use ::anyhow::Context as _;
use ::futures::StreamExt as _;
use ::k8s_openapi::ByteString;
use ::k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use ::kube::api::{Api, ListParams, Patch, PatchParams};
use ::kube::runtime::{WatchStreamExt as _, watcher};
use ::kube::{Client, ResourceExt as _};
use ::serde_json::{Value, json};

use super::CA_LABEL;
use crate::identity::field_manager;

/// The kinds of the labelled objects, cluster-wide, listed, watched and patched alike.
trait Labelled:
    ::kube::Resource<DynamicType = ()>
    + Clone
    + ::std::fmt::Debug
    + ::serde::de::DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Labelled for K where
    K: ::kube::Resource<DynamicType = ()>
        + Clone
        + ::std::fmt::Debug
        + ::serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// A unit per change of a labelled webhook configuration or CRD.
pub(super) fn labelled_changes(client: &Client) -> ::futures::stream::BoxStream<'static, ()> {
    fn changes<K: Labelled>(client: &Client) -> ::futures::stream::BoxStream<'static, ()> {
        let config = watcher::Config::default().labels(&selector());
        watcher(Api::<K>::all(client.clone()), config)
            .default_backoff()
            .map(|_| ())
            .boxed()
    }
    ::futures::stream::select_all([
        changes::<MutatingWebhookConfiguration>(client),
        changes::<ValidatingWebhookConfiguration>(client),
        changes::<CustomResourceDefinition>(client),
    ])
    .boxed()
}

/// The labelled objects of kind `K`.
async fn labelled<K: Labelled>(client: &Client) -> ::anyhow::Result<Vec<K>> {
    let params = ListParams::default().labels(&selector());
    let list = Api::<K>::all(client.clone())
        .list(&params)
        .await
        .with_context(|| format!("cannot list the {}", K::plural(&())))?;
    Ok(list.items)
}

/// Applies `patch` to the object `name` of kind `K`.
async fn patch_object<K: Labelled>(
    client: &Client,
    name: &str,
    patch: &Patch<()>,
) -> ::kube::Result<()> {
    Api::<K>::all(client.clone())
        .patch(name, &PatchParams::default(), patch)
        .await
        .map(drop)
}

pub(super) fn selector() -> String {
    format!("{CA_LABEL}={}", field_manager())
}

/// Which kind of object a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TargetKind {
    /// A MutatingWebhookConfiguration.
    Mutating,
    /// A ValidatingWebhookConfiguration.
    Validating,
    /// A CustomResourceDefinition with a conversion webhook.
    Crd,
}

/// A client configuration of a labelled object: where it is in the object, what the object
/// must hold for that place to still be this configuration (checked by the patch itself, so
/// that a list changed since it was read is never patched at the wrong entry), and its value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ClientConfig {
    /// The JSON pointer of the configuration in the object.
    pub pointer: String,
    /// A pointer and the value the object must hold there.
    pub guard: (String, Value),
    /// The configuration as read.
    pub value: Value,
}

/// A labelled object and its client configurations.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Target {
    /// The object's kind.
    pub kind: TargetKind,
    /// Its name.
    pub name: String,
    /// Its client configurations.
    pub configs: Vec<ClientConfig>,
}

/// The labelled objects whose `caBundle` this manager keeps.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Targets(pub Vec<Target>);

impl Targets {
    pub(super) async fn list(client: &Client) -> ::anyhow::Result<Self> {
        let mut targets = Vec::new();
        for object in labelled::<MutatingWebhookConfiguration>(client).await? {
            targets.push(Target::webhooks(TargetKind::Mutating, &object)?);
        }
        for object in labelled::<ValidatingWebhookConfiguration>(client).await? {
            targets.push(Target::webhooks(TargetKind::Validating, &object)?);
        }
        for object in labelled::<CustomResourceDefinition>(client).await? {
            targets.push(Target::crd(&object)?);
        }
        Ok(Self(targets))
    }

    /// The host names the API server calls: a Service's DNS names, or a URL's host.
    pub fn hosts(&self) -> BTreeSet<String> {
        let mut hosts = BTreeSet::new();
        for config in self.0.iter().flat_map(|target| &target.configs) {
            let service = &config.value["service"];
            if let (Some(name), Some(namespace)) =
                (service["name"].as_str(), service["namespace"].as_str())
            {
                hosts.insert(format!("{name}.{namespace}.svc"));
                hosts.insert(format!("{name}.{namespace}.svc.cluster.local"));
            }
            if let Some(host) = config.value["url"].as_str().and_then(url_host) {
                hosts.insert(host);
            }
        }
        hosts
    }

    /// Puts `bundle` into every client configuration that lacks it.
    pub(super) async fn inject(&self, client: &Client, bundle: &str) -> ::anyhow::Result<()> {
        let encoded = ::serde_json::to_value(ByteString(bundle.as_bytes().to_vec()))?;
        for target in &self.0 {
            let Some(patch) = target.patch(&encoded) else {
                continue;
            };
            let name = target.name.as_str();
            let patched = match target.kind {
                TargetKind::Mutating => {
                    patch_object::<MutatingWebhookConfiguration>(client, name, &patch).await
                }
                TargetKind::Validating => {
                    patch_object::<ValidatingWebhookConfiguration>(client, name, &patch).await
                }
                TargetKind::Crd => {
                    patch_object::<CustomResourceDefinition>(client, name, &patch).await
                }
            };
            patched
                .with_context(|| format!("cannot set the caBundle of {:?} {name}", target.kind))?;
            ::tracing::info!(kind = ?target.kind, %name, "set the webhook CA bundle");
        }
        Ok(())
    }
}

impl Target {
    fn webhooks<K: ::kube::Resource + ::serde::Serialize>(
        kind: TargetKind,
        object: &K,
    ) -> ::anyhow::Result<Self> {
        let name = object.name_any();
        let object = ::serde_json::to_value(object)?;
        let configs = object["webhooks"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, webhook)| ClientConfig {
                pointer: format!("/webhooks/{index}/clientConfig"),
                guard: (format!("/webhooks/{index}/name"), webhook["name"].clone()),
                value: webhook["clientConfig"].clone(),
            })
            .collect();
        Ok(Self {
            kind,
            name,
            configs,
        })
    }

    fn crd(object: &CustomResourceDefinition) -> ::anyhow::Result<Self> {
        let value = ::serde_json::to_value(object)?;
        let conversion = &value["spec"]["conversion"];
        let configs = (conversion["strategy"] == "Webhook")
            .then(|| ClientConfig {
                pointer: "/spec/conversion/webhook/clientConfig".to_owned(),
                guard: ("/spec/conversion/strategy".to_owned(), json!("Webhook")),
                value: conversion["webhook"]["clientConfig"].clone(),
            })
            .filter(|config| config.value.is_object())
            .into_iter()
            .collect();
        Ok(Self {
            kind: TargetKind::Crd,
            name: object.name_any(),
            configs,
        })
    }

    /// The JSON patch that sets `encoded` as the bundle of every client configuration that
    /// has another; `None` when all have it.
    pub fn patch(&self, encoded: &Value) -> Option<Patch<()>> {
        let operations: Vec<Value> = self
            .configs
            .iter()
            .filter(|config| config.value.get("caBundle") != Some(encoded))
            .flat_map(|config| {
                [
                    json!({"op": "test", "path": config.guard.0, "value": config.guard.1}),
                    json!({"op": "add", "path": format!("{}/caBundle", config.pointer), "value": encoded}),
                ]
            })
            .collect();
        if operations.is_empty() {
            return None;
        }
        let patch = ::serde_json::from_value(Value::Array(operations))
            .expect("test and add operations are a JSON patch");
        Some(Patch::Json(patch))
    }
}

/// The host of an `https://host[:port][/path]` URL, without brackets for an IPv6 address.
pub(crate) fn url_host(url: &str) -> Option<String> {
    let rest = url.strip_prefix("https://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']')?.0,
        None => authority.split(':').next()?,
    };
    (!host.is_empty()).then(|| host.to_owned())
}

#[cfg(test)]
mod tests;
