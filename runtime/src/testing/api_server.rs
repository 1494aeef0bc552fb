//! The mocked API server: the requests it receives, and the script that expects and answers
//! them.

use ::std::future::Future;
use ::std::time::Duration;

use ::futures::FutureExt as _;
use ::http::{Method, Request, Response, StatusCode};
use ::k8s_openapi::api::core::v1::Service;
use ::kube::client::Body;
use ::kube::{Resource, ResourceExt as _};
use ::serde::Serialize;
use ::serde_json::{Value, json};
use ::tower_test::mock::{Handle, SendResponse};

use super::{events_path, path_of, with_finalizer};
use crate::client::fingerprint::FINGERPRINT_ANNOTATION;
use crate::identity::field_manager;

/// How long a scenario may take before it fails.
const TIMEOUT: Duration = Duration::from_secs(5);

/// `body` without the fingerprint annotation, and without annotations if that was the only one.
fn without_fingerprint(mut body: Value) -> Value {
    let Some(metadata) = body.pointer_mut("/metadata").and_then(Value::as_object_mut) else {
        return body;
    };
    if let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(FINGERPRINT_ANNOTATION);
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
    }
    body
}

/// A request the mock API server received, and the means to answer it.
pub struct Received {
    /// The request's method.
    pub method: Method,
    /// Its path, without the query.
    pub path: String,
    /// Its query parameters, in order.
    pub query: Vec<(String, String)>,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
    /// The JSON body; `Null` when there is none.
    pub body: Value,
    respond: SendResponse<Response<Body>>,
}

impl Received {
    /// Whether the query has `key` set to `value`.
    pub fn has_query(&self, key: &str, value: &str) -> bool {
        self.query.iter().any(|(k, v)| k == key && v == value)
    }

    /// Answers with `status` and `body` as JSON.
    pub fn reply(self, status: StatusCode, body: &impl Serialize) {
        let body = serde_json::to_string(body).expect("the response body serializes");
        self.reply_raw(status, body);
    }

    /// Answers with `status` and `body` as they are.
    pub fn reply_raw(self, status: StatusCode, body: String) {
        let response = Response::builder()
            .status(status)
            .body(Body::from(body.into_bytes()));
        self.respond
            .send_response(response.expect("a valid response"));
    }

    /// Answers with the `Status` object the API server sends for a failure with `status`.
    pub fn fail(self, status: StatusCode) {
        let reason = match status {
            StatusCode::NOT_FOUND => "NotFound",
            StatusCode::CONFLICT => "Conflict",
            StatusCode::FORBIDDEN => "Forbidden",
            _ => "InternalError",
        };
        let failure = json!({
            "apiVersion": "v1", "kind": "Status", "status": "Failure",
            "message": "injected failure", "reason": reason, "code": status.as_u16(),
        });
        self.reply(status, &failure);
    }

    fn describe(&self) -> String {
        let query = self
            .query
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        format!(
            "{} {}?{query} with body {}",
            self.method, self.path, self.body
        )
    }
}

/// The mock API server: each `expect_*` awaits the next request, checks it and answers it.
pub struct ApiServer {
    handle: Handle<Request<Body>, Response<Body>>,
    /// The request the script waits for, for the message of a scenario that times out.
    expecting: Option<String>,
}

impl ApiServer {
    /// The server side of `handle`, expecting nothing yet.
    pub(super) fn new(handle: Handle<Request<Body>, Response<Body>>) -> Self {
        Self {
            handle,
            expecting: None,
        }
    }

    /// Runs `code` while `script` plays the API server, and returns what `code` returns.
    ///
    /// Fails when the code sends a request the script does not expect (after the script has
    /// finished, too), or when the scenario does not finish within 5 seconds.
    pub async fn run<T>(
        &mut self,
        code: impl Future<Output = T>,
        script: impl AsyncFnOnce(&mut ApiServer),
    ) -> T {
        let (done, finished) = ::tokio::sync::oneshot::channel::<()>();
        let code = async move {
            let result = code.await;
            let _ = done.send(());
            result
        };
        let server = async {
            script(&mut *self).await;
            self.expecting = None;
            ::tokio::select! {
                _ = finished => {}
                request = self.handle.next_request() => if let Some((request, respond)) = request {
                    let unexpected = Self::receive(request, respond).await;
                    panic!("the script expects no more requests, but got {}", unexpected.describe());
                }
            }
        };
        let outcome = ::tokio::time::timeout(TIMEOUT, async { ::tokio::join!(code, server) }).await;
        match outcome {
            Ok((result, ())) => result,
            Err(_) => {
                let pending = self.handle.next_request().now_or_never().flatten();
                match (pending, self.expecting.take()) {
                    (Some((request, respond)), _) => {
                        let request = Self::receive(request, respond).await;
                        panic!("scenario timed out with {} unanswered", request.describe())
                    }
                    (None, Some(expected)) => {
                        panic!(
                            "scenario timed out: the script expects {expected}, which never came"
                        )
                    }
                    (None, None) => {
                        panic!("scenario timed out: the code under test never finished")
                    }
                }
            }
        }
    }

