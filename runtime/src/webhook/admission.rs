//! Admission webhooks: a kind's [`Admission`] rules, and the answer to the AdmissionReview the
//! API server sends. The defaults become a JSON patch, the field errors a denial with the API
//! server's own message shape. Whatever arrives, the answer is a review: a request that cannot
//! be read is refused with the reason, never a crash.

use ::kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use ::kube::core::{DynamicObject, Resource, Status};
use ::serde::{Serialize, de::DeserializeOwned};
use ::serde_json::Value;

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

pub(super) fn to_value<T: Serialize>(object: &T) -> Result<Value, String> {
    ::serde_json::to_value(object).map_err(|err| format!("cannot encode the object: {err}"))
}

#[cfg(test)]
mod tests;
