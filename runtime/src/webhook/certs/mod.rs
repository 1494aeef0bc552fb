//! Self-managed webhook certificates, for a cluster without cert-manager: the manager makes a
//! CA and a serving certificate, keeps them in the Secret `WEBHOOK_CERT_SECRET` of its
//! namespace, and puts the CA into `caBundle` of its webhook configurations and CRDs.
//!
//! Its objects are those labelled `opgen.io/webhook-ca` with the project's name (`opgen
//! generate manifests` labels them), and the serving certificate is for the host names they
//! call: the DNS names of their Service, or the host of their URL. Every replica runs this;
//! all of them serve the certificate of the one Secret, so whichever finds it missing,
//! expiring or not covering a host name writes a new one, and a replica that loses that race
//! reads the winner's. A new CA is put into the bundles beside the previous one, so that a
//! replica still serving a certificate of the previous CA keeps being trusted until it picks
//! up the new one.
//!
//! Permissions: reading, watching and patching the webhook configurations and CRDs, which a
//! project grants its manager with markers in its own `src/controllers/mod.rs` (they depend on
//! its scope), and the Secret's, in its config/webhook/certificate_role.yaml.

use ::std::collections::{BTreeMap, BTreeSet};
use ::std::sync::Arc;
use ::std::time::Duration;

use ::anyhow::Context as _;
use ::futures::{FutureExt as _, StreamExt as _};
use ::k8s_openapi::ByteString;
use ::k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use ::k8s_openapi::api::core::v1::Secret;
use ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use ::k8s_openapi::jiff::{SignedDuration, Timestamp, tz::TimeZone};
use ::kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use ::kube::runtime::{WatchStreamExt as _, watcher};
use ::kube::{Client, ResourceExt as _};
use ::rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use ::serde_json::{Value, json};
use ::tokio_util::sync::CancellationToken;

use crate::context::field_manager;
use crate::webhook::Certificates;

/// The label of the objects whose `caBundle` this manager keeps; its value is the manager's
/// name ([`field_manager`]).
pub const CA_LABEL: &str = "opgen.io/webhook-ca";

/// How long the CA is valid, and how long before its end a new one is made.
const CA_VALIDITY: SignedDuration = SignedDuration::from_hours(10 * 365 * 24);
const CA_RENEW_BEFORE: SignedDuration = SignedDuration::from_hours(365 * 24);

/// How long a serving certificate is valid, and how long before its end a new one is made.
const CERT_VALIDITY: SignedDuration = SignedDuration::from_hours(365 * 24);
const CERT_RENEW_BEFORE: SignedDuration = SignedDuration::from_hours(30 * 24);

/// How often the Secret and the bundles are checked without a change to the labelled objects.
const RECHECK_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// How soon a failed round (another replica wrote first, the API server did not answer) is
/// tried again.
const RETRY_INTERVAL: Duration = Duration::from_secs(5);

/// How long a burst of changes to the labelled objects is let settle into one round.
const SETTLE: Duration = Duration::from_millis(200);

/// The Secret's keys besides `tls.crt` and `tls.key`.
const CA_CERT: &str = "ca.crt";
const CA_KEY: &str = "ca.key";
const PREVIOUS_CA_CERT: &str = "ca-previous.crt";

/// The Secret's annotations: what the certificates are for and until when, so that a round
/// needs no certificate parser.
const CA_NOT_AFTER: &str = "opgen.io/ca-not-after";
const CERT_NOT_AFTER: &str = "opgen.io/cert-not-after";
const CERT_HOSTS: &str = "opgen.io/cert-hosts";

