//! `opgen generate manifests`.

use crate::{cli::ManifestsArgs, shell::Shell};

pub fn run(_args: ManifestsArgs, _shell: &mut Shell) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("generate manifests is not implemented yet")
}
