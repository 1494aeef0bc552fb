//! The manager's life, as controller-runtime's manager runs a Kubebuilder project: logging, the
//! connection to the API server, the health and metrics servers, leader election, the
//! webhooks, the controllers, and a graceful shutdown.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use opgen_runtime::manager::{Controllers, LogFormat, Manager, Options};
//! use opgen_runtime::Context;
//!
//! async fn controllers(ctx: Context) -> anyhow::Result<()> {
//!     let controllers = Controllers::new(ctx);
//!     // `controllers.spawn(backup::run)` for each kind's controller.
//!     controllers.run().await
//! }
//!
//! #[tokio::main]
//! async fn main() -> std::process::ExitCode {
//!     let options = Options {
//!         metrics_bind_address: "0.0.0.0:8443".parse().unwrap(),
//!         health_probe_bind_address: "0.0.0.0:8081".parse().unwrap(),
//!         leader_election: None,
//!         watch_namespace: None,
//!         log_format: LogFormat::Json,
//!     };
//!     Manager::new(env!("CARGO_PKG_NAME"), options)
//!         .version(env!("CARGO_PKG_VERSION"))
//!         .warm_standby(true)
//!         .reconcile_timeout(Duration::from_secs(60))
//!         .run(controllers)
//!         .await
//! }
//! ```

mod controllers;
mod leader;
mod metrics_auth;
#[cfg(feature = "otel")]
mod otel;
mod servers;
mod settings;
mod shutdown;
mod telemetry;

use ::std::future::Future;
use ::std::process::ExitCode;
use ::std::time::Duration;

use ::anyhow::Context as _;
use ::tracing::{error, info};

pub use self::controllers::Controllers;
use self::leader::{LeaderElectionConfig, LeaderElector, LeaseClient};
use self::metrics_auth::MetricsAuth;
use self::servers::Readiness;
pub use self::settings::{
    DEFAULT_CONCURRENCY, DEFAULT_RECONCILE_TIMEOUT, LeaderElection, LogFormat, MetricsServing,
    Options, parse_duration,
};
use crate::client::Context;
use crate::client::context::Leadership;
use crate::identity::set_field_manager;
use crate::webhook::certificates::Certificates;
use crate::webhook::{certs, server as webhook_server};

/// How long start-up waits for the API server to answer.
const API_SERVER_TIMEOUT: Duration = Duration::from_secs(15);

/// How long the servers have, once the manager stops, to finish the requests they are serving
/// (the Deployment's termination grace period is 10 seconds).
const SERVER_STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// A project's manager: its name, how it runs, and its webhooks. What the project's `main`
/// builds and runs, as a Kubebuilder `main.go` does with controller-runtime's manager (see
/// the module's example).
pub struct Manager {
    name: String,
    options: Options,
    webhooks: Option<::axum::Router>,
    metrics: MetricsServing,
    concurrency: u16,
    version: String,
    warm_standby: bool,
    reconcile_timeout: Option<Duration>,
}

impl Manager {
    /// The manager called `name` (the project's package name: see
    /// [`field_manager`](crate::field_manager)), run as `options` say.
    pub fn new(name: impl Into<String>, options: Options) -> Self {
        Self {
            name: name.into(),
            options,
            webhooks: None,
            metrics: MetricsServing::plain(),
            concurrency: DEFAULT_CONCURRENCY,
            version: String::from("unknown"),
            warm_standby: true,
            reconcile_timeout: Some(DEFAULT_RECONCILE_TIMEOUT),
        }
    }

    /// With leader election, whether a replica that does not lead yet runs its controllers'
    /// watches and fills their caches while it waits (controller-runtime's `EnableWarmup`),
    /// reconciling nothing until it leads; then it starts reconciling without listing
    /// everything first, the changes made meanwhile ahead of the rest. On unless this is
    /// called with `false` (`--warm-standby=false`): a standby then only waits, with no watch
    /// and no cache until it leads. Without leader election it changes nothing.
    ///
    /// A warm standby whose controllers fail (a CRD not installed) exits, as a leader would,
    /// instead of waiting for the Lease. A standby is ready (/readyz) either way, as before: a
    /// rolling update waits for the new Pod to be ready before it stops the old leader.
    pub fn warm_standby(mut self, enabled: bool) -> Self {
        self.warm_standby = enabled;
        self
    }

