//! One measured run: a fresh control plane, one operator, `n` objects created at once, and
//! what it cost until every workload existed and every object reported a status, and in the
//! minute after.

use std::{
    collections::BTreeMap,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::common::{
    control_plane::{ControlPlane, Options, assets, free_ports},
    http::http_get,
    kubectl::Kubectl,
    process::Process,
};
use crate::operators::Operator;

const NAMESPACE: &str = "bench";
const ACCOUNT: &str = "operator";
/// How long after converging the costs are watched again: resyncs, late events, settling.
pub const AFTER: Duration = Duration::from_secs(60);
/// The control planes' Service range: kubeadm's default, room for thousands of Services.
pub const SERVICE_CIDR: &str = "10.96.0.0/12";
/// A run that has not converged by then is reported as such.
const CONVERGE_TIMEOUT: Duration = Duration::from_secs(900);

/// How many `kubectl create` run at once, each with its share of the objects, as the clients
/// of a cluster do: one creating 10,000 objects one after the other took about 120 s, longer
/// than opgen's operator needed to converge, so the time measured was the client's.
pub const CREATORS: usize = 4;

/// What one run measured.
pub struct Run {
    pub operator: String,
    pub objects: usize,
    /// From the first create until the `kubectl create`s had created every object.
    pub created: Option<Duration>,
    /// From the first create until every object's Deployment existed.
    pub workloads: Option<Duration>,
    /// From the first create until every object had a status condition.
    pub statuses: Option<Duration>,
    /// CPU seconds of the operator until convergence, and in the minute after.
    pub operator_cpu: (f64, f64),
    /// MiB: resident before the objects, at most, and a minute after converging.
    pub rss_idle: f64,
    pub rss_peak: f64,
    pub rss_settled: f64,
    /// CPU seconds of etcd, kube-apiserver and kube-controller-manager, likewise.
    pub control_plane_cpu: (f64, f64),
    /// Requests the operator sent, by `verb resource[/subresource]`, from the API server's
    /// audit log (the whole run).
    pub requests: BTreeMap<String, u64>,
    /// Events it created.
    pub events: u64,
    /// Lines of its log reporting a failed reconcile.
    pub errors: usize,
    /// The manager started again over the objects, once they had converged.
    pub restart: Restart,
}

/// What a manager started over `n` objects that are up to date costs.
pub struct Restart {
    /// From its start until it answered /readyz.
    pub ready: Duration,
    /// From its start until its counter of reconciles reached the number of objects.
    pub resynced: Option<Duration>,
    /// CPU seconds of the manager, and of the control plane, until then and for
    /// [`RESTART_SETTLE`] after.
    pub operator_cpu: f64,
    pub control_plane_cpu: f64,
    /// MiB, its peak.
    pub rss_peak: f64,
    /// Requests it sent, by verb and resource, from its part of the audit log.
    pub requests: BTreeMap<String, u64>,
}

/// How long a restarted manager is watched after its resync: any write its first reconciles
/// make comes within it.
pub const RESTART_SETTLE: Duration = Duration::from_secs(10);

pub fn run(
    operator: &Operator,
    objects: usize,
    service_cidr: &str,
    work: &Path,
) -> anyhow::Result<Run> {
    let policy = work.join("audit-policy.yaml");
    // Every request of the operator's service account, nothing of anyone else's, so that
    // auditing costs both operators alike (the policy `opgen dev` uses).
    opgen::dev::refusals::write_audit_policy(
        &policy,
        &format!("system:serviceaccount:{NAMESPACE}:{ACCOUNT}"),
    )?;
    let audit_log = work.join(format!(
        "audit-{}-{objects}.log",
        operator.label.replace([' ', '(', ')'], "")
    ));
    let _ = std::fs::remove_file(&audit_log);
    let cluster = ControlPlane::start_with(Options {
        service_cluster_ip_range: service_cidr.to_owned(),
        api_server_args: vec![
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", audit_log.display()),
            "--audit-log-maxsize=0".to_owned(),
        ],
        ..Options::new(assets()?)
    })?;
    let admin = cluster.admin();
    admin.ok(&["create", "namespace", NAMESPACE]);
    admin.ok(&["create", "serviceaccount", ACCOUNT, "-n", NAMESPACE]);
    // Both operators with the same rights, whatever their generated roles say.
    admin.ok(&[
        "create",
        "clusterrolebinding",
        "bench-operator",
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={NAMESPACE}:{ACCOUNT}"),
    ]);
    admin.ok(&[
        "apply",
        "--server-side",
        "-f",
        &operator.crds.display().to_string(),
    ]);
    admin.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/memcacheds.cache.example.com",
        "--timeout=60s",
    ]);
    let token = admin.ok(&["create", "token", ACCOUNT, "-n", NAMESPACE, "--duration=2h"]);
    let kubeconfig = cluster.kubeconfig_with_token(ACCOUNT, &token);

    let (mut process, _) = start(
        operator,
        &cluster,
        &kubeconfig,
        &operator.label,
        "operator.log",
    )?;
    std::thread::sleep(Duration::from_secs(5));
    let pid = process.id();
    let rss_idle = memory(pid, "VmRSS")?;
    let control_plane: Vec<u32> = cluster.processes().iter().map(|(_, pid)| *pid).collect();

    let manifests = objects_manifests(&operator.sample, objects, CREATORS)?;
    let cpu_start = (cpu(&[pid])?, cpu(&control_plane)?);
    let started = Instant::now();
    let mut creation = Creation::start(admin, &manifests)?;
    let mut created = None;
    let mut workloads = None;
    let mut statuses = None;
    while statuses.is_none() && started.elapsed() < CONVERGE_TIMEOUT {
        process.check_running()?;
        if created.is_none() && creation.is_done()? {
            created = Some(started.elapsed());
        }
        if workloads.is_none() {
            if count(admin, "/apis/apps/v1/namespaces/bench/deployments")? == objects {
                workloads = Some(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(250));
        } else {
            if with_status(admin)? == objects {
                statuses = Some(started.elapsed());
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    creation.wait()?;
    let cpu_converged = (cpu(&[pid])?, cpu(&control_plane)?);
    std::thread::sleep(AFTER);
    let cpu_after = (cpu(&[pid])?, cpu(&control_plane)?);
    let rss_peak = memory(pid, "VmHWM")?;
    let rss_settled = memory(pid, "VmRSS")?;
    process.stop()?;
    let mut errors = process
        .log()
        .lines()
        .filter(|line| line.contains(operator.error_line))
        .count();
    let requests = requests(&audit_log, 0)?;
    let (restart, restart_errors) = restart(
        operator,
        objects,
        &cluster,
        &kubeconfig,
        &audit_log,
        &control_plane,
    )?;
    errors += restart_errors;
    let events = requests
        .iter()
        .filter(|(request, _)| *request == "create events")
        .map(|(_, count)| count)
        .sum();
    Ok(Run {
        operator: operator.label.clone(),
        objects,
        created,
        workloads,
        statuses,
        operator_cpu: (cpu_converged.0 - cpu_start.0, cpu_after.0 - cpu_converged.0),
        rss_idle,
        rss_peak,
        rss_settled,
        control_plane_cpu: (cpu_converged.1 - cpu_start.1, cpu_after.1 - cpu_converged.1),
        requests,
        events,
        errors,
        restart,
    })
}

/// Starts `operator` again over the `objects` that converged, and measures it until it has
/// reconciled each once and [`RESTART_SETTLE`] more; returns that, and the lines of its log
/// that report a failed reconcile.
fn restart(
    operator: &Operator,
    objects: usize,
    cluster: &ControlPlane,
    kubeconfig: &Path,
    audit_log: &Path,
    control_plane: &[u32],
) -> anyhow::Result<(Restart, usize)> {
    let before = std::fs::read_to_string(audit_log)?.lines().count();
    let control_plane_start = cpu(control_plane)?;
    let started = Instant::now();
    let name = format!("{} (restarted)", operator.label);
    let (mut process, metrics) = start(
        operator,
        cluster,
        kubeconfig,
        &name,
        "operator-restarted.log",
    )?;
    let ready = started.elapsed();
    let pid = process.id();
    let mut resynced = None;
    while resynced.is_none() && started.elapsed() < CONVERGE_TIMEOUT {
        process.check_running()?;
        let (status, text) = http_get(&format!("http://127.0.0.1:{metrics}/metrics"))?;
        if status == 200 && counted(&text, operator.reconcile_counter) >= objects as f64 {
            resynced = Some(started.elapsed());
        } else {
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    std::thread::sleep(RESTART_SETTLE);
    let restart = Restart {
        ready,
        resynced,
        operator_cpu: cpu(&[pid])?,
        control_plane_cpu: cpu(control_plane)? - control_plane_start,
        rss_peak: memory(pid, "VmHWM")?,
        requests: requests(audit_log, before)?,
    };
    process.stop()?;
    let errors = process
        .log()
        .lines()
        .filter(|line| line.contains(operator.error_line))
        .count();
    Ok((restart, errors))
}

/// Starts `operator` with `kubeconfig`, logging into `log` in the control plane's directory
/// as `name`, and waits until it answers /readyz; returns it and its metrics port.
fn start(
    operator: &Operator,
    cluster: &ControlPlane,
    kubeconfig: &Path,
    name: &str,
    log: &str,
) -> anyhow::Result<(Process, u16)> {
    let [health, metrics] = free_ports();
    let mut command = operator.command(health, metrics);
    command.env("KUBECONFIG", kubeconfig);
    let mut process = Process::start(name, command, &cluster.dir().join(log));
    process.wait_until(
        "answer /readyz",
        Duration::from_secs(60),
        || match http_get(&format!("http://127.0.0.1:{health}/readyz")) {
            Ok((200, _)) => Ok(()),
            Ok((status, body)) => Err(format!("{status} {body}")),
            Err(err) => Err(err.to_string()),
        },
    )?;
    Ok((process, metrics))
}

/// The sum of the samples of every counter in `metrics` (Prometheus' text) whose name ends
/// with `name`.
fn counted(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let metric = series.split('{').next()?;
            metric.ends_with(name).then(|| value.parse::<f64>().ok())?
        })
        .sum()
}

/// `n` copies of the sample, named `bench-00000`…, dealt round-robin into `parts` Lists.
fn objects_manifests(sample: &Path, n: usize, parts: usize) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(sample)
        .with_context(|| format!("cannot read {}", sample.display()))?;
    let sample: Value = serde_saphyr::from_str(&text)
        .with_context(|| format!("{} is not YAML", sample.display()))?;
    let mut lists = vec![Vec::new(); parts];
    for i in 0..n {
        let mut object = sample.clone();
        object["metadata"]["name"] = format!("bench-{i:05}").into();
        object["metadata"]["namespace"] = NAMESPACE.into();
        lists[i % parts].push(object);
    }
    Ok(lists
        .into_iter()
        .map(|items| serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}))
        .map(|list| list.to_string())
        .collect())
}

