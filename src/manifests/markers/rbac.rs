//! `// +opgen:rbac:` markers: the permissions a controller needs, written next to the code
//! that needs them, in Kubebuilder's syntax with opgen's prefix:
//!
//! ```text
//! // +opgen:rbac:groups=apps;"",resources=deployments;services,verbs=get;list;watch
//! ```
//!
//! Every marker must parse: a typo in a permission would otherwise surface only as a
//! `forbidden` error in the cluster, far from its cause.

use std::path::Path;

use super::syntax::{
    Arguments, InvalidMarkers, MarkerError, Place, Problem, Reader, check_chars, common_hint,
    is_name_char, list, optional_list, unquote,
};
use crate::{files::rust_files, manifests::rbac::Rule, project::Project};

/// Where the markers are read from, relative to the project root: the controllers, and the
/// generated `mod.rs` that carries the runtime's own (the self-managed webhook certificates').
pub const CONTROLLERS_DIR: &str = "src/controllers";

/// The keys an `rbac` marker takes, as Kubebuilder spells them.
const KEYS: [&str; 6] = [
    "groups",
    "resources",
    "verbs",
    "namespace",
    "resourceNames",
    "urls",
];

/// Verbs of rules on resources. Beyond the eight everyday verbs, Kubernetes checks a few
/// verbs on specific resources (`bind` and `escalate` on roles, `impersonate` on users, `use`,
/// `approve` and `sign` on signers); an operator that manages those needs them.
const RESOURCE_VERBS: [&str; 15] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "bind",
    "escalate",
    "impersonate",
    "use",
    "approve",
    "sign",
    "*",
];

/// Verbs of rules on non-resource URLs: the request's HTTP method, lowercased.
const URL_VERBS: [&str; 7] = ["get", "post", "put", "patch", "delete", "head", "*"];

/// One `+opgen:rbac` marker and where it was found, so that later checks can point at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub place: Place,
    pub rule: Rule,
}

/// The advice under an RBAC marker's error, when there is one.
fn hint(problem: &Problem) -> Option<String> {
    let hint = match problem {
        Problem::UnknownMarker(_) | Problem::NoArguments => {
            "The one opgen marker is `+opgen:rbac:groups=…,resources=…,verbs=…`".to_owned()
        }
        Problem::NotKeyValue(_) | Problem::UnknownKey(_) => {
            format!("Expected keys: {}", KEYS.join(", "))
        }
        Problem::MissingKey("groups") => {
            "Name the API groups; the core group (pods, services, …) is `groups=\"\"`".to_owned()
        }
        Problem::MissingKey(_) => "A marker needs `resources` (or `urls`) and `verbs`".to_owned(),
        Problem::UnknownVerb { urls, .. } => {
            let verbs = if *urls {
                &URL_VERBS[..]
            } else {
                &RESOURCE_VERBS[..]
            };
            format!("Expected verbs: {}", verbs.join(", "))
        }
        Problem::UrlsWithResources => {
            "Write one marker for the resources and another for the URLs".to_owned()
        }
        Problem::UrlsInNamespacedProject => {
            "Remove the marker: a namespaced operator's role is a Role, which grants no URLs"
                .to_owned()
        }
        other => return common_hint(other),
    };
    Some(hint)
}

const READER: Reader<Rule> = Reader {
    parse: parse_marker,
    hint,
};

/// Reads the markers of every `.rs` file under `src/controllers/` (in path order, so that
/// messages come out the same on every run), checks them against the project's scope and
/// returns their rules.
pub fn read_controllers(root: &Path, project: &Project) -> anyhow::Result<Vec<Rule>> {
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        let dir = root.join(dir);
        if dir.exists() {
            files.extend(rust_files(root, &dir)?);
        }
    }
    rules_of(&files, project)
}

/// The directories whose `.rs` files hold the markers of the manager role.
pub const SOURCE_DIRS: [&str; 1] = [CONTROLLERS_DIR];

