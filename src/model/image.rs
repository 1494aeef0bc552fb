use std::str::FromStr;

use super::{InvalidValue, string_newtype};

/// A container image reference, `[registry[:port]/]path[:tag][@digest]`, as the Docker
/// distribution grammar defines it (`mysql:8.0`, `ghcr.io/org/app@sha256:…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef(String);

impl FromStr for ImageRef {
    type Err = InvalidValue;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        check(value).map_err(|problem| {
            InvalidValue::new(
                "image",
                value,
                format!(
                    "{problem} (expected a reference such as `mysql:8.0` or `ghcr.io/org/app:v1.2`)"
                ),
            )
        })?;
        Ok(Self(value.to_owned()))
    }
}

fn check(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("it is empty".into());
    }
    if let Some(c) = value.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{c:?} is not allowed"));
    }
    let (name, digest) = match value.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (value, None),
    };
    if let Some(digest) = digest {
        let (algorithm, hex) = digest
            .split_once(':')
            .ok_or("a digest is `<algorithm>:<hex>`")?;
        if algorithm.is_empty() || hex.len() < 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "`{digest}` is not a digest such as `sha256:<64 hex digits>`"
            ));
        }
    }
    // A tag follows the last `:` that comes after the last `/` (a registry port comes before).
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if let Some(tag) = tag {
        let valid = !tag.is_empty()
            && tag.len() <= 128
            && !tag.starts_with(['.', '-'])
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !valid {
            return Err(format!(
                "`{tag}` is not a valid tag (letters, digits, `_`, `.`, `-`; at most 128)"
            ));
        }
    }
    let mut components: Vec<&str> = path.split('/').collect();
    // The first component is a registry when it looks like a host: it has a `.` or a port,
    // or is `localhost`.
    if components.len() > 1 && (components[0].contains(['.', ':']) || components[0] == "localhost")
    {
        components.remove(0);
    }
    for component in components {
        let valid = !component.is_empty()
            && component.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && component.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && component
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c));
        if !valid {
            return Err(format!(
                "`{component}` is not a valid repository name (lowercase letters, digits, `.`, `_`, `-`)"
            ));
        }
    }
    Ok(())
}

impl ImageRef {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

string_newtype!(ImageRef);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_usual_references() {
        for ok in [
            "mysql",
            "mysql:8.0",
            "library/mysql:8.0.36",
            "ghcr.io/org/app:v1.2",
            "localhost:5000/app",
            "registry.example.com:5000/team/app:latest",
            "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(ok.parse::<ImageRef>().unwrap().as_str(), ok);
        }
    }

    #[test]
    fn refuses_malformed_references() {
        for (bad, why) in [
            ("", "empty"),
            ("MySQL:8.0", "`MySQL` is not a valid repository name"),
            ("mysql:", "is not a valid tag"),
            ("mysql:8.0 ", "' ' is not allowed"),
            ("mysql:-8", "`-8` is not a valid tag"),
            ("org//app", "`` is not a valid repository name"),
            ("nginx@sha256:xyz", "is not a digest"),
        ] {
            let err = bad.parse::<ImageRef>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
