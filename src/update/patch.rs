//! The scaffolded files' changes a project needs, as a patch the user applies (`opgen update
//! --patch FILE`): what today's scaffold adds to each file and the files it has that the
//! project lacks. A scaffolded file is the user's, so the patch only adds lines: a change that
//! would replace or remove lines of theirs is left to `opgen update --diff`, where they judge
//! it. The patch is a unified diff with `a/` and `b/` paths, as `git apply` and `patch -p1`
//! read it from the project's root.

use similar::{DiffOp, TextDiff};

use crate::plan::FileChange;

/// What `--patch` writes, and what it leaves out.
#[derive(Debug, Default)]
pub struct Patch {
    pub text: String,
    /// Files the patch adds lines to.
    pub amended: Vec<String>,
    /// Files the patch creates (deleted, or new in today's scaffold).
    pub created: Vec<String>,
    /// Files that differ in more than added lines: the rest of their change is not in it.
    pub left_out: Vec<String>,
}

impl Patch {
    /// The patch of `scaffolded`, the scaffolded files that differ from today's scaffold.
    pub fn of(scaffolded: &[FileChange]) -> Self {
        let mut patch = Self::default();
        for change in scaffolded {
            let path = &change.path;
            let Some(old) = &change.old else {
                patch
                    .text
                    .push_str(&diff("/dev/null", path, "", &change.new));
                patch.created.push(path.clone());
                continue;
            };
            let added = with_additions(old, &change.new);
            if added != *old {
                patch
                    .text
                    .push_str(&diff(&format!("a/{path}"), path, old, &added));
                patch.amended.push(path.clone());
            }
            if added != change.new {
                patch.left_out.push(path.clone());
            }
        }
        patch
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

/// `old` with the lines that `new` inserts between lines of `old`, and nothing else of `new`.
/// A last line without its line break gets one, so that a line added after it stays a line.
fn with_additions(old: &str, new: &str) -> String {
    let ended;
    let old = if old.is_empty() || old.ends_with('\n') {
        old
    } else {
        ended = format!("{old}\n");
        &ended
    };
    let diff = TextDiff::from_lines(old, new);
    let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
    let mut text = String::with_capacity(new.len().max(old.len()));
    for op in diff.ops() {
        let lines = match *op {
            DiffOp::Insert {
                new_index, new_len, ..
            } => &new_lines[new_index..new_index + new_len],
            DiffOp::Equal { old_index, len, .. } => &old_lines[old_index..old_index + len],
            DiffOp::Delete {
                old_index, old_len, ..
            }
            | DiffOp::Replace {
                old_index, old_len, ..
            } => &old_lines[old_index..old_index + old_len],
        };
        lines.iter().for_each(|line| text.push_str(line));
    }
    text
}

fn diff(from: &str, path: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(from, &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Action;

    fn change(path: &str, old: Option<&str>, new: &str) -> FileChange {
        FileChange {
            path: path.into(),
            action: Action::Keep,
            old: old.map(str::to_owned),
            new: new.into(),
        }
    }

    #[test]
    fn adds_what_is_new_and_keeps_the_users_lines() {
        assert_eq!(
            with_additions("a\nmine\nc\n", "a\nb\nc\nd\n"),
            "a\nmine\nc\nd\n",
            "`b` replaces a line of the user's: left out; `d` is added"
        );
        assert_eq!(with_additions("a\nc\n", "a\nb\nc\n"), "a\nb\nc\n");
        assert_eq!(
            with_additions("a\nb\nc\n", "a\nc\n"),
            "a\nb\nc\n",
            "nothing removed"
        );
        assert_eq!(with_additions("a", "a\nb\n"), "a\nb\n");
    }

    #[test]
    fn creates_missing_files_and_names_the_changes_it_leaves_out() {
        let patch = Patch::of(&[
            change(".gitignore", Some("target/\n"), "target/\n.opgen-tmp-*\n"),
            change("Dockerfile", Some("FROM mine\n"), "FROM rust\n"),
            change("README.md", None, "# demo\n"),
        ]);
        assert_eq!(patch.amended, [".gitignore"]);
        assert_eq!(patch.created, ["README.md"]);
        assert_eq!(patch.left_out, ["Dockerfile"]);
        assert!(
            patch.text.contains(
                "--- a/.gitignore\n+++ b/.gitignore\n@@ -1 +1,2 @@\n target/\n+.opgen-tmp-*\n"
            ),
            "{}",
            patch.text
        );
        assert!(
            patch
                .text
                .contains("--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+# demo\n"),
            "{}",
            patch.text
        );
        assert!(!patch.text.contains("Dockerfile"), "{}", patch.text);
    }
}
