//! The webhooks of a manager as the routes of its webhook server.

use ::std::sync::Arc;

use ::axum::http::header;
use ::axum::response::{IntoResponse as _, Response};
use ::axum::{Router, body::Bytes, routing::post};
use ::serde::Serialize;
use ::serde_json::Value;

use super::admission::{Admission, mutate, validate};
use super::conversion::convert;

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
