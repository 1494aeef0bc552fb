//! Who may read /metrics: the caller's bearer token is checked with a TokenReview (who is
//! it?) and a SubjectAccessReview (may it `get` the non-resource URL `/metrics`?), the checks
//! a Kubernetes API server would make, so that the `metrics-reader` ClusterRole is what grants
//! access. A Prometheus that scrapes every 30 seconds would otherwise cost two API requests
//! per scrape: each token's verdict is kept for [`VERDICT_TTL`].

use ::std::collections::HashMap;
use ::std::sync::{Arc, Mutex};
use ::std::time::Duration;

use ::axum::{
    extract::{Request, State},
    http::{StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse as _, Response},
};
use ::k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use ::k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use ::kube::api::{Api, PostParams};
use ::tokio::time::Instant;

/// How long a token's verdict is reused: a revoked grant is noticed within this time.
pub const VERDICT_TTL: Duration = Duration::from_secs(60);

/// The most verdicts kept; past it the expired ones go, then all of them.
const MAX_CACHED: usize = 1024;

/// The path whose `get` the SubjectAccessReview asks about.
const METRICS_PATH: &str = "/metrics";

/// What a token may do with /metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The token's subject may `get` /metrics: 200.
    Allowed,
    /// No token, or one the API server does not accept: 401.
    Unauthenticated,
    /// A valid token whose subject may not `get` /metrics: 403.
    Forbidden,
}

impl Verdict {
    fn message(self) -> &'static str {
        match self {
            Self::Allowed => "ok",
            Self::Unauthenticated => {
                "Unauthorized: send a service-account token as `Authorization: Bearer <token>`"
            }
            Self::Forbidden => {
                "Forbidden: the token's subject may not get /metrics; bind it to the metrics-reader ClusterRole"
            }
        }
    }

    fn status(self) -> StatusCode {
        match self {
            Self::Allowed => StatusCode::OK,
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::Forbidden => StatusCode::FORBIDDEN,
        }
    }
}

/// Checks tokens against the API server, remembering each verdict for [`VERDICT_TTL`].
#[derive(Clone)]
pub struct MetricsAuth {
    client: ::kube::Client,
    verdicts: Arc<Mutex<HashMap<String, (Verdict, Instant)>>>,
}

impl ::std::fmt::Debug for MetricsAuth {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        f.debug_struct("MetricsAuth").finish_non_exhaustive()
    }
}

impl MetricsAuth {
    /// Checks with the API server `client` talks to, as the manager's service account (which
    /// config/rbac allows to create both reviews).
    pub fn new(client: ::kube::Client) -> Self {
        Self {
            client,
            verdicts: Arc::default(),
        }
    }

    /// The verdict on a request bearing `token` (`None`: no `Authorization: Bearer` header).
    /// A review the API server fails to answer is an error, and is not remembered.
    pub async fn verdict(&self, token: Option<&str>) -> Result<Verdict, ::kube::Error> {
        let Some(token) = token.filter(|token| !token.is_empty()) else {
            return Ok(Verdict::Unauthenticated);
        };
        if let Some(verdict) = self.remembered(token) {
            return Ok(verdict);
        }
        let verdict = self.review(token).await?;
        self.remember(token, verdict);
        Ok(verdict)
    }

    async fn review(&self, token: &str) -> Result<Verdict, ::kube::Error> {
        // `spec.token` is optional before Kubernetes 1.37 and required from it: read from
        // JSON, the one spec compiles on every version.
        let spec: TokenReviewSpec =
            ::serde_json::from_value(::serde_json::json!({ "token": token }))
                .map_err(::kube::Error::SerdeError)?;
        let review = TokenReview {
            spec,
            ..TokenReview::default()
        };
        let reviewed = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let status = reviewed.status.unwrap_or_default();
        let user = match status.user {
            Some(user) if status.authenticated == Some(true) => user,
            _ => return Ok(Verdict::Unauthenticated),
        };
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                uid: user.uid,
                groups: user.groups,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(METRICS_PATH.to_owned()),
                    verb: Some("get".to_owned()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let decided = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await?;
        let allowed = decided.status.is_some_and(|status| status.allowed);
        Ok(if allowed {
            Verdict::Allowed
        } else {
            Verdict::Forbidden
        })
    }

    fn remembered(&self, token: &str) -> Option<Verdict> {
        let verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        verdicts
            .get(token)
            .filter(|(_, until)| Instant::now() < *until)
            .map(|(verdict, _)| *verdict)
    }

    fn remember(&self, token: &str, verdict: Verdict) {
        let mut verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if verdicts.len() >= MAX_CACHED {
            verdicts.retain(|_, (_, until)| now < *until);
            if verdicts.len() >= MAX_CACHED {
                verdicts.clear();
            }
        }
        verdicts.insert(token.to_owned(), (verdict, now + VERDICT_TTL));
    }

    /// `router` with every request checked first: 401 without a valid token, 403 when its
    /// subject may not read /metrics, 500 when the API server cannot say.
    pub fn protect(self, router: ::axum::Router) -> ::axum::Router {
        router.layer(middleware::from_fn_with_state(self, authorize))
    }
}

async fn authorize(State(auth): State<MetricsAuth>, request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim);
    match auth.verdict(token).await {
        Ok(Verdict::Allowed) => next.run(request).await,
        Ok(verdict) => (verdict.status(), format!("{}\n", verdict.message())).into_response(),
        Err(err) => {
            ::tracing::warn!(error = %err, "cannot review a /metrics request's token");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the API server did not review the token\n",
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests;
