//! The docs cannot drift from what opgen does: this test follows docs/getting-started.md,
//! docs/tutorial-mysqlcluster.md and docs/helm.md as a reader would, block by block, in a temporary directory
//! with the opgen under test first on `PATH`.
//!
//! What each fenced block is, by its info string:
//!
//! - `sh`: commands, run in order (`cd` moves to another directory for the next ones).
//!   `cargo build` and `cargo test` of the generated project are left to tests/e2e.rs, which
//!   builds the same projects, so that this test stays cheap; `make` targets that build or
//!   test are rendered with `make -n`.
//! - `sh cluster` (needs a Kubernetes cluster), `sh engine` (needs Docker or Podman): not
//!   run; `make` commands are rendered with `make -n`, `kubectl apply -k DIR` renders DIR
//!   with `kubectl kustomize`, and `helm install` or `upgrade` renders the chart with `helm
//!   template` (with the `helm` that tests/common/helm.rs builds, on `PATH` for every block).
//! - `sh install`: installs opgen itself; the opgen under test stands in for it.
//! - `sh dev`: an `opgen dev` (or `make dev`) session. `export KUBEBUILDER_ASSETS=...` takes
//!   the test's control plane binaries, `opgen dev` runs until the project is installed on
//!   its API server, then gets SIGINT and must stop everything; the manager's build, its
//!   reconcile and its restarts are left to the `dev` end-to-end test. Other commands of the
//!   block (getting the binaries, `kubectl` in a second terminal) are not run.
//! - `rust`, `yaml`, … `file=PATH`: the whole of that generated file, as it is at that point;
//!   with `excerpt`, lines of it in order, where `// ...` or `# ...` stands for lines left out.
//! - `diff file=PATH`: an edit the reader makes; it is applied.
//! - `rust`, `yaml`, … `example`: code the reader writes or an illustration, not checked.
//! - `text`: not checked.
//!
//! A code block that is none of these fails the test, so every block is either checked or
//! says that it is not. Mismatches are collected and reported together, each naming the doc
//! block and the file.

mod common;

use std::{path::PathBuf, process::Command};

use common::{
    docs::{self, Block},
    generated_build_env,
};

const DOCS: [&str; 2] = ["docs/getting-started.md", "docs/tutorial-mysqlcluster.md"];

/// Commands whose work tests/e2e.rs does on the same kind of project.
const LEFT_TO_E2E: [&str; 4] = ["cargo build", "cargo test", "make test", "make lint"];

/// Languages of blocks that show code or configuration, which must say what they are.
const CODE: [&str; 5] = ["rust", "yaml", "toml", "json", "diff"];

/// A reader following one document: where they are, and what went wrong so far.
struct Reader {
    /// The temporary directory the document starts in.
    _temp: tempfile::TempDir,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    failures: Vec<String>,
}

