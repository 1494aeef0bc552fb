//! User input as error messages show it: a rejected name may hold any character, and a
//! terminal acts on some of them (an escape sequence recolours the line, U+202E turns the rest
//! of it around), so those are shown as Rust escapes (`\u{202e}`) and the message reads as
//! written.

use std::fmt;

/// `text` with every character that a terminal would not print as itself escaped.
#[derive(Debug, Clone, Copy)]
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if is_shown_as_itself(c) {
                fmt::Write::write_char(f, c)?;
            } else {
                write!(f, "{}", c.escape_debug())?;
            }
        }
        Ok(())
    }
}

/// Whether `c` prints as itself: Rust's `escape_debug` leaves printable characters alone and
/// escapes control, format (bidirectional overrides, zero-width) and unassigned ones. Quotes
/// and the backslash it escapes too, but those print fine.
fn is_shown_as_itself(c: char) -> bool {
    matches!(c, '\\' | '\'' | '"') || c.escape_debug().next() != Some('\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_is_left_alone() {
        for text in ["MySQLCluster", "my-operator", "É\"'\\`", "数据库", ""] {
            assert_eq!(Escaped(text).to_string(), text);
        }
    }

    #[test]
    fn what_a_terminal_acts_on_is_escaped() {
        assert_eq!(Escaped("a\u{202e}b").to_string(), "a\\u{202e}b");
        assert_eq!(Escaped("\u{1b}[31mred").to_string(), "\\u{1b}[31mred");
        assert_eq!(Escaped("a\nb\tc\rd").to_string(), "a\\nb\\tc\\rd");
        assert_eq!(
            Escaped("zero\u{200b}width").to_string(),
            "zero\\u{200b}width"
        );
        assert_eq!(Escaped("\u{0}").to_string(), "\\0");
    }
}
