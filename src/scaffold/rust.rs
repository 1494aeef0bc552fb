//! Rust source text that templates print, prepared here so that the templates hold no
//! escaping.

/// `value` as a Rust string literal, quotes included. Rust's own `Debug` escaping is used, so
/// every quote, backslash and control character is escaped.
pub fn string_literal(value: &str) -> String {
    format!("{value:?}")
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
}