impl Reader {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let bin = temp.path().join("bin");
        let home = temp.path().join("home");
        let work = temp.path().join("work");
        for dir in [&bin, &home, &work] {
            std::fs::create_dir(dir).unwrap();
        }
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_opgen"), bin.join("opgen")).unwrap();
        if let Some(helm) = common::helm::helm() {
            std::os::unix::fs::symlink(helm, bin.join("helm")).unwrap();
        }
        let var = |name: &str| std::env::var(name).ok();
        let real_home = var("HOME").unwrap_or_default();
        let path = format!("{}:{}", bin.display(), var("PATH").unwrap_or_default());
        let env = vec![
            ("PATH".to_owned(), path),
            // A home of its own, for what the docs write there; cargo and rustup keep theirs.
            ("HOME".to_owned(), home.display().to_string()),
            (
                "CARGO_HOME".to_owned(),
                var("CARGO_HOME").unwrap_or(format!("{real_home}/.cargo")),
            ),
            (
                "RUSTUP_HOME".to_owned(),
                var("RUSTUP_HOME").unwrap_or(format!("{real_home}/.rustup")),
            ),
            ("NO_COLOR".to_owned(), "1".to_owned()),
        ];
        Self {
            _temp: temp,
            cwd: work,
            env,
            failures: Vec::new(),
        }
    }

    /// Runs `command` with `sh` where the reader is, and panics with its output if it fails:
    /// the next steps of the document depend on it.
    fn run(&self, block: &Block, command: &str) {
        eprintln!("[docs {}] $ {command}", block.place);
        let output = Command::new("sh")
            .args(["-c", command])
            .current_dir(&self.cwd)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .envs(generated_build_env())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|err| panic!("cannot run sh: {err}"));
        assert!(
            output.status.success(),
            "{}: `{command}` failed in {}:\n--- stdout\n{}\n--- stderr\n{}",
            block.describe(),
            self.cwd.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
        if let Some(name) = command
            .strip_prefix("opgen init ")
            .and_then(|args| args.split_whitespace().next())
        {
            common::date_vendored_runtime_at_the_binary(&self.cwd.join(name));
        }
    }

    fn shell_block(&mut self, block: &Block) {
        if block.has("dev") {
            return self.dev_block(block);
        }
        let needs = ["cluster", "engine", "install"]
            .into_iter()
            .find(|need| block.has(need));
        for command in commands(&block.text) {
            if command.starts_with("helm ") && common::helm::helm().is_none() {
                eprintln!("[docs {}] NOT RUN (no helm): {command}", block.place);
            } else if let Some(dir) = command.strip_prefix("cd ") {
                self.cwd = self.cwd.join(dir.trim());
                assert!(
                    self.cwd.is_dir(),
                    "{}: no directory {dir}",
                    block.describe()
                );
            } else if needs.is_none() && !LEFT_TO_E2E.iter().any(|c| command.starts_with(c)) {
                self.run(block, &command);
            } else if let Some(rendered) = render_only(&command) {
                self.run(block, &rendered);
            } else {
                eprintln!("[docs {}] not run: {command}", block.place);
            }
        }
    }

    fn dev_block(&mut self, block: &Block) {
        for command in commands(&block.text) {
            if command.starts_with("export KUBEBUILDER_ASSETS=") {
                let assets =
                    common::control_plane::assets().unwrap_or_else(|err| panic!("{err:#}"));
                self.env.push((
                    "KUBEBUILDER_ASSETS".to_owned(),
                    assets.display().to_string(),
                ));
            } else if command.starts_with("opgen dev") || command == "make dev" {
                self.dev_session(block, &command);
            } else {
                eprintln!("[docs {}] not run: {command}", block.place);
            }
        }
    }

    /// Runs `command` until `opgen dev` has installed the project, then stops it with SIGINT
    /// and checks that it stopped everything it started.
    fn dev_session(&self, block: &Block, command: &str) {
        eprintln!(
            "[docs {}] $ {command} (until it has installed the project)",
            block.place
        );
        let output_path = self.cwd.join("target/docs-dev.log");
        std::fs::create_dir_all(output_path.parent().unwrap()).unwrap();
        let output = std::fs::File::create(&output_path).unwrap();
        let mut shell = Command::new("sh");
        shell
            .args(["-c", &format!("exec {command}")])
            .current_dir(&self.cwd)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .envs(generated_build_env())
            .stdin(std::process::Stdio::null())
            .stdout(output.try_clone().unwrap())
            .stderr(output);
        let mut child = shell.spawn().unwrap();
        let read = || std::fs::read_to_string(&output_path).unwrap_or_default();
        let installed = common::wait::poll(
            &format!("{}: `{command}` to install the project", block.describe()),
            std::time::Duration::from_secs(180),
            || match child.try_wait() {
                Ok(Some(status)) => std::ops::ControlFlow::Break(Err(anyhow::anyhow!(
                    "`{command}` exited ({status}):\n{}",
                    read()
                ))),
                _ if read().contains("Installed config/default") => {
                    std::ops::ControlFlow::Break(Ok(()))
                }
                _ => std::ops::ControlFlow::Continue(read()),
            },
        );
        // SAFETY: kill(2) on our own unreaped child.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let status = child.wait().unwrap();
        installed.unwrap_or_else(|err| panic!("{err:#}"));
        let text = read();
        assert!(
            status.success() && text.contains("Stopped everything"),
            "{}: `{command}` did not stop cleanly on SIGINT ({status}):\n{text}",
            block.describe()
        );
        let session = self.cwd.join("target/opgen-dev");
        let left = common::process::processes_mentioning(&session.to_string_lossy());
        assert!(left.is_empty(), "left running after `{command}`: {left:?}");
    }

    fn file(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.cwd.join(path)).ok()
    }

    fn file_block(&mut self, block: &Block, path: &str) {
        let Some(actual) = self.file(path) else {
            self.failures.push(format!(
                "{}: there is no {path} in {}",
                block.describe(),
                self.cwd.display()
            ));
            return;
        };
        let result = if block.has("excerpt") {
            docs::check_excerpt(&block.text, &actual, path)
        } else if actual == block.text {
            Ok(())
        } else {
            Err(format!(
                "{path} differs from the block (- doc, + generated):\n{}",
                similar::TextDiff::from_lines(&block.text, &actual)
                    .unified_diff()
                    .context_radius(2)
            ))
        };
        if let Err(why) = result {
            self.failures.push(format!("{}: {why}", block.describe()));
        }
    }

    fn diff_block(&mut self, block: &Block, path: &str) {
        let original = self
            .file(path)
            .unwrap_or_else(|| panic!("{}: there is no {path}", block.describe()));
        let edited = docs::apply_diff(&block.text, &original, path)
            .unwrap_or_else(|why| panic!("{}: cannot apply the edit: {why}", block.describe()));
        std::fs::write(self.cwd.join(path), edited).unwrap();
    }

    fn follow(&mut self, block: &Block) {
        match (block.lang.as_str(), block.attr("file")) {
            ("sh", _) => self.shell_block(block),
            ("diff", Some(path)) => self.diff_block(block, path),
            (_, Some(path)) => self.file_block(block, path),
            (lang, None) if CODE.contains(&lang) && !block.has("example") => {
                self.failures.push(format!(
                    "{}: say what this block is: `file=PATH` (with `excerpt` if it is part of the file) for generated content, or `example`",
                    block.describe()
                ));
            }
            _ => {}
        }
    }
}

