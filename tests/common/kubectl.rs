//! `kubectl` with one kubeconfig: how the tests talk to a control plane, as a user would.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

use serde_json::Value;

#[derive(Clone, Debug)]
pub struct Kubectl {
    kubeconfig: PathBuf,
}

impl Kubectl {
    pub fn new(kubeconfig: &Path) -> Self {
        Self {
            kubeconfig: kubeconfig.to_owned(),
        }
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Runs `kubectl <args>`, with `stdin` as its input if given.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut command = Command::new("kubectl");
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|err| panic!("cannot run kubectl (is it on PATH?): {err}"));
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(input.as_bytes()).unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// `kubectl <args>`: its stdout if it succeeds, else what it printed.
    pub fn try_ok(&self, args: &[&str]) -> Result<String, String> {
        let output = self.run(args, None);
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(format!(
                "kubectl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    /// `kubectl <args>`, which must succeed; its stdout.
    #[track_caller]
    pub fn ok(&self, args: &[&str]) -> String {
        self.try_ok(args).unwrap_or_else(|err| panic!("{err}"))
    }

    /// `kubectl <args> -o json`, parsed; `Err` if kubectl fails (e.g. the object is missing).
    pub fn try_json(&self, args: &[&str]) -> Result<Value, String> {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        let stdout = self.try_ok(&args)?;
        serde_json::from_str(&stdout).map_err(|err| format!("kubectl {args:?}: {err}"))
    }

    /// `kubectl <args> -o json`, which must succeed, parsed.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> Value {
        self.try_json(args).unwrap_or_else(|err| panic!("{err}"))
    }

    /// `kubectl get --raw <path>`, which must succeed, parsed: a request to the API as it is.
    #[track_caller]
    pub fn raw(&self, path: &str) -> Value {
        let body = self.ok(&["get", "--raw", path]);
        serde_json::from_str(&body).unwrap_or_else(|err| panic!("GET {path}: {err}: {body}"))
    }

    /// `kubectl apply --server-side -f -` of `manifest` (YAML or JSON) with extra `args`: Ok
    /// with stdout, or Err with stderr.
    pub fn apply(&self, manifest: &str, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["apply", "--server-side", "-f", "-"];
        all.extend_from_slice(args);
        let output = self.run(&all, Some(manifest));
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }
}
