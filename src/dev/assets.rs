//! The control plane's binaries: etcd, kube-apiserver and kube-controller-manager, in the
//! directory `--assets` or `KUBEBUILDER_ASSETS` names (the layout `setup-envtest` makes).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The binaries `opgen dev` cannot do without.
pub const REQUIRED: [&str; 2] = ["etcd", "kube-apiserver"];
/// Not in what `setup-envtest` downloads: without it the session runs, but nothing
/// garbage-collects owned objects or gives workloads their status.
pub const CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// How to get them, for every error about them.
const HOW_TO_GET: &str = "get etcd and kube-apiserver with `setup-envtest use -p path <version>` \
     (and a kube-controller-manager of the same release beside them), then pass the directory \
     with `--assets DIR` or `export KUBEBUILDER_ASSETS=DIR`; the project's README.md says more";

#[derive(Debug, thiserror::Error)]
pub enum AssetsError {
    #[error(
        "no control plane binaries: neither `--assets` nor KUBEBUILDER_ASSETS names a directory; {HOW_TO_GET}"
    )]
    NotGiven,
    #[error("{source_name} names {dir}, which {problem}; {HOW_TO_GET}")]
    NotADirectory {
        /// `--assets` or `KUBEBUILDER_ASSETS`.
        source_name: &'static str,
        dir: String,
        problem: &'static str,
    },
    #[error("{binary} in {dir} {problem}; {HOW_TO_GET}")]
    Broken {
        binary: &'static str,
        dir: String,
        problem: String,
    },
}

/// A directory whose binaries each answered `--version`.
#[derive(Debug, Clone)]
pub struct Assets {
    dir: PathBuf,
    /// It holds a kube-controller-manager.
    controller_manager: bool,
}

impl Assets {
    /// `flag` (`--assets`) or else `environment` (KUBEBUILDER_ASSETS), checked.
    pub fn find(flag: Option<PathBuf>, environment: Option<PathBuf>) -> Result<Self, AssetsError> {
        let (source_name, dir) = flag
            .map(|dir| ("--assets", dir))
            .or(environment.map(|dir| ("KUBEBUILDER_ASSETS", dir)))
            .filter(|(_, dir)| !dir.as_os_str().is_empty())
            .ok_or(AssetsError::NotGiven)?;
        let problem = match std::fs::metadata(&dir) {
            Ok(metadata) if metadata.is_dir() => None,
            Ok(_) => Some("is a file, not a directory"),
            Err(_) => Some("does not exist"),
        };
        if let Some(problem) = problem {
            return Err(AssetsError::NotADirectory {
                source_name,
                dir: dir.display().to_string(),
                problem,
            });
        }
        for binary in REQUIRED {
            check(&dir, binary)?;
        }
        let controller_manager = dir.join(CONTROLLER_MANAGER).exists();
        if controller_manager {
            check(&dir, CONTROLLER_MANAGER)?;
        }
        Ok(Self {
            dir,
            controller_manager,
        })
    }

    /// Whether the directory holds a kube-controller-manager.
    pub fn has_controller_manager(&self) -> bool {
        self.controller_manager
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn binary(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn check(dir: &Path, binary: &'static str) -> Result<(), AssetsError> {
    let path = dir.join(binary);
    let problem = if !path.is_file() {
        "is missing".to_owned()
    } else {
        match Command::new(&path).arg("--version").output() {
            Err(err) => format!("cannot be run ({err})"),
            Ok(output) if !output.status.success() => format!(
                "fails `--version` ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
            Ok(_) => return Ok(()),
        }
    };
    Err(AssetsError::Broken {
        binary,
        dir: dir.display().to_string(),
        problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_how_to_get_the_binaries_when_none_are_named() {
        let err = Assets::find(None, Some(PathBuf::new())).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("KUBEBUILDER_ASSETS"), "{message}");
        assert!(message.contains("setup-envtest use -p path"), "{message}");
    }

    #[test]
    fn a_directory_that_is_not_there_or_is_a_file_is_named_with_where_it_came_from() {
        let err = Assets::find(Some("/nonexistent/assets".into()), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--assets names /nonexistent/assets, which does not exist; get etcd"),
            "{err}"
        );
        let file = tempfile::NamedTempFile::new().unwrap();
        let err = Assets::find(None, Some(file.path().to_owned()))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "KUBEBUILDER_ASSETS names {}, which is a file, not a directory",
                file.path().display()
            )),
            "{err}"
        );
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        let flag = tempfile::tempdir().unwrap();
        let err = Assets::find(Some(flag.path().to_owned()), Some("/nonexistent".into()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("etcd in {} is missing", flag.path().display())),
            "{err}"
        );
    }
}
