//! A Kubernetes control plane for a project's integration tests (feature `envtest`), as
//! controller-runtime's envtest gives a Kubebuilder project: etcd and kube-apiserver started
//! from the binaries in `KUBEBUILDER_ASSETS`, on free loopback ports, in a temporary
//! directory; the project's CRDs installed from its Rust types (what `crdgen` prints), with
//! the other projects' CRDs it stores under `config/external/`; its controllers running in the
//! test's process. The project says what those are by implementing [`Project`]. Every
//! process is killed when the [`TestEnv`] is dropped, also when a test fails or panics, and by
//! the kernel if the test process itself is killed.
//!
//! Get the binaries once, then export the variable (see the project's README):
//!
//! - with internet access, `setup-envtest use -p path <version>.x` (from controller-runtime);
//! - from source, through the Go module proxy alone, opgen's `scripts/control-plane.sh`.
//!
//! Without the variable a test prints that it was skipped and how to get them, and passes.
//! No kube-controller-manager, scheduler or kubelet runs: what the controllers create is
//! stored, but no pod runs, no workload reports progress and nothing is garbage-collected.

mod control_plane;

use ::std::future::Future;
use ::std::io::Write as _;
use ::std::marker::PhantomData;
use ::std::path::{Path, PathBuf};
use ::std::time::{Duration, Instant};

use ::anyhow::Context as _;
pub use ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use ::kube::api::Api;
use ::kube::{Client, Resource};
use ::tokio::task::JoinHandle;
use ::tokio_util::sync::CancellationToken;

pub use self::control_plane::{ControlPlane, check_binaries};
use crate::client::Context;
use crate::identity::set_field_manager;
use crate::object::KindScope;

/// The environment variable naming the directory of the binaries, as envtest tooling sets it.
pub const ASSETS_VARIABLE: &str = "KUBEBUILDER_ASSETS";
/// The binaries a control plane needs from that directory.
pub const BINARIES: [&str; 2] = ["etcd", "kube-apiserver"];
/// The namespace tests create their objects in.
pub const NAMESPACE: &str = "default";

/// How long a test waits for what it expects from the controllers.
const WAIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a wait checks again.
const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// How many lines of a process's log an error quotes.
const LOG_TAIL_LINES: usize = 30;
/// Field manager of the CRDs the harness installs.
const FIELD_MANAGER: &str = "envtest";

/// How to get the binaries, for every message about them.
const HOW_TO_GET_BINARIES: &str = "get etcd and kube-apiserver with `setup-envtest use -p path \
     <version>.x` (controller-runtime's tool, which downloads them) or build them from source with \
     opgen's `scripts/control-plane.sh`, then `export KUBEBUILDER_ASSETS=<their directory>`";

/// What may change about a control plane; [`Options::new`] gives the defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// The directory holding `etcd` and `kube-apiserver`.
    pub assets: PathBuf,
    /// kube-apiserver's port; a free one when `None`.
    pub api_server_port: Option<u16>,
    /// How long each process may take to become ready. Generous: on a busy two-core machine
    /// kube-apiserver takes tens of seconds.
    pub ready_timeout: Duration,
}

impl Options {
    /// The defaults, for the binaries in `assets`.
    pub fn new(assets: impl Into<PathBuf>) -> Self {
        Self {
            assets: assets.into(),
            api_server_port: None,
            ready_timeout: Duration::from_secs(90),
        }
    }

    /// The options for the binaries in `KUBEBUILDER_ASSETS`. When it is unset, prints that
    /// the test is skipped and how to get the binaries, and returns `None`.
    pub fn from_env_or_skip() -> Option<Self> {
        if let Some(assets) = ::std::env::var_os(ASSETS_VARIABLE).filter(|dir| !dir.is_empty()) {
            return Some(Self::new(assets));
        }
        // Straight to stderr: the test harness captures `eprintln!` of passing tests, and a
        // skip must never look like a silent pass.
        let _ = writeln!(
            ::std::io::stderr(),
            "skipped: {ASSETS_VARIABLE} is not set, so there is no control plane to test \
             against; {HOW_TO_GET_BINARIES}"
        );
        None
    }
}

/// What the harness starts for a project: its CRDs and its controllers. A project implements
/// it once for its integration tests (opgen generates that) and calls `TestEnv<Itself>`
/// `TestEnv`:
///
/// ```
/// use opgen_runtime::Context;
/// use opgen_runtime::envtest::{self, CustomResourceDefinition};
///
/// pub struct Project;
///
/// impl envtest::Project for Project {
///     const NAME: &'static str = env!("CARGO_PKG_NAME");
///     const ROOT: &'static str = env!("CARGO_MANIFEST_DIR");
///
///     fn crds() -> anyhow::Result<Vec<CustomResourceDefinition>> {
///         Ok(Vec::new()) // the api crate's `all_crds()`
///     }
///
///     async fn controllers(ctx: Context) -> anyhow::Result<()> {
///         ctx.shutdown.cancelled().await; // the project's `controllers::run(ctx)`
///         Ok(())
///     }
/// }
///
/// pub type TestEnv = envtest::TestEnv<Project>;
/// ```
pub trait Project: 'static {
    /// The project's name: the manager's (see
    /// [`field_manager`](crate::field_manager)).
    const NAME: &'static str;
    /// The project's directory, whose `config/external/` holds the other projects' CRDs that
    /// its controllers watch: its `CARGO_MANIFEST_DIR`.
    const ROOT: &'static str;

    /// The CRDs of the project's own kinds.
    fn crds() -> ::anyhow::Result<Vec<CustomResourceDefinition>>;

    /// Runs every controller of the project until `ctx.shutdown` is cancelled.
    fn controllers(ctx: Context) -> impl Future<Output = ::anyhow::Result<()>> + Send + 'static;
}

