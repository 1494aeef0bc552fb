//! A process `opgen dev` starts: in a process group of its own (a terminal's Ctrl-C reaches
//! opgen alone, which then stops the group in order), killed by the kernel if opgen dies
//! (`PR_SET_PDEATHSIG`), its output appended to a log file.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Command, ExitStatus, Stdio},
    thread,
    time::{Duration, Instant},
};

use anyhow::Context as _;

/// How long a process may take to exit after SIGTERM before the group gets SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Child {
    name: String,
    child: std::process::Child,
    log: PathBuf,
}

impl Child {
    /// Starts `command` as `name`, its stdout and stderr appended to `log`. The process dies
    /// with the thread that calls this: call it from the thread that lives as long as opgen.
    pub fn start(name: &str, mut command: Command, log: &Path) -> anyhow::Result<Self> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let err = out.try_clone()?;
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        die_with_parent(&mut command);
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("cannot start {name} ({program})"))?;
        Ok(Self {
            name: name.to_owned(),
            child,
            log: log.to_owned(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Its exit status, once it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGTERM to its group, then SIGKILL to the group if it has not exited in time. The
    /// group is killed in any case, so that nothing it started outlives it.
    pub fn stop(&mut self) {
        let Ok(pid) = libc::pid_t::try_from(self.child.id()) else {
            return;
        };
        if self.exited().is_none() {
            // SAFETY: kill(2) has no memory-safety preconditions; `-pid` names the group this
            // child leads (`process_group(0)`), which exists while the child is unreaped.
            unsafe { libc::kill(-pid, libc::SIGTERM) };
            let started = Instant::now();
            while self.exited().is_none() && started.elapsed() < STOP_TIMEOUT {
                thread::sleep(Duration::from_millis(20));
            }
        }
        // SAFETY: as above; what is left of the group, if anything.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Asks the kernel to SIGKILL the child when the thread that started it dies: a SIGKILL of
/// opgen then takes its children with it, which no handler in opgen could do.
pub fn die_with_parent(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (prctl, getppid).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(command, move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl, so the signal would never come.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("opgen is gone"));
            }
            Ok(())
        });
    }
}
