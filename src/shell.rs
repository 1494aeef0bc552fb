//! Where opgen's messages go: cargo-style status lines (`    Creating src/main.rs`) on
//! stderr, coloured on a terminal; diffs and listings on stdout. Tests capture both.

use std::io::{IsTerminal, Write};
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
const WARNING: Style = AnsiColor::Yellow.on_default().bold();

impl Shell {
    /// The process's stdout and stderr; colour only when stderr is a terminal and `NO_COLOR`
    /// is not set.
    pub fn stdio(quiet: bool) -> Self {
        let terminal = std::io::stderr().is_terminal();
        Self {
            out: Box::new(std::io::stdout()),
            err: Box::new(std::io::stderr()),
            terminal,
            color: terminal && std::env::var_os("NO_COLOR").is_none(),
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
