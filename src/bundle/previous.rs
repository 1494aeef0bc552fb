//! The bundle already in `bundle/`, read for what a run keeps from it when its flags leave it
//! out: the package, the channels, and the CSV's `replaces` and `skips`.

use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

use super::{
    ANNOTATIONS_FILE, BundleVersion, Channel, PackageName, csv_path,
    metadata::{self, CHANNELS, DEFAULT_CHANNEL, PACKAGE},
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousBundle {
    pub package: PackageName,
    pub channels: Vec<Channel>,
    pub default_channel: Option<Channel>,
    /// What its CSV says, when it has one.
    pub csv: Option<PreviousCsv>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousCsv {
    /// `metadata.name`.
    pub name: String,
    pub version: BundleVersion,
    pub replaces: Option<String>,
    pub skips: Vec<String>,
}

/// The fields of the previous CSV that a new one may keep.
#[derive(Deserialize)]
struct Csv {
    metadata: CsvMetadata,
    spec: CsvSpec,
}

#[derive(Deserialize)]
struct CsvMetadata {
    name: String,
}

#[derive(Deserialize)]
struct CsvSpec {
    version: String,
    #[serde(default)]
    replaces: Option<String>,
    #[serde(default)]
    skips: Vec<String>,
}

impl PreviousBundle {
    /// The bundle under `root`, if `bundle/metadata/annotations.yaml` exists.
    pub fn read(root: &Path) -> anyhow::Result<Option<Self>> {
        let path = root.join(ANNOTATIONS_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        let broken = |problem: String| {
            anyhow::anyhow!(
                "{ANNOTATIONS_FILE}: {problem}\n\nopgen reads the previous bundle to keep its package, channels and replaces; restore the file from version control, or delete bundle/ to start afresh"
            )
        };
        let annotations =
            metadata::parse_annotations(&crate::files::read_to_string(&path)?).map_err(broken)?;
        let value = |key: &str| {
            annotations
                .get(key)
                .cloned()
                .ok_or_else(|| broken(format!("the annotation {key} is missing")))
        };
        let package: PackageName = value(PACKAGE)?
            .parse()
            .map_err(|e| broken(format!("{e}")))?;
        let channels = value(CHANNELS)?
            .split(',')
            .map(str::parse)
            .collect::<Result<Vec<Channel>, _>>()
            .map_err(|e| broken(format!("{e}")))?;
        let default_channel = annotations
            .get(DEFAULT_CHANNEL)
            .map(|c| c.parse())
            .transpose()
            .map_err(|e| broken(format!("{e}")))?;
        let csv = PreviousCsv::read(root, &package)?;
        Ok(Some(Self {
            package,
            channels,
            default_channel,
            csv,
        }))
    }
}

impl PreviousCsv {
    fn read(root: &Path, package: &PackageName) -> anyhow::Result<Option<Self>> {
        let relative = csv_path(package);
        let path = root.join(&relative);
        if !path.is_file() {
            return Ok(None);
        }
        let text = crate::files::read_to_string(&path)?;
        let csv: Csv = serde_saphyr::from_str(&text)
            .map_err(|err| anyhow::anyhow!("{}", crate::yaml_error::located(&err)))
            .with_context(|| format!("{relative} is not a ClusterServiceVersion opgen can read; restore it from version control, or delete bundle/ to start afresh"))?;
        let version = csv
            .spec
            .version
            .parse()
            .with_context(|| format!("{relative}: spec.version"))?;
        Ok(Some(Self {
            name: csv.metadata.name,
            version,
            replaces: csv.spec.replaces.filter(|r| !r.is_empty()),
            skips: csv.spec.skips,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const ANNOTATIONS: &str = "annotations:\n  operators.operatorframework.io.bundle.package.v1: demo\n  operators.operatorframework.io.bundle.channels.v1: alpha,stable\n  operators.operatorframework.io.bundle.channel.default.v1: stable\n";

    #[test]
    fn reads_package_channels_and_upgrade_fields() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(PreviousBundle::read(dir.path()).unwrap(), None);
        write(dir.path(), ANNOTATIONS_FILE, ANNOTATIONS);
        let previous = PreviousBundle::read(dir.path()).unwrap().unwrap();
        assert_eq!(previous.package.as_str(), "demo");
        assert_eq!(previous.channels.len(), 2);
        assert_eq!(previous.default_channel.unwrap().as_str(), "stable");
        assert_eq!(previous.csv, None);

        write(
            dir.path(),
            "bundle/manifests/demo.clusterserviceversion.yaml",
            "# header\napiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: demo.v0.2.0\nspec:\n  version: 0.2.0\n  replaces: demo.v0.1.0\n  skips:\n  - demo.v0.1.1\n",
        );
        let csv = PreviousBundle::read(dir.path())
            .unwrap()
            .unwrap()
            .csv
            .unwrap();
        assert_eq!(csv.name, "demo.v0.2.0");
        assert_eq!(csv.version.to_string(), "0.2.0");
        assert_eq!(csv.replaces.as_deref(), Some("demo.v0.1.0"));
        assert_eq!(csv.skips, ["demo.v0.1.1"]);
    }

    #[test]
    fn a_broken_previous_bundle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ANNOTATIONS_FILE, "annotations:\n  x: y\n");
        let err = PreviousBundle::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.starts_with("bundle/metadata/annotations.yaml: the annotation operators.operatorframework.io.bundle.package.v1 is missing"),
            "{err}"
        );
        write(dir.path(), ANNOTATIONS_FILE, ANNOTATIONS);
        write(
            dir.path(),
            "bundle/manifests/demo.clusterserviceversion.yaml",
            "spec: [\n",
        );
        let err = format!("{:#}", PreviousBundle::read(dir.path()).unwrap_err());
        assert!(
            err.contains("is not a ClusterServiceVersion opgen can read"),
            "{err}"
        );
    }
}
