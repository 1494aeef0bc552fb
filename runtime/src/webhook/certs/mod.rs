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

mod issue;
mod targets;

use ::std::sync::Arc;
use ::std::time::Duration;

use ::anyhow::Context as _;
use ::futures::{FutureExt as _, StreamExt as _};
use ::k8s_openapi::api::core::v1::Secret;
use ::k8s_openapi::jiff::Timestamp;
use ::kube::Client;
use ::kube::api::{Api, PostParams};
use ::tokio_util::sync::CancellationToken;

use self::issue::{Renewal, Stored, issue, renewal};
use self::targets::{Targets, labelled_changes, selector};
use super::certificates::Certificates;

/// The label of the objects whose `caBundle` this manager keeps; its value is the manager's
/// name ([`field_manager`]).
pub(crate) const CA_LABEL: &str = "opgen.io/webhook-ca";

/// How often the Secret and the bundles are checked without a change to the labelled objects.
const RECHECK_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// How soon a failed round (another replica wrote first, the API server did not answer) is
/// tried again.
const RETRY_INTERVAL: Duration = Duration::from_secs(5);

/// How long a burst of changes to the labelled objects is let settle into one round.
const SETTLE: Duration = Duration::from_millis(200);

/// Keeps the certificate in `secret` (in `namespace`) valid for the labelled objects and their
/// bundles up to date, and hands it to `certificates`, until `shutdown`.
pub(crate) async fn run(
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
