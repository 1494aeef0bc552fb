//! The manager's life: logging, the connection to the API server, the health and metrics
//! servers, leader election, the controllers, and a graceful shutdown.

use ::std::future::Future;
use ::std::net::SocketAddr;
use ::std::process::ExitCode;
use ::std::time::Duration;

use ::anyhow::Context as _;
use ::tokio::task::JoinSet;
use ::tracing::{error, info};

use crate::context::{DEFAULT_CONCURRENCY, set_field_manager};
use crate::leader::{self, LeaderElection, LeaderElectionConfig, LeaderElector};
use crate::server::{self, MetricsServing, Readiness};
use crate::telemetry::{self, LogFormat};
use crate::{Context, metrics_auth, shutdown, webhook, webhook_certs};

/// How long start-up waits for the API server to answer.
const API_SERVER_TIMEOUT: Duration = Duration::from_secs(15);

/// How long the servers have, once the manager stops, to finish the requests they are serving
/// (the Deployment's termination grace period is 10 seconds).
const SERVER_STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// How the manager runs: what `main` hands over from the command-line flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Where /metrics listens.
    pub metrics_bind_address: SocketAddr,
    /// Where /healthz and /readyz listen.
    pub health_probe_bind_address: SocketAddr,
    /// Run the controllers only while holding this Lease; `None` runs them at once.
    pub leader_election: Option<LeaderElection>,
    /// The namespace to watch; `None` watches all namespaces.
    pub watch_namespace: Option<String>,
    /// How the logs are written.
    pub log_format: LogFormat,
}

/// A project's manager: its name, how it runs, and its webhooks. What the project's `main`
/// builds and runs, as a Kubebuilder `main.go` does with controller-runtime's manager:
///
/// ```no_run
/// # async fn controllers(ctx: opgen_runtime::Context) -> anyhow::Result<()> { Ok(()) }
/// # async fn example(options: opgen_runtime::manager::Options) -> std::process::ExitCode {
/// use opgen_runtime::manager::Manager;
///
/// Manager::new(env!("CARGO_PKG_NAME"), options)
///     .run(controllers)
///     .await
/// # }
/// ```
pub struct Manager {
    name: String,
    options: Options,
    webhooks: Option<::axum::Router>,
    metrics: MetricsServing,
    concurrency: u16,
    version: String,
}

impl Manager {
    /// The manager called `name` (the project's package name: see
    /// [`field_manager`](crate::context::field_manager)), run as `options` say.
    pub fn new(name: impl Into<String>, options: Options) -> Self {
        Self {
            name: name.into(),
            options,
            webhooks: None,
            metrics: MetricsServing::plain(),
            concurrency: DEFAULT_CONCURRENCY,
            version: String::from("unknown"),
        }
    }

    /// Reports `version` (the project's, `env!("CARGO_PKG_VERSION")`) in the `build_info`
    /// metric; without this call, `unknown`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Lets each controller reconcile at most `limit` objects at once (at least 1); without
    /// this call, [`DEFAULT_CONCURRENCY`]. A builder method rather than a field of
    /// [`Options`], which projects of earlier releases build as a struct literal.
    pub fn max_concurrent_reconciles(mut self, limit: u16) -> Self {
        self.concurrency = limit.max(1);
        self
    }

    /// Serves /metrics as `serving` says; without this call, over plain HTTP.
    pub fn metrics(mut self, serving: MetricsServing) -> Self {
        self.metrics = serving;
        self
    }

    /// Serves `router`'s webhooks over HTTPS on every replica, the leader and the standbys
    /// alike (see [`webhook`]); [`Webhooks`](webhook::Webhooks) builds one.
    pub fn webhooks(mut self, router: ::axum::Router) -> Self {
        self.webhooks = Some(router);
        self
    }

