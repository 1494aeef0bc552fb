//! Where opgen's messages go: cargo-style status lines (`    Creating src/main.rs`) on
//! stderr, coloured as `--color` and the environment say (anstream decides, by the rules
//! cargo and clap follow: `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR`, a terminal); diffs and
//! listings on stdout. Tests capture both.

use std::io::{IsTerminal, Write};
/// Marks an error after which a command put its files back, and says how that went. It is
/// the outermost context of the error, and [`Shell::error`] prints it after the cause, which
/// matters more.
#[derive(Debug)]
pub struct Restored(String);

impl Restored {
    /// What was restored, as the command reports it.
    pub fn new(summary: String) -> Self {
        Self(summary)
    }
}

impl std::fmt::Display for Restored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
use std::sync::{Arc, Mutex};

use anstyle::{AnsiColor, Style};

pub struct Shell {
    out: Box<dyn Write>,
    err: Box<dyn Write>,
    /// stderr is an interactive terminal.
    terminal: bool,
    color: bool,
    quiet: bool,
}

const VERB: Style = AnsiColor::Green.on_default().bold();
const NOTE: Style = AnsiColor::Cyan.on_default().bold();
const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();

impl Shell {
    /// The process's stdout and stderr, with colour on stderr as `choice` (`--color`) and,
    /// for `auto`, the environment and the terminal decide.
    pub fn stdio(quiet: bool, choice: anstream::ColorChoice) -> Self {
        choice.write_global();
        let stderr = std::io::stderr();
        let terminal = stderr.is_terminal();
        let color = anstream::AutoStream::choice(&stderr) != anstream::ColorChoice::Never;
        Self {
            out: Box::new(std::io::stdout()),
            err: Box::new(stderr),
            terminal,
            color,
            quiet,
        }
    }

    /// A shell whose output is kept in memory; for tests.
    #[cfg(test)]
    pub fn captured() -> Self {
        Self::to_buffers(Buffer::default(), Buffer::default())
    }

    #[cfg(test)]
    pub fn to_buffers(out: Buffer, err: Buffer) -> Self {
        Self {
            out: Box::new(out),
            err: Box::new(err),
            terminal: false,
            color: false,
            quiet: false,
        }
    }

    /// Whether opgen colours its messages, and so tells the programs it runs to colour theirs.
    pub fn colors(&self) -> bool {
        self.color
    }

    /// Whether progress may be shown: stderr is an interactive terminal and `--quiet` is off.
    pub fn shows_progress(&self) -> bool {
        self.terminal && !self.quiet
    }

    /// `    Creating path`: a right-aligned verb, as cargo prints it.
    pub fn status(&mut self, verb: &str, message: &str) {
        if self.quiet {
            return;
        }
        let _ = if self.color {
            writeln!(self.err, "{VERB}{verb:>12}{VERB:#} {message}")
        } else {
            writeln!(self.err, "{verb:>12} {message}")
        };
    }

    /// A line of explanation on stderr.
    pub fn note(&mut self, message: &str) {
        self.labelled(NOTE, "note", message);
    }

    /// Something the user should act on although the command succeeds, on stderr.
    pub fn warn(&mut self, message: &str) {
        self.labelled(WARNING, "warning", message);
    }

    fn labelled(&mut self, style: Style, label: &str, message: &str) {
        if self.quiet {
            return;
        }
        let _ = if self.color {
            writeln!(self.err, "{style}{label}{style:#}: {message}")
        } else {
            writeln!(self.err, "{label}: {message}")
        };
    }

    /// A failed command's error and its causes on stderr, even with `--quiet`. When the
    /// command put its files back, what went wrong comes first and what was restored last.
    pub fn error(&mut self, err: &anyhow::Error) {
        let restored = err.downcast_ref::<Restored>().map(ToString::to_string);
        let mut chain = err
            .chain()
            .map(ToString::to_string)
            .filter(|cause| Some(cause) != restored.as_ref());
        let Some(first) = chain.next() else {
            return;
        };
        let _ = if self.color {
            writeln!(self.err, "{ERROR}error{ERROR:#}: {first}")
        } else {
            writeln!(self.err, "error: {first}")
        };
        for cause in chain {
            let _ = writeln!(self.err, "  caused by: {cause}");
        }
        if let Some(restored) = restored {
            let _ = writeln!(self.err, "{restored}");
        }
    }

    /// Guidance for a person on stdout (next steps), left out with `--quiet`.
    pub fn hint(&mut self, text: &str) {
        if !self.quiet {
            self.print(text);
        }
    }

    /// Text on stdout: the output a user may pipe (diffs, completions).
    pub fn print(&mut self, text: &str) {
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }
}

/// A shared in-memory writer, for tests that look at what a shell printed.
#[cfg(test)]
#[derive(Clone, Default)]
pub struct Buffer(Arc<Mutex<Vec<u8>>>);

#[cfg(test)]
impl Buffer {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[cfg(test)]
impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
