//! `opgen dev` in a generated project, on the 1.35 binaries: one session does every check in
//! turn (the manager is built once and rebuilt incrementally), then a second, short session
//! is killed with SIGKILL.
//!
//! 1. The sample is reconciled by the manager running as its ServiceAccount; its webhooks
//!    (failure policy `fail`) are called on this machine, or the sample could not be created.
//! 2. An edit of the controller is picked up: rebuilt, restarted, the new status is written.
//! 3. A build that fails keeps the running manager, and shows the compiler's error.
//! 4. A removed RBAC marker: the role shrinks, and the refusal is reported with the marker.
//! 5. SIGINT stops everything; after the SIGKILL of opgen, too, nothing is left running.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::{
    Project, control_plane, generated_build_env, kubectl::Kubectl, process::processes_mentioning,
    wait::wait_for,
};

/// A first build of the manager's dependencies can take long on a busy machine.
const FIRST_BUILD: Duration = Duration::from_secs(1200);
/// A rebuild after an edit, a restart, and a reconcile.
const REBUILD: Duration = Duration::from_secs(300);
const CONTROLLER: &str = "src/controllers/db/widget.rs";
const STATUS_MARKER: &str =
    "// +opgen:rbac:groups=db.example.com,resources=widgets/status,verbs=get;patch;update";

/// A running `opgen dev`, its stdout and stderr in one file; killed if the test fails.
struct Session {
    child: Child,
    output: PathBuf,
}

