//! opgen scaffolds and maintains Kubernetes operators written in Rust on kube-rs, the way
//! Kubebuilder does for Go.
//!
//! Data flows one way: [`cli`] parses arguments, [`model`] validates them, [`scaffold`] and
//! [`manifests`] render the files a command wants into a [`plan::Plan`], and [`apply`]
//! prints it (`--dry-run`) or writes it atomically.

pub mod apply;
pub mod bundle;
pub mod cli;
pub mod commands;
pub mod dev;
pub mod files;
pub mod helm;
pub mod interrupt;
pub mod lock;
pub mod manifests;
pub mod model;
pub mod new_directory;
pub mod overrides;
pub mod plan;
pub mod project;
pub mod project_change;
pub mod prompt;
pub mod rustfmt;
pub mod scaffold;
pub mod shell;
pub mod templates;
pub mod update;
pub mod yaml_error;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use cli::{Cli, Command, CreateCommand, DeleteCommand, GenerateCommand};
use shell::Shell;

/// Runs opgen with the process's arguments and returns its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut shell = Shell::stdio(cli.quiet, cli.color.into());
    match run(cli.command, &mut shell) {
        Ok(code) => code,
        Err(err) => {
            shell.error(&err);
            // Stopped by a signal: exit as a shell expects of a process that the signal ended.
            match err
                .chain()
                .find_map(|cause| cause.downcast_ref::<interrupt::Interrupted>())
            {
                Some(interrupted) => ExitCode::from(interrupted.exit_code()),
                None => ExitCode::FAILURE,
            }
        }
    }
}

fn run(command: Command, shell: &mut Shell) -> anyhow::Result<ExitCode> {
    match command {
        Command::Init(args) => commands::init::run(args, shell)?,
        Command::Create(CreateCommand::Api(args)) => commands::create_api::run(args, shell)?,
        Command::Create(CreateCommand::Webhook(args)) => {
            commands::create_webhook::run(args, shell)?
        }
        Command::Delete(DeleteCommand::Api(args)) => commands::delete_api::run(args, shell)?,
        Command::Delete(DeleteCommand::Webhook(args)) => {
            commands::delete_webhook::run(args, shell)?
        }
        Command::Edit(args) => commands::edit::run(args, shell)?,
        Command::Generate(GenerateCommand::Manifests(args)) => {
            return commands::generate_manifests::run(args, shell);
        }
        Command::Update(args) => commands::update::run(args, shell)?,
        Command::Dev(args) => commands::dev::run(args, shell)?,
        Command::Generate(GenerateCommand::Bundle(args)) => {
            return commands::generate_bundle::run(args, shell);
        }
        Command::Generate(GenerateCommand::Helm(args)) => {
            return commands::generate_helm::run(args, shell);
        }
        Command::Completions { shell: target } => {
            let mut out = Vec::new();
            clap_complete::generate(target, &mut Cli::command(), "opgen", &mut out);
            shell.print(&String::from_utf8_lossy(&out));
        }
        Command::Templates(command) => return commands::templates::run(command, shell),
        Command::Man => {
            let mut out = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut out)?;
            shell.print(&String::from_utf8_lossy(&out));
        }
    }
    Ok(ExitCode::SUCCESS)
}
