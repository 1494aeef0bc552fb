//! Edits of `PROJECT`, one per command that adds to it: a typed request, built once from the
//! command line, and the transition that returns the project after it, checked against
//! `PROJECT`'s rules, or refuses with what to do instead.

pub mod add_foreign;
pub mod add_resource;
pub mod add_webhooks;
mod refusal;

pub use refusal::{KindVersion, Owner, Refusal};
