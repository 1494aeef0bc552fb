//! What a reconcile reads and writes through its [`Context`]: server-side apply under the
//! manager's field manager ([`Context::apply`], [`Context::apply_cached`]), the status
//! ([`Context::apply_status`], and what it changed: [`StatusUpdate`]), events ([`Events`]),
//! and the controllers' copies of what they watch, against which a desired object is judged so
//! that a steady reconcile sends nothing.

mod apply;
pub(crate) mod cache;
pub(crate) mod context;
mod events;
pub(crate) mod fingerprint;
pub(crate) mod recent_applies;
mod status;

pub use self::apply::Applied;
pub use self::context::Context;
pub use self::events::Events;
pub use self::status::StatusUpdate;
