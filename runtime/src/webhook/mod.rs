//! The webhook server: defaulting and validating admission webhooks and conversion webhooks,
//! served over HTTPS on a port of their own.
//!
//! A kind's webhook file (under `src/webhooks/`) implements [`Admission`] with the kind's
//! rules; this module reads the AdmissionReview the API server sends, calls them, and answers:
//! the defaults become a JSON patch, the field errors a denial with the API server's own
//! message shape. Whatever arrives, the answer is a review: a request that cannot be read is
//! refused with the reason, never a crash.
//!
//! The certificate comes, in this order, from:
//! - `tls.crt` and `tls.key` in `WEBHOOK_CERT_DIR`, re-read when the files change
//!   (cert-manager renews them in place);
//! - the Secret `WEBHOOK_CERT_SECRET`, where the manager keeps a CA and a serving certificate
//!   it makes itself and whose CA it injects into its webhook configurations and CRDs
//!   (`webhook_certs`, the default of config/default);
//! - neither, as under `make run`: a self-signed certificate for `localhost`, made once and
//!   kept in the temporary directory, so that a development cluster can trust it across
//!   restarts.

use ::std::net::SocketAddr;
use ::std::path::{Path, PathBuf};
use ::std::sync::{Arc, RwLock};
use ::std::time::{Duration, SystemTime};

use ::anyhow::Context as _;
use ::axum::http::header;
use ::axum::response::{IntoResponse as _, Response};
use ::axum::{Router, body::Bytes, routing::post};
use ::kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use ::kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use ::kube::core::{DynamicObject, Resource, Status};
use ::serde::{Serialize, de::DeserializeOwned};
use ::serde_json::Value;
use ::tokio::net::{TcpListener, TcpStream};
use ::tokio::sync::{Notify, mpsc};
use ::tokio_rustls::TlsAcceptor;
use ::tokio_rustls::rustls::pki_types::pem::PemObject as _;
use ::tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use ::tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use ::tokio_rustls::rustls::sign::CertifiedKey;
use ::tokio_rustls::rustls::{self, ServerConfig};
use ::tokio_rustls::server::TlsStream;
use ::tokio_util::sync::CancellationToken;

/// Where the webhook server listens unless `WEBHOOK_BIND_ADDRESS` says otherwise (the port
/// of controller-runtime's webhook server, which `config/webhook/service.yaml` targets).
pub const DEFAULT_BIND_ADDRESS: &str = "0.0.0.0:9443";

/// How often the certificate files are checked for a change.
const RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// How long a client has to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The names the local certificate is valid for.
const LOCAL_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "host.docker.internal"];

/// A kind's admission rules. Every method has a default that changes nothing and allows
/// everything, so a kind's file implements only the webhooks it has.
pub trait Admission: Send + Sync + 'static {
    /// The kind, in the version this webhook receives.
    type Object: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync;

    /// `object` with its defaults set, on create and update. The changes become a JSON patch.
    fn default(&self, object: Self::Object) -> Self::Object {
        object
    }

    /// Whether `object` may be created.
    fn validate_create(&self, _object: &Self::Object) -> Verdict {
        Verdict::allow()
    }

    /// Whether `old` may become `new`.
    fn validate_update(&self, _old: &Self::Object, _new: &Self::Object) -> Verdict {
        Verdict::allow()
    }

    /// Whether `object` may be deleted.
    fn validate_delete(&self, _object: &Self::Object) -> Verdict {
        Verdict::allow()
    }
}

/// What a validation says: the object is refused when there is a field error; warnings reach
/// the client (kubectl prints them) either way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Why the object is refused.
    pub errors: Vec<FieldError>,
    /// What the client is warned of.
    pub warnings: Vec<String>,
}

