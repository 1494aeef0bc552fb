//! Ctrl-C (SIGINT) and SIGTERM while a command changes a project.
//!
//! Killed at a random moment, a command could leave some files written and others not. So
//! once a command starts its work, these signals only raise a flag (through `signal-hook`,
//! which does the one thing a signal handler may safely do: store to an atomic). The command
//! looks at the flag between two writes and while it waits for a child process (cargo,
//! rustfmt), stops the child, restores what it wrote and exits with 128 + the signal's
//! number, as a shell reports a process killed by it.

use std::{
    io,
    process::{Child, ExitStatus},
    sync::{
        Arc, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    thread,
    time::Duration,
};

use signal_hook::consts::{SIGINT, SIGTERM};

/// How often a waiting command looks at the flag: short enough to feel immediate.
const POLL: Duration = Duration::from_millis(25);

/// The command was stopped by a signal; what it wrote is restored by whoever holds the
/// journal (see [`crate::apply::Transaction`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted by {}", signal_name(*.signal))]
pub struct Interrupted {
    pub signal: i32,
}

impl Interrupted {
    /// The exit code a shell shows for a process killed by the signal.
    pub fn exit_code(self) -> u8 {
        u8::try_from(128 + self.signal).unwrap_or(u8::MAX)
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT (Ctrl-C)",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// Where a command learns that it must stop.
#[derive(Debug, Clone)]
pub struct Interrupt {
    flag: Arc<AtomicUsize>,
    /// For tests: the flag rises after this many more checks.
    #[cfg(test)]
    countdown: Option<Arc<AtomicUsize>>,
}

/// The flag the signal handlers set; zero until a signal arrives, then its number.
static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

impl Interrupt {
    /// Catches SIGINT and SIGTERM for the rest of the process: from now on they only raise
    /// the flag this returns. Call it once the command has asked all its questions, so that
    /// Ctrl-C at a prompt still ends opgen at once.
    pub fn catch_signals() -> io::Result<Self> {
        let mut registered = Ok(());
        let flag = RECEIVED.get_or_init(|| {
            let flag = Arc::new(AtomicUsize::new(0));
            for signal in [SIGINT, SIGTERM] {
                let result = signal_hook::flag::register_usize(
                    signal,
                    Arc::clone(&flag),
                    usize::try_from(signal).expect("signal numbers are small"),
                );
                if let Err(err) = result {
                    registered = Err(err);
                }
            }
            flag
        });
        registered?;
        Ok(Self::with_flag(Arc::clone(flag)))
    }

    /// An interrupt that never comes (no signal is caught).
    pub fn never() -> Self {
        Self::with_flag(Arc::new(AtomicUsize::new(0)))
    }

    fn with_flag(flag: Arc<AtomicUsize>) -> Self {
        Self {
            flag,
            #[cfg(test)]
            countdown: None,
        }
    }

    /// For tests: an interrupt that arrives as SIGINT at the `checks`-th check from now.
    #[cfg(test)]
    pub fn after(checks: usize) -> Self {
        Self {
            countdown: Some(Arc::new(AtomicUsize::new(checks))),
            ..Self::never()
        }
    }

    /// Whether a signal arrived (and which).
    pub fn check(&self) -> Result<(), Interrupted> {
        #[cfg(test)]
        if let Some(countdown) = &self.countdown
            && countdown
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok_and(|before| before <= 1)
        {
            self.flag
                .store(usize::try_from(SIGINT).expect("small"), Ordering::SeqCst);
        }
        match self.flag.load(Ordering::SeqCst) {
            0 => Ok(()),
            signal => Err(Interrupted {
                signal: i32::try_from(signal).unwrap_or(SIGINT),
            }),
        }
    }

    /// Waits for `child` to exit, stopping it when a signal arrives. The child must have been
    /// spawned in a process group of its own (see [`own_process_group`]), so that stopping
    /// it also stops what it started (cargo's rustc processes).
    pub fn wait(&self, child: &mut Child) -> Result<io::Result<ExitStatus>, Interrupted> {
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Ok(Ok(status)),
                Ok(None) => {}
                Err(err) => return Ok(Err(err)),
            }
            if let Err(interrupted) = self.check() {
                stop(child);
                return Err(interrupted);
            }
            thread::sleep(POLL);
        }
    }
}

/// Puts the child of `command` in a process group of its own, so that a terminal's Ctrl-C
/// reaches opgen alone, and opgen decides how the child stops.
pub fn own_process_group(command: &mut std::process::Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    #[cfg(not(unix))]
    let _ = command;
}

/// Stops `child` and everything in its process group: SIGTERM first, so that cargo can tidy
/// up, then SIGKILL if it has not exited within a second.
fn stop(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid names the
        // process group that `own_process_group` made the child the leader of.
        unsafe { libc::kill(-pid, libc::SIGTERM) };
        for _ in 0..40 {
            if matches!(child.try_wait(), Ok(Some(_))) {
                // SAFETY: as above; the group may still hold the child's own children.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                return;
            }
            thread::sleep(POLL);
        }
        // SAFETY: as above.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{process::Command, time::Instant};

    #[test]
    fn rises_after_the_given_number_of_checks() {
        let interrupt = Interrupt::after(3);
        assert!(interrupt.check().is_ok());
        assert!(interrupt.check().is_ok());
        let interrupted = interrupt.check().unwrap_err();
        assert_eq!(interrupted.exit_code(), 130);
        assert_eq!(interrupted.to_string(), "interrupted by SIGINT (Ctrl-C)");
        assert!(interrupt.check().is_err(), "the flag stays up");
        assert!(Interrupt::never().check().is_ok());
    }

    #[test]
    fn waits_for_a_child() {
        let mut command = Command::new("sh");
        command.args(["-c", "exit 3"]);
        own_process_group(&mut command);
        let mut child = command.spawn().unwrap();
        let status = Interrupt::never().wait(&mut child).unwrap().unwrap();
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn an_interrupt_stops_the_child_and_its_children() {
        let marker = tempfile::tempdir().unwrap();
        let done = marker.path().join("done");
        // The grandchild would write `done` after a while, unless its group is stopped.
        let script = format!("(sleep 1; touch {}) & wait", done.display());
        let mut command = Command::new("sh");
        command.args(["-c", &script]);
        own_process_group(&mut command);
        let mut child = command.spawn().unwrap();
        let started = Instant::now();
        let interrupted = Interrupt::after(4).wait(&mut child).unwrap_err();
        assert_eq!(interrupted.signal, SIGINT);
        assert!(started.elapsed() < Duration::from_secs(1));
        thread::sleep(Duration::from_millis(1500));
        assert!(!done.exists(), "the grandchild outlived the interrupt");
    }
}