/// Keeps the certificate in `secret` (in `namespace`) valid for the labelled objects and their
/// bundles up to date, and hands it to `certificates`, until `shutdown`.
pub async fn run(
    client: Client,
    namespace: String,
    secret: String,
    certificates: Arc<Certificates>,
    shutdown: CancellationToken,
) {
    ::tracing::info!(%namespace, %secret, "managing the webhook certificate");
    let mut changes = labelled_changes(&client);
    let mut wait = Duration::ZERO;
    loop {
        ::tokio::select! {
            () = shutdown.cancelled() => return,
            () = ::tokio::time::sleep(wait) => {}
            Some(()) = changes.next() => {
                ::tokio::time::sleep(SETTLE).await;
                while let Some(Some(())) = changes.next().now_or_never() {}
            }
        }
        wait = match round(&client, &namespace, &secret, &certificates).await {
            Ok(()) => RECHECK_INTERVAL,
            Err(err) => {
                ::tracing::warn!(error = %format!("{err:#}"), "cannot keep the webhook certificate; trying again");
                RETRY_INTERVAL
            }
        };
    }
}

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
fn labelled_changes(client: &Client) -> ::futures::stream::BoxStream<'static, ()> {
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

fn selector() -> String {
    format!("{CA_LABEL}={}", field_manager())
}

/// One round: the labelled objects, the certificate they need, and their bundles.
async fn round(
    client: &Client,
    namespace: &str,
    secret_name: &str,
    certificates: &Certificates,
) -> ::anyhow::Result<()> {
    let targets = Targets::list(client).await?;
    let hosts = targets.hosts();
    if hosts.is_empty() {
        ::tracing::info!(
            label = %selector(),
            "no webhook configuration or CRD with the label calls this manager yet; waiting for one"
        );
        return Ok(());
    }
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let current = secrets
        .get_opt(secret_name)
        .await
        .with_context(|| format!("cannot read the Secret {namespace}/{secret_name}"))?;
    let stored = current.as_ref().and_then(Stored::from_secret);
    let now = Timestamp::now();
    let stored = match (renewal(stored.as_ref(), &hosts, now), stored) {
        (Renewal::None, Some(stored)) => stored,
        (renewal, stored) => {
            let issued = issue(renewal, stored.as_ref(), &hosts, now)?;
            let secret = issued.to_secret(secret_name, current);
            let written = match secret.metadata.resource_version {
                Some(_) => {
                    secrets
                        .replace(secret_name, &PostParams::default(), &secret)
                        .await
                }
                None => secrets.create(&PostParams::default(), &secret).await,
            };
            written.with_context(|| {
                format!("cannot write the Secret {namespace}/{secret_name} (another replica may have written it first)")
            })?;
            ::tracing::info!(hosts = ?issued.hosts, ?renewal, "issued a webhook certificate");
            issued
        }
    };
    certificates.set(
        (
            stored.cert.clone().into_bytes(),
            format!("tls.crt of Secret {secret_name}"),
        ),
        (
            stored.key.clone().into_bytes(),
            format!("tls.key of Secret {secret_name}"),
        ),
    )?;
    targets.inject(client, &stored.ca_bundle()).await
}

/// Which kind of object a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
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
pub struct ClientConfig {
    /// The JSON pointer of the configuration in the object.
    pub pointer: String,
    /// A pointer and the value the object must hold there.
    pub guard: (String, Value),
    /// The configuration as read.
    pub value: Value,
}

/// A labelled object and its client configurations.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The object's kind.
    pub kind: TargetKind,
    /// Its name.
    pub name: String,
    /// Its client configurations.
    pub configs: Vec<ClientConfig>,
}

/// The labelled objects whose `caBundle` this manager keeps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Targets(pub Vec<Target>);

