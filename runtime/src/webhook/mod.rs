//! The webhook server: defaulting and validating admission webhooks and conversion webhooks,
//! served over HTTPS on a port of their own, on every replica of the manager.
//!
//! A kind's webhook file (under `src/webhooks/`) implements [`Admission`] with the kind's
//! rules, or a conversion function for [`convert`]; [`Webhooks`] routes the API server's
//! reviews to them, and the manager serves the routes
//! ([`Manager::webhooks`](crate::Manager::webhooks)).
//!
//! ```
//! use std::sync::Arc;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use opgen_runtime::webhook::{Admission, Verdict, Webhooks};
//!
//! /// Settings must say which mode they run in.
//! struct Settings;
//!
//! impl Admission for Settings {
//!     type Object = ConfigMap;
//!
//!     fn default(&self, mut settings: ConfigMap) -> ConfigMap {
//!         let data = settings.data.get_or_insert_with(Default::default);
//!         data.entry("mode".to_owned()).or_insert_with(|| "safe".to_owned());
//!         settings
//!     }
//!
//!     fn validate_create(&self, settings: &ConfigMap) -> Verdict {
//!         match settings.data.as_ref().and_then(|data| data.get("mode")) {
//!             Some(mode) if mode == "safe" || mode == "fast" => Verdict::allow(),
//!             _ => Verdict::allow().error("data.mode", "must be safe or fast"),
//!         }
//!     }
//! }
//!
//! let settings = Arc::new(Settings);
//! let router = Webhooks::new()
//!     .defaulting("/mutate-settings", settings.clone())
//!     .validation("/validate-settings", settings)
//!     .router();
//! # drop(router);
//! ```
//!
//! The certificate comes, in this order, from:
//! - `tls.crt` and `tls.key` in `WEBHOOK_CERT_DIR`, re-read when the files change
//!   (cert-manager renews them in place);
//! - the Secret `WEBHOOK_CERT_SECRET`, where the manager keeps a CA and a serving certificate
//!   it makes itself and whose CA it injects into its webhook configurations and CRDs (the
//!   default of config/default; see the `certs` module);
//! - neither, as under `make run`: a self-signed certificate for `localhost`, made once and
//!   kept in the temporary directory, so that a development cluster can trust it across
//!   restarts.

mod admission;
pub(crate) mod certificates;
pub(crate) mod certs;
mod conversion;
mod router;
pub(crate) mod server;
pub(crate) mod tls;

pub use self::admission::{Admission, FieldError, Verdict, mutate, validate};
pub use self::conversion::{convert, read, unknown_version, write};
pub use self::router::Webhooks;

#[cfg(test)]
mod tests;
