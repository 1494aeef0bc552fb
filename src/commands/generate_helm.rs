//! `opgen generate helm`: the Helm chart of the operator in `dist/chart`, from the rendered
//! `config/default`.

use std::process::ExitCode;

use crate::{
    apply::Transaction, bundle::kustomize::Renderer, cli::HelmArgs, helm, interrupt::Interrupt,
    shell::Shell,
};

pub fn run(args: HelmArgs, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    let (root, _lock, project) = super::find_project(shell)?;
    let interrupt = Interrupt::catch_signals()?;
    let (plan, notes) = helm::chart_plan(&root, &project, &Renderer::from_env())?;
    for note in &notes {
        shell.note(note);
    }
    super::finish(
        &plan,
        args.output.output(),
        (
            "the Helm chart is",
            "run `opgen generate helm` (or `make helm`)",
        ),
        Transaction::new(interrupt),
        shell,
    )
}