/// A control plane with the project's CRDs and its controllers running: what a test needs.
/// Dropping it stops the controllers, then the control plane.
pub struct TestEnv<P: Project> {
    controllers: Controllers,
    control_plane: ControlPlane,
    project: PhantomData<fn() -> P>,
}

impl<P: Project> TestEnv<P> {
    /// Starts a control plane from `KUBEBUILDER_ASSETS`, installs the CRDs and runs the
    /// controllers. Without `KUBEBUILDER_ASSETS` it prints that the test is skipped, and how to
    /// get the binaries, and returns `None`. Panics, saying why, if anything fails.
    pub async fn start() -> Option<Self> {
        let options = Options::from_env_or_skip()?;
        match Self::start_with(&options).await {
            Ok(env) => Some(env),
            Err(err) => panic!("cannot start the test environment: {err:#}"),
        }
    }

    /// Starts a control plane as `options` say, installs the CRDs and runs the controllers.
    pub async fn start_with(options: &Options) -> ::anyhow::Result<Self> {
        init_logging();
        set_field_manager(P::NAME)?;
        let mut crds = P::crds().context("cannot build the CRDs")?;
        crds.extend(external_crds(Path::new(P::ROOT))?);
        let control_plane = ControlPlane::start(options).await?;
        control_plane
            .install_crds(&crds, options.ready_timeout)
            .await?;
        let ctx = Context::new(control_plane.client(), None);
        let shutdown = ctx.shutdown.clone();
        Ok(Self {
            controllers: Controllers::spawn(shutdown, P::controllers(ctx)),
            control_plane,
            project: PhantomData,
        })
    }

    /// A client with every right (an administrator's).
    pub fn client(&self) -> Client {
        self.control_plane.client()
    }

    /// The API of the `K` objects the tests make: in [`NAMESPACE`], unless `K` is
    /// cluster-scoped.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope: KindScope>,
    {
        K::Scope::watched(self.client(), Some(NAMESPACE))
    }

    /// The control plane the controllers run against.
    pub fn control_plane(&self) -> &ControlPlane {
        &self.control_plane
    }

    /// Calls `check` until it returns `Ok`, and returns that value. Panics with `what` and
    /// what `check` last returned if that takes longer than 30 s, and at once,
    /// with their error, if the controllers stop.
    pub async fn wait_for<T>(
        &mut self,
        what: &str,
        check: impl AsyncFnMut() -> Result<T, String>,
    ) -> T {
        self.controllers.wait_for(what, check).await
    }
}

/// The controllers, running in the test's process until they are dropped.
struct Controllers {
    shutdown: CancellationToken,
    running: Option<JoinHandle<::anyhow::Result<()>>>,
}

impl Controllers {
    /// Runs `controllers`, which stop when `shutdown` is cancelled.
    fn spawn(
        shutdown: CancellationToken,
        controllers: impl Future<Output = ::anyhow::Result<()>> + Send + 'static,
    ) -> Self {
        Self {
            shutdown,
            running: Some(::tokio::spawn(controllers)),
        }
    }

    /// See [`TestEnv::wait_for`].
    async fn wait_for<T>(
        &mut self,
        what: &str,
        mut check: impl AsyncFnMut() -> Result<T, String>,
    ) -> T {
        let deadline = Instant::now() + WAIT_TIMEOUT;
        loop {
            self.check().await;
            let last = match check().await {
                Ok(value) => return value,
                Err(last) => last,
            };
            if Instant::now() >= deadline {
                panic!("waited {WAIT_TIMEOUT:?} for {what}; last seen: {last}");
            }
            ::tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// Panics with the controllers' error if they have stopped.
    async fn check(&mut self) {
        let Some(running) = self.running.take_if(|running| running.is_finished()) else {
            return;
        };
        match running.await {
            Ok(Ok(())) => panic!("the controllers stopped before the test ended"),
            Ok(Err(err)) => panic!("the controllers failed: {err:#}"),
            Err(err) => panic!("the controllers panicked: {err}"),
        }
    }
}

impl Drop for Controllers {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(running) = self.running.take() {
            running.abort();
        }
    }
}

/// The CRDs of other projects' kinds that the project has controllers for, as `create api
/// --external-crd` stored them under `config/external/`: a cluster has them installed by
/// their own project, and their controllers need them served.
fn external_crds(root: &Path) -> ::anyhow::Result<Vec<CustomResourceDefinition>> {
    let dir = root.join("config/external");
    let Ok(entries) = ::std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut crds = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "yaml") {
            let text = ::std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let crd = ::serde_saphyr::from_str(&text)
                .with_context(|| format!("{} is not a CRD", path.display()))?;
            crds.push(crd);
        }
    }
    Ok(crds)
}

/// Logs of the controllers, shown for a failing test: `RUST_LOG` filters them (default
/// `info`). Only the first call in a test process sets it up.
fn init_logging() {
    let filter = ::tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| ::tracing_subscriber::EnvFilter::new("info"));
    let _ = ::tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}

#[cfg(test)]
mod tests;
