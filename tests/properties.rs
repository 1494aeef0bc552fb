//! Property tests: whatever a user types or writes into `PROJECT` or a controller, opgen
//! answers with a value or an error that says what is wrong, and never panics. And every
//! name opgen derives from a valid one is itself valid: opgen can always read back what it
//! wrote.

use std::path::Path;

use opgen::{
    manifests::{
        markers::parse_source,
        rbac::{merge, render_role},
    },
    model::{
        Domain, Group, ImageRef, Kind, KubernetesVersion, ProjectName, Resource, ResourceName,
        Version,
    },
    project::{Project, Scope},
};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        // A failure prints its minimal input; no regression files are left in the tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text shaped like the input it stands for more often than uniform noise would be.
fn near(pattern: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![
        pattern.prop_map(|s| s),
        any::<String>(),
        "[ -~]{0,80}".prop_map(|s| s),
    ]
}

/// Parses `value` as `T`: either it succeeds, or the error has a message naming the value,
/// with what a terminal would act on escaped.
fn parses_or_explains<T>(value: &str) -> Option<T>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    match value.parse::<T>() {
        Ok(parsed) => Some(parsed),
        Err(err) => {
            let message = err.to_string();
            assert!(
                message.contains(&format!("`{}`", opgen::model::Escaped(value))),
                "{value:?}: {message}"
            );
            assert!(
                !message.chars().any(|c| c.is_control() && c != '\n'),
                "{value:?}: {message:?}"
            );
            None
        }
    }
}

fn is_rust_module(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name != "_"
}

