//! Edits of `PROJECT`, one per command that changes it: a typed request, built once from the
//! command line, and the transition that returns the project after it, checked against
//! `PROJECT`'s rules, or refuses with what to do instead.

pub mod add_foreign;
pub mod add_resource;
pub mod add_webhooks;
pub mod change_settings;
mod refusal;
pub mod remove_resource;
pub mod remove_webhooks;

pub use refusal::{KindVersion, Owner, Refusal};
