//! `scripts/cluster.sh`: a one-node cluster whose pods really run. It comes up with its node
//! Ready, a second `up` reuses it, an image built with buildah runs from `load` without a
//! registry, pods reach the API server through the `kubernetes` Service, the host reaches a
//! Service's ClusterIP, `kubectl logs` and `exec` work, and `down` leaves no process, mount,
//! link, network namespace or iptables chain behind (and says so when there is nothing to stop).
//!
//! It needs root (containerd, a bridge, iptables) and Linux: elsewhere it says why and returns.
//! The cluster has fixed ports and one state directory, so this is a single test.

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

use common::{
    cluster::{cannot_run_here, cluster, script},
    http::http_get,
    kubectl::Kubectl,
    process::processes_mentioning,
    wait::wait_for,
};

const NODE: &str = "opgen-node";
const BRIDGE: &str = "opgen0";
/// The image the test builds and loads, as a user would name it.
const IMAGE: &str = "opgen-cluster-test:v1";
const PAGE: &str = "served by busybox on the opgen cluster\n";

/// Where the script keeps its state, as it decides it.
fn state_dir() -> PathBuf {
    std::env::var_os("OPGEN_CLUSTER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/lib/opgen-cluster"))
}

/// `scripts/cluster.sh <args>` with both outputs captured (for what it says).
fn cluster_captured(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs")
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run {program}: {err}"))
}

#[track_caller]
fn run_ok(program: &str, args: &[&str]) -> String {
    let output = run(program, args);
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The machine's one cluster, for this test alone: a lock that another test process running
/// this test at the same time (another `cargo test` in the same checkout or another) waits
/// for, since the other's `down` would stop the cluster under it.
fn lock_the_cluster() -> std::fs::File {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join("opgen-cluster-test.lock");
    let file = std::fs::File::create(&path)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", path.display()));
    // SAFETY: flock on a descriptor this function owns; it is released when the file closes.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        eprintln!(
            "waiting for another test process that uses the cluster ({})",
            path.display()
        );
        // SAFETY: as above.
        assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
    }
    file
}

/// Brings the cluster down when the test ends, also by a panic, so that a failure leaves no
/// cluster behind for the next run to reuse.
struct Down;

impl Drop for Down {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = cluster(&["down"]);
        }
    }
}