/// The rules of the markers of `files` (path and text, in path order), checked against the
/// project's scope, as [`read_controllers`] reads them from disk.
pub fn rules_of(files: &[(String, String)], project: &Project) -> anyhow::Result<Vec<Rule>> {
    let mut markers = Vec::new();
    let mut errors = Vec::new();
    for (file, text) in files {
        match parse_source(file, text) {
            Ok(found) => markers.extend(found),
            Err(InvalidMarkers(found)) => errors.extend(found),
        }
    }
    if let Err(InvalidMarkers(found)) = check_scope(&markers, project) {
        errors.extend(found);
    }
    if !errors.is_empty() {
        return Err(InvalidMarkers(errors).into());
    }
    Ok(markers.into_iter().map(|marker| marker.rule).collect())
}

/// The markers of one source file; `file` is only for messages.
pub fn parse_source(file: &str, text: &str) -> Result<Vec<Marker>, InvalidMarkers> {
    let (found, errors) = READER.read(file, text);
    if errors.is_empty() {
        Ok(found
            .into_iter()
            .map(|(place, rule)| Marker { place, rule })
            .collect())
    } else {
        Err(InvalidMarkers(errors))
    }
}

/// Refuses what the project's manager role cannot hold: a namespaced project's role is a
/// Role, and a Role has no `nonResourceURLs`.
pub fn check_scope(markers: &[Marker], project: &Project) -> Result<(), InvalidMarkers> {
    if !project.namespaced() {
        return Ok(());
    }
    let errors: Vec<MarkerError> = markers
        .iter()
        .filter(|marker| !marker.rule.urls.is_empty())
        .map(|marker| READER.error(marker.place.clone(), Problem::UrlsInNamespacedProject))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(InvalidMarkers(errors))
    }
}

fn parse_marker(body: &str) -> Result<Rule, Problem> {
    let arguments = Arguments::parse(body, "rbac", &KEYS)?;
    let urls = optional_list("urls", arguments.get("urls"), url)?;
    let for_urls = !urls.is_empty();
    let (groups, resources) = (arguments.get("groups"), arguments.get("resources"));
    if for_urls && (groups.is_some() || resources.is_some()) {
        return Err(Problem::UrlsWithResources);
    }
    let in_namespace = arguments.get("namespace");
    if for_urls && in_namespace.is_some() {
        return Err(Problem::UrlsWithNamespace);
    }
    let (groups, resources) = if for_urls {
        (Vec::new(), Vec::new())
    } else {
        let resources = list("resources", resources, resource)?;
        (list("groups", groups, group)?, resources)
    };
    let verb = |value: &str| {
        let known = if for_urls {
            &URL_VERBS[..]
        } else {
            &RESOURCE_VERBS[..]
        };
        if known.contains(&value) {
            Ok(value.to_owned())
        } else {
            Err(Problem::UnknownVerb {
                verb: value.to_owned(),
                urls: for_urls,
            })
        }
    };
    Ok(Rule {
        verbs: list("verbs", arguments.get("verbs"), verb)?,
        resource_names: optional_list(
            "resourceNames",
            arguments.get("resourceNames"),
            resource_name,
        )?,
        namespace: in_namespace.map(namespace).transpose()?,
        groups,
        resources,
        urls,
    })
}

/// `""` and `core` both name the core group, which Kubernetes spells `""`.
fn group(value: &str) -> Result<String, Problem> {
    match value {
        "" | "core" => Ok(String::new()),
        "*" => Ok(value.to_owned()),
        _ => check_chars(
            "group",
            value,
            is_name_char,
            "use lowercase letters, digits, `-` and `.`, `\"\"` for the core group, or `*`",
        ),
    }
}

/// A plural resource name, optionally with a subresource (`deployments/scale`); `*` in
/// either part is Kubernetes' wildcard.
fn resource(value: &str) -> Result<String, Problem> {
    let valid_part =
        |part: &str| part == "*" || (!part.is_empty() && part.chars().all(is_name_char));
    let valid = match value.split_once('/') {
        Some((resource, subresource)) => valid_part(resource) && valid_part(subresource),
        None => valid_part(value),
    };
    if valid {
        Ok(value.to_owned())
    } else {
        Err(Problem::InvalidValue {
            key: "resource",
            value: value.to_owned(),
            why: "use a lowercase plural such as `deployments`, optionally with a subresource such as `deployments/status`",
        })
    }
}

fn resource_name(value: &str) -> Result<String, Problem> {
    check_chars(
        "resource name",
        value,
        |c| c.is_ascii_graphic() && c != '"',
        "object names have no spaces or quotes",
    )
}

