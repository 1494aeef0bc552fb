//! The Rust fields of one object of an external CRD's schema: a distinct identifier for every
//! property, and the serde name that ties it to the property.
//!
//! Several properties can map to one snake-case identifier (`fooBar`, `foo-bar`, `foo_bar`,
//! `FooBar` and `foo.bar` all read as `foo_bar`; `ref` and `$ref` as `r#ref`), and a struct
//! with two fields of one name does not compile. The property that serde would name by the
//! plain identifier keeps it; the others are numbered (`foo_bar2`, `foo_bar3`) in the order
//! of their names, so that the same schema always gives the same fields.

use heck::{ToSnakeCase, ToUpperCamelCase};

/// One property's field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The identifier, a raw one for a keyword: `secret_name`, `r#type`, `self_`.
    pub ident: String,
    /// The property's name when serde would not derive it from the identifier.
    pub rename: Option<String>,
}

/// The field of each of `properties` (in their order), and the name of the map that keeps
/// the fields the schema does not list, when `keeps_unknown`: `unknown_fields`, numbered if
/// a property has that name.
pub fn fields(properties: &[&str], keeps_unknown: bool) -> (Vec<Field>, Option<String>) {
    let mut taken: Vec<String> = Vec::new();
    let mut idents: Vec<Option<String>> = vec![None; properties.len()];
    // Canonical names first, so that `fooBar` is `foo_bar` wherever `foo_bar` also is.
    let mut order: Vec<usize> = (0..properties.len()).collect();
    order.sort_by_key(|&i| {
        let base = base_name(properties[i]);
        (camel(&base) != properties[i], properties[i])
    });
    for i in order {
        let (name, ident) = distinct(&base_name(properties[i]), &taken);
        taken.push(name);
        taken.push(bare(&ident).to_owned());
        idents[i] = Some(ident);
    }
    let fields = properties
        .iter()
        .zip(idents)
        .map(|(property, ident)| {
            let ident = ident.expect("every property has a field");
            let rename = (bare(&ident) != *property).then(|| (*property).to_owned());
            Field { ident, rename }
        })
        .collect();
    let rest = keeps_unknown.then(|| distinct("unknown_fields", &taken).1);
    (fields, rest)
}

/// The property's identifier before any numbering: snake case, never empty nor starting with
/// a digit.
fn base_name(property: &str) -> String {
    let snake = property.to_snake_case();
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        format!("field_{snake}")
    } else {
        snake
    }
}

/// `base`, or `base` with the lowest number from 2 that no field has; and that name as an
/// identifier (`self` is the identifier `self_`).
fn distinct(base: &str, taken: &[String]) -> (String, String) {
    let mut candidate = base.to_owned();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{base}{n}");
        n += 1;
    }
    let ident = identifier(&candidate);
    (candidate, ident)
}

/// `name` as an identifier: a raw one for a keyword, or with `_` for the keywords that have
/// no raw form.
fn identifier(name: &str) -> String {
    if !crate::model::is_rust_keyword(name) {
        name.to_owned()
    } else if matches!(name, "self" | "super" | "crate" | "Self") {
        format!("{name}_")
    } else {
        format!("r#{name}")
    }
}

/// The name serde gives a field: its identifier without `r#`.
fn bare(ident: &str) -> &str {
    ident.trim_start_matches("r#")
}

/// The property name that snake-cases to `snake` most directly: lower camel case.
fn camel(snake: &str) -> String {
    let upper = snake.to_upper_camel_case();
    let mut chars = upper.chars();
    chars
        .next()
        .map(|first| first.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(properties: &[&str]) -> Vec<(String, Option<String>)> {
        fields(properties, false)
            .0
            .into_iter()
            .map(|f| (f.ident, f.rename))
            .collect()
    }

    fn field(ident: &str, rename: Option<&str>) -> (String, Option<String>) {
        (ident.to_owned(), rename.map(str::to_owned))
    }

    #[test]
    fn names_are_snake_case_renamed_to_the_property() {
        assert_eq!(
            idents(&["name", "secretName", "URIs", "type", "3d", "-"]),
            [
                field("name", None),
                field("secret_name", Some("secretName")),
                field("ur_is", Some("URIs")),
                field("r#type", None),
                field("field_3d", Some("3d")),
                field("field_", Some("-")),
            ]
        );
    }

    #[test]
    fn properties_of_one_identifier_get_distinct_fields() {
        // In the order a schema's properties come: sorted.
        assert_eq!(
            idents(&["FooBar", "foo-bar", "foo.bar", "fooBar", "foo_bar"]),
            [
                field("foo_bar2", Some("FooBar")),
                field("foo_bar3", Some("foo-bar")),
                field("foo_bar4", Some("foo.bar")),
                field("foo_bar", Some("fooBar")),
                field("foo_bar5", Some("foo_bar")),
            ]
        );
        assert_eq!(
            idents(&["$ref", "ref"]),
            [field("ref2", Some("$ref")), field("r#ref", None)]
        );
        assert_eq!(
            idents(&["Self", "self"]),
            [field("self2", Some("Self")), field("self_", Some("self"))]
        );
    }

    #[test]
    fn a_numbered_name_never_takes_a_property_s_own() {
        assert_eq!(
            idents(&["fooBar", "fooBar2", "foo_bar"]),
            [
                field("foo_bar", Some("fooBar")),
                field("foo_bar2", Some("fooBar2")),
                field("foo_bar3", Some("foo_bar")),
            ]
        );
    }

    #[test]
    fn the_map_of_unknown_fields_has_a_name_no_property_has() {
        assert_eq!(fields(&["a"], false).1, None);
        assert_eq!(fields(&["a"], true).1.as_deref(), Some("unknown_fields"));
        assert_eq!(
            fields(&["unknownFields"], true).1.as_deref(),
            Some("unknown_fields2")
        );
    }
}