    /// Runs the manager until a signal stops it, and says how it ended: `controllers` runs
    /// every controller until `ctx.shutdown` is cancelled.
    pub async fn run<F, Fut>(self, controllers: F) -> ExitCode
    where
        F: FnOnce(Context) -> Fut,
        Fut: Future<Output = ::anyhow::Result<()>>,
    {
        if let Err(err) = telemetry::init(self.options.log_format, &self.name) {
            eprintln!("Error: {}", error_chain(&err));
            return ExitCode::FAILURE;
        }
        let code = match self.manage(controllers).await {
            Ok(()) => {
                info!("stopped");
                ExitCode::SUCCESS
            }
            Err(err) => {
                error!("{}", error_chain(&err));
                ExitCode::FAILURE
            }
        };
        telemetry::flush();
        code
    }

    async fn manage<F, Fut>(self, controllers: F) -> ::anyhow::Result<()>
    where
        F: FnOnce(Context) -> Fut,
        Fut: Future<Output = ::anyhow::Result<()>>,
    {
        let Self {
            name,
            options,
            webhooks,
            metrics,
            concurrency,
            version,
        } = self;
        set_field_manager(&name)?;
        let serving = Serving {
            webhooks,
            metrics,
            concurrency,
            version,
        };
        manage(options, serving, controllers).await
    }
}

/// What the manager's builder methods set, besides its name and options.
struct Serving {
    webhooks: Option<::axum::Router>,
    metrics: MetricsServing,
    concurrency: u16,
    version: String,
}

async fn manage<F, Fut>(options: Options, serving: Serving, controllers: F) -> ::anyhow::Result<()>
where
    F: FnOnce(Context) -> Fut,
    Fut: Future<Output = ::anyhow::Result<()>>,
{
    let Serving {
        webhooks,
        metrics: metrics_serving,
        concurrency,
        version,
    } = serving;
    // Flag mistakes need no cluster to report.
    let election = options
        .leader_election
        .as_ref()
        .map(LeaderElectionConfig::from_options)
        .transpose()?;

    // What `Client::try_default` does, keeping the config for the messages and the elector.
    let kube_config = ::kube::Config::infer().await.context(
        "no Kubernetes configuration found: outside a cluster set KUBECONFIG or create \
         ~/.kube/config; in a Pod, mount the service-account token",
    )?;
    let client = ::kube::Client::try_from(kube_config.clone())
        .context("cannot build a Kubernetes client from the configuration")?;

    let mut ctx = Context::new(client, options.watch_namespace);
    ctx.concurrency = concurrency;
    let shutdown = ctx.shutdown.clone();
    let kubernetes_version = check_api_server(&ctx.client, &kube_config).await?;
    ctx.metrics.set_build_info(&version, &kubernetes_version);

    let elector = match election {
        Some(config) => {
            Some(LeaderElector::new(leader::LeaseClient::new(&kube_config)?, config).await?)
        }
        None => None,
    };

    let readiness = Readiness::default();
    let (health, metrics) = server::bind(
        options.health_probe_bind_address,
        options.metrics_bind_address,
    )
    .await?;
    let metrics_tls = metrics_serving.certificates()?;
    let mut metrics_router = server::metrics_router(ctx.metrics.clone());
    if metrics_tls.is_some() {
        metrics_router = metrics_auth::MetricsAuth::new(ctx.client.clone()).protect(metrics_router);
    }
    let servers = ::tokio::spawn(server::serve(
        (health, server::health_router(readiness.clone())),
        (metrics, metrics_router),
        metrics_tls,
        shutdown.clone(),
    ));
    // Every replica serves webhooks, the leader and the standbys alike. A standby is ready
    // too: a rolling update waits for the new Pod to be ready before it stops the old one, and
    // the new Pod cannot lead until the old one has stopped.
    let webhook_server = match webhooks {
        Some(router) => Some(serve_webhooks(&ctx, router, &readiness, &shutdown).await?),
        None => {
            readiness.set_ready();
            None
        }
    };
    shutdown::stop_on_signal(shutdown.clone())?;

    let metrics = ctx.metrics.clone();
    // Called once this replica leads (at once without leader election).
    let run_controllers = || {
        ctx.metrics.set_leader(true);
        match &ctx.watch_namespace {
            Some(namespace) => info!(%namespace, "starting controllers"),
            None => info!("starting controllers for all namespaces"),
        }
        controllers(ctx)
    };
    let result = match elector {
        Some(elector) => elector.run(shutdown.clone(), run_controllers).await,
        None => run_controllers().await,
    };
    metrics.set_leader(false);

    shutdown.cancel();
    let served = stopped(servers, "HTTP servers").await;
    let webhooks_served = match webhook_server {
        Some(server) => stopped(server, "webhook server").await,
        None => Ok(()),
    };
    result.and(served).and(webhooks_served)
}

