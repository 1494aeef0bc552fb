//! A child process that the test owns: its output goes to a log file, and it never outlives
//! the test. Dropping it kills it (so does a panic, which drops it while unwinding), and the
//! kernel kills it when the thread that started it dies, so that a killed test binary leaves
//! no etcd or API server behind.

use std::{
    fs::File,
    ops::ControlFlow,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::Duration,
};

use super::wait::poll;

/// How long a process may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);
/// How many lines of a log a failure message quotes.
const LOG_TAIL_LINES: usize = 40;

pub struct Process {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Process {
    /// Starts `command` as `name`, its stdout and stderr appended to `log`.
    ///
    /// The process gets SIGKILL when the thread calling this exits (`PR_SET_PDEATHSIG`): start
    /// it from the thread that uses it, as a test does.
    pub fn start(name: &str, mut command: Command, log: &Path) -> Self {
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .unwrap_or_else(|err| panic!("cannot create {}: {err}", log.display()));
        let err = out.try_clone().unwrap();
        // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
        // functions (prctl, getppid).
        let parent = std::process::id() as libc::pid_t;
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent died before the prctl: it would never deliver the signal.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("the test process is gone"));
                }
                Ok(())
            });
        }
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {name} ({program}): {err}"));
        Self {
            name: name.to_owned(),
            child,
            log: log.to_owned(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("waitpid")
    }

    /// Everything it has logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last lines of its log, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        let start = lines.len().saturating_sub(LOG_TAIL_LINES);
        format!(
            "--- last {} lines of {} ({})\n{}",
            lines.len() - start,
            self.name,
            self.log.display(),
            lines[start..].join("\n")
        )
    }

    /// An error quoting its log if it has exited.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        match self.exited() {
            Some(status) => anyhow::bail!("{} exited ({status})\n{}", self.name, self.log_tail()),
            None => Ok(()),
        }
    }

    /// Waits until `ready` returns `Ok`, at most `timeout`. `Err` carries what `ready` saw
    /// last. Fails with `what`, that and the log tail if the time runs out, and at once if the
    /// process exits.
    pub fn wait_until(
        &mut self,
        what: &str,
        timeout: Duration,
        mut ready: impl FnMut() -> Result<(), String>,
    ) -> anyhow::Result<()> {
        let what = format!("{} to {what}", self.name);
        poll(&what, timeout, || {
            if let Some(status) = self.exited() {
                let exited = anyhow::anyhow!("{what}: the process exited ({status})");
                return ControlFlow::Break(Err(exited));
            }
            match ready() {
                Ok(()) => ControlFlow::Break(Ok(())),
                Err(last) => ControlFlow::Continue(last),
            }
        })
        .map_err(|err| anyhow::anyhow!("{err}\n{}", self.log_tail()))
    }

    /// Sends SIGTERM and waits for the exit; kills it and fails if that takes longer than
    /// `STOP_TIMEOUT`.
    pub fn stop(&mut self) -> anyhow::Result<ExitStatus> {
        if let Some(status) = self.exited() {
            return Ok(status);
        }
        // SAFETY: kill(2) on our own child, which has not been reaped (try_wait said so).
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let what = format!("{} to stop after SIGTERM", self.name);
        let stopped = poll(&what, STOP_TIMEOUT, || match self.exited() {
            Some(status) => ControlFlow::Break(Ok(status)),
            None => ControlFlow::Continue("still running".to_owned()),
        });
        stopped.map_err(|err| {
            self.kill();
            anyhow::anyhow!("{err}\n{}", self.log_tail())
        })
    }

    /// SIGKILL, and reap it.
    pub fn kill(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The processes whose command line mentions `needle` (a directory only one test uses), with
/// their command lines: what a test that must leave nothing running checks.
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(needle))
        .collect()
}
