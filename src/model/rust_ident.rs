//! Rust's reserved words, which generated module and type names must avoid.

/// Strict and reserved keywords of Rust 2024. A module or type with one of these names would
/// not compile (or would need `r#`, which generated code should not make users type).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    #[test]
    fn keywords() {
        assert!(super::is_keyword("type"));
        assert!(super::is_keyword("gen"));
        assert!(!super::is_keyword("db"));
    }
}