/// Starts the webhook server, with the certificate `WEBHOOK_CERT_DIR` or `WEBHOOK_CERT_SECRET`
/// say (see [`webhook`]), and marks the manager ready once it has one to serve with
/// (cert-manager, or this manager, may not have issued it yet).
async fn serve_webhooks(
    ctx: &Context,
    router: ::axum::Router,
    readiness: &Readiness,
    shutdown: &::tokio_util::sync::CancellationToken,
) -> ::anyhow::Result<::tokio::task::JoinHandle<::anyhow::Result<()>>> {
    let webhook_options = webhook::Options::from_env()?;
    let certificates = match (&webhook_options.cert_dir, &webhook_options.cert_secret) {
        (Some(dir), _) => webhook::Certificates::from_dir(dir.clone()),
        (None, Some(secret)) => {
            let certificates = webhook::Certificates::managed();
            // The manager's own namespace in a Pod, the kubeconfig's under `make run`.
            let namespace = ::std::env::var("POD_NAMESPACE")
                .ok()
                .filter(|namespace| !namespace.is_empty())
                .unwrap_or_else(|| ctx.client.default_namespace().to_owned());
            ::tokio::spawn(webhook_certs::run(
                ctx.client.clone(),
                namespace,
                secret.clone(),
                certificates.clone(),
                shutdown.clone(),
            ));
            certificates
        }
        (None, None) => webhook::Certificates::local(webhook::local_cert_dir())?,
    };
    let webhook_server = ::tokio::spawn(webhook::serve(
        webhook::bind(webhook_options.bind_address).await?,
        router,
        certificates.clone(),
        shutdown.clone(),
    ));
    {
        let readiness = readiness.clone();
        ::tokio::spawn(async move {
            certificates.ready().await;
            readiness.set_ready();
        });
    }
    Ok(webhook_server)
}

/// Waits for a server to finish the requests it has, at most [`SERVER_STOP_TIMEOUT`]: a
/// client that keeps a connection open without sending anything must not keep the manager
/// from exiting.
async fn stopped(
    mut server: ::tokio::task::JoinHandle<::anyhow::Result<()>>,
    what: &str,
) -> ::anyhow::Result<()> {
    match ::tokio::time::timeout(SERVER_STOP_TIMEOUT, &mut server).await {
        Ok(joined) => joined
            .with_context(|| format!("the {what} panicked"))
            .and_then(|served| served),
        Err(_) => {
            server.abort();
            ::tracing::warn!(
                "the {what} still had open connections {SERVER_STOP_TIMEOUT:?} after the stop; closed them"
            );
            Ok(())
        }
    }
}

/// The controllers of the manager, run side by side until `ctx.shutdown` is cancelled.
pub struct Controllers {
    ctx: Context,
    running: JoinSet<::anyhow::Result<()>>,
}

impl Controllers {
    /// No controllers yet; each runs with a clone of `ctx`.
    pub fn new(ctx: Context) -> Self {
        Self {
            ctx,
            running: JoinSet::new(),
        }
    }

    /// Starts a controller: `run` runs it until `ctx.shutdown` is cancelled.
    pub fn spawn<F, Fut>(&mut self, run: F)
    where
        F: FnOnce(Context) -> Fut,
        Fut: Future<Output = ::anyhow::Result<()>> + Send + 'static,
    {
        self.running.spawn(run(self.ctx.clone()));
    }

