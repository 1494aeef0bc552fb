//! What one `generate bundle` run builds: the flags, validated, with what they leave out taken
//! from the bundle already in `bundle/` or from the project.

use anyhow::bail;

use super::{BundleVersion, Channel, Channels, CsvName, PackageName, previous::PreviousBundle};
use crate::{model::ImageRef, project::Project};

/// The channel of a first bundle whose flags name none, as Operator SDK defaults it.
const FIRST_CHANNEL: &str = "alpha";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleOptions {
    pub version: BundleVersion,
    pub package: PackageName,
    pub channels: Channels,
    pub replaces: Option<CsvName>,
    /// CSV names the new bundle skips, kept from a previous bundle of the same version.
    pub skips: Vec<String>,
    /// The manager image; the rendered Deployment's when absent.
    pub image: Option<ImageRef>,
}

/// What the flags ask for, each parsed; what they leave out is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BundleRequest {
    pub version: Option<BundleVersion>,
    pub package: Option<PackageName>,
    pub channels: Option<Vec<Channel>>,
    pub default_channel: Option<Channel>,
    /// As typed: a bare version names a CSV of the package, which is known only once resolved;
    /// empty for none.
    pub replaces: Option<String>,
    pub image: Option<ImageRef>,
}

/// The options, and notes for the user on what was inferred.
pub fn resolve(
    request: &BundleRequest,
    project: &Project,
    previous: Option<&PreviousBundle>,
) -> anyhow::Result<(BundleOptions, Vec<String>)> {
    let mut notes = Vec::new();
    let Some(version) = request.version.clone() else {
        bail!("missing --version: the bundle's version, e.g. --version 0.1.0");
    };
    let package: PackageName = match (&request.package, previous) {
        (Some(package), _) => package.clone(),
        (None, Some(previous)) => previous.package.clone(),
        (None, None) => PackageName::of_project(&project.project_name),
    };
    // A bundle of another package says nothing about this one.
    let previous = previous.filter(|p| p.package == package);

    let channels: Vec<Channel> = match (&request.channels, previous) {
        (Some(list), _) => list.clone(),
        (None, Some(previous)) => previous.channels.clone(),
        (None, None) => vec![FIRST_CHANNEL.parse()?],
    };
    let default_channel: Option<Channel> = match (&request.default_channel, previous) {
        (Some(channel), _) => Some(channel.clone()),
        (None, Some(previous)) => previous
            .default_channel
            .clone()
            .filter(|c| channels.contains(c)),
        (None, None) => None,
    };
    let channels = Channels::new(channels, default_channel)?;

    let this = CsvName::new(&package, &version);
    let previous_csv = previous.and_then(|p| p.csv.as_ref());
    let (replaces, skips) = match (&request.replaces, previous_csv) {
        (Some(given), _) if given.is_empty() => (None, Vec::new()),
        (Some(given), csv) => {
            let skips = csv
                .filter(|csv| csv.version == version)
                .map(|csv| csv.skips.clone())
                .unwrap_or_default();
            (Some(CsvName::parse_in(given, &package)?), skips)
        }
        (None, Some(csv)) if csv.version == version => {
            let replaces = csv
                .replaces
                .as_deref()
                .map(str::parse::<CsvName>)
                .transpose()
                .map_err(|err| {
                    anyhow::anyhow!(
                        "the previous bundle's spec.replaces: {err}\n\nName the CSV this one replaces with --replaces, or --replaces '' for none"
                    )
                })?;
            (replaces, csv.skips.clone())
        }
        (None, Some(csv)) if csv.version < version => {
            let replaces: CsvName = csv.name.parse().map_err(|err| {
                anyhow::anyhow!(
                    "the previous bundle's metadata.name: {err}\n\nName the CSV this one replaces with --replaces, or --replaces '' for none"
                )
            })?;
            notes.push(format!(
                "{this} replaces {replaces}, the bundle it supersedes in bundle/ (choose another with --replaces, or none with --replaces '')"
            ));
            (Some(replaces), Vec::new())
        }
        (None, Some(csv)) => {
            notes.push(format!(
                "bundle/ holds {}, newer than {this}: {this} replaces nothing unless --replaces says so",
                csv.name
            ));
            (None, Vec::new())
        }
        (None, None) => (None, Vec::new()),
    };
    if let Some(replaces) = &replaces {
        check_replaces(replaces, &this)?;
    }
    Ok((
        BundleOptions {
            version,
            package,
            channels,
            replaces,
            skips,
            image: request.image.clone(),
        },
        notes,
    ))
}

