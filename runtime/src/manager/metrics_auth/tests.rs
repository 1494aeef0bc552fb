use ::axum::body::Body;
use ::http::{Method, StatusCode as Status};
use ::serde_json::json;
use ::tower::ServiceExt as _;

use super::*;
use crate::testing::{self, ApiServer};

const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

fn auth() -> (MetricsAuth, ApiServer) {
    let (ctx, server) = testing::context();
    (MetricsAuth::new(ctx.client), server)
}

/// Answers the TokenReview of `token` as the API server would for a service account, or
/// as unauthenticated.
async fn token_review(server: &mut ApiServer, token: &str, authenticated: bool) {
    let review = server.expect(Method::POST, TOKEN_REVIEWS).await;
    assert_eq!(review.body["spec"]["token"], token);
    let status = if authenticated {
        json!({"authenticated": true, "user": {
            "username": "system:serviceaccount:monitoring:prometheus",
            "uid": "42", "groups": ["system:serviceaccounts"],
        }})
    } else {
        json!({"authenticated": false, "error": "invalid bearer token"})
    };
    let mut body = review.body.clone();
    body["status"] = status;
    review.reply(Status::CREATED, &body);
}

async fn access_review(server: &mut ApiServer, allowed: bool) {
    let review = server.expect(Method::POST, ACCESS_REVIEWS).await;
    let spec = &review.body["spec"];
    assert_eq!(spec["user"], "system:serviceaccount:monitoring:prometheus");
    assert_eq!(spec["groups"], json!(["system:serviceaccounts"]));
    assert_eq!(spec["uid"], "42");
    assert_eq!(
        spec["nonResourceAttributes"],
        json!({"path": "/metrics", "verb": "get"})
    );
    let mut body = review.body.clone();
    body["status"] = json!({"allowed": allowed});
    review.reply(Status::CREATED, &body);
}

#[tokio::test]
async fn no_token_is_unauthenticated_without_asking_the_api_server() {
    let (auth, mut server) = auth();
    let verdict = server.run(auth.verdict(None), async |_| {}).await;
    assert_eq!(verdict.unwrap(), Verdict::Unauthenticated);
    let verdict = server.run(auth.verdict(Some("")), async |_| {}).await;
    assert_eq!(verdict.unwrap(), Verdict::Unauthenticated);
}

#[tokio::test]
async fn a_token_the_api_server_rejects_is_unauthenticated() {
    let (auth, mut server) = auth();
    let verdict = server
        .run(auth.verdict(Some("bad")), async |server| {
            token_review(server, "bad", false).await
        })
        .await;
    assert_eq!(verdict.unwrap(), Verdict::Unauthenticated);
}

#[tokio::test]
async fn the_subject_access_review_decides_between_allowed_and_forbidden() {
    let (auth, mut server) = auth();
    let verdict = server
        .run(auth.verdict(Some("reader")), async |server| {
            token_review(server, "reader", true).await;
            access_review(server, true).await;
        })
        .await;
    assert_eq!(verdict.unwrap(), Verdict::Allowed);
    let verdict = server
        .run(auth.verdict(Some("other")), async |server| {
            token_review(server, "other", true).await;
            access_review(server, false).await;
        })
        .await;
    assert_eq!(verdict.unwrap(), Verdict::Forbidden);
}

#[tokio::test(start_paused = true)]
async fn a_verdict_is_reused_until_it_expires() {
    let (auth, mut server) = auth();
    let review = async |server: &mut ApiServer| {
        token_review(server, "reader", true).await;
        access_review(server, true).await;
    };
    let first = server.run(auth.verdict(Some("reader")), review).await;
    assert_eq!(first.unwrap(), Verdict::Allowed);
    // No request: the script expects none.
    let again = server.run(auth.verdict(Some("reader")), async |_| {}).await;
    assert_eq!(again.unwrap(), Verdict::Allowed);

    ::tokio::time::advance(VERDICT_TTL).await;
    let expired = server.run(auth.verdict(Some("reader")), review).await;
    assert_eq!(expired.unwrap(), Verdict::Allowed);
}

#[tokio::test]
async fn a_failed_review_is_an_error_and_is_not_remembered() {
    let (auth, mut server) = auth();
    let failed = server
        .run(auth.verdict(Some("reader")), async |server| {
            server
                .expect(Method::POST, TOKEN_REVIEWS)
                .await
                .fail(Status::INTERNAL_SERVER_ERROR);
        })
        .await;
    assert!(failed.is_err());
    let verdict = server
        .run(auth.verdict(Some("reader")), async |server| {
            token_review(server, "reader", true).await;
            access_review(server, true).await;
        })
        .await;
    assert_eq!(verdict.unwrap(), Verdict::Allowed);
}

async fn call(router: ::axum::Router, authorization: Option<&str>) -> (Status, String) {
    let mut request = ::http::Request::get("/metrics");
    if let Some(value) = authorization {
        request = request.header(header::AUTHORIZATION, value);
    }
    let response = router
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let body = ::axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn the_protected_router_answers_401_403_and_200() {
    let (auth, mut server) = auth();
    let router = auth.protect(
        ::axum::Router::new().route("/metrics", ::axum::routing::get(|| async { "series" })),
    );

    let (status, body) = server.run(call(router.clone(), None), async |_| {}).await;
    assert_eq!(status, Status::UNAUTHORIZED, "{body}");
    assert!(body.contains("Authorization: Bearer"), "{body}");

    let forbidden = server.run(call(router.clone(), Some("Bearer other")), async |server| {
        token_review(server, "other", true).await;
        access_review(server, false).await;
    });
    let (status, body) = forbidden.await;
    assert_eq!(status, Status::FORBIDDEN, "{body}");
    assert!(body.contains("metrics-reader"), "{body}");

    let allowed = server.run(call(router, Some("Bearer reader")), async |server| {
        token_review(server, "reader", true).await;
        access_review(server, true).await;
    });
    assert_eq!(allowed.await, (Status::OK, "series".to_owned()));
}