    /// Awaits the next request, whatever it is.
    pub async fn next(&mut self) -> Received {
        let (request, respond) = self
            .handle
            .next_request()
            .await
            .expect("the client is gone: the code under test has finished");
        Self::receive(request, respond).await
    }

    /// Awaits the next request, and fails unless it is `method` on `path`.
    pub async fn expect(&mut self, method: Method, path: &str) -> Received {
        self.expecting = Some(format!("{method} {path}"));
        let received = self.next().await;
        assert!(
            received.method == method && received.path == path,
            "the script expects {method} {path}, but got {}",
            received.describe()
        );
        received
    }

    /// Expects a server-side apply to `path`: forced, by the manager's field manager.
    pub async fn expect_apply_to(&mut self, path: &str) -> Received {
        let request = self.expect(Method::PATCH, path).await;
        let what = request.describe();
        assert!(request.has_query("fieldManager", field_manager()), "{what}");
        assert!(request.has_query("force", "true"), "{what}");
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/apply-patch+yaml"),
            "{what}"
        );
        request
    }

    /// Expects the server-side apply of `desired`, with `desired` as its body (and maybe its
    /// fingerprint annotation, see [`client`](crate::client)). Answer it.
    pub async fn expect_applied<C>(&mut self, desired: &C) -> Received
    where
        C: Resource<DynamicType = ()> + Serialize,
    {
        let request = self.expect_apply_to(&path_of(desired)).await;
        let expected = serde_json::to_value(desired).expect("the object serializes");
        let body = without_fingerprint(request.body.clone());
        assert_eq!(body, expected, "the applied {}", C::kind(&()));
        request
    }

    /// Expects the read, then the server-side apply, of `desired`, the first time: the read
    /// answers Not Found, the apply with `desired` created.
    pub async fn expect_created<C>(&mut self, desired: &C)
    where
        C: Resource<DynamicType = ()> + Serialize,
    {
        self.expect_get(desired, None).await;
        let request = self.expect_applied(desired).await;
        request.reply(StatusCode::CREATED, desired);
    }

    /// Expects the read, then the server-side apply, of `desired`, which exists as
    /// `stored`; answers both with `stored`, and returns the applied body.
    pub async fn expect_updated<C>(&mut self, desired: &C, stored: &C) -> Value
    where
        C: Resource<DynamicType = ()> + Serialize,
    {
        self.expect_get(desired, Some(stored)).await;
        let request = self.expect_applied(desired).await;
        let body = request.body.clone();
        request.reply(StatusCode::OK, stored);
        body
    }

    /// Expects a read of the object `obj` names; answers with `found`, or Not Found.
    pub async fn expect_get<C>(&mut self, obj: &C, found: Option<&C>)
    where
        C: Resource<DynamicType = ()> + Serialize,
    {
        let request = self.expect(Method::GET, &path_of(obj)).await;
        match found {
            Some(found) => request.reply(StatusCode::OK, found),
            None => request.fail(StatusCode::NOT_FOUND),
        }
    }

    /// Expects the JSON patch that adds the finalizer `name` to `obj`, which has none yet.
    pub async fn expect_finalizer_added<K>(&mut self, obj: &K, name: &str)
    where
        K: Resource<DynamicType = ()> + Clone + Serialize,
    {
        let request = self.expect(Method::PATCH, &path_of(obj)).await;
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/json-patch+json")
        );
        assert_eq!(
            request.body,
            json!([
                { "op": "test", "path": "/metadata/finalizers", "value": null },
                { "op": "add", "path": "/metadata/finalizers", "value": [name] },
            ])
        );
        request.reply(StatusCode::OK, &with_finalizer(obj.clone(), name));
    }

    /// Expects the JSON patch that removes the finalizer `name`, the only one, from `obj`.
    pub async fn expect_finalizer_removed<K>(&mut self, obj: &K, name: &str)
    where
        K: Resource<DynamicType = ()> + Clone + Serialize,
    {
        let request = self.expect(Method::PATCH, &path_of(obj)).await;
        assert_eq!(
            request.body,
            json!([
                { "op": "test", "path": "/metadata/finalizers/0", "value": name },
                { "op": "remove", "path": "/metadata/finalizers/0" },
            ])
        );
        let mut obj = obj.clone();
        obj.meta_mut().finalizers = None;
        request.reply(StatusCode::OK, &obj);
    }

    /// Expects the server-side apply of a status to `obj`, and answers with `obj` holding it;
    /// returns the applied status (its observed generation is [`GENERATION`](super::GENERATION)).
    pub async fn expect_status_applied<K>(&mut self, obj: &K) -> Value
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let request = self.expect_status_apply(obj).await;
        let status = request.body["status"].clone();
        let mut stored = serde_json::to_value(obj).expect("the object serializes");
        stored["status"] = status.clone();
        request.reply(StatusCode::OK, &stored);
        status
    }

    /// Expects the server-side apply of a status to `obj`, and fails it with `status`.
    pub async fn expect_status_apply_failing<K>(&mut self, obj: &K, status: StatusCode)
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        self.expect_status_apply(obj).await.fail(status);
    }

    async fn expect_status_apply<K>(&mut self, obj: &K) -> Received
    where
        K: Resource<DynamicType = ()>,
    {
        let request = self
            .expect_apply_to(&format!("{}/status", path_of(obj)))
            .await;
        assert_eq!(request.body["apiVersion"], K::api_version(&()).as_ref());
        assert_eq!(request.body["kind"], K::kind(&()).as_ref());
        assert!(request.body["status"].is_object(), "{}", request.body);
        request
    }

    /// Expects the requests of an operand's first reconcile (see [`Operand`]), with nothing
    /// cached yet: the apply of `service`, if it has one, the creation of `workload` (read,
    /// then applied) with its `Created` event, then the apply of the status of `obj`, which it
    /// returns.
    ///
    /// [`Operand`]: crate::operand::Operand
    pub async fn expect_new_operand<K, W>(
        &mut self,
        obj: &K,
        service: Option<&Service>,
        workload: &W,
    ) -> Value
    where
        K: Resource<DynamicType = ()> + Serialize,
        W: Resource<DynamicType = ()> + Serialize,
    {
        if let Some(service) = service {
            let request = self.expect_applied(service).await;
            request.reply(StatusCode::CREATED, service);
        }
        self.expect_created(workload).await;
        self.expect_event(obj, "Normal", "Created").await;
        self.expect_status_applied(obj).await
    }

    /// Expects a new event of `type_` (`Normal` or `Warning`) about `obj` with `reason`;
    /// returns its body.
    pub async fn expect_event<K>(&mut self, obj: &K, type_: &str, reason: &str) -> Value
    where
        K: Resource<DynamicType = ()>,
    {
        let path = events_path(obj.namespace().as_deref());
        let request = self.expect(Method::POST, &path).await;
        let event = request.body.clone();
        assert_eq!(event["reason"], reason, "{event}");
        assert_eq!(event["type"], type_, "{event}");
        assert_eq!(event["reportingController"], field_manager(), "{event}");
        let regarding = &event["regarding"];
        assert_eq!(regarding["kind"], K::kind(&()).as_ref(), "{event}");
        assert_eq!(regarding["name"], obj.name_any(), "{event}");
        assert_eq!(regarding["namespace"].as_str(), obj.namespace().as_deref());
        assert_eq!(regarding["uid"].as_str(), obj.uid().as_deref());
        request.reply(StatusCode::CREATED, &event);
        event
    }

    async fn receive(request: Request<Body>, respond: SendResponse<Response<Body>>) -> Received {
        let (parts, body) = request.into_parts();
        let bytes = body.collect_bytes().await.expect("a request body");
        Received {
            method: parts.method,
            path: parts.uri.path().to_owned(),
            query: parts
                .uri
                .query()
                .unwrap_or_default()
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (key.to_owned(), value.to_owned())
                })
                .collect(),
            content_type: parts
                .headers
                .get(::http::header::CONTENT_TYPE)
                .map(|value| value.to_str().expect("an ASCII header").to_owned()),
            body: if bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&bytes).expect("a JSON request body")
            },
            respond,
        }
    }
}
