//! The control plane the end-to-end tests run operators on (`common::control_plane`): it
//! starts and serves, and every fault -- missing or wrong binaries, a port already taken, an API
//! server that never gets ready, a killed test -- ends in a clear error within a bounded time
//! with no etcd or API server left running.

mod common;

use std::{
    net::TcpListener,
    os::unix::fs::PermissionsExt,
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use common::{
    control_plane::{BINARIES, ControlPlane, Options, assets, assets_for, free_ports},
    operator::{forbidden_lines, reconciliations},
    process::{Process, processes_mentioning},
    wait::wait_for,
};

fn start_fails(options: Options) -> String {
    match ControlPlane::start_with(options) {
        Ok(_) => panic!("the control plane started"),
        Err(err) => format!("{err:#}"),
    }
}

/// Nothing started under `dir` is still running.
fn assert_nothing_left_running(dir: &Path) {
    let left = processes_mentioning(&dir.to_string_lossy());
    assert!(left.is_empty(), "still running: {left:#?}");
}

#[test]
fn missing_binaries_are_named_with_the_way_to_get_them() {
    let empty = tempfile::tempdir().unwrap();
    let message = start_fails(Options::new(empty.path().to_owned()));
    assert!(message.contains("etcd in KUBEBUILDER_ASSETS="), "{message}");
    assert!(message.contains("scripts/control-plane.sh"), "{message}");
}

#[test]
fn a_binary_that_does_not_run_is_named() {
    let assets = tempfile::tempdir().unwrap();
    for binary in BINARIES {
        let path = assets.path().join(binary);
        std::fs::write(
            &path,
            "#!/bin/sh\necho 'not a Kubernetes binary' >&2\nexit 3\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let message = start_fails(Options::new(assets.path().to_owned()));
    assert!(message.contains("etcd in KUBEBUILDER_ASSETS="), "{message}");
    assert!(message.contains("fails `--version`"), "{message}");
    assert!(message.contains("not a Kubernetes binary"), "{message}");
    assert!(message.contains("scripts/control-plane.sh"), "{message}");
}

#[test]
fn the_oldest_supported_control_plane_serves_and_leaves_nothing_behind() {
    serves_and_leaves_nothing_behind("1.35");
}

#[test]
fn the_newest_supported_control_plane_serves_and_leaves_nothing_behind() {
    serves_and_leaves_nothing_behind("1.37");
}

fn serves_and_leaves_nothing_behind(kubernetes: &str) {
    let parent = tempfile::tempdir().unwrap();
    let options = Options {
        temp_parent: parent.path().to_owned(),
        ..Options::new(assets_for(kubernetes).unwrap_or_else(|err| panic!("{err:#}")))
    };
    let started = Instant::now();
    let mut cluster = ControlPlane::start_with(options).unwrap_or_else(|err| panic!("{err:#}"));
    eprintln!("control plane ready in {:.1?}", started.elapsed());

    let admin = cluster.admin().clone();
    assert!(admin.ok(&["get", "--raw", "/readyz"]).contains("ok"));
    let version = admin.raw("/version");
    let expected = format!("v{kubernetes}.");
    assert!(
        version["gitVersion"]
            .as_str()
            .unwrap()
            .starts_with(&expected),
        "{version}"
    );
    // Service-account tokens work, and RBAC decides what they may do.
    let token = admin.ok(&["create", "token", "default", "-n", "default"]);
    let account = common::kubectl::Kubectl::new(&cluster.kubeconfig_with_token("default", &token));
    let who = account.json(&["auth", "whoami"]);
    assert_eq!(
        who["status"]["userInfo"]["username"],
        "system:serviceaccount:default:default"
    );
    let output = account.run(&["get", "namespaces"], None);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("forbidden"),
        "{output:?}"
    );
    // The garbage collector of kube-controller-manager works.
    admin.ok(&["create", "configmap", "owner", "-n", "default"]);
    let owner = admin.json(&["get", "configmap", "owner", "-n", "default"]);
    let owned = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": "owned", "namespace": "default",
            "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                "uid": owner["metadata"]["uid"], "controller": true,
            }],
        },
    });
    admin.apply(&owned.to_string(), &[]).unwrap();
    admin.ok(&["delete", "configmap", "owner", "-n", "default"]);
    wait_for(
        "the garbage collector",
        Duration::from_secs(60),
        || match admin.try_ok(&["get", "configmap", "owned", "-n", "default"]) {
            Ok(_) => Err("owned is still there".to_owned()),
            Err(err) if err.contains("NotFound") => Ok(()),
            Err(err) => Err(err),
        },
    );
    cluster.check_running().unwrap();

    drop(cluster);
    assert_nothing_left_running(parent.path());
}