/// The `kubectl create` processes of the objects, one per List, running while the
/// convergence is watched.
struct Creation(Vec<Child>);

impl Creation {
    fn start(admin: &Kubectl, manifests: &[String]) -> anyhow::Result<Self> {
        let creators = manifests
            .iter()
            .map(|manifest| create_all(admin, manifest))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self(creators))
    }

    /// Whether every one has exited.
    fn is_done(&mut self) -> anyhow::Result<bool> {
        for creator in &mut self.0 {
            if creator.try_wait()?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Waits for every one, failing unless all succeeded.
    fn wait(self) -> anyhow::Result<()> {
        for mut creator in self.0 {
            let exit = creator.wait()?;
            if !exit.success() {
                bail!("kubectl create of the objects failed ({exit})");
            }
        }
        Ok(())
    }
}

/// `kubectl create` of the manifest.
fn create_all(admin: &Kubectl, manifest: &str) -> anyhow::Result<Child> {
    use std::io::Write as _;
    let mut child = Command::new("kubectl")
        .arg(format!("--kubeconfig={}", admin.kubeconfig().display()))
        .args(["create", "-f", "-", "-o", "name"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot run kubectl")?;
    child
        .stdin
        .take()
        .context("kubectl has no stdin")?
        .write_all(manifest.as_bytes())?;
    Ok(child)
}

/// How many objects a list URL holds, read from a one-item page: cheap at any size.
fn count(admin: &Kubectl, url: &str) -> anyhow::Result<usize> {
    let page = admin.raw(&format!("{url}?limit=1"));
    let items = page["items"].as_array().map_or(0, Vec::len);
    let rest = page["metadata"]["remainingItemCount"].as_u64().unwrap_or(0);
    Ok(items + usize::try_from(rest)?)
}

/// How many of the objects report a status condition.
fn with_status(admin: &Kubectl) -> anyhow::Result<usize> {
    let list = admin.raw("/apis/cache.example.com/v1alpha1/namespaces/bench/memcacheds");
    Ok(list["items"].as_array().map_or(0, |items| {
        items
            .iter()
            .filter(|o| {
                o["status"]["conditions"]
                    .as_array()
                    .is_some_and(|c| !c.is_empty())
            })
            .count()
    }))
}

/// User and system CPU seconds of the processes so far.
fn cpu(pids: &[u32]) -> anyhow::Result<f64> {
    // Linux counts in clock ticks, 100 a second on every architecture opgen runs on.
    const TICKS: f64 = 100.0;
    let mut total = 0.0;
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
        // The fields after the command's name, which may hold spaces, in parentheses.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .context("no command in /proc/<pid>/stat")?
            .1
            .split_whitespace()
            .collect();
        let utime: f64 = fields[11].parse()?;
        let stime: f64 = fields[12].parse()?;
        total += (utime + stime) / TICKS;
    }
    Ok(total)
}

/// A memory figure of /proc/<pid>/status (`VmRSS`, `VmHWM`), in MiB.
fn memory(pid: u32, field: &str) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .with_context(|| format!("no {field} in /proc/{pid}/status"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()?;
    Ok(kib / 1024.0)
}

/// The audit log's requests after its first `skip` lines, counted by verb and resource.
fn requests(log: &Path, skip: usize) -> anyhow::Result<BTreeMap<String, u64>> {
    let text = std::fs::read_to_string(log)
        .with_context(|| format!("no audit log at {}", log.display()))?;
    let mut counts = BTreeMap::new();
    for line in text.lines().skip(skip) {
        let event: Value = serde_json::from_str(line)?;
        let verb = event["verb"].as_str().unwrap_or("?");
        let object = &event["objectRef"];
        let resource = match (object["resource"].as_str(), object["subresource"].as_str()) {
            (Some(resource), Some(sub)) => format!("{resource}/{sub}"),
            (Some(resource), None) => resource.to_owned(),
            _ => event["requestURI"].as_str().unwrap_or("?").to_owned(),
        };
        *counts.entry(format!("{verb} {resource}")).or_default() += 1;
    }
    Ok(counts)
}
