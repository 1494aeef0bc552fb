//! What a YAML error says, for opgen's messages: the problem and where it is, in opgen's
//! words. serde-saphyr's own rendering appends the location to the text (opgen writes it as
//! `file:line:column` first) and gives advice about its API ("set DuplicateKeyPolicy in
//! Options", "use from_str_multiple"), which means nothing to a user.

use serde_saphyr::{Error, MessageFormatter as _, UserMessageFormatter};

/// The problem, on one line, without its location.
pub fn problem(err: &Error) -> String {
    let mut inner = err;
    while let Error::AliasError { error, .. } | Error::WithSnippet { error, .. } = inner {
        inner = error;
    }
    let message = UserMessageFormatter.format_message(inner);
    let line = message.lines().next().unwrap_or_default();
    // The text may quote the file, whose control and direction characters must not reach
    // the terminal.
    let mut safe = String::with_capacity(line.len());
    for c in line.chars() {
        if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
            safe.extend(c.escape_unicode());
        } else {
            safe.push(c);
        }
    }
    safe
}

/// The line and column of the error in its text, counted from 1, when known.
pub fn location(err: &Error) -> Option<(u64, u64)> {
    err.location()
        .filter(|at| at.line() > 0)
        .map(|at| (at.line(), at.column()))
}

/// The problem after its place: `line 3, column 5: invalid boolean`.
pub fn located(err: &Error) -> String {
    match location(err) {
        Some((line, column)) => format!("line {line}, column {column}: {}", problem(err)),
        None => problem(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Flags {
        on: bool,
    }

    fn error(text: &str) -> Error {
        serde_saphyr::from_str::<Flags>(text).unwrap_err()
    }

    #[test]
    fn the_problem_has_no_location_and_no_advice_about_the_library() {
        let err = error("on: maybe\n");
        assert_eq!(location(&err), Some((1, 5)));
        let text = problem(&err);
        assert!(!text.contains("line"), "{text}");
        assert!(text.contains("boolean"), "{text}");
        let duplicate = problem(&error("on: true\non: false\n"));
        assert!(duplicate.contains("duplicate"), "{duplicate}");
        assert!(duplicate.contains("`on`"), "{duplicate}");
        assert!(!duplicate.contains("Options"), "{duplicate}");
        assert_eq!(
            located(&error("on: true\non: false\n")),
            "line 2, column 1: duplicate mapping key `on` is not allowed here"
        );
        let several = problem(&error("on: true\n---\non: false\n"));
        assert!(!several.contains("from_str"), "{several}");
    }

    #[test]
    fn control_characters_are_escaped() {
        let text = problem(&error("on: true\nx\u{202e}y: 1\n"));
        assert!(!text.contains('\u{202e}'), "{text}");
        assert!(text.contains("x\\u{202e}y"), "{text}");
    }
}
