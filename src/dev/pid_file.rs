//! `target/opgen-dev/session.pid`: one `opgen dev` a project at a time, since a second one would
//! clear the first one's etcd data under it.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// The session's claim on its directory, released when dropped.
pub struct PidFile {
    path: PathBuf,
}

impl PidFile {
    /// Claims `dir`, or fails naming the `opgen` process that holds it. A file left by a
    /// session that was killed names a process that is gone, or is not opgen, and is taken over.
    pub fn claim(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("session.pid");
        if let Some(pid) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
            && pid != std::process::id()
            && is_opgen(pid)
        {
            bail!(
                "another `opgen dev` (pid {pid}) runs in this project: stop it (Ctrl-C in its \
                 terminal, or `kill {pid}`) before starting one here"
            );
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&path, format!("{}\n", std::process::id()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Self { path })
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` runs and its program name starts with `opgen`.
fn is_opgen(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        let program = cmdline.split(|&b| b == 0).next().unwrap_or_default();
        Path::new(&*String::from_utf8_lossy(program))
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("opgen"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_of_a_gone_process_is_taken_over_and_removed_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("session.pid"), "999999999\n").unwrap();
        let claim = PidFile::claim(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join("session.pid")).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
        drop(claim);
        assert!(!dir.path().join("session.pid").exists());
    }

    #[test]
    fn a_running_opgen_holds_its_claim() {
        let dir = tempfile::tempdir().unwrap();
        let mut other = std::process::Command::new("bash")
            .args(["-c", "exec -a opgen sleep 30"])
            .spawn()
            .unwrap();
        // `exec -a` renames the program once bash has run it.
        std::thread::sleep(std::time::Duration::from_millis(300));
        std::fs::write(dir.path().join("session.pid"), format!("{}\n", other.id())).unwrap();
        let err = PidFile::claim(dir.path()).err().map(|err| err.to_string());
        let _ = other.kill();
        let _ = other.wait();
        let err = err.expect("the claim of a running opgen is refused");
        assert!(
            err.contains(&format!("another `opgen dev` (pid {})", other.id())),
            "{err}"
        );
    }
}