/// A field that is wrong: `field` as the API server writes paths (`spec.replicas`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field's path.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl Verdict {
    /// Allows the object, with no warnings.
    pub fn allow() -> Self {
        Self::default()
    }

    /// Refuses the object for `field`.
    #[must_use]
    pub fn error(mut self, field: impl Into<String>, message: impl Into<String>) -> Self {
        self.errors.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
        self
    }

    /// Allows the object, telling the client `message`.
    #[must_use]
    pub fn warn(mut self, message: impl Into<String>) -> Self {
        self.warnings.push(message.into());
        self
    }

    /// Whether the object is allowed: no field is wrong.
    pub fn is_allowed(&self) -> bool {
        self.errors.is_empty()
    }
}

/// The answer of a defaulting webhook to the AdmissionReview `body`.
pub fn mutate<A: Admission>(webhook: &A, body: &[u8]) -> AdmissionReview<DynamicObject> {
    respond(body, |request| {
        let response = AdmissionResponse::from(request);
        let Some(object) = &request.object else {
            return response;
        };
        let (before, after) = match typed::<A::Object>(object).and_then(|typed| {
            let before = to_value(&typed)?;
            Ok((before, to_value(&webhook.default(typed))?))
        }) {
            Ok(values) => values,
            Err(message) => return refuse(response, 400, "BadRequest", message),
        };
        let patch = ::json_patch::diff(&before, &after);
        if patch.0.is_empty() {
            return response;
        }
        let refused = response.clone();
        response.with_patch(patch).unwrap_or_else(|err| {
            refuse(
                refused,
                500,
                "InternalError",
                format!("cannot encode the defaults: {err}"),
            )
        })
    })
}

/// The answer of a validating webhook to the AdmissionReview `body`.
pub fn validate<A: Admission>(webhook: &A, body: &[u8]) -> AdmissionReview<DynamicObject> {
    respond(body, |request| {
        let response = AdmissionResponse::from(request);
        let object = |which: &Option<DynamicObject>, what: &str| match which {
            Some(object) => typed::<A::Object>(object),
            None => Err(format!("the request has no {what}")),
        };
        let verdict = match request.operation {
            Operation::Create => {
                object(&request.object, "object").map(|new| webhook.validate_create(&new))
            }
            Operation::Update => object(&request.old_object, "oldObject").and_then(|old| {
                object(&request.object, "object").map(|new| webhook.validate_update(&old, &new))
            }),
            Operation::Delete => {
                object(&request.old_object, "oldObject").map(|old| webhook.validate_delete(&old))
            }
            Operation::Connect => Ok(Verdict::allow()),
        };
        match verdict {
            Ok(verdict) => judge(response, request, verdict),
            Err(message) => refuse(response, 400, "BadRequest", message),
        }
    })
}

/// Converts each object of a ConversionReview to the desired version with `convert`, which
/// gets the object and the desired `apiVersion`. One object that does not convert fails the
/// whole review, with its message, as the API server expects.
pub fn convert<F>(body: &[u8], convert: F) -> ConversionReview
where
    F: Fn(Value, &str) -> Result<Value, String>,
{
    let request = ::serde_json::from_slice::<ConversionReview>(body)
        .map_err(|err| format!("cannot read the ConversionReview: {err}"))
        .and_then(|review| {
            ConversionRequest::from_review(review)
                .map_err(|_| "the ConversionReview has no request".to_owned())
        });
    let request = match request {
        Ok(request) => request,
        Err(message) => {
            return ConversionResponse::invalid(
                Status::failure(&message, "BadRequest").with_code(400),
            )
            .into_review();
        }
    };
    let desired = request.desired_api_version.clone();
    // A conversion that panics (a `From` impl's `expect`) fails the review instead of the
    // connection, so the API server reports its message.
    let converted: Result<Vec<Value>, String> = request
        .objects
        .iter()
        .map(|object| {
            ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| {
                convert(object.clone(), &desired)
            }))
            .unwrap_or_else(|panic| {
                Err(format!("the conversion failed: {}", panic_message(&*panic)))
            })
        })
        .collect();
    let response = ConversionResponse::for_request(request);
    match converted {
        Ok(objects) => response.success(objects),
        Err(message) => response.failure(Status::failure(&message, "ConversionFailed")),
    }
    .into_review()
}

