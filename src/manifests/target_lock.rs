//! One crdgen at a time per Cargo target directory.
//!
//! cargo copies each build of crdgen to `<target>/debug/<binary>`, and that name is the same
//! for two checkouts of one project (and for every project an older opgen made: `crdgen`).
//! Projects that share a target directory (a global `CARGO_TARGET_DIR`, a team's build cache)
//! would run one another's crdgen when two `generate manifests` overlap: `cargo run` builds,
//! then executes that path, and the other build can replace the file in between. opgen therefore holds an exclusive lock on a file in
//! the target directory from the start of the build to the end of the run. The lock belongs to
//! the open file, so it vanishes with the process, however that ends.

use std::{
    fs::{self, File, TryLockError},
    path::Path,
    thread,
    time::{Duration, Instant},
};

use crate::{
    interrupt::{Interrupt, Interrupted},
    shell::Shell,
};

/// The lock file, in the target directory.
const LOCK_FILE: &str = ".opgen-crdgen.lock";
/// How often a waiting command tries the lock again (and checks for Ctrl-C).
const RETRY: Duration = Duration::from_millis(100);
/// How long a command waits before it says why it waits.
const QUIET_WAIT: Duration = Duration::from_secs(1);

/// The lock of a target directory, held until dropped.
#[derive(Debug)]
pub struct TargetLock {
    _file: File,
}

impl TargetLock {
    /// Takes the lock of the target directory `target`, waiting for as long as another opgen
    /// holds it. `None` when the lock file cannot be made there (a target directory opgen
    /// cannot write to fails the build too, with cargo's message).
    pub fn acquire(
        target: &Path,
        shell: &mut Shell,
        interrupt: &Interrupt,
    ) -> Result<Option<Self>, Interrupted> {
        let file = fs::create_dir_all(target).and_then(|()| {
            File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(target.join(LOCK_FILE))
        });
        let Ok(file) = file else {
            return Ok(None);
        };
        let started = Instant::now();
        let mut said = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(Self { _file: file })),
                Err(TryLockError::WouldBlock) => {
                    if !said && started.elapsed() >= QUIET_WAIT {
                        shell.note(&format!(
                            "waiting for another opgen's crdgen, which builds into {}",
                            target.display()
                        ));
                        said = true;
                    }
                    interrupt.check()?;
                    thread::sleep(RETRY);
                }
                Err(TryLockError::Error(_)) => return Ok(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::Buffer;

    #[test]
    fn a_second_holder_waits_until_the_first_lets_go() {
        let target = tempfile::tempdir().unwrap();
        let first = TargetLock::acquire(target.path(), &mut Shell::captured(), &Interrupt::never())
            .unwrap()
            .expect("a lock");
        let dir = target.path().to_owned();
        let second = thread::spawn(move || {
            let started = Instant::now();
            let lock = TargetLock::acquire(&dir, &mut Shell::captured(), &Interrupt::never());
            (lock.unwrap().is_some(), started.elapsed())
        });
        thread::sleep(Duration::from_millis(500));
        drop(first);
        let (locked, waited) = second.join().unwrap();
        assert!(locked);
        assert!(waited >= Duration::from_millis(400), "waited {waited:?}");
    }

    #[test]
    fn a_long_wait_says_why() {
        let target = tempfile::tempdir().unwrap();
        let first = TargetLock::acquire(target.path(), &mut Shell::captured(), &Interrupt::never())
            .unwrap()
            .expect("a lock");
        let dir = target.path().to_owned();
        let err = Buffer::default();
        let waiting = err.clone();
        let second = thread::spawn(move || {
            let mut shell = Shell::to_buffers(Buffer::default(), waiting);
            TargetLock::acquire(&dir, &mut shell, &Interrupt::never()).map(|lock| lock.is_some())
        });
        thread::sleep(QUIET_WAIT + Duration::from_millis(300));
        drop(first);
        assert_eq!(second.join().unwrap(), Ok(true));
        assert!(
            err.text()
                .contains("note: waiting for another opgen's crdgen"),
            "{}",
            err.text()
        );
    }

    #[test]
    fn a_waiting_holder_stops_at_ctrl_c() {
        let target = tempfile::tempdir().unwrap();
        let _first =
            TargetLock::acquire(target.path(), &mut Shell::captured(), &Interrupt::never())
                .unwrap()
                .expect("a lock");
        let second =
            TargetLock::acquire(target.path(), &mut Shell::captured(), &Interrupt::after(3));
        assert!(second.is_err(), "interrupted while waiting");
    }

    #[test]
    fn the_target_directory_is_made_when_missing() {
        let parent = tempfile::tempdir().unwrap();
        let target = parent.path().join("target");
        let lock = TargetLock::acquire(&target, &mut Shell::captured(), &Interrupt::never());
        assert!(lock.unwrap().is_some());
        assert!(target.join(LOCK_FILE).is_file());
    }
}
