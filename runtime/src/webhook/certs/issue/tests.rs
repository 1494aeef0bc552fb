use ::std::sync::Arc;

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