impl Targets {
    async fn list(client: &Client) -> ::anyhow::Result<Self> {
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
    async fn inject(&self, client: &Client, bundle: &str) -> ::anyhow::Result<()> {
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
pub fn url_host(url: &str) -> Option<String> {
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

/// What a new certificate is needed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// The Secret's certificate does.
    None,
    /// A new serving certificate from the same CA: the old one is ending or misses a host.
    Certificate,
    /// A new CA and serving certificate: there is none that can be read, or the CA is ending.
    Everything,
}

/// What the stored certificates need, at `now`, to serve `hosts`.
pub fn renewal(stored: Option<&Stored>, hosts: &BTreeSet<String>, now: Timestamp) -> Renewal {
    let Some(stored) = stored else {
        return Renewal::Everything;
    };
    if stored.ca_not_after.duration_since(now) < CA_RENEW_BEFORE {
        Renewal::Everything
    } else if stored.not_after.duration_since(now) < CERT_RENEW_BEFORE
        || !hosts.is_subset(&stored.hosts)
    {
        Renewal::Certificate
    } else {
        Renewal::None
    }
}

/// The CA and serving certificate, as the Secret keeps them (PEM).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The CA's certificate.
    pub ca_cert: String,
    /// The CA's key.
    pub ca_key: String,
    /// The CA before the last new one, still trusted by the bundles.
    pub previous_ca_cert: Option<String>,
    /// When the CA expires.
    pub ca_not_after: Timestamp,
    /// The serving certificate.
    pub cert: String,
    /// The serving certificate's key.
    pub key: String,
    /// When the serving certificate expires.
    pub not_after: Timestamp,
    /// The host names the serving certificate is for.
    pub hosts: BTreeSet<String>,
}

impl Stored {
    /// What `secret` holds; `None` when anything is missing or unreadable (a new CA is made).
    pub fn from_secret(secret: &Secret) -> Option<Self> {
        let data = secret.data.as_ref()?;
        let text = |key: &str| {
            data.get(key)
                .and_then(|bytes| String::from_utf8(bytes.0.clone()).ok())
        };
        let annotations = secret.metadata.annotations.as_ref()?;
        let time = |key: &str| annotations.get(key)?.parse::<Timestamp>().ok();
        Some(Self {
            ca_cert: text(CA_CERT)?,
            ca_key: text(CA_KEY)?,
            previous_ca_cert: text(PREVIOUS_CA_CERT),
            ca_not_after: time(CA_NOT_AFTER)?,
            cert: text("tls.crt")?,
            key: text("tls.key")?,
            not_after: time(CERT_NOT_AFTER)?,
            hosts: annotations
                .get(CERT_HOSTS)?
                .split(',')
                .filter(|host| !host.is_empty())
                .map(str::to_owned)
                .collect(),
        })
    }

    /// The Secret holding `self`, replacing `current` (whose metadata it keeps) when given.
    pub fn to_secret(&self, name: &str, current: Option<Secret>) -> Secret {
        let mut metadata = current.map(|secret| secret.metadata).unwrap_or(ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        });
        let annotations = metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(CA_NOT_AFTER.to_owned(), self.ca_not_after.to_string());
        annotations.insert(CERT_NOT_AFTER.to_owned(), self.not_after.to_string());
        let hosts: Vec<&str> = self.hosts.iter().map(String::as_str).collect();
        annotations.insert(CERT_HOSTS.to_owned(), hosts.join(","));
        metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(CA_LABEL.to_owned(), field_manager().to_owned());
        let mut data = BTreeMap::new();
        let mut put = |key: &str, value: &str| {
            data.insert(key.to_owned(), ByteString(value.as_bytes().to_vec()));
        };
        put(CA_CERT, &self.ca_cert);
        put(CA_KEY, &self.ca_key);
        if let Some(previous) = &self.previous_ca_cert {
            put(PREVIOUS_CA_CERT, previous);
        }
        put("tls.crt", &self.cert);
        put("tls.key", &self.key);
        Secret {
            metadata,
            type_: Some("kubernetes.io/tls".to_owned()),
            data: Some(data),
            ..Secret::default()
        }
    }

    /// The CAs the API server is to trust: the current one, and the previous one if any.
    pub fn ca_bundle(&self) -> String {
        let mut bundle = self.ca_cert.clone();
        if let Some(previous) = &self.previous_ca_cert {
            bundle.push_str(previous);
        }
        bundle
    }
}

/// The certificates `renewal` asks for, for `hosts`, at `now`.
pub fn issue(
    renewal: Renewal,
    stored: Option<&Stored>,
    hosts: &BTreeSet<String>,
    now: Timestamp,
) -> ::anyhow::Result<Stored> {
    let (ca_cert, ca_key, ca_not_after, previous_ca_cert) = match (renewal, stored) {
        (Renewal::Certificate | Renewal::None, Some(stored)) => (
            stored.ca_cert.clone(),
            stored.ca_key.clone(),
            stored.ca_not_after,
            stored.previous_ca_cert.clone(),
        ),
        (_, stored) => {
            let key = KeyPair::generate().context("cannot generate the CA's key")?;
            let not_after = day_start(now + CA_VALIDITY)?;
            let cert = ca_params(now, not_after)?
                .self_signed(&key)
                .context("cannot make the CA certificate")?;
            let previous = stored.map(|stored| stored.ca_cert.clone());
            (cert.pem(), key.serialize_pem(), not_after, previous)
        }
    };
    let ca_key_pair = KeyPair::from_pem(&ca_key).context("the CA's key does not load")?;
    let issuer = Issuer::new(ca_params(now, ca_not_after)?, ca_key_pair);
    let key = KeyPair::generate().context("cannot generate the serving certificate's key")?;
    let not_after = day_start(now + CERT_VALIDITY)?.min(ca_not_after);
    let mut params = CertificateParams::new(hosts.iter().cloned().collect::<Vec<_>>())
        .context("a host name of the webhooks cannot go into a certificate")?;
    params.distinguished_name.push(
        DnType::CommonName,
        hosts.first().cloned().unwrap_or_default(),
    );
    set_validity(&mut params, now, not_after)?;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    let cert = params
        .signed_by(&key, &issuer)
        .context("cannot sign the serving certificate")?;
    Ok(Stored {
        ca_cert,
        ca_key,
        previous_ca_cert,
        ca_not_after,
        cert: cert.pem(),
        key: key.serialize_pem(),
        not_after,
        hosts: hosts.clone(),
    })
}

/// The CA's parameters. The serving certificates are signed with these rebuilt (the same
/// name and key usages), so that the CA certificate never needs parsing.
fn ca_params(now: Timestamp, not_after: Timestamp) -> ::anyhow::Result<CertificateParams> {
    let mut params = CertificateParams::default();
    params.distinguished_name = ::rcgen::DistinguishedName::new();
    params.distinguished_name.push(
        DnType::CommonName,
        format!("{} webhook CA", field_manager()),
    );
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    set_validity(&mut params, now, not_after)?;
    Ok(params)
}

/// Sets the validity of `params` from the day before `now` to `not_after`, a day boundary.
fn set_validity(
    params: &mut CertificateParams,
    now: Timestamp,
    not_after: Timestamp,
) -> ::anyhow::Result<()> {
    let day = |time: Timestamp| {
        let date = time.to_zoned(TimeZone::UTC).date();
        ::rcgen::date_time_ymd(
            date.year().into(),
            date.month().unsigned_abs(),
            date.day().unsigned_abs(),
        )
    };
    params.not_before = day(now - SignedDuration::from_hours(24));
    params.not_after = day(not_after);
    Ok(())
}

/// The start of the day (UTC) `time` falls on: certificates end on a day boundary here, so
/// that what the Secret's annotations say is exactly what the certificates say.
fn day_start(time: Timestamp) -> ::anyhow::Result<Timestamp> {
    let second = time.as_second();
    Timestamp::from_second(second - second.rem_euclid(24 * 60 * 60))
        .context("a certificate's end is out of range")
}

#[cfg(test)]
mod tests {
    use ::tokio_rustls::rustls;
    use ::tokio_rustls::rustls::client::danger::ServerCertVerifier as _;
    use ::tokio_rustls::rustls::pki_types::pem::PemObject as _;
    use ::tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};

