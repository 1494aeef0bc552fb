//! Rust's reserved words and prelude, which generated module and type names must avoid.

/// Strict and reserved keywords of Rust 2024. A module or type with one of these names would
/// not compile (or would need `r#`, which generated code should not make users type).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// The primitive types. A module named like one compiles, but hides the type from the code
/// of the module that declares it (`mod str;` makes `&str` there an error).
const PRIMITIVES: &[&str] = &[
    "bool", "char", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "str", "u8", "u16",
    "u32", "u64", "u128", "usize",
];

/// The types, traits and variants of Rust 2024's prelude (`std::prelude::rust_2024`): every
/// module sees them by their bare names unless it defines a type of the same name.
const PRELUDE_TYPES: &[&str] = &[
    "AsMut",
    "AsRef",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "Clone",
    "Copy",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

pub fn is_prelude_type(word: &str) -> bool {
    PRELUDE_TYPES.contains(&word)
}

/// A module name for `word` (lowercase letters, digits and `_`): `word` itself, with a `_`
/// added after a keyword or primitive type (`type` → `type_`) and before a leading digit
/// (`1db` → `_1db`), so that every name gives a module that compiles without `r#`. The names
/// given here neither start nor end with `_`, so two of them never give one module.
pub fn module_name(word: &str) -> String {
    if word.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{word}")
    } else if is_keyword(word) || PRIMITIVES.contains(&word) {
        format!("{word}_")
    } else {
        word.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords() {
        assert!(is_keyword("type"));
        assert!(is_keyword("gen"));
        assert!(!is_keyword("db"));
    }

    #[test]
    fn module_names_compile_without_raw_identifiers() {
        assert_eq!(module_name("db"), "db");
        assert_eq!(module_name("type"), "type_");
        assert_eq!(module_name("self"), "self_");
        assert_eq!(module_name("str"), "str_");
        assert_eq!(module_name("1db"), "_1db");
        assert_eq!(module_name("data_plane"), "data_plane");
        assert_eq!(module_name("kube"), "kube");
    }

    #[test]
    fn the_prelude_is_sorted_and_holds_types_only() {
        assert!(PRELUDE_TYPES.is_sorted());
        assert!(is_prelude_type("Option"));
        assert!(!is_prelude_type("Condition"));
        assert!(!is_prelude_type("option"));
    }
}
