//! The license in the files `init` wrote it into: the `license` of `[workspace.package]` in
//! `Cargo.toml` with the `license.workspace = true` of each package, and the README's
//! sentence. Those files are the user's: `opgen edit --license` changes those lines only.

use anyhow::bail;

const INHERITED: &str = "license.workspace = true";

/// The workspace's `Cargo.toml` with `spdx` as the license of `[workspace.package]` and its
/// root package (no license: none of those lines).
pub fn workspace(manifest: &str, spdx: Option<&str>) -> anyhow::Result<String> {
    let mut lines: Vec<String> = manifest.lines().map(str::to_owned).collect();
    let Some((start, end)) = table(&lines, "[workspace.package]") else {
        bail!(
            "Cargo.toml has no [workspace.package] table, where the project's license is\n\nAdd one with `license = \"{}\"`, or set the license of each package yourself",
            spdx.unwrap_or("…")
        );
    };
    let at = (start + 1..end).find(|index| key_of(&lines[*index]) == Some("license"));
    match (at, spdx) {
        (Some(index), Some(spdx)) => lines[index] = format!("license = \"{spdx}\""),
        (Some(index), None) => {
            lines.remove(index);
        }
        (None, Some(spdx)) => {
            let after = (start + 1..end)
                .rfind(|index| key_of(&lines[*index]) == Some("rust-version"))
                .map_or(last_line(&lines, start, end), |index| index + 1);
            lines.insert(after, format!("license = \"{spdx}\""));
        }
        (None, None) => {}
    }
    Ok(finish(&member_lines(lines, spdx.is_some()), manifest))
}

/// A member's `Cargo.toml` (the api crate's) inheriting the license when there is one.
pub fn member(manifest: &str, spdx: Option<&str>) -> String {
    let lines = manifest.lines().map(str::to_owned).collect();
    finish(&member_lines(lines, spdx.is_some()), manifest)
}

/// `lines` whose `[package]` inherits the workspace's license when `licensed`, else not.
fn member_lines(mut lines: Vec<String>, licensed: bool) -> Vec<String> {
    let Some((start, end)) = table(&lines, "[package]") else {
        return lines;
    };
    let at = (start + 1..end).find(|index| lines[*index].trim() == INHERITED);
    match (at, licensed) {
        (Some(index), false) => {
            lines.remove(index);
        }
        (None, true) => {
            let after = (start + 1..end)
                .rfind(|index| key_of(&lines[*index]) == Some("rust-version.workspace"))
                .map_or(last_line(&lines, start, end), |index| index + 1);
            lines.insert(after, INHERITED.to_owned());
        }
        _ => {}
    }
    lines
}

/// The README with the license sentence `init` writes for `spdx`, in place of the one it wrote
/// for another license; the same text when it has neither.
pub fn readme(text: &str, spdx: Option<&str>) -> String {
    let sentence = |spdx: Option<&str>| match spdx {
        Some(spdx) => format!("Licensed under {spdx}; see `LICENSE`."),
        None => "<!-- TODO(user): add your license. -->".to_owned(),
    };
    let new = sentence(spdx);
    text.split_inclusive('\n')
        .map(|line| {
            let trimmed = line.trim_end();
            let is_sentence = trimmed == sentence(None)
                || (trimmed.starts_with("Licensed under ")
                    && trimmed.ends_with("; see `LICENSE`."));
            if is_sentence {
                line.replacen(trimmed, &new, 1)
            } else {
                line.to_owned()
            }
        })
        .collect()
}

/// The first and past-the-last line of `table`'s body.
fn table(lines: &[String], table: &str) -> Option<(usize, usize)> {
    let start = lines.iter().position(|line| line.trim() == table)?;
    let end = lines[start + 1..]
        .iter()
        .position(|line| line.trim_start().starts_with('['))
        .map_or(lines.len(), |offset| start + 1 + offset);
    Some((start, end))
}

/// The index after the table's last line that is not blank.
fn last_line(lines: &[String], start: usize, end: usize) -> usize {
    (start + 1..end)
        .rfind(|index| !lines[*index].trim().is_empty())
        .map_or(start + 1, |index| index + 1)
}

/// The key of a `key = value` line.
fn key_of(line: &str) -> Option<&str> {
    let (key, _) = line.split_once('=')?;
    Some(key.trim())
}

fn finish(lines: &[String], original: &str) -> String {
    let mut text = lines.join("\n");
    if original.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const LICENSED: &str = "[workspace.package]\nversion = \"0.1.0\"\nrust-version = \"1.89\"\nlicense = \"Apache-2.0\"\npublish = false\n\n[package]\nname = \"demo\"\nrust-version.workspace = true\nlicense.workspace = true\npublish.workspace = true\n";

    #[test]
    fn the_license_lines_follow_the_license() {
        let mit = workspace(LICENSED, Some("MIT")).unwrap();
        assert_eq!(mit, LICENSED.replace("Apache-2.0", "MIT"));
        let none = workspace(LICENSED, None).unwrap();
        assert_eq!(
            none,
            LICENSED
                .replace("license = \"Apache-2.0\"\n", "")
                .replace("license.workspace = true\n", "")
        );
        assert_eq!(workspace(&none, Some("Apache-2.0")).unwrap(), LICENSED);
        assert!(workspace("[package]\n", None).is_err());
        assert_eq!(
            member(&member("[package]\nname = \"api\"\n", Some("MIT")), None),
            "[package]\nname = \"api\"\n"
        );
    }

    #[test]
    fn the_readme_sentence_follows_the_license() {
        let text = "## License\n\nLicensed under Apache-2.0; see `LICENSE`.\n";
        let none = readme(text, None);
        assert_eq!(
            none,
            "## License\n\n<!-- TODO(user): add your license. -->\n"
        );
        assert_eq!(readme(&none, Some("Apache-2.0")), text);
        assert_eq!(readme("mine\n", Some("MIT")), "mine\n");
    }
}
