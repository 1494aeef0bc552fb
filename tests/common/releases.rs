//! opgen's earlier releases, as commits of this repository's history (the releases carry no
//! tags in it): what the update tests build and the runtime's semver check compares with.

use std::{path::Path, process::Command};

/// An earlier release and the commit it was made from.
#[derive(Clone, Copy, Debug)]
pub struct Release {
    /// `0.2.0`
    pub version: &'static str,
    /// The commit, abbreviated.
    pub commit: &'static str,
}

/// opgen 0.1.0: the last commit before the runtime became a crate.
pub const V0_1_0: Release = Release {
    version: "0.1.0",
    commit: "a23b225",
};

/// opgen 0.2.0 and opgen-runtime 0.2.0: the last commit before the first change recorded
/// under the next release in CHANGELOG.md.
pub const V0_2_0: Release = Release {
    version: "0.2.0",
    commit: "85fdf14",
};

impl Release {
    /// Whether the repository's history holds the release's commit; when it does not (a
    /// shallow clone, a source archive), says loudly what `proves` cannot prove.
    pub fn in_history(self, proves: &str) -> bool {
        let found = Command::new("git")
            .args(["cat-file", "-e", &format!("{}^{{commit}}", self.commit)])
            .current_dir(repository())
            .status()
            .is_ok_and(|status| status.success());
        if !found {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: opgen {}, commit {}, is not in this checkout's git history, so {proves} is not proven: fetch the whole history (`git fetch --unshallow`) and run this test again",
                self.version,
                self.commit
            );
        }
        found
    }

    /// Unpacks the release's `paths` into `into`.
    pub fn unpack(self, paths: &[&str], into: &Path) {
        std::fs::create_dir_all(into).unwrap();
        let archive = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "git -C '{}' archive {} {} | tar -x -C '{}'",
                repository().display(),
                self.commit,
                paths.join(" "),
                into.display()
            ))
            .status()
            .unwrap();
        assert!(archive.success(), "cannot unpack opgen {}", self.version);
    }

    /// The release's copy of the file at `path`.
    pub fn read(self, path: &str) -> String {
        let output = Command::new("git")
            .args(["show", &format!("{}:{path}", self.commit)])
            .current_dir(repository())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "no {path} in opgen {}",
            self.version
        );
        String::from_utf8(output.stdout).unwrap()
    }
}

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}
