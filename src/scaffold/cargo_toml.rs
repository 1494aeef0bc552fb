//! The one edit opgen makes to a project's `Cargo.toml`: the first webhook adds the crates
//! the webhook server needs to the manager's `[dependencies]`. `Cargo.toml` is the user's, so
//! the edit only appends lines at the end of that table, keeping everything they wrote, and
//! adds only the crates that are not there yet.

use anyhow::bail;

/// The crates of the webhook server, each with its dependency line.
const WEBHOOK_DEPENDENCIES: &[(&str, &str)] = &[
    // kube's AdmissionReview types (a feature of the kube-core that kube re-exports).
    (
        "kube-core",
        r#"kube-core = { version = "5.0.0", features = ["admission"] }"#,
    ),
    // The defaults' JSON patch.
    ("json-patch", r#"json-patch = "4""#),
    // HTTPS, on the same rustls and ring that kube's client uses.
    (
        "tokio-rustls",
        r#"tokio-rustls = { version = "0.26", default-features = false, features = ["ring", "tls12", "logging"] }"#,
    ),
    // The certificate of a manager run without one (`make run` on a laptop).
    (
        "rcgen",
        r#"rcgen = { version = "0.14", default-features = false, features = ["crypto", "ring", "pem"] }"#,
    ),
];

const COMMENT: &str = "# The webhook server (`opgen create webhook`).";

/// `manifest` with the webhook server's crates added to `[dependencies]`; the same text when
/// it has them all.
pub fn with_webhook_dependencies(manifest: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = manifest.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|line| line.trim() == "[dependencies]")
    else {
        bail!(
            "Cargo.toml has no [dependencies] table, where the webhook server's crates go\n\nAdd one with the manager's dependencies, or add these yourself:\n{}",
            WEBHOOK_DEPENDENCIES
                .iter()
                .map(|(_, line)| *line)
                .collect::<Vec<_>>()
                .join("\n")
        );
    };
    let end = lines[start + 1..]
        .iter()
        .position(|line| line.trim_start().starts_with('['))
        .map_or(lines.len(), |offset| start + 1 + offset);
    let table = &lines[start + 1..end];
    let missing: Vec<&str> = WEBHOOK_DEPENDENCIES
        .iter()
        .filter(|(name, _)| !table.iter().any(|line| declares(line, name)))
        .map(|(_, line)| *line)
        .collect();
    if missing.is_empty() {
        return Ok(manifest.to_owned());
    }
    // After the table's last line that is not blank, so that the blank line before the next
    // table stays.
    let last = (start..end)
        .rev()
        .find(|index| !lines[*index].trim().is_empty())
        .unwrap_or(start);
    let mut out: Vec<&str> = lines[..=last].to_vec();
    out.push(COMMENT);
    out.extend(&missing);
    out.extend(&lines[last + 1..]);
    let mut text = out.join("\n");
    if manifest.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// Whether `line` declares the dependency `name` (`name = …` or `name.workspace = …`).
fn declares(line: &str, name: &str) -> bool {
    let line = line.trim_start();
    line.strip_prefix(name)
        .is_some_and(|rest| rest.trim_start().starts_with(['=', '.']))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "[package]\nname = \"demo\"\n\n[dependencies]\n# mine\nkube.workspace = true\nrcgen = \"0.13\" # pinned\n\n[dev-dependencies]\nhttp = \"1\"\n";

    #[test]
    fn appends_the_missing_crates_to_the_table_and_keeps_the_rest() {
        let amended = with_webhook_dependencies(MANIFEST).unwrap();
        let expected_tail = "rcgen = \"0.13\" # pinned\n# The webhook server (`opgen create webhook`).\nkube-core = { version = \"5.0.0\", features = [\"admission\"] }\njson-patch = \"4\"\ntokio-rustls = ";
        assert!(amended.contains(expected_tail), "{amended}");
        assert!(
            amended.contains("\n\n[dev-dependencies]\nhttp = \"1\"\n"),
            "{amended}"
        );
        assert!(amended.starts_with("[package]\nname = \"demo\"\n\n[dependencies]\n# mine\n"));
        // The user's own rcgen stays the one.
        assert_eq!(amended.matches("rcgen").count(), 1, "{amended}");
        assert_eq!(with_webhook_dependencies(&amended).unwrap(), amended);
    }

    #[test]
    fn a_table_at_the_end_of_the_file_gets_them_too() {
        let amended = with_webhook_dependencies("[dependencies]\nkube = \"5\"\n").unwrap();
        assert!(
            amended.ends_with("features = [\"crypto\", \"ring\", \"pem\"] }\n"),
            "{amended}"
        );
        assert!(!declares("kube-core-extra = \"1\"", "kube-core"));
        assert!(declares("  json-patch.workspace = true", "json-patch"));
    }

    #[test]
    fn without_a_dependencies_table_it_says_what_to_add() {
        let err = with_webhook_dependencies("[package]\nname = \"demo\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no [dependencies] table"), "{err}");
        assert!(err.contains("json-patch = \"4\""), "{err}");
    }
}