fn panic_message(panic: &(dyn ::std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|message| (*message).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "it panicked".to_owned())
}

/// An object of a ConversionReview as the type of its version.
pub fn read<K: DeserializeOwned>(object: Value) -> Result<K, String> {
    let described = describe(&object);
    ::serde_json::from_value(object)
        .map_err(|err| format!("{described} does not match its schema: {err}"))
}

/// A converted object, as the ConversionReview returns it.
pub fn write<K: Serialize>(object: &K) -> Result<Value, String> {
    to_value(object)
}

/// The failure of a conversion from or to a version the kind does not have.
pub fn unknown_version(api_version: &str) -> String {
    format!("no conversion from or to `{api_version}`: it is not a version of this kind")
}

/// `Kind "name" (apiVersion)`, for messages.
fn describe(object: &Value) -> String {
    format!(
        "{} {:?} ({})",
        object["kind"].as_str().unwrap_or("the object"),
        object["metadata"]["name"].as_str().unwrap_or_default(),
        object["apiVersion"].as_str().unwrap_or("no apiVersion")
    )
}

/// Reads the review in `body` and answers its request with `answer`.
fn respond<F>(body: &[u8], answer: F) -> AdmissionReview<DynamicObject>
where
    F: FnOnce(&AdmissionRequest<DynamicObject>) -> AdmissionResponse,
{
    let request = ::serde_json::from_slice::<AdmissionReview<DynamicObject>>(body)
        .map_err(|err| format!("cannot read the AdmissionReview: {err}"))
        .and_then(|review| {
            let request: Result<AdmissionRequest<DynamicObject>, _> = review.try_into();
            request.map_err(|_| "the AdmissionReview has no request".to_owned())
        });
    match request {
        Ok(request) => answer(&request).into_review(),
        Err(message) => AdmissionResponse::invalid(message).into_review(),
    }
}

/// The response to a validation: a denial naming every field error, as the API server words
/// its own (`Kind "name" is invalid: spec.x: message`), and the warnings.
fn judge(
    response: AdmissionResponse,
    request: &AdmissionRequest<DynamicObject>,
    verdict: Verdict,
) -> AdmissionResponse {
    let mut response = response;
    if !verdict.warnings.is_empty() {
        response.warnings = Some(verdict.warnings);
    }
    if verdict.errors.is_empty() {
        return response;
    }
    let fields: Vec<String> = verdict
        .errors
        .iter()
        .map(|error| format!("{}: {}", error.field, error.message))
        .collect();
    let message = format!(
        "{} {:?} is invalid: {}",
        request.kind.kind,
        request.name,
        fields.join(", ")
    );
    refuse(response, 422, "Invalid", message)
}

fn refuse(
    response: AdmissionResponse,
    code: u16,
    reason: &str,
    message: String,
) -> AdmissionResponse {
    let mut response = response.deny(&message);
    response.result = Status::failure(&message, reason).with_code(code);
    response
}

/// The object of a request as the webhook's type.
fn typed<K: DeserializeOwned>(object: &DynamicObject) -> Result<K, String> {
    to_value(object).and_then(|value| {
        ::serde_json::from_value(value)
            .map_err(|err| format!("the object does not match its schema: {err}"))
    })
}

fn to_value<T: Serialize>(object: &T) -> Result<Value, String> {
    ::serde_json::to_value(object).map_err(|err| format!("cannot encode the object: {err}"))
}

/// The webhooks of the manager, as routes of the webhook server.
#[derive(Default)]
pub struct Webhooks {
    router: Router,
}

impl Webhooks {
    /// No webhooks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `webhook`'s defaults at `path`.
    #[must_use]
    pub fn defaulting<A: Admission>(self, path: &str, webhook: Arc<A>) -> Self {
        self.route(path, move |body| json(&mutate(&*webhook, &body)))
    }