impl Session {
    fn start(root: &Path, assets: &Path, output: PathBuf) -> Self {
        let out = File::create(&output).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_opgen"))
            .arg("dev")
            .current_dir(root)
            .envs(generated_build_env())
            .env("KUBEBUILDER_ASSETS", assets)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        Self { child, output }
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.output).unwrap_or_default()
    }

    /// Waits until the output holds `needle` after byte `from`; the output from there.
    fn wait_for_line(&mut self, needle: &str, from: usize, timeout: Duration) -> String {
        wait_for(&format!("`opgen dev` to print {needle:?}"), timeout, || {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("opgen dev exited ({status}):\n{}", self.output());
            }
            let output = self.output();
            let since = output.get(from..).unwrap_or_default();
            if since.contains(needle) {
                Ok(since.to_owned())
            } else {
                Err(tail(&output))
            }
        })
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own unreaped child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// The message of the sample's `Ready` condition, once it is `True`.
fn ready_message(kubectl: &Kubectl) -> Result<String, String> {
    let widget = kubectl.try_json(&["get", "widget", "widget-sample", "-n", "default"])?;
    let conditions = widget["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions
        .iter()
        .find(|c| c["type"] == "Ready" && c["status"] == "True")
        .and_then(|c| c["message"].as_str().map(str::to_owned))
        .ok_or_else(|| format!("not ready: {}", widget["status"]))
}

/// The pid in the last `Running the manager … (pid N` line of `output`.
fn manager_pid(output: &str) -> u32 {
    let line = output
        .lines()
        .rfind(|line| line.contains("Running the manager"))
        .unwrap_or_else(|| panic!("no manager started:\n{output}"));
    let after = line.split("(pid ").nth(1).unwrap();
    after
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn edit(root: &Path, path: &str, from: &str, to: &str) {
    let file = root.join(path);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(from), "{path} lacks {from:?}");
    std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
}

fn check_nothing_left(dir: &Path, when: &str) {
    let needle = dir.to_string_lossy().into_owned();
    wait_for(
        &format!("no process to remain {when}"),
        Duration::from_secs(15),
        || {
            let left = processes_mentioning(&needle);
            if left.is_empty() {
                Ok(())
            } else {
                Err(left.join("\n"))
            }
        },
    );
}

pub fn run() {
    let started = Instant::now();
    let log = |step: &str| eprintln!("[e2e dev-op] {step} ({:.0?})", started.elapsed());
    let assets = control_plane::assets().unwrap_or_else(|err| panic!("{err:#}"));
    let project = Project::init("dev-op", "");
    project.create_api("--group db --version v1 --kind Widget");
    project
        .opgen()
        .args([
            "create",
            "webhook",
            "--group",
            "db",
            "--version",
            "v1",
            "--kind",
            "Widget",
        ])
        .args(["--defaulting", "--validation"])
        .assert()
        .success();
    let root = project.root.clone();
    let session_dir = root.join("target/opgen-dev");
    let admin = Kubectl::new(&session_dir.join("cluster/admin.kubeconfig"));

    let mut session = Session::start(&root, &assets, project.temp.path().join("dev-1.log"));
    session.wait_for_line(
        "Applied config/samples in namespace default",
        0,
        FIRST_BUILD,
    );
    let message = wait_for("the sample to be reconciled", REBUILD, || {
        ready_message(&admin)
    });
    assert_eq!(message, "Widget is reconciled");
    for configuration in [
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
    ] {
        let urls = admin.ok(&["get", configuration, "-o", "jsonpath={..clientConfig.url}"]);
        assert!(
            urls.starts_with("https://127.0.0.1:"),
            "{configuration}: {urls}"
        );
    }
    let output = session.output();
    assert!(
        output.contains("Installed config/dev: the webhooks call https://127.0.0.1:"),
        "{output}"
    );
    let first_reconciled = started.elapsed();
    log("the sample is reconciled by the manager as its ServiceAccount");
    let output = session.output();
    assert!(
        output.contains("system:serviceaccount:dev-op-system:dev-op-controller-manager"),
        "{output}"
    );
    assert!(
        output.contains("[manager] "),
        "the manager's log is not streamed:\n{output}"
    );

    // 2. An edit: the restarted manager writes the new message.
    let from = session.output().len();
    let edited_at = Instant::now();
    edit(
        &root,
        CONTROLLER,
        "\"Widget is reconciled\"",
        "\"Widget is reconciled by the edit\"",
    );
    wait_for("the edited manager to reconcile", REBUILD, || {
        ready_message(&admin).and_then(|message| {
            if message == "Widget is reconciled by the edit" {
                Ok(())
            } else {
                Err(message)
            }
        })
    });
    let edit_to_reconciled = edited_at.elapsed();
    let since = session.wait_for_line("Ready", from, REBUILD);
    // A message changed, no marker: the manifests are the same, and are not applied again.
    assert!(
        since.contains("Unchanged config/") && !since.contains("Applied the CRDs"),
        "{since}"
    );
    log(&format!(
        "edit → reconciled again in {edit_to_reconciled:.1?}"
    ));

    // 3. A failed build keeps the running manager.
    let running = manager_pid(&session.output());
    let from = session.output().len();
    edit(
        &root,
        CONTROLLER,
        "pub struct Reconciler;",
        "pub struct Reconciler",
    );
    let since = session.wait_for_line("the build failed", from, REBUILD);
    assert!(since.contains("the running manager is kept"), "{since}");
    assert!(
        since.contains("error"),
        "the compiler's error is not shown:\n{since}"
    );
    assert!(
        Path::new(&format!("/proc/{running}")).exists(),
        "the old manager is gone"
    );
    assert_eq!(manager_pid(&session.output()), running);
    log("a failed build keeps the running manager");

    // 4. Without the status marker the role shrinks, and the refusal names the marker.
    let from = session.output().len();
    edit(
        &root,
        CONTROLLER,
        "pub struct Reconciler",
        "pub struct Reconciler;",
    );
    edit(&root, CONTROLLER, &format!("{STATUS_MARKER}\n"), "");
    // A new message, so that the restarted manager has a status to write: an unchanged
    // one is not written, and would not be refused.
    edit(
        &root,
        CONTROLLER,
        "\"Widget is reconciled by the edit\"",
        "\"Widget is reconciled without the marker\"",
    );
    let since = session.wait_for_line("the API server refused the manager", from, REBUILD);
    assert!(
        since.contains("Applied the CRDs and RBAC"),
        "the shrunk role is not applied:\n{since}"
    );
    let report = since
        .lines()
        .find(|line| line.contains("refused the manager"))
        .unwrap();
    assert!(
        report.contains("`patch` on widgets/status (db.example.com) in namespace default")
            && report.contains(
                "add `// +opgen:rbac:groups=db.example.com,resources=widgets/status,verbs=patch` to src/controllers/db/widget.rs"
            ),
        "{report}"
    );
    log("a missing marker is reported");

    // 5. SIGINT stops everything.
    session.signal(libc::SIGINT);
    let status = wait_for(
        "opgen dev to exit after SIGINT",
        Duration::from_secs(60),
        || {
            session
                .child
                .try_wait()
                .unwrap()
                .ok_or_else(|| tail(&session.output()))
        },
    );
    assert!(status.success(), "{status}:\n{}", tail(&session.output()));
    check_nothing_left(&session_dir, "after SIGINT");
    log("SIGINT stopped everything");

    // A second session, killed: the kernel stops its children.
    let mut killed = Session::start(&root, &assets, project.temp.path().join("dev-2.log"));
    killed.wait_for_line("Ready", 0, REBUILD);
    assert!(!processes_mentioning(&session_dir.to_string_lossy()).is_empty());
    killed.signal(libc::SIGKILL);
    check_nothing_left(&session_dir, "after SIGKILL of opgen");
    log("SIGKILL of opgen left nothing running");
    eprintln!(
        "[e2e dev-op] figures: init to the sample reconciled {first_reconciled:.1?} (the manager's \
         build included); saved edit to reconciled again {edit_to_reconciled:.1?}"
    );
}