    /// Cancels a reconcile that runs longer than `limit` (controller-runtime's
    /// `ReconciliationTimeout`) and retries it with the usual backoff; each one is counted in
    /// `<prefix>_reconcile_timeouts_total` and told in a `Warning` event `ReconcileTimeout` on
    /// the object. Without this call [`DEFAULT_RECONCILE_TIMEOUT`]; `Duration::ZERO` sets no
    /// limit.
    pub fn reconcile_timeout(mut self, limit: Duration) -> Self {
        self.reconcile_timeout = (!limit.is_zero()).then_some(limit);
        self
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
    /// alike (see [`webhook`](crate::webhook)); [`Webhooks`](crate::webhook::Webhooks) builds one.
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
            warm_standby,
            reconcile_timeout,
        } = self;
        set_field_manager(&name)?;
        let serving = Serving {
            webhooks,
            metrics,
            concurrency,
            version,
            warm_standby,
            reconcile_timeout,
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
    warm_standby: bool,
    reconcile_timeout: Option<Duration>,
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
        warm_standby,
        reconcile_timeout,
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
    ctx.reconcile_timeout = reconcile_timeout;
    let shutdown = ctx.shutdown.clone();
    let kubernetes_version = check_api_server(&ctx.client, &kube_config).await?;
    ctx.metrics.set_build_info(&version, &kubernetes_version);

    let elector = match election {
        Some(config) => Some(LeaderElector::new(LeaseClient::new(&kube_config)?, config).await?),
        None => None,
    };

    let readiness = Readiness::default();
    let (health, metrics) = servers::bind(
        options.health_probe_bind_address,
        options.metrics_bind_address,
    )
    .await?;
    let metrics_tls = metrics_serving.certificates()?;
    let mut metrics_router = servers::metrics_router(ctx.metrics.clone());
    if metrics_tls.is_some() {
        metrics_router = MetricsAuth::new(ctx.client.clone()).protect(metrics_router);
    }
    let servers = ::tokio::spawn(servers::serve(
        (health, servers::health_router(readiness.clone())),
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
    let result = match elector {
        Some(elector) => run_elected(elector, ctx, warm_standby, controllers).await,
        None => {
            ctx.metrics.set_leader(true);
            start_controllers(ctx, controllers).await
        }
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

/// Runs the controllers with `elector`'s leader election: once this replica leads, or with
/// `warm` (a warm standby) at once, their reconciles held until it leads.
async fn run_elected<F, Fut>(
    elector: LeaderElector,
    mut ctx: Context,
    warm: bool,
    controllers: F,
) -> ::anyhow::Result<()>
where
    F: FnOnce(Context) -> Fut,
    Fut: Future<Output = ::anyhow::Result<()>>,
{
    let shutdown = ctx.shutdown.clone();
    let metrics = ctx.metrics.clone();
    if !warm {
        return elector
            .run(shutdown, || {
                metrics.set_leader(true);
                start_controllers(ctx, controllers)
            })
            .await;
    }
    ctx.leadership = Leadership::standby();
    let leadership = ctx.leadership.clone();
    let promote = move || {
        leadership.lead();
        metrics.set_leader(true);
    };
    elector
        .run_warm(shutdown, start_controllers(ctx, controllers), promote)
        .await
}

/// Says which namespaces the controllers watch, and starts them.
fn start_controllers<F, Fut>(ctx: Context, controllers: F) -> Fut
where
    F: FnOnce(Context) -> Fut,
{
    match &ctx.watch_namespace {
        Some(namespace) => info!(%namespace, "starting controllers"),
        None => info!("starting controllers for all namespaces"),
    }
    controllers(ctx)
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
    let webhook_options = webhook_server::Options::from_env()?;
    let certificates = match (&webhook_options.cert_dir, &webhook_options.cert_secret) {
        (Some(dir), _) => Certificates::from_dir(dir.clone()),
        (None, Some(secret)) => {
            let certificates = Certificates::managed();
            // The manager's own namespace in a Pod, the kubeconfig's under `make run`.
            let namespace = ::std::env::var("POD_NAMESPACE")
                .ok()
                .filter(|namespace| !namespace.is_empty())
                .unwrap_or_else(|| ctx.client.default_namespace().to_owned());
            ::tokio::spawn(certs::run(
                ctx.client.clone(),
                namespace,
                secret.clone(),
                certificates.clone(),
                shutdown.clone(),
            ));
            certificates
        }
        (None, None) => Certificates::local(webhook_server::local_cert_dir())?,
    };
    let webhook_server = ::tokio::spawn(webhook_server::serve(
        webhook_server::bind(webhook_options.bind_address).await?,
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
mod tests;