proptest! {
    #![proptest_config(config())]

    /// Every PascalCase ASCII name up to 59 characters is a kind, but the keyword `Self`.
    #[test]
    fn kinds(value in near("[A-Z][A-Za-z0-9]{0,70}")) {
        let parsed = parses_or_explains::<Kind>(&value);
        let pascal_case = value.starts_with(|c: char| c.is_ascii_uppercase())
            && value.chars().all(|c| c.is_ascii_alphanumeric());
        prop_assert_eq!(
            parsed.is_some(),
            pascal_case && value.len() <= 59 && value != "Self",
            "{}", value
        );
        if let Some(kind) = parsed {
            // Derived names are valid input in their own right.
            let plural = ResourceName::plural_of(&kind);
            prop_assert!(plural.as_str().parse::<ResourceName>().is_ok(), "{plural}");
            let short = kind.default_short_name();
            prop_assert!(short.parse::<ResourceName>().is_ok(), "{short}");
            prop_assert!(is_rust_module(&kind.module()), "{}", kind.module());
            let rust_type = kind.rust_type();
            prop_assert!(
                rust_type == kind.as_str() || rust_type == format!("{kind}Resource"),
                "{}", rust_type
            );
        }
    }

    /// Every DNS label is a group, and gets a module that is no folder of the api crate.
    #[test]
    fn groups(value in near("[a-z0-9][a-z0-9-]{0,70}")) {
        let parsed = parses_or_explains::<Group>(&value);
        let dns_label = (1..=63).contains(&value.len())
            && value.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !value.starts_with('-')
            && !value.ends_with('-');
        prop_assert_eq!(parsed.is_some(), dns_label, "{}", value);
        if let Some(group) = parsed {
            prop_assert!(is_rust_module(&group.module()), "{}", group.module());
            prop_assert!(!["bin", "lib"].contains(&group.module().as_str()));
        }
    }

    #[test]
    fn versions(value in near("v[0-9]{1,3}((alpha|beta)[0-9]{0,2})?")) {
        parses_or_explains::<Version>(&value);
    }

    #[test]
    fn resource_names(value in near("[a-z0-9][a-z0-9-]{0,70}")) {
        parses_or_explains::<ResourceName>(&value);
    }

    #[test]
    fn project_names_domains_and_kubernetes_versions(
        name in near("[a-z][a-z0-9-]{0,45}"),
        domain in near("[a-z0-9.-]{1,80}"),
        kubernetes in near("v?1\\.[0-9]{1,3}"),
    ) {
        parses_or_explains::<ProjectName>(&name);
        parses_or_explains::<Domain>(&domain);
        parses_or_explains::<KubernetesVersion>(&kubernetes);
    }

    #[test]
    fn image_references(value in near("([a-z0-9.-]+(:[0-9]+)?/)?[a-z0-9._/-]{1,30}(:[A-Za-z0-9._-]{0,20})?(@[a-z0-9]+:[0-9a-f]{0,70})?")) {
        parses_or_explains::<ImageRef>(&value);
    }

    /// Marker lines, well-formed or not, anywhere in a source: parsed, or reported with
    /// their file and line.
    #[test]
    fn markers(lines in prop::collection::vec(near("// \\+opgen:rbac:[a-zA-Z]{0,12}=[a-z\";.*/,=]{0,30}"), 0..8)) {
        let text = lines.join("\n");
        match parse_source("src/controllers/x.rs", &text) {
            Ok(markers) => {
                let rules: Vec<_> = markers.into_iter().map(|m| m.rule).collect();
                let project = Project::new(
                    "demo".parse().unwrap(),
                    "example.com".parse().unwrap(),
                    Scope::Cluster,
                    KubernetesVersion::default(),
                    opgen::model::License::Apache2,
                    None,
                );
                render_role(&merge(&rules), &project);
            }
            Err(errors) => {
                prop_assert!(!errors.0.is_empty());
                for error in &errors.0 {
                    let message = error.to_string();
                    prop_assert!(
                        message.starts_with(&format!("src/controllers/x.rs:{}: ", error.place.line)),
                        "{message}"
                    );
                }
            }
        }
    }

    /// Any text as PROJECT: read, or refused with a message that names the file.
    #[test]
    fn project_files(text in near("[a-zA-Z:\" \n-]{0,200}")) {
        if let Err(err) = Project::parse(&text, Path::new("PROJECT")) {
            prop_assert!(err.to_string().starts_with("PROJECT"), "{err}");
        }
    }

    /// Projects built from a small pool of names, so that clashes are frequent: the rules
    /// either refuse one with a message naming a line of it, or the project is written and
    /// read back unchanged.
    #[test]
    fn project_rules(entries in prop::collection::vec(resource(), 0..6), namespaced in any::<bool>()) {
        let mut project = Project::new(
            "demo".parse().unwrap(),
            "example.com".parse().unwrap(),
            if namespaced { Scope::Namespace } else { Scope::Cluster },
            KubernetesVersion::default(),
            opgen::model::License::Apache2,
            None,
        );
        project.resources = entries;
        let text = project.render();
        match project.check() {
            Ok(()) => {
                let read = Project::parse(&text, Path::new("PROJECT"));
                prop_assert_eq!(read.map_err(|e| e.to_string()), Ok(project));
            }
            Err(violation) => {
                let err = Project::parse(&text, Path::new("PROJECT")).unwrap_err().to_string();
                prop_assert!(err.starts_with("PROJECT:"), "{}", err);
                prop_assert!(err.contains(&violation.to_string()), "{}", err);
            }
        }
    }
}

fn resource() -> impl Strategy<Value = Resource> {
    (
        prop::sample::select(vec!["db", "ops", "kube"]),
        prop::sample::select(vec!["v1", "v1alpha1", "v2"]),
        prop::sample::select(vec![
            "Thing",
            "THING",
            "ThingOther",
            "ThingList",
            "ThingSpec",
            "Option",
            "OptionResource",
            "Other",
        ]),
        prop::sample::select(vec![None, Some("things"), Some("others")]),
        prop::sample::select(vec![None, Some("th"), Some("oth")]),
        any::<(bool, bool, bool)>(),
    )
        .prop_map(
            |(group, version, kind, plural, short, (namespaced, controller, storage))| {
                let kind: Kind = kind.parse().unwrap();
                Resource {
                    group: group.parse().unwrap(),
                    version: version.parse().unwrap(),
                    plural: plural
                        .map_or_else(|| ResourceName::plural_of(&kind), |p| p.parse().unwrap()),
                    short_name: short
                        .map_or_else(|| kind.default_short_name(), str::to_owned)
                        .parse()
                        .unwrap(),
                    kind,
                    namespaced,
                    controller,
                    storage,
                    operand: None,
                    webhooks: None,
                }
            },
        )
}
