//! A generated project's manager, run as a process against a control plane, as it runs in its
//! Deployment: with a service account's identity, its probes and metrics on their own ports.

use std::{
    collections::BTreeMap,
    path::PathBuf,
    process::{Command, ExitStatus},
    time::Duration,
};

use super::{
    control_plane::free_ports,
    http::{http_get, https_get},
    process::Process,
};

/// How long the manager may take to connect and answer /readyz.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How to run one manager process.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The manager binary the project built.
    pub binary: PathBuf,
    /// The identity it runs with.
    pub kubeconfig: PathBuf,
    /// Where its log goes (`<identity>.log`).
    pub log_dir: PathBuf,
    /// Its leader-election identity, as `POD_NAME` gives it in a cluster.
    pub identity: String,
    /// `--leader-elect` with the Lease in this namespace.
    pub leader_election_namespace: Option<String>,
    /// `--watch-namespace`.
    pub watch_namespace: Option<String>,
    /// How it serves its webhooks, when the test calls them; `None` leaves the webhook server
    /// (of a project that has one) on a free loopback port with a local certificate.
    pub webhooks: Option<WebhookServing>,
    /// The token the test scrapes /metrics with, over HTTPS, as a Prometheus granted the
    /// metrics-reader role would; `None` scrapes plain HTTP, for a project whose manager
    /// serves it so (one made before secure metrics).
    pub metrics_token: Option<String>,
    /// The collector its traces go to, over OTLP/HTTP in JSON (a manager built with the
    /// `otel` feature); `None` names none, so nothing is exported.
    pub otlp_endpoint: Option<String>,
}

/// Where a manager serves its webhooks, and the Secret of its self-managed certificate.
#[derive(Clone, Debug)]
pub struct WebhookServing {
    /// The loopback port (`WEBHOOK_BIND_ADDRESS`).
    pub port: u16,
    /// `WEBHOOK_CERT_SECRET`.
    pub cert_secret: String,
    /// The manager's namespace, where the Secret is (`POD_NAMESPACE`).
    pub namespace: String,
}

pub struct Operator {
    process: Process,
    health: String,
    metrics: String,
    metrics_token: Option<String>,
}