    use super::*;

    fn hosts(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    /// Whether a client trusting `bundle` accepts `cert` for `host` now.
    fn trusted(bundle: &str, cert: &str, host: &str) -> bool {
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(bundle.as_bytes()) {
            roots.add(ca.unwrap()).unwrap();
        }
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        let leaf = CertificateDer::from_pem_slice(cert.as_bytes()).unwrap();
        let name = ServerName::try_from(host.to_owned()).unwrap();
        verifier
            .verify_server_cert(&leaf, &[], &name, &[], UnixTime::now())
            .is_ok()
    }

    #[test]
    fn a_new_ca_signs_a_certificate_for_every_host() {
        let wanted = hosts(&["webhook-service.system.svc", "127.0.0.1"]);
        let now = Timestamp::now();
        let stored = issue(Renewal::Everything, None, &wanted, now).unwrap();
        assert!(trusted(
            &stored.ca_bundle(),
            &stored.cert,
            "webhook-service.system.svc"
        ));
        assert!(trusted(&stored.ca_bundle(), &stored.cert, "127.0.0.1"));
        assert!(!trusted(
            &stored.ca_bundle(),
            &stored.cert,
            "other.system.svc"
        ));
        assert_eq!(stored.previous_ca_cert, None);
        assert!(stored.not_after <= stored.ca_not_after);
        assert_eq!(renewal(Some(&stored), &wanted, now), Renewal::None);
    }

    #[test]
    fn renewals_keep_what_clients_trust() {
        let now = Timestamp::now();
        let first = issue(Renewal::Everything, None, &hosts(&["a.ns.svc"]), now).unwrap();

        // A new host: a new certificate from the same CA, so the bundles need no change.
        let wanted = hosts(&["a.ns.svc", "b.ns.svc"]);
        assert_eq!(renewal(Some(&first), &wanted, now), Renewal::Certificate);
        let second = issue(Renewal::Certificate, Some(&first), &wanted, now).unwrap();
        assert_eq!(second.ca_cert, first.ca_cert);
        assert!(trusted(&first.ca_bundle(), &second.cert, "b.ns.svc"));

        // The CA ending: a new one, and the bundle trusts the old one too, for the replicas
        // that still serve a certificate it signed.
        let late = first.ca_not_after - SignedDuration::from_hours(24);
        assert_eq!(renewal(Some(&second), &wanted, late), Renewal::Everything);
        let third = issue(Renewal::Everything, Some(&second), &wanted, now).unwrap();
        assert_ne!(third.ca_cert, second.ca_cert);
        assert_eq!(
            third.previous_ca_cert.as_deref(),
            Some(second.ca_cert.as_str())
        );
        assert!(trusted(&third.ca_bundle(), &third.cert, "a.ns.svc"));
        assert!(trusted(&third.ca_bundle(), &second.cert, "a.ns.svc"));
        assert!(!trusted(&third.ca_cert, &second.cert, "a.ns.svc"));

        // The serving certificate ending.
        let ending = third.not_after - SignedDuration::from_hours(24);
        assert_eq!(renewal(Some(&third), &wanted, ending), Renewal::Certificate);
        assert_eq!(renewal(None, &wanted, now), Renewal::Everything);
    }

    #[test]
    fn the_secret_holds_everything_a_round_needs() {
        let now = Timestamp::now();
        let first = issue(Renewal::Everything, None, &hosts(&["a.ns.svc"]), now).unwrap();
        let stored = issue(
            Renewal::Everything,
            Some(&first),
            &hosts(&["a.ns.svc"]),
            now,
        )
        .unwrap();
        let secret = stored.to_secret("operator-webhook-cert", None);
        assert_eq!(
            secret.metadata.name.as_deref(),
            Some("operator-webhook-cert")
        );
        assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
        assert_eq!(Stored::from_secret(&secret), Some(stored.clone()));

        // A replacement keeps the metadata it replaces (the resource version guards the write).
        let mut current = secret.clone();
        current.metadata.resource_version = Some("7".to_owned());
        let replaced = stored.to_secret("operator-webhook-cert", Some(current));
        assert_eq!(replaced.metadata.resource_version.as_deref(), Some("7"));

        // Anything missing reads as no certificate, which makes a new CA.
        let mut broken = secret;
        broken.data.as_mut().unwrap().remove("ca.key");
        assert_eq!(Stored::from_secret(&broken), None);
    }

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
}
