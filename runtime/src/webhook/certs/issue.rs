//! The CA and the serving certificate: when they need renewing, how they are made, and how the
//! Secret keeps them.

use ::std::collections::{BTreeMap, BTreeSet};

use ::anyhow::Context as _;
use ::k8s_openapi::ByteString;
use ::k8s_openapi::api::core::v1::Secret;
use ::k8s_openapi::jiff::{SignedDuration, Timestamp, tz::TimeZone};
use ::kube::api::ObjectMeta;
use ::rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use super::CA_LABEL;
use crate::identity::field_manager;

/// How long the CA is valid, and how long before its end a new one is made.
const CA_VALIDITY: SignedDuration = SignedDuration::from_hours(10 * 365 * 24);
const CA_RENEW_BEFORE: SignedDuration = SignedDuration::from_hours(365 * 24);

/// How long a serving certificate is valid, and how long before its end a new one is made.
const CERT_VALIDITY: SignedDuration = SignedDuration::from_hours(365 * 24);
const CERT_RENEW_BEFORE: SignedDuration = SignedDuration::from_hours(30 * 24);

/// The Secret's keys besides `tls.crt` and `tls.key`.
const CA_CERT: &str = "ca.crt";
const CA_KEY: &str = "ca.key";
const PREVIOUS_CA_CERT: &str = "ca-previous.crt";

/// The Secret's annotations: what the certificates are for and until when, so that a round
/// needs no certificate parser.
const CA_NOT_AFTER: &str = "opgen.io/ca-not-after";
const CERT_NOT_AFTER: &str = "opgen.io/cert-not-after";
const CERT_HOSTS: &str = "opgen.io/cert-hosts";

/// What a new certificate is needed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Renewal {
    /// The Secret's certificate does.
    None,
    /// A new serving certificate from the same CA: the old one is ending or misses a host.
    Certificate,
    /// A new CA and serving certificate: there is none that can be read, or the CA is ending.
    Everything,
}

/// What the stored certificates need, at `now`, to serve `hosts`.
pub(crate) fn renewal(
    stored: Option<&Stored>,
    hosts: &BTreeSet<String>,
    now: Timestamp,
) -> Renewal {
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
pub(crate) struct Stored {
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
pub(crate) fn issue(
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
mod tests;
