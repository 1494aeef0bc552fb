//! `// +opgen:` markers: instructions in comments of the generated project's Rust code, in
//! Kubebuilder's syntax with opgen's prefix. One grammar ([`syntax`]) and two readers:
//! [`rbac`] (the manager role, from the controllers and the runtime) and [`webhook`] (the
//! webhook configurations, from the webhook files). Every marker must parse, and an error
//! names its file and line and says what to write instead.

pub mod rbac;
pub mod syntax;
pub mod webhook;

pub use rbac::{CONTROLLERS_DIR, Marker, check_scope, parse_source, read_controllers};
pub use syntax::{InvalidMarkers, MarkerError, Place, Problem};