impl Operator {
    /// Starts the manager; see [`Operator::wait_ready`].
    pub fn start(launch: &Launch) -> Self {
        let [health_port, metrics_port, webhook_port] = free_ports();
        let mut command = Command::new(&launch.binary);
        command
            .arg(format!(
                "--health-probe-bind-address=127.0.0.1:{health_port}"
            ))
            .arg(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"))
            .env("KUBECONFIG", &launch.kubeconfig)
            .env("POD_NAME", &launch.identity)
            .env("RUST_LOG", "info")
            // Nothing of the test's own environment may configure it.
            .env_remove("POD_NAMESPACE")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("WATCH_NAMESPACE")
            .env_remove("LEADER_ELECT")
            .env_remove("WEBHOOK_CERT_DIR")
            .env_remove("WEBHOOK_CERT_SECRET")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env_remove("OTEL_SERVICE_NAME");
        if let Some(endpoint) = &launch.otlp_endpoint {
            command
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
                .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
                // What docs/monitoring.md gives for the requests' spans too.
                .env("RUST_LOG", "info,kube_client=debug")
                // Batches every half second, not every five: the test waits for them.
                .env("OTEL_BSP_SCHEDULE_DELAY", "500");
        }
        // Never the webhook server's default, 0.0.0.0:9443: managers run side by side here.
        let webhook_port = launch.webhooks.as_ref().map_or(webhook_port, |w| w.port);
        command.env("WEBHOOK_BIND_ADDRESS", format!("127.0.0.1:{webhook_port}"));
        if let Some(webhooks) = &launch.webhooks {
            command
                .env("WEBHOOK_CERT_SECRET", &webhooks.cert_secret)
                .env("POD_NAMESPACE", &webhooks.namespace);
        }
        if let Some(namespace) = &launch.leader_election_namespace {
            command
                .arg("--leader-elect")
                .arg(format!("--leader-election-namespace={namespace}"));
        }
        if let Some(namespace) = &launch.watch_namespace {
            command.arg(format!("--watch-namespace={namespace}"));
        }
        let log = launch.log_dir.join(format!("{}.log", launch.identity));
        let name = format!("operator {}", launch.identity);
        Self {
            process: Process::start(&name, command, &log),
            health: format!("http://127.0.0.1:{health_port}"),
            metrics: match launch.metrics_token {
                Some(_) => format!("https://127.0.0.1:{metrics_port}"),
                None => format!("http://127.0.0.1:{metrics_port}"),
            },
            metrics_token: launch.metrics_token.clone(),
        }
    }

    /// Waits until /readyz answers 200; fails with the log if the manager exits first (it
    /// cannot reach the API server, a CRD is missing, ...).
    pub fn wait_ready(&mut self) -> anyhow::Result<()> {
        let url = format!("{}/readyz", self.health);
        self.process
            .wait_until("answer /readyz", READY_TIMEOUT, || match http_get(&url) {
                Ok((200, _)) => Ok(()),
                Ok((status, body)) => Err(format!("{status} {body}")),
                Err(err) => Err(err.to_string()),
            })
    }

    /// GET `path` of the health-probe server: status and body.
    pub fn probe(&self, path: &str) -> (u16, String) {
        http_get(&format!("{}{path}", self.health))
            .unwrap_or_else(|err| self.unreachable(&format!("does not answer {path}"), err))
    }

    /// Fails the test on a request the manager did not answer. A refused connection most
    /// often means it has exited: its log says why.
    fn unreachable(&self, what: &str, err: impl std::fmt::Display) -> ! {
        panic!(
            "{} {what}: {err}\n{}",
            self.process.name(),
            self.process.log_tail()
        )
    }

    /// The body of /metrics, after checking it answers 200.
    pub fn metrics(&self) -> String {
        let (status, body) = self.scrape(self.metrics_token.as_deref());
        assert_eq!(status, 200, "/metrics of {}: {body}", self.process.name());
        body
    }

    /// GET /metrics with `token` (over HTTPS when the launch had a token): status and body.
    pub fn scrape(&self, token: Option<&str>) -> (u16, String) {
        let url = format!("{}/metrics", self.metrics);
        let answer = match self.metrics_token {
            Some(_) => https_get(&url, token),
            None => http_get(&url),
        };
        answer.unwrap_or_else(|err| self.unreachable("serves no /metrics", err))
    }

    /// Reconciles counted so far, per controller (the `controller` label).
    pub fn reconciliations(&self) -> BTreeMap<String, u64> {
        reconciliations(&self.metrics())
    }

    pub fn log(&self) -> String {
        self.process.log()
    }

    pub fn log_tail(&self) -> String {
        self.process.log_tail()
    }

    /// The lines where the manager reports the API server refused it something: RBAC denials.
    pub fn forbidden(&self) -> Vec<String> {
        forbidden_lines(&self.log())
    }

    /// Fails, quoting the log, if the manager has exited.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        self.process.check_running()
    }

    /// Stops it (SIGTERM), and fails unless it exits cleanly without any request refused: the
    /// generated RBAC was enough.
    pub fn stop_after_all_allowed(&mut self) {
        let denied = self.forbidden();
        assert!(
            denied.is_empty(),
            "the generated RBAC lacks a rule:\n{}",
            denied.join("\n")
        );
        let status = self.stop().unwrap_or_else(|err| panic!("{err:#}"));
        assert!(status.success(), "the manager stopped with {status}");
    }

    /// SIGTERM, as Kubernetes stops a pod; the exit status.
    pub fn stop(&mut self) -> anyhow::Result<ExitStatus> {
        self.process.stop()
    }

    pub fn name(&self) -> &str {
        self.process.name()
    }
}

/// Sums of `*_reconciliations_total{controller="…"}` in an OpenMetrics text, per controller.
pub fn reconciliations(metrics: &str) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for line in metrics.lines().filter(|line| !line.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Some((_, labels)) = series.split_once("_reconciliations_total{") else {
            continue;
        };
        let Some(controller) = labels
            .split(',')
            .find_map(|label| label.strip_prefix("controller=\""))
            .and_then(|rest| rest.split('"').next())
        else {
            continue;
        };
        let value: u64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad sample: {line}"));
        *counts.entry(controller.to_owned()).or_default() += value;
    }
    counts
}

/// The lines of a manager's log that report a request the API server refused as forbidden
/// (HTTP 403): what a missing RBAC rule looks like from the inside.
pub fn forbidden_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|line| {
            let line = line.to_ascii_lowercase();
            line.contains("forbidden") || line.contains("code: 403")
        })
        .map(str::to_owned)
        .collect()
}