/// OLM's upgrade graph runs from a package's older bundles to its newer ones: a CSV replaces
/// an older CSV of its own package, never itself, a newer one or another package's.
fn check_replaces(replaces: &CsvName, this: &CsvName) -> anyhow::Result<()> {
    if replaces == this {
        bail!("{this} cannot replace itself: --replaces names an older bundle, or '' for none");
    }
    if replaces.package() != this.package() {
        bail!(
            "{this} cannot replace {replaces}: a bundle replaces an older bundle of its own package, {}\n\nName one of its versions, e.g. --replaces {}, or --replaces '' for none",
            this.package(),
            this.package()
        );
    }
    if replaces.version() > this.version() {
        bail!(
            "{this} cannot replace {replaces}, a newer version: OLM would downgrade along that edge, and a bundle replaces an older one\n\nName a version before {}, or --replaces '' for none",
            this.version()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bundle::previous::PreviousCsv, project::Scope};

    fn args(line: &str) -> anyhow::Result<BundleRequest> {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(
            format!("opgen generate bundle {line}").split_whitespace(),
        )
        .unwrap();
        match cli.command {
            crate::cli::Command::Generate(crate::cli::GenerateCommand::Bundle(args)) => {
                crate::commands::generate_bundle::request(&args)
            }
            other => panic!("{other:?}"),
        }
    }

    fn project() -> Project {
        Project::for_test("demo-operator", Scope::Cluster)
    }

    fn previous(version: &str, replaces: Option<&str>) -> PreviousBundle {
        PreviousBundle {
            package: "demo-operator".parse().unwrap(),
            channels: vec!["alpha".parse().unwrap(), "stable".parse().unwrap()],
            default_channel: Some("stable".parse().unwrap()),
            csv: Some(PreviousCsv {
                name: format!("demo-operator.v{version}"),
                version: version.parse().unwrap(),
                replaces: replaces.map(str::to_owned),
                skips: vec!["demo-operator.v0.0.9".into()],
            }),
        }
    }

    fn resolve_line(
        line: &str,
        previous: Option<&PreviousBundle>,
    ) -> anyhow::Result<BundleOptions> {
        resolve(&args(line)?, &project(), previous).map(|(options, _)| options)
    }

    #[test]
    fn a_first_bundle_uses_the_project_name_and_alpha() {
        let options = resolve_line("--version 0.1.0", None).unwrap();
        assert_eq!(options.package.as_str(), "demo-operator");
        assert_eq!(options.channels.joined(), "alpha");
        assert_eq!(options.replaces, None);
        assert_eq!(options.image, None);
    }

    #[test]
    fn flags_win() {
        let options = resolve_line(
            "--version 0.2.0 --package mysql --channels fast,stable --default-channel stable --replaces 0.1.0 --image registry.example.com/op:v2",
            Some(&previous("0.1.0", None)),
        )
        .unwrap();
        assert_eq!(options.package.as_str(), "mysql");
        assert_eq!(options.channels.joined(), "fast,stable");
        assert_eq!(options.channels.default_channel().as_str(), "stable");
        assert_eq!(options.replaces.unwrap().to_string(), "mysql.v0.1.0");
        assert_eq!(
            options.image.unwrap().as_str(),
            "registry.example.com/op:v2"
        );
    }

    #[test]
    fn the_same_version_keeps_replaces_skips_and_channels() {
        let previous = previous("0.2.0", Some("demo-operator.v0.1.0"));
        let options = resolve_line("--version 0.2.0", Some(&previous)).unwrap();
        assert_eq!(
            options.replaces.unwrap().to_string(),
            "demo-operator.v0.1.0"
        );
        assert_eq!(options.skips, ["demo-operator.v0.0.9"]);
        assert_eq!(options.channels.joined(), "alpha,stable");
        assert_eq!(options.channels.default_channel().as_str(), "stable");
        let cleared = resolve_line("--version 0.2.0 --replaces=", Some(&previous)).unwrap();
        assert_eq!(cleared.replaces, None);
        assert!(cleared.skips.is_empty());
    }

    #[test]
    fn a_newer_version_replaces_the_previous_bundle() {
        let previous = previous("0.1.0", Some("demo-operator.v0.0.9"));
        let (options, notes) = resolve(
            &args("--version 0.2.0").unwrap(),
            &project(),
            Some(&previous),
        )
        .unwrap();
        assert_eq!(
            options.replaces.unwrap().to_string(),
            "demo-operator.v0.1.0"
        );
        assert!(options.skips.is_empty());
        assert!(
            notes[0].contains("replaces demo-operator.v0.1.0"),
            "{notes:?}"
        );
        let (options, notes) = resolve(
            &args("--version 0.0.5").unwrap(),
            &project(),
            Some(&previous),
        )
        .unwrap();
        assert_eq!(options.replaces, None);
        assert!(
            notes[0].contains("newer than demo-operator.v0.0.5"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_previous_default_outside_new_channels_falls_back_to_the_first() {
        let options = resolve_line(
            "--version 0.1.0 --channels beta",
            Some(&previous("0.1.0", None)),
        )
        .unwrap();
        assert_eq!(options.channels.default_channel().as_str(), "beta");
    }

    #[test]
    fn bad_flags() {
        for (line, why) in [
            ("--version 1.0", "invalid version `1.0`"),
            (
                "--version 0.1.0 --package My_Op",
                "invalid package name `My_Op`",
            ),
            (
                "--version 0.1.0 --channels alpha --default-channel stable",
                "the default channel `stable` is not among the channels alpha",
            ),
            ("--version 0.1.0 --channels a,,b", "invalid channel ``"),
            ("--version 0.1.0 --replaces 0.1.0", "cannot replace itself"),
            ("--version 0.1.0 --replaces nope", "invalid CSV name `nope`"),
            (
                "--version 0.2.0 --replaces 0.3.0",
                "demo-operator.v0.2.0 cannot replace demo-operator.v0.3.0, a newer version",
            ),
            (
                "--version 0.2.0 --replaces other.v0.1.0",
                "a bundle replaces an older bundle of its own package, demo-operator",
            ),
            ("--version 0.1.0 --image Bad:1", "invalid image `Bad:1`"),
        ] {
            let err = resolve_line(line, None).unwrap_err().to_string();
            assert!(err.contains(why), "{line}: {err}");
        }
    }
}
