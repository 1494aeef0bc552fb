//! The serving certificate of a TLS server, swapped in place when its files change or the
//! self-managed certificate is renewed: from `tls.crt` and `tls.key` in a directory
//! (cert-manager's, renewed in place), handed over by the manager ([`Certificates::set`]), or
//! self-signed.

use ::std::path::{Path, PathBuf};
use ::std::sync::{Arc, RwLock};
use ::std::time::{Duration, SystemTime};

use ::anyhow::Context as _;
use ::tokio::sync::Notify;
use ::tokio_rustls::rustls::pki_types::pem::PemObject as _;
use ::tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use ::tokio_rustls::rustls::sign::CertifiedKey;
use ::tokio_util::sync::CancellationToken;

/// The names the local certificate is valid for.
const LOCAL_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "host.docker.internal"];

/// The serving certificate, swapped in place when its files change or the self-managed
/// certificate is renewed.
#[derive(Debug)]
pub(crate) struct Certificates {
    current: RwLock<Option<Arc<CertifiedKey>>>,
    loaded: Notify,
    /// Where the files are; `None` when the certificate is handed over with [`Self::set`].
    dir: Option<PathBuf>,
}

impl Certificates {
    /// The certificate of `dir`, as far as it is there yet (cert-manager may not have issued
    /// it): the server answers no handshake, and the manager is not ready, until it is.
    pub fn from_dir(dir: PathBuf) -> Arc<Self> {
        let certificates = Arc::new(Self {
            current: RwLock::new(None),
            loaded: Notify::new(),
            dir: Some(dir),
        });
        if let Err(err) = certificates.reload() {
            ::tracing::warn!(error = %err, "no webhook certificate yet; waiting for it");
        }
        certificates
    }

    /// No certificate until [`Self::set`] gives one (the self-managed certificate).
    pub fn managed() -> Arc<Self> {
        Arc::new(Self {
            current: RwLock::new(None),
            loaded: Notify::new(),
            dir: None,
        })
    }

    /// A self-signed certificate for `localhost`, `127.0.0.1` and `host.docker.internal`,
    /// made once in `dir` and reused.
    pub fn local(dir: PathBuf) -> ::anyhow::Result<Arc<Self>> {
        let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
        if !cert.is_file() || !key.is_file() {
            let names: Vec<String> = LOCAL_NAMES.iter().map(|name| (*name).to_owned()).collect();
            let made = ::rcgen::generate_simple_self_signed(names)
                .context("cannot make a local webhook certificate")?;
            ::std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            write_private(&key, made.signing_key.serialize_pem().as_bytes())?;
            ::std::fs::write(&cert, made.cert.pem())
                .with_context(|| format!("cannot write {}", cert.display()))?;
            ::tracing::info!(certificate = %cert.display(), "made a self-signed webhook certificate for local development");
        }
        let certificates = Self::from_dir(dir);
        certificates.reload()?;
        Ok(certificates)
    }

    /// A self-signed certificate for `names`, made now and kept in memory only: for a server
    /// whose clients skip verification or pin nothing (a Prometheus scraping /metrics with
    /// `insecureSkipVerify`), where no CA has to be distributed.
    pub fn self_signed(names: Vec<String>) -> ::anyhow::Result<Arc<Self>> {
        let made = ::rcgen::generate_simple_self_signed(names)
            .context("cannot make a self-signed certificate")?;
        let certificates = Self::managed();
        certificates.set(
            (
                made.cert.pem().into_bytes(),
                "the self-signed certificate".to_owned(),
            ),
            (
                made.signing_key.serialize_pem().into_bytes(),
                "its key".to_owned(),
            ),
        )?;
        Ok(certificates)
    }

    /// The certificate to serve now, if there is one yet.
    pub fn current(&self) -> Option<Arc<CertifiedKey>> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Whether there is a certificate to serve.
    pub fn is_ready(&self) -> bool {
        self.current().is_some()
    }

    /// Waits until there is a certificate.
    pub async fn ready(&self) {
        loop {
            let loaded = self.loaded.notified();
            if self.is_ready() {
                return;
            }
            loaded.await;
        }
    }

    /// Reads the files again; a failure keeps the certificate there was.
    pub fn reload(&self) -> ::anyhow::Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let read = |name: &str| {
            let path = dir.join(name);
            ::std::fs::read(&path)
                .with_context(|| format!("cannot read {}", path.display()))
                .map(|bytes| (bytes, path.display().to_string()))
        };
        self.set(read("tls.crt")?, read("tls.key")?)
    }

    /// Serves `cert` (a PEM chain) with `key` (a PEM private key) from now on; each comes
    /// with where it was read, for the messages. A failure keeps the certificate there was.
    pub fn set(
        &self,
        (cert, cert_source): (Vec<u8>, String),
        (key, key_source): (Vec<u8>, String),
    ) -> ::anyhow::Result<()> {
        let chain = CertificateDer::pem_slice_iter(&cert)
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("{cert_source} holds no PEM certificate"))?;
        if chain.is_empty() {
            ::anyhow::bail!("{cert_source} holds no certificate");
        }
        let key = PrivateKeyDer::from_pem_slice(&key)
            .with_context(|| format!("{key_source} holds no PEM private key"))?;
        let signing = crypto_provider()
            .key_provider
            .load_private_key(key)
            .with_context(|| format!("{key_source} is not a key rustls can sign with"))?;
        *self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) =
            Some(Arc::new(CertifiedKey::new(chain, signing)));
        self.loaded.notify_waiters();
        Ok(())
    }

    /// Re-reads the files whenever their modification times change, until `shutdown`.
    pub async fn watch(self: Arc<Self>, interval: Duration, shutdown: CancellationToken) {
        let Some(dir) = self.dir.clone() else {
            return;
        };
        let mut seen = modified(&dir);
        loop {
            ::tokio::select! {
                () = shutdown.cancelled() => return,
                () = ::tokio::time::sleep(interval) => {}
            }
            let now = modified(&dir);
            // Without a certificate yet, every round tries again (the files may have been
            // complete only after they were first seen).
            if now == seen && self.is_ready() {
                continue;
            }
            let changed = now != seen;
            seen = now;
            match self.reload() {
                Ok(()) => {
                    ::tracing::info!(dir = %dir.display(), "loaded the webhook certificate")
                }
                Err(err) if changed => {
                    ::tracing::warn!(error = %err, "cannot load the new webhook certificate; keeping the old one")
                }
                Err(_) => {}
            }
        }
    }
}

fn write_private(path: &Path, contents: &[u8]) -> ::anyhow::Result<()> {
    use ::std::io::Write as _;
    let mut options = ::std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    ::std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .and_then(|mut file| file.write_all(contents))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The modification times of the certificate files, to notice a renewal.
fn modified(dir: &Path) -> [Option<SystemTime>; 2] {
    ["tls.crt", "tls.key"].map(|name| {
        ::std::fs::metadata(dir.join(name))
            .and_then(|m| m.modified())
            .ok()
    })
}

/// The cryptography of the manager's TLS: *ring*, which builds with a C compiler alone (no
/// CMake or assembler as aws-lc-rs needs), so the manager builds the same on Alpine, in CI and
/// on a laptop. rustls 0.23.48 deprecated it for lacking post-quantum key exchange; the
/// manager's clients (the API server, Prometheus) then agree on X25519, as before.
#[allow(deprecated)]
pub(crate) fn crypto_provider() -> ::tokio_rustls::rustls::crypto::CryptoProvider {
    ::tokio_rustls::rustls::crypto::ring::default_provider()
}

#[cfg(test)]
mod tests;
