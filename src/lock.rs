//! One opgen command at a time per project.
//!
//! Two commands that both read `PROJECT`, add to it and write it back would lose one of the
//! additions. A command holds an exclusive lock (`flock`, through std's `File::lock`) on the
//! project's directory from before it reads `PROJECT` until it has written its last file. The
//! lock belongs to the open directory, so it needs no file in the project and vanishes with
//! the process, however that ends.
//!
//! Holding the lock is also what makes it safe to sweep up after an opgen that was killed
//! mid-write (SIGKILL): no other opgen can be writing in the project, so every temporary file
//! of opgen's in it is abandoned, and taking the lock removes them.

use std::{
    fs::{File, TryLockError},
    path::Path,
    thread,
    time::{Duration, Instant},
};

use anyhow::Context as _;

/// How long a command waits for another one to finish before giving up.
pub const WAIT: Duration = Duration::from_secs(5);

/// The project's lock, held until dropped.
#[derive(Debug)]
pub struct ProjectLock {
    _dir: File,
}

#[derive(Debug, thiserror::Error)]
#[error(
    "another opgen command is running in this project ({}): waited {}s for it to finish\n\nRun this command again when the other one is done",
    .root,
    .waited.as_secs()
)]
pub struct Busy {
    pub root: String,
    pub waited: Duration,
}

impl ProjectLock {
    /// Takes the lock of the project at `root`, waiting up to [`WAIT`] for a running command.
    pub fn acquire(root: &Path) -> anyhow::Result<Self> {
        Self::acquire_within(root, WAIT)
    }

    pub fn acquire_within(root: &Path, wait: Duration) -> anyhow::Result<Self> {
        let dir =
            open(root).with_context(|| format!("cannot open {} to lock it", root.display()))?;
        let deadline = Instant::now() + wait;
        loop {
            match dir.try_lock() {
                Ok(()) => {
                    crate::apply::remove_abandoned_temp_files(root);
                    return Ok(Self { _dir: dir });
                }
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(Busy {
                        root: root.display().to_string(),
                        waited: wait,
                    }
                    .into());
                }
                Err(TryLockError::Error(err)) => {
                    return Err(err).with_context(|| format!("cannot lock {}", root.display()));
                }
            }
        }
    }
}

/// The directory itself, where the platform can lock one (Unix); elsewhere a lock file kept
/// in it.
fn open(root: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        File::open(root)
    }
    #[cfg(not(unix))]
    {
        File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(root.join(".opgen.lock"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_then_fails() {
        let dir = tempfile::tempdir().unwrap();
        let held = ProjectLock::acquire(dir.path()).unwrap();
        let started = Instant::now();
        let err = ProjectLock::acquire_within(dir.path(), Duration::from_millis(200)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert!(
            err.to_string()
                .starts_with("another opgen command is running in this project"),
            "{err}"
        );
        drop(held);
        ProjectLock::acquire_within(dir.path(), Duration::ZERO).unwrap();
    }

    #[test]
    fn taking_the_lock_removes_abandoned_temp_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in [
            "src/.opgen-tmp-Ab12Cd",
            ".opgen-tmp-x",
            "src/.tmpAb12Cd",
            "src/main.rs",
            "target/.opgen-tmp-build",
        ] {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::create_dir(root.join("src/.opgen-tmp-dir")).unwrap();
        let _lock = ProjectLock::acquire(root).unwrap();
        let mut left: Vec<String> = walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                e.path().strip_prefix(root).unwrap().display().to_string()
            })
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "src",
                "src/.opgen-tmp-dir",
                "src/.tmpAb12Cd",
                "src/main.rs",
                "target",
                "target/.opgen-tmp-build"
            ]
        );
    }

    #[test]
    fn the_lock_is_taken_when_the_other_command_ends_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let held = ProjectLock::acquire(dir.path()).unwrap();
        let release = thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        ProjectLock::acquire_within(dir.path(), Duration::from_secs(5)).unwrap();
        release.join().unwrap();
    }
}
