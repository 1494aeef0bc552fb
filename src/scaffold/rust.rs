//! Rust source text that templates print: literals and line layouts decided here, so that the
//! templates hold no escaping or length arithmetic.

/// The width rustfmt wraps lines at, by default.
const MAX_WIDTH: usize = 100;

/// `value` as a Rust string literal, quotes included. Rust's own `Debug` escaping is used, so
/// every quote, backslash and control character is escaped.
pub fn string_literal(value: &str) -> String {
    format!("{value:?}")
}

/// Whether `line` (with its indentation) fits within rustfmt's width, so that rustfmt keeps it
/// on one line.
pub fn fits(line: &str) -> bool {
    line.chars().count() <= MAX_WIDTH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_literals_escape_what_rust_needs_escaped() {
        assert_eq!(string_literal("memcached"), r#""memcached""#);
        assert_eq!(string_literal(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(string_literal(r"C:\dir"), r#""C:\\dir""#);
        assert_eq!(string_literal("a\nb\tc\r"), r#""a\nb\tc\r""#);
        assert_eq!(string_literal("\u{1b}[0m\0"), r#""\u{1b}[0m\0""#);
        assert_eq!(string_literal("-m=64 ünïcode"), r#""-m=64 ünïcode""#);
    }

    #[test]
    fn lines_fit_up_to_one_hundred_characters() {
        assert!(fits(&"x".repeat(100)));
        assert!(!fits(&"x".repeat(101)));
        assert!(fits(&"é".repeat(100)), "characters, not bytes");
    }
}
