//! Kubernetes' DNS name rules (RFC 1123), which names of projects, groups and plurals follow.

/// The problem with `value` as a DNS-1123 label, if any: at most 63 characters of lowercase
/// letters, digits and `-`, starting and ending with a letter or digit.
pub fn label_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("it is empty".into());
    }
    if value.len() > 63 {
        return Some(format!(
            "it is {} characters long; the limit is 63",
            value.len()
        ));
    }
    if let Some(bad) = value
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        let bad = bad.to_string();
        return Some(format!(
            "`{}` is not allowed; use lowercase letters, digits and `-`",
            super::Escaped(&bad)
        ));
    }
    if value.starts_with('-') || value.ends_with('-') {
        return Some("it must start and end with a letter or digit".into());
    }
    None
}

/// The problem with `value` as a DNS-1035 label, if any: a DNS-1123 label that starts with a
/// letter. Kubernetes names resources (plurals, singulars, short names) this way.
pub fn label_1035_problem(value: &str) -> Option<String> {
    label_problem(value).or_else(|| {
        (!value.starts_with(|c: char| c.is_ascii_lowercase()))
            .then(|| "it must start with a letter".to_owned())
    })
}

/// The problem with `value` as a DNS-1123 subdomain, if any: dot-separated labels, at most 253
/// characters in all.
pub fn subdomain_problem(value: &str) -> Option<String> {
    if value.len() > 253 {
        return Some(format!(
            "it is {} characters long; the limit is 253",
            value.len()
        ));
    }
    value.split('.').find_map(|label| {
        label_problem(label).map(|problem| {
            if label.is_empty() {
                "it has an empty part between dots".to_owned()
            } else {
                format!("part `{}`: {problem}", super::Escaped(label))
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(label_problem("my-operator"), None);
        assert_eq!(label_problem("a1"), None);
        assert!(label_problem("").unwrap().contains("empty"));
        assert!(label_problem("My").unwrap().contains("`M`"));
        assert!(label_problem("a_b").unwrap().contains("`_`"));
        assert!(label_problem("-a").unwrap().contains("start and end"));
        assert!(label_problem("a-").unwrap().contains("start and end"));
        assert!(label_problem(&"a".repeat(64)).unwrap().contains("63"));
        assert_eq!(label_problem(&"a".repeat(63)), None);
    }

    #[test]
    fn dns_1035_labels_start_with_a_letter() {
        assert_eq!(label_1035_problem("things"), None);
        assert!(
            label_1035_problem("1things")
                .unwrap()
                .contains("start with a letter")
        );
        assert!(label_1035_problem("Things").unwrap().contains("`T`"));
    }

    #[test]
    fn subdomains() {
        assert_eq!(subdomain_problem("example.com"), None);
        assert_eq!(subdomain_problem("localhost"), None);
        assert!(
            subdomain_problem("example..com")
                .unwrap()
                .contains("empty part")
        );
        assert!(
            subdomain_problem("Example.com")
                .unwrap()
                .contains("`Example`")
        );
        assert!(subdomain_problem(".com").unwrap().contains("empty part"));
    }
}
