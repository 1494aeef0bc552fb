//! The orders rustfmt puts lines in, so that generated files list their modules as rustfmt
//! would and stay clean as rendered: `mod` lines in plain string order, `use` lines in the
//! Rust style guide's "version sorting" (2024 style edition).

use std::cmp::Ordering;

/// Version sorting of names made of ASCII lowercase letters, digits and `_`: runs of digits
/// compare as numbers (`v2` before `v10`), `_` comes before every other character, and the
/// rest compare as characters. A tie of equal numbers is broken by fewer leading zeros.
pub fn version_sort(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    let mut zeros_tie = Ordering::Equal;
    loop {
        match (a.first(), b.first()) {
            (None, None) => return zeros_tie,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (x_digits, x_rest) = split_digits(a);
                let (y_digits, y_rest) = split_digits(b);
                let (x_value, y_value) = (trim_zeros(x_digits), trim_zeros(y_digits));
                let by_value = x_value.len().cmp(&y_value.len()).then(x_value.cmp(y_value));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                if zeros_tie == Ordering::Equal {
                    zeros_tie = x_digits.len().cmp(&y_digits.len());
                }
                (a, b) = (x_rest, y_rest);
            }
            (Some(x), Some(y)) => {
                let order = match (*x == b'_', *y == b'_') {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    (false, false) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
                (a, b) = (&a[1..], &b[1..]);
            }
        }
    }
}

fn split_digits(text: &[u8]) -> (&[u8], &[u8]) {
    let end = text
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let start = digits
        .iter()
        .position(|c| *c != b'0')
        .unwrap_or(digits.len());
    &digits[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order rustfmt 1.9 (style edition 2024) gave these `use` lines.
    #[test]
    fn sorts_as_rustfmt_sorts_use_lines() {
        let expected = [
            "_1db", "a_1", "a_b", "a1b", "ab", "thing2", "thing10", "type_", "v1", "v1alpha1",
            "v1beta2", "v2", "v10",
        ];
        let mut names = expected.to_vec();
        names.reverse();
        names.sort_by(|a, b| version_sort(a, b));
        assert_eq!(names, expected);
    }
}
