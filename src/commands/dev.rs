//! `opgen dev`: the operator on a development control plane, rebuilt on every change.

use anyhow::Context as _;

use crate::{
    cli::DevArgs,
    dev::{self, assets::Assets, kubectl::Kubectl},
    interrupt::Interrupt,
    project::Project,
    shell::Shell,
};

pub fn run(args: DevArgs, shell: &mut Shell) -> anyhow::Result<()> {
    // Everything the session needs is checked before it writes anything.
    let assets = Assets::find(
        args.assets,
        std::env::var_os("KUBEBUILDER_ASSETS").map(Into::into),
    )?;
    Kubectl::check_installed()?;
    if !assets.has_controller_manager() {
        shell.warn(&format!(
            "{} holds no kube-controller-manager: the session runs without it, so owned objects \
             are not garbage-collected and workloads get no status; put one of the same release \
             beside kube-apiserver to have them",
            assets.dir().display()
        ));
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // Read, then unlocked: the session runs `generate manifests`, which takes the lock.
    let (root, lock, project) = Project::open(&cwd)?;
    drop(lock);
    let interrupt = Interrupt::catch_signals().context("cannot catch SIGINT and SIGTERM")?;
    let options = dev::Options {
        assets,
        samples: !args.no_samples,
    };
    dev::run(&options, &root, &project, shell, &interrupt)
}
