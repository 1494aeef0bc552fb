//! The manager's name, one value for the process: the field manager of every server-side
//! apply, the reporting controller of events, the `app.kubernetes.io/managed-by` label of what
//! the controllers make, the prefix of the metrics and the label of the webhook
//! configurations whose CA the manager keeps.

use ::std::sync::OnceLock;

/// The manager's name until one is set: what the runtime's own tests, and a project's unit
/// tests, run under.
const UNNAMED_MANAGER: &str = "opgen-runtime";

static FIELD_MANAGER: OnceLock<String> = OnceLock::new();

/// The manager's name (see the module's documentation): the project's package name, which the
/// project hands to [`Manager::new`](crate::manager::Manager::new) (and the integration
/// tests' harness).
///
/// It is one value for the process, not a field of [`Context`](crate::Context), because the
/// builders of what an operand runs are pure functions that have no context. Until it is set,
/// it is `opgen-runtime`.
///
/// ```
/// // A unit test runs under the runtime's own name.
/// assert_eq!(opgen_runtime::field_manager(), "opgen-runtime");
/// ```
pub fn field_manager() -> &'static str {
    FIELD_MANAGER.get().map_or(UNNAMED_MANAGER, String::as_str)
}

/// Names the manager for the rest of the process (see [`field_manager`]). A process runs one
/// manager: once a name is set, another one is refused, since what was already written under
/// the first name would no longer be recognised as this manager's.
pub fn set_field_manager(name: &str) -> ::anyhow::Result<()> {
    let set = FIELD_MANAGER.get_or_init(|| name.to_owned());
    if set != name {
        ::anyhow::bail!(
            "this process already runs the manager `{set}`, so it cannot also be `{name}`: run \
             one manager per process"
        );
    }
    Ok(())
}
