//! The bundle's metadata: `bundle/metadata/annotations.yaml`, and `bundle.Dockerfile`, whose
//! labels carry the same keys and values (OLM reads one or the other).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Channels, PackageName};
use crate::templates::Templates;

pub const MEDIATYPE: &str = "operators.operatorframework.io.bundle.mediatype.v1";
pub const MANIFESTS: &str = "operators.operatorframework.io.bundle.manifests.v1";
pub const METADATA: &str = "operators.operatorframework.io.bundle.metadata.v1";
pub const PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
pub const CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
pub const DEFAULT_CHANNEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";

/// One annotation, and label of the image.
#[derive(Debug, Serialize)]
struct Label {
    key: &'static str,
    /// As the Dockerfile writes it.
    value: String,
    /// As YAML writes it: quoted where a plain scalar would not read back as this string.
    yaml: String,
}

#[derive(Serialize)]
struct Values {
    labels: Vec<Label>,
}

/// The annotations of a bundle of `package` published in `channels`, in the conventional order.
fn labels(package: &PackageName, channels: &Channels) -> Vec<Label> {
    [
        (MEDIATYPE, "registry+v1".to_owned()),
        (MANIFESTS, "manifests/".to_owned()),
        (METADATA, "metadata/".to_owned()),
        (PACKAGE, package.to_string()),
        (CHANNELS, channels.joined()),
        (DEFAULT_CHANNEL, channels.default_channel().to_string()),
    ]
    .into_iter()
    .map(|(key, value)| Label {
        key,
        yaml: yaml_scalar(&value),
        value,
    })
    .collect()
}

/// `value` as a YAML scalar that reads back as the same string (`1.0` would read as a number).
fn yaml_scalar(value: &str) -> String {
    serde_saphyr::to_string(&value)
        .expect("a string always serializes")
        .trim_end()
        .to_owned()
}

/// The texts of `annotations.yaml` and `bundle.Dockerfile`.
pub fn render(package: &PackageName, channels: &Channels) -> anyhow::Result<(String, String)> {
    let templates = Templates::get();
    let values = Values {
        labels: labels(package, channels),
    };
    Ok((
        templates.render("bundle/annotations.yaml", &values)?,
        templates.render("bundle/bundle.Dockerfile", &values)?,
    ))
}

/// The annotations of an `annotations.yaml` text.
pub fn parse_annotations(text: &str) -> Result<BTreeMap<String, String>, String> {
    #[derive(serde::Deserialize)]
    struct File {
        annotations: BTreeMap<String, String>,
    }
    serde_saphyr::from_str::<File>(text)
        .map(|file| file.annotations)
        .map_err(|err| crate::yaml_error::located(&err))
}

/// The `LABEL key=value` lines of a Dockerfile.
pub fn parse_labels(dockerfile: &str) -> BTreeMap<String, String> {
    dockerfile
        .lines()
        .filter_map(|line| line.trim().strip_prefix("LABEL "))
        .filter_map(|label| label.trim().split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_and_labels_agree() {
        let channels = Channels::new(
            vec!["1.0".parse().unwrap(), "stable".parse().unwrap()],
            Some("stable".parse().unwrap()),
        )
        .unwrap();
        let (annotations, dockerfile) = render(&"demo".parse().unwrap(), &channels).unwrap();
        let annotations = parse_annotations(&annotations).unwrap();
        assert_eq!(annotations, parse_labels(&dockerfile));
        assert_eq!(annotations[CHANNELS], "1.0,stable");
        assert_eq!(annotations[DEFAULT_CHANNEL], "stable");
        assert_eq!(annotations[MEDIATYPE], "registry+v1");
        assert_eq!(annotations.len(), 6);
        assert!(dockerfile.contains("\nFROM scratch\n"), "{dockerfile}");
        assert!(
            dockerfile
                .ends_with("COPY bundle/manifests /manifests/\nCOPY bundle/metadata /metadata/\n"),
            "{dockerfile}"
        );
    }

    #[test]
    fn a_malformed_annotations_file_is_described_in_opgen_s_words() {
        let err = parse_annotations("annotations:\n  a: x\n  a: y\n").unwrap_err();
        assert_eq!(
            err,
            "line 3, column 3: duplicate mapping key `a` is not allowed here"
        );
    }

    #[test]
    fn a_channel_that_looks_like_a_number_stays_a_string() {
        assert_eq!(yaml_scalar("alpha"), "alpha");
        assert_ne!(yaml_scalar("1.0"), "1.0");
        let channels = Channels::new(vec!["1.0".parse().unwrap()], None).unwrap();
        let (annotations, _) = render(&"demo".parse().unwrap(), &channels).unwrap();
        assert_eq!(parse_annotations(&annotations).unwrap()[CHANNELS], "1.0");
    }
}
