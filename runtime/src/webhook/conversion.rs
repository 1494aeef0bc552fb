//! Conversion webhooks: each object of a ConversionReview converted to the version the API
//! server asks for, by the kind's own conversion function.

use ::kube::core::Status;
use ::kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use ::serde::{Serialize, de::DeserializeOwned};
use ::serde_json::Value;

use super::admission::to_value;

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

#[cfg(test)]
mod tests;
