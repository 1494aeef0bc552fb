use std::str::FromStr;

use super::{Escaped, InvalidValue, string_newtype};

/// A container image reference, `[registry[:port]/]path[:tag][@digest]`, as the Docker
/// distribution grammar defines it (`mysql:8.0`, `ghcr.io/org/app@sha256:…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef(String);

/// The parts of a reference; only `path` is always there.
#[derive(Debug, PartialEq, Eq)]
struct Parts<'a> {
    registry: Option<&'a str>,
    /// The repository path: `mysql`, `library/mysql`, `org/app`.
    path: &'a str,
    tag: Option<&'a str>,
    digest: Option<&'a str>,
}

/// Splits a reference without judging its parts. The digest follows `@`; the tag follows the
/// last `:` after the last `/` (a registry's port comes before a `/`); the first path
/// component is a registry when it looks like a host (it has a `.` or a port, or is
/// `localhost`), which is how Docker tells `ghcr.io/org/app` from `org/app`.
fn split(value: &str) -> Parts<'_> {
    let (name, digest) = match value.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (value, None),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    let (registry, path) = match repository.split_once('/') {
        Some((host, path)) if host.contains(['.', ':']) || host == "localhost" => {
            (Some(host), path)
        }
        _ => (None, repository),
    };
    Parts {
        registry,
        path,
        tag,
        digest,
    }
}

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
    let parts = split(value);
    if let Some(digest) = parts.digest {
        let (algorithm, hex) = digest
            .split_once(':')
            .ok_or("a digest is `<algorithm>:<hex>`")?;
        if algorithm.is_empty() || hex.len() < 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "`{}` is not a digest such as `sha256:<64 hex digits>`",
                Escaped(digest)
            ));
        }
    }
    if let Some(tag) = parts.tag {
        let valid = !tag.is_empty()
            && tag.len() <= 128
            && !tag.starts_with(['.', '-'])
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !valid {
            return Err(format!(
                "`{}` is not a valid tag (letters, digits, `_`, `.`, `-`; at most 128)",
                Escaped(tag)
            ));
        }
    }
    let name = parts.registry.map_or(0, |registry| registry.len() + 1) + parts.path.len();
    if name > NAME_LIMIT {
        return Err(format!(
            "its name (registry and repository, before the tag) is {name} characters long, and the reference grammar allows at most {NAME_LIMIT}"
        ));
    }
    for component in parts.path.split('/') {
        let valid = !component.is_empty()
            && component.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && component.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && component
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c));
        if !valid {
            return Err(format!(
                "`{}` is not a valid repository name (lowercase letters, digits, `.`, `_`, `-`)",
                Escaped(component)
            ));
        }
    }
    Ok(())
}

/// The longest name (registry and repository path) the distribution reference grammar allows.
const NAME_LIMIT: usize = 255;

/// Registries that serve Docker Hub, where `mysql` is short for `library/mysql`.
const DOCKER_HUB: [&str; 3] = ["docker.io", "index.docker.io", "registry-1.docker.io"];

impl ImageRef {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The image's own name, without registry, path, tag or digest: `mysql` for
    /// `docker.io/library/mysql:8.0`. It names what the pods run, e.g. in their
    /// `app.kubernetes.io/component` label.
    pub fn component(&self) -> &str {
        let path = split(&self.0).path;
        path.rsplit('/').next().unwrap_or(path)
    }

    /// The repository on Docker Hub (`mysql`, `nginxinc/nginx-unprivileged`) when the image
    /// comes from there, with Docker's implied `library/` dropped; `None` for other
    /// registries.
    pub fn docker_hub_repository(&self) -> Option<&str> {
        let parts = split(&self.0);
        match parts.registry {
            Some(registry) if !DOCKER_HUB.contains(&registry) => None,
            _ => Some(parts.path.strip_prefix("library/").unwrap_or(parts.path)),
        }
    }

    /// The repository path on any registry (`library/mysql` on `mirror.gcr.io`), for
    /// recognising mirrors of Docker Hub images.
    pub fn path(&self) -> &str {
        split(&self.0).path
    }

    /// The tag, if there is one (`8.0-alpine`).
    pub fn tag(&self) -> Option<&str> {
        split(&self.0).tag
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
        let longest = format!("registry.example.com/{}", "a".repeat(255 - 21));
        assert_eq!(longest.len(), 255);
        assert!(format!("{longest}:1.0").parse::<ImageRef>().is_ok());
        for (bad, why) in [
            (
                format!("{longest}a:1.0"),
                "is 256 characters long, and the reference grammar allows at most 255",
            ),
            ("a".repeat(300), "is 300 characters long"),
        ] {
            let err = bad.parse::<ImageRef>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn splits_registry_path_tag_and_digest() {
        let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        for (value, registry, path, tag, with_digest) in [
            ("mysql", None, "mysql", None, false),
            ("mysql:8.0", None, "mysql", Some("8.0"), false),
            ("org/app:v1", None, "org/app", Some("v1"), false),
            (
                "localhost:5000/app:v2",
                Some("localhost:5000"),
                "app",
                Some("v2"),
                false,
            ),
            (
                "registry.example.com:5000/team/app",
                Some("registry.example.com:5000"),
                "team/app",
                None,
                false,
            ),
            (
                &format!("ghcr.io/org/app:v1@{digest}"),
                Some("ghcr.io"),
                "org/app",
                Some("v1"),
                true,
            ),
        ] {
            let parts = split(value);
            assert_eq!(
                parts,
                Parts {
                    registry,
                    path,
                    tag,
                    digest: with_digest.then_some(digest),
                },
                "{value}"
            );
        }
    }

    #[test]
    fn the_component_is_the_last_path_component() {
        for (value, component) in [
            ("mysql", "mysql"),
            ("mysql:8.0", "mysql"),
            ("docker.io/library/mysql:8.0", "mysql"),
            ("localhost:5000/team/my-app:v1", "my-app"),
            (
                "nginxinc/nginx-unprivileged@sha256:0123456789abcdef0123456789abcdef",
                "nginx-unprivileged",
            ),
        ] {
            let image: ImageRef = value.parse().unwrap();
            assert_eq!(image.component(), component, "{value}");
        }
    }

    #[test]
    fn docker_hub_repositories_drop_the_implied_library() {
        for (value, repository) in [
            ("mysql:8.0", Some("mysql")),
            ("library/mysql", Some("mysql")),
            ("docker.io/library/mysql:8.0", Some("mysql")),
            ("index.docker.io/mysql", Some("mysql")),
            (
                "nginxinc/nginx-unprivileged:1.27",
                Some("nginxinc/nginx-unprivileged"),
            ),
            ("mirror.gcr.io/library/mysql:8.0", None),
            ("ghcr.io/nginxinc/nginx-unprivileged", None),
        ] {
            let image: ImageRef = value.parse().unwrap();
            assert_eq!(image.docker_hub_repository(), repository, "{value}");
        }
    }
}
