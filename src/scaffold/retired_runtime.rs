//! The machinery that opgen 0.1.0 generated into the project itself (`src/runtime/` and the
//! integration tests' harness), which the opgen-runtime crate now carries: `opgen update`
//! removes it.

use std::path::Path;

use anyhow::{Context as _, bail};

use crate::{files, plan::GENERATED_MARKER};

/// Every file of that machinery, as opgen 0.1.0 laid it out.
pub const FILES: [&str; 19] = [
    "src/runtime/apply.rs",
    "src/runtime/context.rs",
    "src/runtime/events.rs",
    "src/runtime/leader.rs",
    "src/runtime/manager.rs",
    "src/runtime/metrics.rs",
    "src/runtime/mod.rs",
    "src/runtime/operand.rs",
    "src/runtime/reconcile.rs",
    "src/runtime/server.rs",
    "src/runtime/serving.rs",
    "src/runtime/shutdown.rs",
    "src/runtime/status.rs",
    "src/runtime/telemetry.rs",
    "src/runtime/testing.rs",
    "src/runtime/webhook.rs",
    "src/runtime/webhook_certs.rs",
    "src/runtime/workload.rs",
    "tests/integration/envtest.rs",
];

/// The files of [`FILES`] that the project at `root` still has, with their text, to remove.
/// Fails, naming them, if any has lost its generated header: it is the user's then, and
/// removing the rest would leave it without the module it belonged to.
pub fn present(root: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let mut present = Vec::new();
    let mut taken_over = Vec::new();
    for path in FILES {
        let Some(text) = files::read_existing(&root.join(path))
            .with_context(|| format!("cannot read {path}"))?
        else {
            continue;
        };
        if text
            .lines()
            .next()
            .unwrap_or_default()
            .contains(GENERATED_MARKER)
        {
            present.push((path.to_owned(), text));
        } else {
            taken_over.push(path);
        }
    }
    if !taken_over.is_empty() {
        bail!(
            "opgen-runtime now carries the machinery of src/runtime/ and tests/integration/envtest.rs, and opgen update removes those files, but these have lost their `{GENERATED_MARKER}` header, so they are yours and were left alone; nothing was changed:\n  {}\n\nMove what you changed in them elsewhere (opgen-runtime's source will be in vendor/opgen-runtime/) and delete them, or put their header back, then run `opgen update` again",
            taken_over.join("\n  ")
        );
    }
    Ok(present)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_files_are_removed_and_taken_over_ones_stop_the_update() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/runtime")).unwrap();
        let generated = format!("// {GENERATED_MARKER}\n\npub mod apply;\n");
        std::fs::write(dir.path().join("src/runtime/mod.rs"), &generated).unwrap();
        assert_eq!(
            present(dir.path()).unwrap(),
            [("src/runtime/mod.rs".to_owned(), generated)]
        );

        std::fs::write(dir.path().join("src/runtime/status.rs"), "//! Mine now.\n").unwrap();
        let err = present(dir.path()).unwrap_err().to_string();
        assert!(err.contains("\n  src/runtime/status.rs\n"), "{err}");
        assert!(!err.contains("src/runtime/mod.rs\n"), "{err}");
        assert!(err.contains("nothing was changed"), "{err}");
    }
}
