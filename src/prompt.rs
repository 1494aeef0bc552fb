//! Asking for values the command line left out: on a terminal, dialoguer prompts with the
//! default shown; elsewhere (CI, tests, `--yes`) the default is used or the missing flag is
//! named. Nothing ever waits for input that cannot come.

use std::{fmt::Display, io::IsTerminal, str::FromStr};

use anyhow::bail;

pub struct Prompter {
    interactive: bool,
}

impl Prompter {
    /// Prompts only when both stdin and stderr are terminals and `--yes` was not given.
    pub fn new(yes: bool) -> Self {
        Self {
            interactive: !yes && std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
        }
    }

    /// The value of `flag`: as given, else asked for, else `default`, else an error naming
    /// the flag. A given or default value that does not parse is an error, never re-asked.
    pub fn value<T>(
        &self,
        given: Option<String>,
        flag: &str,
        label: &str,
        default: Option<String>,
    ) -> anyhow::Result<T>
    where
        T: FromStr,
        T::Err: Display + std::error::Error + Send + Sync + 'static,
    {
        if let Some(given) = given {
            return Ok(given.parse()?);
        }
        if self.interactive {
            return ask(label, default);
        }
        match default {
            Some(default) => Ok(default.parse()?),
            None => bail!(
                "missing {flag} ({label})\n\nPass it on the command line, e.g. `{flag} {}`, or run opgen on a terminal to be asked",
                example(flag)
            ),
        }
    }

    /// Whether the user agrees to `question`: asked on a terminal (no unless they say yes);
    /// elsewhere no, and the caller names the flag that agrees without asking.
    pub fn confirm(&self, question: &str) -> anyhow::Result<bool> {
        if !self.interactive {
            return Ok(false);
        }
        let theme = dialoguer::theme::SimpleTheme;
        Ok(dialoguer::Confirm::with_theme(&theme)
            .with_prompt(question)
            .default(false)
            .interact()?)
    }

    /// On a terminal, asks for a value that may be left out (an empty answer is `None`);
    /// elsewhere `None` without asking, and the caller says what that means.
    pub fn optional<T>(&self, label: &str) -> anyhow::Result<Option<T>>
    where
        T: FromStr,
        T::Err: Display,
    {
        if !self.interactive {
            return Ok(None);
        }
        let theme = dialoguer::theme::SimpleTheme;
        let answer = dialoguer::Input::<String>::with_theme(&theme)
            .with_prompt(label)
            .allow_empty(true)
            .validate_with(|text: &String| match text.trim() {
                "" => Ok(()),
                text => text.parse::<T>().map(|_| ()).map_err(|err| err.to_string()),
            })
            .interact_text()?;
        match answer.trim() {
            "" => Ok(None),
            text => text
                .parse()
                .map(Some)
                .map_err(|err: T::Err| anyhow::anyhow!("{err}")),
        }
    }
}

fn ask<T>(label: &str, default: Option<String>) -> anyhow::Result<T>
where
    T: FromStr,
    T::Err: Display,
{
    let theme = dialoguer::theme::SimpleTheme;
    let mut input = dialoguer::Input::<String>::with_theme(&theme).with_prompt(label);
    if let Some(default) = default {
        input = input.default(default);
    }
    let answer = input
        .validate_with(|text: &String| text.parse::<T>().map(|_| ()).map_err(|err| err.to_string()))
        .interact_text()?;
    answer
        .parse()
        .map_err(|err: T::Err| anyhow::anyhow!("{err}"))
}

/// An example value for each flag that can be asked for.
fn example(flag: &str) -> &'static str {
    match flag {
        "--domain" => "example.com",
        "--group" => "db",
        "--version" => "v1alpha1",
        "--kind" => "MySQLCluster",
        _ => "VALUE",
    }
}
