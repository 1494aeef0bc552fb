//! The lines of a project's `Cargo.toml` that make it depend on opgen-runtime, added by
//! `opgen update` to a project of an older release and moved to each new version. The file
//! is the user's: the edit adds a line at the end of a table, or changes the version of the
//! one `opgen-runtime` line of `[workspace.dependencies]`, and keeps everything else.

use anyhow::bail;

use super::vendored_runtime::{DIR, VERSION};

/// `manifest` depending on this release's opgen-runtime: its copy excluded from the
/// workspace, the version pinned in `[workspace.dependencies]`, and the crate in
/// `[dependencies]` and, with its test harnesses, in `[dev-dependencies]`. The same text when
/// it has all that already.
pub fn with_runtime_dependency(manifest: &str) -> anyhow::Result<String> {
    let mut lines: Vec<String> = manifest.lines().map(str::to_owned).collect();
    let exclude = format!("exclude = [\"{DIR}\"]");
    match find_line(&lines, "[workspace]", |line| line.starts_with("exclude")) {
        Found::Line(index) if lines[index].contains(DIR) => {}
        Found::Line(_) => bail!(
            "Cargo.toml's [workspace] has an `exclude` list without \"{DIR}\", opgen-runtime's copy, which must not be a member of the workspace\n\nAdd \"{DIR}\" to it, then run the command again"
        ),
        Found::Table(end) => lines.insert(end, exclude),
        Found::NoTable => bail!(no_table("[workspace]", &exclude)),
    }

    let dependency = format!("opgen-runtime = {{ version = \"={VERSION}\", path = \"{DIR}\" }}");
    match find_line(&lines, "[workspace.dependencies]", |line| {
        declares(line, "opgen-runtime")
    }) {
        Found::Line(index) => lines[index] = with_version(&lines[index])?,
        Found::Table(end) => {
            lines.insert(end, dependency);
            lines.insert(
                end,
                "# The machinery every controller shares (`opgen update` moves the version)."
                    .to_owned(),
            );
        }
        Found::NoTable => bail!(no_table("[workspace.dependencies]", &dependency)),
    }

    for (table, line) in [
        ("[dependencies]", "opgen-runtime.workspace = true"),
        (
            "[dev-dependencies]",
            "opgen-runtime = { workspace = true, features = [\"testing\", \"envtest\"] }",
        ),
    ] {
        match find_line(&lines, table, |text| declares(text, "opgen-runtime")) {
            Found::Line(_) => {}
            Found::Table(end) => lines.insert(end, line.to_owned()),
            Found::NoTable => bail!(no_table(table, line)),
        }
    }

    let mut text = lines.join("\n");
    if manifest.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// Where a line is, or would go, in a table of the manifest.
pub(crate) enum Found {
    /// The index of the first line of the table that matches.
    Line(usize),
    /// No line matches: the index after the table's last line that is not blank.
    Table(usize),
    NoTable,
}

/// The first line of `table` in `lines` for which `matches` holds (given the line without its
/// indentation), or where one would go.
pub(crate) fn find_line(lines: &[String], table: &str, matches: impl Fn(&str) -> bool) -> Found {
    let Some(start) = lines.iter().position(|line| line.trim() == table) else {
        return Found::NoTable;
    };
    let end = lines[start + 1..]
        .iter()
        .position(|line| line.trim_start().starts_with('['))
        .map_or(lines.len(), |offset| start + 1 + offset);
    if let Some(offset) = lines[start + 1..end]
        .iter()
        .position(|line| matches(line.trim_start()))
    {
        return Found::Line(start + 1 + offset);
    }
    let last = (start..end)
        .rev()
        .find(|index| !lines[*index].trim().is_empty())
        .unwrap_or(start);
    Found::Table(last + 1)
}

/// Whether `line` declares the dependency `name` (`name = …` or `name.workspace = …`).
fn declares(line: &str, name: &str) -> bool {
    line.strip_prefix(name)
        .is_some_and(|rest| rest.trim_start().starts_with(['=', '.']))
}

/// The `opgen-runtime` line of `[workspace.dependencies]` requiring this release.
fn with_version(line: &str) -> anyhow::Result<String> {
    let Some(start) = line.find("version = \"=") else {
        bail!(
            "Cargo.toml's `opgen-runtime` line in [workspace.dependencies] has no exact version (`version = \"=…\"`), which opgen moves to the release it writes\n\nWrite it as: opgen-runtime = {{ version = \"={VERSION}\", path = \"{DIR}\" }}"
        );
    };
    let value = start + "version = \"=".len();
    let end = line[value..]
        .find('"')
        .map_or(line.len(), |offset| value + offset);
    Ok(format!("{}{VERSION}{}", &line[..value], &line[end..]))
}

fn no_table(table: &str, line: &str) -> String {
    format!(
        "Cargo.toml has no {table} table, where opgen-runtime's line goes\n\nAdd the table with this line, then run the command again:\n{table}\n{line}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts of a 0.1.0 project's manifest that the edit touches.
    const PREVIOUS: &str = "[workspace]\nmembers = [\"api\"]\nresolver = \"3\"\n\n[workspace.dependencies]\ndemo-api = { path = \"api\" }\nkube = \"5\" # mine\n\n[package]\nname = \"demo\"\n\n[dependencies]\ndemo-api.workspace = true\n\n[dev-dependencies]\nhttp.workspace = true\n";

    #[test]
    fn a_previous_release_gets_the_dependency_and_keeps_the_rest() {
        let amended = with_runtime_dependency(PREVIOUS).unwrap();
        assert!(
            amended.starts_with(
                "[workspace]\nmembers = [\"api\"]\nresolver = \"3\"\nexclude = [\"vendor/opgen-runtime\"]\n\n"
            ),
            "{amended}"
        );
        assert!(
            amended.contains(&format!(
                "kube = \"5\" # mine\n# The machinery every controller shares (`opgen update` moves the version).\nopgen-runtime = {{ version = \"={VERSION}\", path = \"vendor/opgen-runtime\" }}\n\n[package]"
            )),
            "{amended}"
        );
        assert!(amended.contains("demo-api.workspace = true\nopgen-runtime.workspace = true\n\n"));
        assert!(amended.ends_with(
            "http.workspace = true\nopgen-runtime = { workspace = true, features = [\"testing\", \"envtest\"] }\n"
        ));
        assert_eq!(with_runtime_dependency(&amended).unwrap(), amended);
    }

    #[test]
    fn the_version_moves_and_nothing_else() {
        let old = with_runtime_dependency(PREVIOUS)
            .unwrap()
            .replace(&format!("\"={VERSION}\""), "\"=0.0.9\"");
        let amended = with_runtime_dependency(&old).unwrap();
        assert_eq!(amended, with_runtime_dependency(PREVIOUS).unwrap());
    }

    #[test]
    fn what_it_cannot_edit_is_named_with_the_fix() {
        let err = with_runtime_dependency("[package]\nname = \"demo\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no [workspace] table"), "{err}");
        let other_exclude = PREVIOUS.replace("resolver", "exclude = [\"x\"]\nresolver");
        let err = with_runtime_dependency(&other_exclude)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Add \"vendor/opgen-runtime\" to it"), "{err}");
        let unpinned = with_runtime_dependency(PREVIOUS)
            .unwrap()
            .replace(&format!("version = \"={VERSION}\", "), "");
        let err = with_runtime_dependency(&unpinned).unwrap_err().to_string();
        assert!(err.contains("has no exact version"), "{err}");
    }
}