    /// Serves `webhook`'s validations at `path`.
    #[must_use]
    pub fn validation<A: Admission>(self, path: &str, webhook: Arc<A>) -> Self {
        self.route(path, move |body| json(&validate(&*webhook, &body)))
    }

    /// Serves the conversion of a kind at `path` (see [`convert`]).
    #[must_use]
    pub fn conversion(
        self,
        path: &str,
        converter: fn(Value, &str) -> Result<Value, String>,
    ) -> Self {
        self.route(path, move |body| json(&convert(&body, converter)))
    }

    fn route<F>(self, path: &str, answer: F) -> Self
    where
        F: Fn(Bytes) -> Response + Clone + Send + Sync + 'static,
    {
        let router = self.router.route(
            path,
            post(move |body: Bytes| {
                let answer = answer.clone();
                async move { answer(body) }
            }),
        );
        Self { router }
    }

    /// The routes of every webhook, for [`Manager::webhooks`](crate::manager::Manager::webhooks).
    pub fn router(self) -> Router {
        self.router
    }
}

/// A review as the body of the answer.
fn json<T: Serialize>(review: &T) -> Response {
    match ::serde_json::to_vec(review) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(err) => {
            ::tracing::error!(error = %err, "cannot encode a webhook's answer");
            ::axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Where a manager run without `WEBHOOK_CERT_DIR` keeps its local certificate: where
/// controller-runtime looks for one, so that Kubebuilder's habits carry over.
pub fn local_cert_dir() -> PathBuf {
    ::std::env::temp_dir()
        .join("k8s-webhook-server")
        .join("serving-certs")
}

/// Where the webhook server listens and finds its certificate: `WEBHOOK_BIND_ADDRESS`,
/// `WEBHOOK_CERT_DIR` and `WEBHOOK_CERT_SECRET`, environment variables so that the manager's
/// own flags need no change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Where the server listens (`WEBHOOK_BIND_ADDRESS`).
    pub bind_address: SocketAddr,
    /// The directory of `tls.crt` and `tls.key`; it wins over `cert_secret`.
    pub cert_dir: Option<PathBuf>,
    /// The Secret (in the manager's namespace) of a self-managed certificate.
    pub cert_secret: Option<String>,
}

impl Options {
    /// The options the environment sets (`WEBHOOK_BIND_ADDRESS`, `WEBHOOK_CERT_DIR`,
    /// `WEBHOOK_CERT_SECRET`).
    pub fn from_env() -> ::anyhow::Result<Self> {
        let variable = |name: &str| {
            ::std::env::var(name)
                .ok()
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let address =
            variable("WEBHOOK_BIND_ADDRESS").unwrap_or_else(|| DEFAULT_BIND_ADDRESS.to_owned());
        let bind_address = address.parse().with_context(|| {
            format!(
                "WEBHOOK_BIND_ADDRESS `{address}` is not an address such as {DEFAULT_BIND_ADDRESS}"
            )
        })?;
        Ok(Self {
            bind_address,
            cert_dir: variable("WEBHOOK_CERT_DIR").map(PathBuf::from),
            cert_secret: variable("WEBHOOK_CERT_SECRET"),
        })
    }
}

/// The serving certificate, swapped in place when its files change or the self-managed
/// certificate is renewed.
#[derive(Debug)]
pub struct Certificates {
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
        let signing = rustls::crypto::ring::default_provider()
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

#[derive(Debug)]
struct Resolver(Arc<Certificates>);

impl ResolvesServerCert for Resolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.current()
    }
}

/// The TLS configuration that serves whatever certificate `certificates` holds at the time of
/// each handshake.
pub fn tls_config(certificates: Arc<Certificates>) -> ::anyhow::Result<ServerConfig> {
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .context("cannot set up TLS")?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(Resolver(certificates)));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The webhook server's socket, bound up front so a port clash fails the start.
pub async fn bind(address: SocketAddr) -> ::anyhow::Result<TcpListener> {
    TcpListener::bind(address).await.with_context(|| {
        format!(
            "cannot listen on {address} for webhooks: free the port or set WEBHOOK_BIND_ADDRESS"
        )
    })
}

/// Serves `router` over TLS on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    certificates: Arc<Certificates>,
    shutdown: CancellationToken,
) -> ::anyhow::Result<()> {
    serve_tls(listener, router, certificates, shutdown, "webhooks").await
}