    /// Waits for every controller to stop. When one fails (for example because its CRD is not
    /// installed), the others are asked to shut down gracefully and the first error is
    /// returned. Without controllers, waits for the shutdown.
    pub async fn run(mut self) -> ::anyhow::Result<()> {
        if self.running.is_empty() {
            self.ctx.shutdown.cancelled().await;
            return Ok(());
        }
        let mut first_error = None;
        while let Some(joined) = self.running.join_next().await {
            if let Err(err) = joined
                .map_err(::anyhow::Error::from)
                .and_then(|result| result)
            {
                self.ctx.shutdown.cancel();
                first_error.get_or_insert(err);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Fails clearly when the API server does not answer; returns its version.
async fn check_api_server(
    client: &::kube::Client,
    config: &::kube::Config,
) -> ::anyhow::Result<String> {
    let url = &config.cluster_url;
    let version = ::tokio::time::timeout(API_SERVER_TIMEOUT, client.apiserver_version())
        .await
        .map_err(::anyhow::Error::from)
        .and_then(|answer| answer.map_err(::anyhow::Error::from))
        .with_context(|| {
            format!(
                "the Kubernetes API server at {url} does not answer: check KUBECONFIG and its \
                 current context, or the Pod's network and service account"
            )
        })?;
    info!(server = %url, version = %version.git_version, "connected to Kubernetes");
    Ok(version.git_version)
}

/// The error and its causes on one line. Unlike anyhow's `{:#}` this skips a cause that the
/// message before it already quotes, as kube's errors do.
fn error_chain(err: &::anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain().map(ToString::to_string) {
        if !line.contains(&cause) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&cause);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[tokio::test(start_paused = true)]
    async fn a_server_that_does_not_finish_is_closed_after_the_timeout() {
        let finishing = ::tokio::spawn(async { Ok(()) });
        assert!(stopped(finishing, "server").await.is_ok());
        let failing = ::tokio::spawn(async { Err(::anyhow::anyhow!("port taken")) });
        assert!(stopped(failing, "server").await.is_err());

        // A server waiting on a connection that never ends: closed, and the stop goes on.
        let hanging = ::tokio::spawn(::std::future::pending::<::anyhow::Result<()>>());
        let started = ::tokio::time::Instant::now();
        assert!(stopped(hanging, "server").await.is_ok());
        assert_eq!(started.elapsed(), SERVER_STOP_TIMEOUT);
    }

    #[tokio::test]
    async fn a_failing_controller_stops_the_others_and_its_error_is_returned() {
        let (ctx, _server) = testing::context();
        let mut controllers = Controllers::new(ctx.clone());
        controllers.spawn(|ctx| async move {
            ctx.shutdown.cancelled().await;
            Ok(())
        });
        controllers.spawn(|_| async { ::anyhow::bail!("CRD missing") });

        let error = controllers.run().await.expect_err("one controller failed");
        assert_eq!(error.to_string(), "CRD missing");
        assert!(ctx.shutdown.is_cancelled());
    }

    #[tokio::test]
    async fn without_controllers_the_manager_waits_for_the_shutdown() {
        let (ctx, _server) = testing::context();
        let shutdown = ctx.shutdown.clone();
        let waiting = ::tokio::spawn(Controllers::new(ctx).run());
        ::tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        shutdown.cancel();
        waiting.await.expect("no panic").expect("no error");
    }

    #[derive(Debug, ::thiserror::Error)]
    #[error("failed to read kubeconfig: {0}")]
    struct Quoting(#[source] ::std::io::Error);

    #[test]
    fn error_chain_skips_causes_already_quoted() {
        let io = ::std::io::Error::new(::std::io::ErrorKind::NotFound, "no such file");
        let err = ::anyhow::Error::new(Quoting(io)).context("no Kubernetes configuration found");
        assert_eq!(
            error_chain(&err),
            "no Kubernetes configuration found: failed to read kubeconfig: no such file"
        );
    }

    #[test]
    fn error_chain_keeps_distinct_causes() {
        let err = ::anyhow::anyhow!("connection refused")
            .context("cannot reach the API server")
            .context("start-up failed");
        assert_eq!(
            error_chain(&err),
            "start-up failed: cannot reach the API server: connection refused"
        );
    }
}