/// A path such as `/metrics`; Kubernetes allows `*` only as its last character.
fn url(value: &str) -> Result<String, Problem> {
    let why =
        "use a path starting with `/`, with `*` only at its end, such as `/metrics` or `/debug/*`";
    let body = value.strip_suffix('*').unwrap_or(value);
    if !value.starts_with('/') || body.contains('*') {
        return Err(Problem::InvalidValue {
            key: "url",
            value: value.to_owned(),
            why,
        });
    }
    check_chars("url", value, |c| c.is_ascii_graphic() && c != '"', why)
}

fn namespace(value: &str) -> Result<String, Problem> {
    if value.contains(';') {
        return Err(Problem::NotSingle { key: "namespace" });
    }
    let value = unquote("namespace", value.trim())?;
    check_chars(
        "namespace",
        value,
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
        "use lowercase letters, digits and `-`",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "src/controllers/db/mysql_cluster.rs";

    fn rules(text: &str) -> Vec<Rule> {
        parse_source(FILE, text)
            .unwrap()
            .into_iter()
            .map(|marker| marker.rule)
            .collect()
    }

    fn one(marker: &str) -> Rule {
        let mut found = rules(marker);
        assert_eq!(found.len(), 1, "{marker}");
        found.remove(0)
    }

    /// The single error of a file whose line 3 is `marker`.
    fn invalid(marker: &str) -> MarkerError {
        let text = format!("use kube::Api;\n\n{marker}\nfn main() {{}}\n");
        let mut errors = parse_source(FILE, &text).unwrap_err().0;
        assert_eq!(errors.len(), 1, "{errors:?}");
        let error = errors.remove(0);
        assert_eq!(error.place.line, 3);
        assert_eq!(error.place.text, marker.trim());
        let message = error.to_string();
        assert!(
            message.starts_with(&format!("{FILE}:3: ")),
            "message names file and line: {message}"
        );
        assert!(
            message.contains(&format!("\n  {}", marker.trim())),
            "message shows the marker: {message}"
        );
        error
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_lists_and_core_group() {
        let rule = one(
            r#"// +opgen:rbac:groups=apps;"",resources=deployments;services,verbs=get;list;watch"#,
        );
        assert_eq!(
            rule,
            Rule {
                groups: strings(&["apps", ""]),
                resources: strings(&["deployments", "services"]),
                verbs: strings(&["get", "list", "watch"]),
                ..Rule::default()
            }
        );
    }

    #[test]
    fn core_is_the_empty_group() {
        let rule = one("// +opgen:rbac:groups=core,resources=pods,verbs=get");
        assert_eq!(rule.groups, [""]);
    }

    #[test]
    fn parses_namespace_resource_names_and_subresources() {
        let rule = one(
            "    // +opgen:rbac:groups=\"\",resources=configmaps;pods/status,verbs=get;update,namespace=kube-system,resourceNames=a;b.c",
        );
        assert_eq!(rule.resources, ["configmaps", "pods/status"]);
        assert_eq!(rule.namespace.as_deref(), Some("kube-system"));
        assert_eq!(rule.resource_names, ["a", "b.c"]);
    }

    #[test]
    fn parses_urls() {
        let rule = one("// +opgen:rbac:urls=/metrics;/debug/*,verbs=get");
        assert_eq!(rule.urls, ["/metrics", "/debug/*"]);
        assert!(rule.groups.is_empty() && rule.resources.is_empty());
    }

    #[test]
    fn keeps_literal_wildcards() {
        let rule = one("// +opgen:rbac:groups=*,resources=*,verbs=*");
        assert_eq!(
            (rule.groups, rule.resources, rule.verbs),
            (strings(&["*"]), strings(&["*"]), strings(&["*"]))
        );
    }

    #[test]
    fn tolerates_trailing_whitespace_and_doc_comments() {
        assert_eq!(
            one("//+opgen:rbac:groups=apps,resources=deployments,verbs=get \t").verbs,
            ["get"]
        );
        assert_eq!(
            one("/// +opgen:rbac:groups=apps,resources=deployments,verbs=list").verbs,
            ["list"]
        );
    }

    #[test]
    fn records_line_numbers() {
        let text = "//! A controller.\n\n// +opgen:rbac:groups=apps,resources=deployments,verbs=get\nfn f() {}\n// +opgen:rbac:groups=\"\",resources=pods,verbs=list\n";
        let lines: Vec<usize> = parse_source(FILE, text)
            .unwrap()
            .iter()
            .map(|marker| marker.place.line)
            .collect();
        assert_eq!(lines, [3, 5]);
    }

    #[test]
    fn ignores_mentions_that_are_not_markers() {
        let text = r#"
//! Grant permissions with `// +opgen:rbac:...` markers.
let doc = "// +opgen:rbac:verb=oops";
/* +opgen:rbac:nonsense */
fn f() {} // +opgen:rbac:nonsense
"#;
        assert_eq!(rules(text), []);
    }

    #[test]
    fn unknown_key() {
        let error = invalid("// +opgen:rbac:groups=apps,resources=deployments,verb=get");
        assert_eq!(error.problem, Problem::UnknownKey("verb".into()));
        assert_eq!(
            error.to_string(),
            format!(
                "{FILE}:3: unknown key `verb` in marker\n  // +opgen:rbac:groups=apps,resources=deployments,verb=get\nExpected keys: groups, resources, verbs, namespace, resourceNames, urls"
            )
        );
    }

    #[test]
    fn unknown_verb() {
        let error = invalid("// +opgen:rbac:groups=apps,resources=deployments,verbs=get;lsit");
        assert_eq!(
            error.problem,
            Problem::UnknownVerb {
                verb: "lsit".into(),
                urls: false
            }
        );
        assert!(
            error
                .to_string()
                .contains("Expected verbs: get, list, watch")
        );
        let error = invalid("// +opgen:rbac:urls=/metrics,verbs=list");
        assert!(
            error.to_string().contains("Expected verbs: get, post"),
            "{error}"
        );
    }

    #[test]
    fn unknown_marker_name() {
        let error = invalid("// +opgen:rabc:groups=apps,resources=deployments,verbs=get");
        assert_eq!(error.problem, Problem::UnknownMarker("rabc".into()));
        assert_eq!(invalid("// +opgen:rbac").problem, Problem::NoArguments);
        assert_eq!(invalid("// +opgen:rbac:  ").problem, Problem::NoArguments);
    }

    #[test]
    fn missing_keys() {
        assert_eq!(
            invalid("// +opgen:rbac:groups=apps,verbs=get").problem,
            Problem::MissingKey("resources")
        );
        assert_eq!(
            invalid("// +opgen:rbac:groups=apps,resources=deployments").problem,
            Problem::MissingKey("verbs")
        );
        assert_eq!(
            invalid("// +opgen:rbac:resources=deployments,verbs=get").problem,
            Problem::MissingKey("groups")
        );
        assert_eq!(
            invalid("// +opgen:rbac:urls=/metrics").problem,
            Problem::MissingKey("verbs")
        );
    }

    #[test]
    fn duplicate_key() {
        assert_eq!(
            invalid("// +opgen:rbac:groups=apps,resources=a,verbs=get,verbs=list").problem,
            Problem::DuplicateKey("verbs")
        );
    }

    #[test]
    fn empty_lists_and_items() {
        for marker in [
            "// +opgen:rbac:groups=apps,resources=deployments,verbs=",
            "// +opgen:rbac:groups=apps,resources=deployments,verbs=get;;list",
            "// +opgen:rbac:groups=apps,resources=deployments;,verbs=get",
            "// +opgen:rbac:groups=,resources=deployments,verbs=get",
        ] {
            assert!(
                matches!(invalid(marker).problem, Problem::EmptyItem { .. }),
                "{marker}"
            );
        }
    }

    #[test]
    fn malformed_values() {
        let cases = [
            (
                "// +opgen:rbac:groups=Apps,resources=deployments,verbs=get",
                "group",
            ),
            (
                "// +opgen:rbac:groups=apps,resources=Deployments,verbs=get",
                "resource",
            ),
            (
                "// +opgen:rbac:groups=apps,resources=a/b/c,verbs=get",
                "resource",
            ),
            (
                "// +opgen:rbac:groups=\"apps,resources=a,verbs=get",
                "groups",
            ),
            ("// +opgen:rbac:urls=metrics,verbs=get", "url"),
            ("// +opgen:rbac:urls=/a*b,verbs=get", "url"),
            (
                "// +opgen:rbac:groups=apps,resources=a,verbs=get,namespace=Kube",
                "namespace",
            ),
        ];
        for (marker, expected) in cases {
            match invalid(marker).problem {
                Problem::InvalidValue { key, .. } => assert_eq!(key, expected, "{marker}"),
                other => panic!("{marker}: {other:?}"),
            }
        }
        assert_eq!(
            invalid("// +opgen:rbac:groups=apps,resources=a,verbs=get,namespace=a;b").problem,
            Problem::NotSingle { key: "namespace" }
        );
        assert_eq!(
            invalid("// +opgen:rbac:groups=apps,resources").problem,
            Problem::NotKeyValue("resources".into())
        );
        assert_eq!(
            invalid("// +opgen:rbac:groups=apps,resources=a,verbs=get,").problem,
            Problem::EmptyPart
        );
    }

    #[test]
    fn urls_exclude_resources_and_namespaces() {
        assert_eq!(
            invalid("// +opgen:rbac:groups=apps,resources=a,urls=/metrics,verbs=get").problem,
            Problem::UrlsWithResources
        );
        assert_eq!(
            invalid("// +opgen:rbac:urls=/metrics,verbs=get,namespace=ns").problem,
            Problem::UrlsWithNamespace
        );
    }

    #[test]
    fn reports_every_bad_marker() {
        let text = "// +opgen:rbac:verbs=get\n// +opgen:rbac:groups=apps,resources=a,verbs=get\n// +opgen:nope\n";
        let errors = parse_source(FILE, text).unwrap_err();
        let lines: Vec<usize> = errors.0.iter().map(|e| e.place.line).collect();
        assert_eq!(lines, [1, 3]);
        assert!(errors.to_string().contains("\n\n"), "{errors}");
    }

    fn project(namespaced: bool) -> Project {
        Project::for_test(
            "demo",
            if namespaced {
                crate::project::Scope::Namespace
            } else {
                crate::project::Scope::Cluster
            },
        )
    }

    #[test]
    fn urls_need_a_cluster_wide_project() {
        let markers = parse_source(FILE, "// +opgen:rbac:urls=/metrics,verbs=get\n").unwrap();
        assert_eq!(check_scope(&markers, &project(false)), Ok(()));
        let error = check_scope(&markers, &project(true))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with(&format!("{FILE}:1: `urls`")), "{error}");
        assert!(error.contains("only a ClusterRole"), "{error}");
    }

    #[test]
    fn reads_controllers_in_path_order() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("src/controllers/db");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("b.rs"),
            "// +opgen:rbac:groups=apps,resources=b,verbs=get\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("a.rs"),
            "// +opgen:rbac:groups=apps,resources=a,verbs=get\n",
        )
        .unwrap();
        std::fs::write(dir.join("notes.md"), "// +opgen:rbac:nonsense\n").unwrap();
        std::fs::write(
            root.path().join("src/controllers/mod.rs"),
            "// +opgen:rbac:groups=apps,resources=m,verbs=get;bogus\n",
        )
        .unwrap();
        let error = read_controllers(root.path(), &project(false))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("src/controllers/mod.rs:1: unknown verb `bogus`"),
            "{error}"
        );
        std::fs::remove_file(root.path().join("src/controllers/mod.rs")).unwrap();
        let resources: Vec<String> = read_controllers(root.path(), &project(false))
            .unwrap()
            .into_iter()
            .flat_map(|rule| rule.resources)
            .collect();
        assert_eq!(resources, ["a", "b"]);

        // Only the controllers' files count: not those of the machinery opgen 0.1.0 generated
        // into `src/runtime/`, which opgen update removes.
        let runtime = root.path().join("src/runtime");
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::write(
            runtime.join("webhook_certs.rs"),
            "// +opgen:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=patch\n",
        )
        .unwrap();
        let resources: Vec<String> = read_controllers(root.path(), &project(false))
            .unwrap()
            .into_iter()
            .flat_map(|rule| rule.resources)
            .collect();
        assert_eq!(resources, ["a", "b"]);
    }

    #[test]
    fn no_controllers_directory_means_no_rules() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(read_controllers(root.path(), &project(false)).unwrap(), []);
    }
}
