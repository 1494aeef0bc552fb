/// The license a new project is published under.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum License {
    #[default]
    Apache2,
    Mit,
    None,
}

impl License {
    /// The SPDX identifier for Cargo.toml, if the project has a license.
    pub fn spdx(self) -> Option<&'static str> {
        match self {
            License::Apache2 => Some("Apache-2.0"),
            License::Mit => Some("MIT"),
            License::None => None,
        }
    }
}