/// Serves `router` over TLS on `listener` until `shutdown` is cancelled, re-reading the
/// certificate files (if any) when they change; `what` names the server in the logs.
pub async fn serve_tls(
    listener: TcpListener,
    router: Router,
    certificates: Arc<Certificates>,
    shutdown: CancellationToken,
    what: &'static str,
) -> ::anyhow::Result<()> {
    let addr = listener.local_addr()?;
    let acceptor = TlsAcceptor::from(Arc::new(tls_config(certificates.clone())?));
    let (sender, accepted) = mpsc::channel(64);
    ::tokio::spawn(accept_tls(listener, acceptor, sender, shutdown.clone()));
    ::tokio::spawn(certificates.watch(RELOAD_INTERVAL, shutdown.clone()));
    ::tracing::info!(%addr, "serving {what} over HTTPS");
    ::axum::serve(TlsListener { addr, accepted }, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .with_context(|| format!("{what} server on {addr} failed"))
}

/// Accepts connections and completes their handshakes side by side, so that one slow client
/// holds up no other.
async fn accept_tls(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    sender: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
    shutdown: CancellationToken,
) {
    loop {
        let (stream, peer) = ::tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    ::tracing::warn!(error = %err, "cannot accept a TLS connection");
                    ::tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let (acceptor, sender) = (acceptor.clone(), sender.clone());
        ::tokio::spawn(async move {
            match ::tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    let _ = sender.send((tls, peer)).await;
                }
                Ok(Err(err)) => {
                    ::tracing::debug!(%peer, error = %err, "TLS handshake failed")
                }
                Err(_) => ::tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

struct TlsListener {
    addr: SocketAddr,
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl ::axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(accepted) => accepted,
            // The acceptor stopped at the shutdown: the graceful shutdown ends the server.
            None => ::std::future::pending().await,
        }
    }

    fn local_addr(&self) -> ::std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

#[cfg(test)]
mod tests {
    use ::k8s_openapi::api::core::v1::ConfigMap;
    use ::serde_json::json;
    use ::tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// A webhook for ConfigMaps: it defaults `data.mode`, refuses a `mode` other than `fast`
    /// or `safe`, and warns of a missing `owner`.
    struct Modes;

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

    fn review(operation: &str, object: Value) -> Vec<u8> {
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

    fn config_map(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"}, "data": data})
    }

    /// The response of `review` as the API server reads it.
    fn response<T: Serialize>(review: T) -> Value {
        ::serde_json::to_value(review).unwrap()["response"].clone()
    }

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

    fn conversion_review(objects: Value) -> Vec<u8> {
        ::serde_json::to_vec(&json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "c0ffee00-1d1b-4bd7-9a1c-0d1f4f1c0c01", "desiredAPIVersion": "db.example.com/v2", "objects": objects}
        }))
        .unwrap()
    }

    fn relabel(mut object: Value, desired: &str) -> Result<Value, String> {
        if object["spec"]["broken"] == true {
            return Err("spec.broken cannot be converted".to_owned());
        }
        object["apiVersion"] = json!(desired);
        Ok(object)
    }

    #[test]
    fn conversion_answers_every_object_or_fails_the_review() {
        let object = json!({"apiVersion": "db.example.com/v1", "kind": "Backup", "metadata": {"name": "a"}, "spec": {}});
        let answer = response(convert(&conversion_review(json!([object])), relabel));
        assert_eq!(answer["uid"], "c0ffee00-1d1b-4bd7-9a1c-0d1f4f1c0c01");
        assert_eq!(answer["result"]["status"], "Success");
        assert_eq!(
            answer["convertedObjects"][0]["apiVersion"],
            "db.example.com/v2"
        );
        assert_eq!(
            answer["convertedObjects"][0]["metadata"],
            json!({"name": "a"})
        );

        let broken =
            json!({"apiVersion": "db.example.com/v1", "kind": "Backup", "spec": {"broken": true}});
        let answer = response(convert(
            &conversion_review(json!([object, broken])),
            relabel,
        ));
        assert_eq!(answer["result"]["status"], "Failure");
        assert_eq!(
            answer["result"]["message"],
            "spec.broken cannot be converted"
        );

        let answer = response(convert(&conversion_review(json!([object])), |_, _| {
            panic!("spec.size is gone")
        }));
        assert_eq!(answer["result"]["status"], "Failure");
        assert_eq!(
            answer["result"]["message"],
            "the conversion failed: spec.size is gone"
        );
        assert!(
            read::<ConfigMap>(json!({"kind": "ConfigMap", "data": 7}))
                .unwrap_err()
                .contains("does not match its schema")
        );
        assert!(unknown_version("db.example.com/v9").contains("`db.example.com/v9`"));

        let answer = response(convert(b"{", relabel));
        assert_eq!(answer["result"]["status"], "Failure");
        assert!(
            answer["result"]["message"]
                .as_str()
                .unwrap()
                .contains("cannot read the ConversionReview")
        );
    }

    #[tokio::test]
    async fn a_certificate_directory_is_ready_once_it_has_files_and_reloads_them() {
        let dir = ::std::env::temp_dir().join(format!("webhook-certs-{}", ::std::process::id()));
        let _ = ::std::fs::remove_dir_all(&dir);
        let waiting = Certificates::from_dir(dir.clone());
        assert!(!waiting.is_ready());

        let local = Certificates::local(dir.clone()).unwrap();
        assert!(local.is_ready());
        let first = ::std::fs::read(dir.join("tls.crt")).unwrap();
        // Made once: a second start keeps the certificate a development cluster trusts.
        Certificates::local(dir.clone()).unwrap();
        assert_eq!(::std::fs::read(dir.join("tls.crt")).unwrap(), first);

        let shutdown = CancellationToken::new();
        ::tokio::spawn(
            waiting
                .clone()
                .watch(Duration::from_millis(20), shutdown.clone()),
        );
        ::tokio::time::timeout(Duration::from_secs(5), waiting.ready())
            .await
            .expect("picked up");
        shutdown.cancel();
        ::std::fs::write(dir.join("tls.crt"), "garbage").unwrap();
        assert!(waiting.reload().is_err());
        assert!(
            waiting.is_ready(),
            "a bad renewal keeps the certificate there was"
        );
        let _ = ::std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn the_server_answers_reviews_over_tls() {
        let dir = ::std::env::temp_dir().join(format!("webhook-tls-{}", ::std::process::id()));
        let _ = ::std::fs::remove_dir_all(&dir);
        let certificates = Certificates::local(dir.clone()).unwrap();
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let router = Webhooks::new()
            .validation("/validate", Arc::new(Modes))
            .router();
        let server = ::tokio::spawn(serve(listener, router, certificates, shutdown.clone()));

        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&::std::fs::read(dir.join("tls.crt")).unwrap()) {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = ::tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = TcpStream::connect(addr).await.unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut tls = connector
            .connect(name, tcp)
            .await
            .expect("the local certificate is valid for localhost");
        let body = review("CREATE", config_map(json!({"mode": "slow", "owner": "me"})));
        let head = format!(
            "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        tls.write_all(head.as_bytes()).await.unwrap();
        tls.write_all(&body).await.unwrap();
        let mut answer = Vec::new();
        let _ = tls.read_to_end(&mut answer).await;
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains(r#""allowed":false"#), "{answer}");

        shutdown.cancel();
        ::tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("stops")
            .unwrap()
            .unwrap();
        let _ = ::std::fs::remove_dir_all(&dir);
    }
}