/// The commands of a shell block: its lines, with `\` continuations joined; comments and
/// blank lines are left to `sh`.
fn commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        match line.strip_suffix('\\') {
            Some(start) => pending.push_str(start),
            None => {
                pending.push_str(line);
                let command = std::mem::take(&mut pending);
                if !command.trim().is_empty() && !command.trim_start().starts_with('#') {
                    commands.push(command.trim().to_owned());
                }
            }
        }
    }
    commands
}

/// What can be checked of a command that is not run: `make` prints what it would do,
/// `kubectl apply -k DIR` renders DIR.
fn render_only(command: &str) -> Option<String> {
    let command = command.split(" #").next().unwrap_or(command).trim();
    if let Some(targets) = command.strip_prefix("make ") {
        return Some(format!("make -n {targets}"));
    }
    for verb in ["helm install ", "helm upgrade --install ", "helm upgrade "] {
        if let Some(release) = command.strip_prefix(verb) {
            // Flags only an upgrade has: a render starts from the chart's values anyway.
            let release = release.replace(" --reuse-values", "");
            return Some(format!("helm template {release} > /dev/null"));
        }
    }
    let dir = command.strip_prefix("kubectl apply -k ")?;
    Some(format!("kubectl kustomize {dir} > /dev/null"))
}

/// Follows each of `docs`, a reader of its own for each, and fails with every mismatch.
fn follow(docs: &[&str]) {
    let mut failures = Vec::new();
    for doc in docs {
        let mut reader = Reader::new();
        for block in docs::blocks(doc) {
            reader.follow(&block);
        }
        failures.append(&mut reader.failures);
    }
    assert!(
        failures.is_empty(),
        "{} doc block(s) differ from what opgen generates:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_docs_say_what_opgen_does() {
    follow(&DOCS);
}

#[test]
fn the_helm_guide_says_what_opgen_does() {
    follow(&["docs/helm.md"]);
}

#[test]
fn excerpts_match_runs_of_lines_in_order() {
    let file = "a\nb\nc\nd\ne\n";
    assert_eq!(docs::check_excerpt("a\nb\n# ...\nd\n", file, "f"), Ok(()));
    assert_eq!(docs::check_excerpt("b\n// ...\ne\n", file, "f"), Ok(()));
    let err = docs::check_excerpt("a\nc\n", file, "f").unwrap_err();
    assert!(
        err.contains("\"c\" should follow \"a\" but f:2 is \"b\""),
        "{err}"
    );
    let err = docs::check_excerpt("d\n# ...\nb\n", file, "f").unwrap_err();
    assert!(err.contains("\"b\" is not in f after line 4"), "{err}");
}

#[test]
fn diffs_apply_in_place() {
    let file = "struct A {\n    x: i32,\n}\n\nimpl A {\n    y\n}\n";
    let diff = " struct A {\n     // ...\n+    z: i32,\n }\n...\n-    y\n+    w\n";
    assert_eq!(
        docs::apply_diff(diff, file, "f"),
        Ok("struct A {\n    x: i32,\n    z: i32,\n}\n\nimpl A {\n    w\n}\n".to_owned())
    );
    let err = docs::apply_diff(" struct B {\n+    z\n", file, "f").unwrap_err();
    assert!(err.contains("\"struct B {\" is not in f"), "{err}");
}

#[test]
fn shell_blocks_split_into_commands() {
    assert_eq!(
        commands("# a comment\nopgen init x \\\n  --domain example.com\n\ncd x\n"),
        ["opgen init x   --domain example.com", "cd x"]
    );
    assert_eq!(
        render_only("make install run   # against a cluster").as_deref(),
        Some("make -n install run")
    );
    assert_eq!(
        render_only("kubectl apply -k config/samples/").as_deref(),
        Some("kubectl kustomize config/samples/ > /dev/null")
    );
    assert_eq!(
        render_only("helm upgrade op dist/chart -n ns --reuse-values --set a=b").as_deref(),
        Some("helm template op dist/chart -n ns --set a=b > /dev/null")
    );
    assert_eq!(
        render_only("helm install op dist/chart").as_deref(),
        Some("helm template op dist/chart > /dev/null")
    );
    assert_eq!(render_only("helm uninstall op"), None);
    assert_eq!(render_only("kubectl get pods"), None);
}
