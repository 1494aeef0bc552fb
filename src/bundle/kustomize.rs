//! Renders a kustomize directory the way the project's Makefile does: `kubectl kustomize`, or
//! `$KUSTOMIZE build` when the `KUSTOMIZE` environment variable names a kustomize binary.

use std::{
    ffi::OsString,
    io::ErrorKind,
    path::Path,
    process::{Command, Stdio},
};

use anyhow::bail;

/// The program that renders kustomize directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renderer {
    /// `<kubectl> kustomize <dir>`; `KUBECTL` may name the binary.
    Kubectl(OsString),
    /// `<kustomize> build <dir>`.
    Kustomize(OsString),
}

impl Renderer {
    /// The renderer the environment asks for: `KUSTOMIZE` if set, else `KUBECTL` or `kubectl`.
    pub fn from_env() -> Self {
        let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        match set("KUSTOMIZE") {
            Some(kustomize) => Self::Kustomize(kustomize),
            None => Self::Kubectl(set("KUBECTL").unwrap_or_else(|| "kubectl".into())),
        }
    }

    fn command_line<'a>(&self, dir: &'a str) -> (OsString, [&'a str; 2]) {
        match self {
            Self::Kubectl(program) => (program.clone(), ["kustomize", dir]),
            Self::Kustomize(program) => (program.clone(), ["build", dir]),
        }
    }

    /// The YAML stream of `dir` (relative to `root`).
    pub fn render(&self, root: &Path, dir: &str) -> anyhow::Result<String> {
        let (program, args) = self.command_line(dir);
        let shown = format!("{} {}", program.to_string_lossy(), args.join(" "));
        let output = match Command::new(&program)
            .args(args)
            .current_dir(root)
            .stdin(Stdio::null())
            .output()
        {
            Ok(output) => output,
            Err(err) if err.kind() == ErrorKind::NotFound => {
                let hint = match self {
                    Self::Kubectl(_) => {
                        "opgen renders kustomize directories with `kubectl kustomize`, as the Makefile does: install kubectl (or set KUBECTL to it), or set KUSTOMIZE to a kustomize binary"
                    }
                    Self::Kustomize(_) => {
                        "KUSTOMIZE names the kustomize binary: point it at one, or unset it to use `kubectl kustomize`"
                    }
                };
                bail!(
                    "cannot run `{}`: it is not installed or not on PATH\n\n{hint}",
                    program.to_string_lossy()
                );
            }
            Err(err) => bail!("cannot run `{shown}`: {err}"),
        };
        if !output.status.success() {
            bail!(
                "`{shown}` failed ({}):\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        String::from_utf8(output.stdout)
            .map_err(|_| anyhow::anyhow!("`{shown}` printed something that is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_is_named_with_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let err = Renderer::Kubectl("opgen-no-such-kubectl".into())
            .render(dir.path(), "config/manifests")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot run `opgen-no-such-kubectl`: it is not installed"),
            "{err}"
        );
        assert!(err.contains("set KUSTOMIZE"), "{err}");
        let err = Renderer::Kustomize("opgen-no-such-kustomize".into())
            .render(dir.path(), "config/manifests")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("KUSTOMIZE names the kustomize binary"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn runs_kustomize_build_and_reports_its_failure() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("kustomize");
        std::fs::write(
            &script,
            "#!/bin/sh\nif [ \"$1 $2\" = \"build good\" ]; then echo 'kind: A'; else echo \"no $2\" >&2; exit 3; fi\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let renderer = Renderer::Kustomize(script.clone().into());
        assert_eq!(renderer.render(dir.path(), "good").unwrap(), "kind: A\n");
        let err = renderer.render(dir.path(), "bad").unwrap_err().to_string();
        assert!(err.contains("build bad` failed"), "{err}");
        assert!(err.ends_with("no bad"), "{err}");
    }
}