#[test]
fn a_taken_port_fails_clearly_and_leaves_nothing_behind() {
    let parent = tempfile::tempdir().unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let options = Options {
        temp_parent: parent.path().to_owned(),
        api_server_port: Some(taken.local_addr().unwrap().port()),
        ..Options::new(assets().unwrap_or_else(|err| panic!("{err:#}")))
    };
    let started = Instant::now();
    let message = start_fails(options);
    assert!(message.contains("kube-apiserver"), "{message}");
    assert!(message.contains("the process exited"), "{message}");
    assert!(message.contains("address already in use"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(120), "{message}");
    assert_nothing_left_running(parent.path());
}

#[test]
fn an_api_server_that_never_gets_ready_fails_in_bounded_time() {
    let parent = tempfile::tempdir().unwrap();
    let [nothing_there] = free_ports();
    let options = Options {
        temp_parent: parent.path().to_owned(),
        etcd_url: Some(format!("http://127.0.0.1:{nothing_there}")),
        ready_timeout: Duration::from_secs(15),
        ..Options::new(assets().unwrap_or_else(|err| panic!("{err:#}")))
    };
    let started = Instant::now();
    let message = start_fails(options);
    assert!(
        message.contains("kube-apiserver to answer /readyz"),
        "{message}"
    );
    assert!(
        message.contains("--- last"),
        "the log tail is missing: {message}"
    );
    assert!(started.elapsed() < Duration::from_secs(60), "{message}");
    assert_nothing_left_running(parent.path());
}

/// Environment variable that makes `holds_a_child_until_killed` run: the path of the file to
/// write its child's process ID to.
const HOLDER_PID_FILE: &str = "OPGEN_TEST_HOLDER_PID_FILE";

#[test]
#[ignore = "run by children_die_with_the_test_process"]
fn holds_a_child_until_killed() {
    let pid_file = std::env::var(HOLDER_PID_FILE).expect(HOLDER_PID_FILE);
    let log = Path::new(&pid_file).with_extension("log");
    let mut sleep = Command::new("sleep");
    sleep.arg("600");
    let child = Process::start("sleep", sleep, &log);
    std::fs::write(&pid_file, child.id().to_string()).unwrap();
    std::thread::sleep(Duration::from_secs(600));
}

#[test]
fn children_die_with_the_test_process() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "holds_a_child_until_killed"])
        .env(HOLDER_PID_FILE, &pid_file)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let child: u32 = wait_for(
        "the holder to start its child",
        Duration::from_secs(30),
        || {
            std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|pid| pid.trim().parse().ok())
                .ok_or_else(|| "no pid yet".to_owned())
        },
    );
    let proc = format!("/proc/{child}");
    assert!(Path::new(&proc).exists(), "the child is not running");

    holder.kill().unwrap(); // SIGKILL: no destructor runs
    holder.wait().unwrap();
    wait_for("the child to be killed", Duration::from_secs(10), || {
        // Gone, or a zombie waiting for whoever adopted it.
        match std::fs::read_to_string(format!("{proc}/stat")) {
            Err(_) => Ok(()),
            Ok(stat) if stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')) => Ok(()),
            Ok(stat) => Err(stat),
        }
    });
}

#[test]
fn reconciliations_are_counted_per_controller() {
    let metrics = "\
# HELP op_reconciliations Reconciliations started.
# TYPE op_reconciliations counter
op_reconciliations_total{controller=\"mysqlcluster.db\"} 3
op_reconciliations_total{controller=\"proxy.ops\"} 1
op_reconcile_failures_total{controller=\"proxy.ops\",reason=\"kube_api\"} 2
op_reconcile_duration_seconds_count{controller=\"proxy.ops\"} 1
# EOF
";
    let counts = reconciliations(metrics);
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        [
            ("mysqlcluster.db".to_owned(), 3),
            ("proxy.ops".to_owned(), 1)
        ]
    );
    assert!(reconciliations("# EOF\n").is_empty());
}

#[test]
fn forbidden_requests_are_found_in_a_log() {
    let log = "\
2026-01-01T00:00:00Z  INFO starting controller controller=\"postgrescluster.data\"
2026-01-01T00:00:01Z  WARN controller error error=failed to perform initial object list: ApiError: statefulsets.apps is forbidden: User \"system:serviceaccount:op-system:op-controller-manager\" cannot list resource \"statefulsets\" in API group \"apps\" at the cluster scope (ErrorResponse { status: \"Failure\", reason: \"Forbidden\", code: 403 })
2026-01-01T00:00:02Z  INFO reconciled object=PostgresCluster.v1alpha1.data.example.com/pc.default resource_version=1403
";
    let denied = forbidden_lines(log);
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert!(denied[0].contains("statefulsets"));
}

/// `bash scripts/control-plane.sh`.
fn script() -> Command {
    let mut command = Command::new("bash");
    command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/control-plane.sh"));
    command
}

#[test]
fn the_script_refuses_what_is_not_a_version() {
    let output = script().arg("2.0").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("'2.0' is not a Kubernetes version: give MAJOR.MINOR (1.35)"),
        "{stderr}"
    );
}

#[test]
fn the_script_says_that_it_needs_go() {
    let bash = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("bash"))
        .find(|path| path.exists())
        .expect("bash on PATH");
    let no_go = tempfile::tempdir().unwrap();
    let output = Command::new(bash)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/control-plane.sh"))
        .env("PATH", no_go.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the Go toolchain ('go') is not on PATH"),
        "{stderr}"
    );
}

#[test]
fn the_script_finds_its_build_again_in_seconds() {
    let first = script().output().unwrap();
    assert!(first.status.success(), "{first:?}");
    let started = Instant::now();
    let second = script().output().unwrap();
    assert!(second.status.success(), "{second:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{second:?}");
    assert_eq!(first.stdout, second.stdout);
    let dir = String::from_utf8(second.stdout).unwrap();
    let dir = Path::new(dir.trim());
    let release = dir.file_name().unwrap().to_string_lossy();
    assert!(release.starts_with("1.35."), "{}", dir.display());
    common::control_plane::check_assets(dir).unwrap();
}