#[test]
fn a_node_runs_loaded_images_reaches_services_and_down_leaves_nothing() {
    if let Some(reason) = cannot_run_here() {
        eprintln!("SKIPPED: scripts/cluster.sh is not tested here: {reason}");
        return;
    }
    let _machine = lock_the_cluster();
    // From a machine without a cluster, so that `up` starts one and what `down` must restore
    // is the machine's own state.
    let output = cluster(&["down"]);
    assert!(output.status.success(), "the first down failed: {output:?}");
    let netns_before = network_namespaces();
    let shim_sockets_before = entries("/run/containerd/s");
    let forwarding_before = std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap();
    let _down = Down;

    let started = Instant::now();
    let output = cluster(&["up"]);
    assert!(output.status.success(), "up failed: {output:?}");
    let kubeconfig = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    eprintln!("up: {:.1?}, kubeconfig {kubeconfig}", started.elapsed());
    let kubectl = Kubectl::new(Path::new(&kubeconfig));
    let node = kubectl.json(&["get", "node", NODE]);
    let ready = node["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|condition| condition["type"] == "Ready")
        .unwrap();
    assert_eq!(ready["status"], "True", "{node}");

    // A second `up` finds the running cluster and returns at once.
    let started = Instant::now();
    let again = cluster_captured(&["up"]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "second up failed: {stderr}");
    assert_eq!(String::from_utf8_lossy(&again.stdout).trim(), kubeconfig);
    assert!(stderr.contains("reusing the running cluster"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the second up took {:?}",
        started.elapsed()
    );

    build_image();
    let output = cluster(&["load", IMAGE]);
    assert!(output.status.success(), "load failed: {output:?}");

    // A web server from the loaded image, behind a Service.
    kubectl.ok(&[
        "run",
        "web",
        "--image",
        IMAGE,
        "--image-pull-policy=Never",
        "--port=8080",
        "--labels=app=web",
    ]);
    kubectl.ok(&["expose", "pod", "web", "--port=80", "--target-port=8080"]);
    wait_for_phase(&kubectl, "web", &["Running"]);
    let service_ip = kubectl.ok(&["get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"]);
    assert!(service_ip.starts_with("10.96.0."), "{service_ip}");

    // The host reaches the Service (as the API server reaches a webhook's).
    let url = format!("http://{service_ip}/");
    let body = wait_for(
        "the web Service from the host",
        Duration::from_secs(60),
        || match http_get(&url) {
            Ok((200, body)) => Ok(body),
            Ok((status, body)) => Err(format!("{status}: {body}")),
            Err(err) => Err(err.to_string()),
        },
    );
    assert_eq!(body, PAGE);

    // The API server reaches the kubelet: exec and logs.
    let said = kubectl.ok(&["exec", "web", "--", "/bin/busybox", "echo", "exec works"]);
    assert_eq!(said.trim(), "exec works");

    // A pod reaches the API server through the `kubernetes` Service (plain HTTP to its TLS port
    // gets a 400 answer: the connection is what counts) and the web pod through its Service,
    // and nothing outside the machine. busybox's `nc`, since its static `wget` crashes looking
    // up the `http` service in an image without NSS.
    let request = r"printf 'GET / HTTP/1.0\r\n\r\n'";
    let script = format!(
        "{request} | busybox nc -w 5 10.96.0.1 443; echo; {request} | busybox nc -w 5 {service_ip} 80; busybox nc -w 3 1.1.1.1 80"
    );
    kubectl.ok(&[
        "run",
        "client",
        "--image",
        IMAGE,
        "--image-pull-policy=Never",
        "--restart=Never",
        "--command",
        "--",
        "/bin/busybox",
        "sh",
        "-c",
        &script,
    ]);
    wait_for_phase(&kubectl, "client", &["Succeeded", "Failed"]);
    let log = kubectl.ok(&["logs", "client"]);
    assert!(
        log.contains("400 Bad Request"),
        "the pod did not reach the API server at 10.96.0.1:443:\n{log}"
    );
    assert!(
        log.contains(PAGE.trim()),
        "the pod did not reach the web Service:\n{log}"
    );
    assert!(
        log.contains("1.1.1.1): Network is unreachable"),
        "a pod has a route out of the machine:\n{log}"
    );

    // An image that was not loaded is never fetched from outside: the pull fails on loopback.
    kubectl.ok(&["run", "absent", "--image", "example.com/absent:v1"]);
    wait_for(
        "the pull of an absent image to fail",
        Duration::from_secs(60),
        || {
            let events = kubectl.ok(&[
                "get",
                "events",
                "--field-selector",
                "involvedObject.name=absent",
            ]);
            if events.contains("127.0.0.1:9") {
                Ok(())
            } else {
                Err(events)
            }
        },
    );

    // Down, and nothing is left.
    let started = Instant::now();
    let output = cluster(&["down"]);
    assert!(output.status.success(), "down failed: {output:?}");
    eprintln!("down: {:.1?}", started.elapsed());
    assert_nothing_left(&netns_before);
    let shim_sockets_left: Vec<String> = entries("/run/containerd/s")
        .into_iter()
        .filter(|name| !shim_sockets_before.contains(name))
        .collect();
    assert!(
        shim_sockets_left.is_empty(),
        "containerd shims' sockets left: {shim_sockets_left:?}"
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap(),
        forwarding_before,
        "ip_forward is not restored"
    );

    // The image goes too (each run builds it anew).
    run_ok("buildah", &["rmi", IMAGE]);

    let output = cluster_captured(&["down"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "a second down failed: {stderr}");
    assert!(stderr.contains("no cluster is running"), "{stderr}");
}

/// Waits until pod `name` is in one of `phases`; the message says where it stuck, with its
/// events (a sandbox or image failure shows there).
fn wait_for_phase(kubectl: &Kubectl, name: &str, phases: &[&str]) {
    wait_for(
        &format!("pod {name} to be {phases:?}"),
        Duration::from_secs(120),
        || {
            let pod = kubectl.json(&["get", "pod", name]);
            let phase = pod["status"]["phase"].as_str().unwrap_or_default();
            if phases.contains(&phase) {
                return Ok(());
            }
            let selector = format!("involvedObject.name={name}");
            let events = kubectl
                .try_ok(&["get", "events", "--field-selector", &selector])
                .unwrap_or_else(|err| err);
            Err(format!("{}\n{events}", pod["status"]))
        },
    );
}

/// `opgen-cluster-test:v1`: busybox alone, serving a page with its httpd.
fn build_image() {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("index.html"), PAGE).unwrap();
    let busybox = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .find(|path| Path::new(path).exists())
        .expect("busybox (Debian's busybox-static, which scripts/cluster.sh installs)");
    let container = run_ok("buildah", &["from", "scratch"]).trim().to_owned();
    run_ok("buildah", &["copy", &container, busybox, "/bin/busybox"]);
    run_ok(
        "buildah",
        &["copy", &container, &site.path().to_string_lossy(), "/www"],
    );
    run_ok(
        "buildah",
        &[
            "config",
            "--cmd",
            r#"["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]"#,
            &container,
        ],
    );
    run_ok("buildah", &["commit", "--quiet", &container, IMAGE]);
    run_ok("buildah", &["rm", &container]);
}

fn network_namespaces() -> Vec<String> {
    entries("/var/run/netns")
}

/// The names in directory `dir`, sorted; none if it does not exist.
fn entries(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn assert_nothing_left(netns_before: &[String]) {
    let state = state_dir();
    let state_text = state.to_string_lossy().into_owned();
    assert!(
        !state.join("pids").exists(),
        "pid files remain in {state_text}"
    );
    let left = processes_mentioning(&state_text);
    assert!(left.is_empty(), "still running: {left:#?}");
    let mounts: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|line| line.contains(&state_text))
        .map(str::to_owned)
        .collect();
    assert!(mounts.is_empty(), "still mounted: {mounts:#?}");
    assert!(
        !run("ip", &["link", "show", BRIDGE]).status.success(),
        "the bridge {BRIDGE} is still there"
    );
    for tool in ["iptables", "ip6tables"] {
        for table in ["filter", "nat", "mangle", "raw"] {
            let rules = run(tool, &["-t", table, "-S"]);
            let rules = String::from_utf8_lossy(&rules.stdout);
            let chains: Vec<&str> = rules
                .lines()
                .filter(|line| line.contains("KUBE-") || line.contains("OPGEN-"))
                .collect();
            assert!(chains.is_empty(), "{tool} -t {table} still has {chains:#?}");
        }
    }
    let netns_after = network_namespaces();
    let new: Vec<&String> = netns_after
        .iter()
        .filter(|name| !netns_before.contains(name))
        .collect();
    assert!(new.is_empty(), "network namespaces left: {new:?}");
}
