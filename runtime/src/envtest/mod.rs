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

use ::std::fs::File;
use ::std::future::Future;
use ::std::io::Write as _;
use ::std::marker::PhantomData;
use ::std::net::TcpListener;
use ::std::os::unix::process::CommandExt as _;
use ::std::path::{Path, PathBuf};
use ::std::process::{Child, Command, Stdio};
use ::std::time::{Duration, Instant};

use ::anyhow::{Context as _, anyhow, bail};
pub use ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use ::kube::api::{Api, Patch, PatchParams};
use ::kube::config::{KubeConfigOptions, Kubeconfig};
use ::kube::{Client, Config, Resource};
use ::tokio::task::JoinHandle;
use ::tokio_util::sync::CancellationToken;

use crate::context::{Context, KindScope, set_field_manager};

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
    /// [`field_manager`](crate::context::field_manager)).
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

/// etcd and kube-apiserver, and an administrator's client. Dropping it kills both and deletes
/// its directory.
pub struct ControlPlane {
    client: Client,
    // Fields drop in this order: the API server before etcd, both before their directory.
    api_server: Process,
    etcd: Process,
    dir: ::tempfile::TempDir,
}

impl ControlPlane {
    /// Starts etcd, then kube-apiserver, each waited for until ready at most
    /// `options.ready_timeout`.
    pub async fn start(options: &Options) -> ::anyhow::Result<Self> {
        check_binaries(&options.assets)?;
        let dir = ::tempfile::Builder::new()
            .prefix("envtest-")
            .tempdir()
            .context("cannot create the control plane's directory")?;
        let files = Files::write(dir.path())?;
        let [etcd_port, peer_port, free_port] = free_ports();
        let api_server_port = options.api_server_port.unwrap_or(free_port);
        let bin = |name: &str| options.assets.join(name);

        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let etcd_command = etcd_command(&bin("etcd"), dir.path(), &etcd_url, peer_port);
        let mut etcd = Process::start("etcd", etcd_command, dir.path())?;
        let health = format!("127.0.0.1:{etcd_port}");
        etcd.wait_until("serve clients", options.ready_timeout, async || {
            etcd_healthy(&health).await
        })
        .await?;

        let server = format!("https://127.0.0.1:{api_server_port}");
        let command = api_server_command(&bin("kube-apiserver"), &files, &etcd_url, &server);
        let mut api_server = Process::start("kube-apiserver", command, dir.path())?;
        // kube-apiserver writes its self-signed certificate first, which the client trusts.
        let ca = files.cert_dir.join("apiserver.crt");
        api_server
            .wait_until("write its certificate", options.ready_timeout, async || {
                if ca.exists() {
                    Ok(())
                } else {
                    Err(format!("no {}", ca.display()))
                }
            })
            .await?;
        let kubeconfig = dir.path().join("kubeconfig");
        write_kubeconfig(&kubeconfig, &server, &ca, &files.admin_token)?;
        let client = client(&kubeconfig).await?;
        api_server
            .wait_until("answer /readyz", options.ready_timeout, async || {
                let request = ::http::Request::get("/readyz").body(Vec::new());
                let request = request.map_err(|err| err.to_string())?;
                client
                    .request_text(request)
                    .await
                    .map(drop)
                    .map_err(|err| err.to_string())
            })
            .await?;
        Ok(Self {
            client,
            api_server,
            etcd,
            dir,
        })
    }

    /// A client with every right (an administrator's).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The control plane's directory: its logs, and a `kubeconfig` for `kubectl`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The process ids of etcd and kube-apiserver.
    pub fn process_ids(&self) -> [u32; 2] {
        [self.etcd.child.id(), self.api_server.child.id()]
    }

    /// Applies `crds` and waits until the API server serves them.
    pub async fn install_crds(
        &self,
        crds: &[CustomResourceDefinition],
        timeout: Duration,
    ) -> ::anyhow::Result<()> {
        let api: Api<CustomResourceDefinition> = Api::all(self.client());
        let params = PatchParams::apply(FIELD_MANAGER).force();
        for crd in crds {
            let name = crd.metadata.name.as_deref().unwrap_or_default();
            api.patch(name, &params, &Patch::Apply(crd))
                .await
                .with_context(|| format!("the API server refused the CRD {name}"))?;
        }
        let deadline = Instant::now() + timeout;
        for crd in crds {
            let name = crd.metadata.name.as_deref().unwrap_or_default();
            while !established(&api.get(name).await?) {
                if Instant::now() >= deadline {
                    bail!("the CRD {name} is not established after {timeout:?}");
                }
                ::tokio::time::sleep(POLL_INTERVAL).await;
            }
        }
        Ok(())
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

/// Whether the API server serves the CRD's kind.
fn established(crd: &CustomResourceDefinition) -> bool {
    let conditions = crd.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|conditions| {
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    })
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

/// Fails, naming the binary and how to get it, unless each binary answers `--version`.
pub fn check_binaries(assets: &Path) -> ::anyhow::Result<()> {
    for binary in BINARIES {
        let path = assets.join(binary);
        let problem = match Command::new(&path).arg("--version").output() {
            Err(err) => format!("cannot be run ({err})"),
            Ok(output) if !output.status.success() => format!(
                "fails `--version` ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
            Ok(_) => continue,
        };
        bail!(
            "{} in {ASSETS_VARIABLE} {problem}: {HOW_TO_GET_BINARIES}",
            path.display()
        );
    }
    Ok(())
}

/// `N` distinct ports free on 127.0.0.1, held together until they are returned.
fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1"))
        .collect();
    ::std::array::from_fn(|i| listeners[i].local_addr().expect("a bound port").port())
}

/// The files the API server reads, in the control plane's directory.
struct Files {
    /// Where kube-apiserver writes its self-signed serving certificate.
    cert_dir: PathBuf,
    /// Signs and verifies service-account tokens, which kube-apiserver requires.
    service_account_key: PathBuf,
    service_account_public_key: PathBuf,
    /// kube-apiserver's static tokens: the administrator's.
    token_file: PathBuf,
    admin_token: String,
}

impl Files {
    fn write(dir: &Path) -> ::anyhow::Result<Self> {
        let cert_dir = dir.join("certs");
        ::std::fs::create_dir(&cert_dir)?;
        let key = ::rcgen::KeyPair::generate().context("cannot generate a signing key")?;
        let service_account_key = dir.join("service-account.key");
        ::std::fs::write(&service_account_key, key.serialize_pem())?;
        let service_account_public_key = dir.join("service-account.pub");
        ::std::fs::write(&service_account_public_key, key.public_key_pem())?;
        // Random enough for a loopback server that lives as long as one test.
        let admin_token = ::std::iter::repeat_with(|| {
            use ::std::hash::BuildHasher as _;
            ::std::hash::RandomState::new().hash_one(0u8)
        })
        .take(2)
        .map(|half| format!("{half:016x}"))
        .collect::<String>();
        let token_file = dir.join("tokens.csv");
        // token,user,uid,"groups"
        let line = format!("{admin_token},admin,admin,\"system:masters\"\n");
        ::std::fs::write(&token_file, line)?;
        Ok(Self {
            cert_dir,
            service_account_key,
            service_account_public_key,
            token_file,
            admin_token,
        })
    }
}

fn etcd_command(binary: &Path, dir: &Path, client_url: &str, peer_port: u16) -> Command {
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let mut command = Command::new(binary);
    command
        .arg(format!("--data-dir={}", dir.join("etcd").display()))
        .arg(format!("--listen-client-urls={client_url}"))
        .arg(format!("--advertise-client-urls={client_url}"))
        // Never the default peer port, which another etcd may hold.
        .arg(format!("--listen-peer-urls={peer_url}"))
        .arg(format!("--initial-advertise-peer-urls={peer_url}"))
        .arg(format!("--initial-cluster=default={peer_url}"))
        // Test data need not survive a power cut; fsync would slow every write.
        .arg("--unsafe-no-fsync=true");
    command
}

/// `Ok` once etcd's `/health` at `address` says it is healthy.
async fn etcd_healthy(address: &str) -> Result<(), String> {
    use ::tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = ::tokio::net::TcpStream::connect(address)
        .await
        .map_err(|err| err.to_string())?;
    let request = format!("GET /health HTTP/1.0\r\nHost: {address}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|err| err.to_string())?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .map_err(|err| err.to_string())?;
    if response.contains("\"health\":\"true\"") {
        Ok(())
    } else {
        Err(response)
    }
}

fn api_server_command(binary: &Path, files: &Files, etcd_url: &str, server: &str) -> Command {
    let port = server.rsplit(':').next().unwrap_or_default();
    let mut command = Command::new(binary);
    command
        .arg(format!("--etcd-servers={etcd_url}"))
        .arg("--advertise-address=127.0.0.1")
        // Newer releases refuse a loopback address for the endpoints of the `kubernetes`
        // Service, which nothing here uses.
        .arg("--endpoint-reconciler-type=none")
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--secure-port={port}"))
        // No certificate given: it writes a self-signed one there.
        .arg(format!("--cert-dir={}", files.cert_dir.display()))
        .arg(format!("--token-auth-file={}", files.token_file.display()))
        .arg("--authorization-mode=RBAC")
        .arg(format!("--service-account-issuer={server}"))
        .arg(format!(
            "--service-account-key-file={}",
            files.service_account_public_key.display()
        ))
        .arg(format!(
            "--service-account-signing-key-file={}",
            files.service_account_key.display()
        ))
        .arg("--service-cluster-ip-range=10.0.0.0/24");
    command
}

fn write_kubeconfig(path: &Path, server: &str, ca: &Path, token: &str) -> ::anyhow::Result<()> {
    let kubeconfig = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: envtest
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: admin
  user:
    token: \"{token}\"
contexts:
- name: envtest
  context:
    cluster: envtest
    user: admin
current-context: envtest
",
        ca = ca.display()
    );
    ::std::fs::write(path, kubeconfig).with_context(|| format!("cannot write {}", path.display()))
}

async fn client(kubeconfig: &Path) -> ::anyhow::Result<Client> {
    let kubeconfig = Kubeconfig::read_from(kubeconfig)?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    Ok(Client::try_from(config)?)
}

/// A process of the control plane: its output goes to `<name>.log` in the control plane's
/// directory, and it never outlives its owner.
struct Process {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Process {
    /// Starts `command`. The kernel kills it if the thread that started it exits first
    /// (`PR_SET_PDEATHSIG`): a test killed midway leaves nothing running.
    fn start(name: &'static str, mut command: Command, dir: &Path) -> ::anyhow::Result<Self> {
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let parent = ::std::process::id() as ::libc::pid_t;
        // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
        // functions (prctl, getppid).
        unsafe {
            command.pre_exec(move || {
                if ::libc::prctl(::libc::PR_SET_PDEATHSIG, ::libc::SIGKILL) != 0 {
                    return Err(::std::io::Error::last_os_error());
                }
                // The parent died before the prctl, and will never send the signal.
                if ::libc::getppid() != parent {
                    return Err(::std::io::Error::other("the test process is gone"));
                }
                Ok(())
            });
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("cannot start {name}: {HOW_TO_GET_BINARIES}"))?;
        Ok(Self { name, child, log })
    }

    /// Waits until `ready` returns `Ok`, at most `timeout`. Fails at once if the process
    /// exits, and when time runs out; both errors quote what `ready` last said and the log.
    async fn wait_until(
        &mut self,
        what: &str,
        timeout: Duration,
        mut ready: impl AsyncFnMut() -> Result<(), String>,
    ) -> ::anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match ready().await {
                Ok(()) => return Ok(()),
                Err(last) => last,
            };
            let problem = if let Some(status) = self.child.try_wait()? {
                format!("exited ({status})")
            } else if Instant::now() >= deadline {
                format!("did not {what} within {timeout:?}")
            } else {
                ::tokio::time::sleep(POLL_INTERVAL).await;
                continue;
            };
            return Err(anyhow!(
                "{} {problem}; last seen: {last}\n{}",
                self.name,
                self.log_tail()
            ));
        }
    }

    /// The last lines of its log.
    fn log_tail(&self) -> String {
        let log = ::std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let start = lines.len().saturating_sub(LOG_TAIL_LINES);
        let tail = lines[start..].join("\n");
        format!("--- last lines of {}:\n{tail}", self.log.display())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The processes still running, of those given.
    fn running(ids: &[u32]) -> Vec<u32> {
        let alive = |id: &&u32| {
            let stat = ::std::fs::read_to_string(format!("/proc/{id}/stat")).unwrap_or_default();
            // A zombie (`Z`) has exited; a missing entry has been reaped.
            !stat.is_empty()
                && stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| !s.starts_with(" Z"))
        };
        ids.iter().filter(alive).copied().collect()
    }

    #[::tokio::test]
    #[should_panic(expected = "the controllers failed: a controller crashed: no CRD")]
    async fn a_crashing_controller_fails_the_wait_at_once() {
        let crash = async { Err(anyhow!("no CRD").context("a controller crashed")) };
        let mut controllers = Controllers::spawn(CancellationToken::new(), crash);
        // A wait that would last WAIT_TIMEOUT, and panic with another message.
        let never = async || Err::<(), _>("not yet".to_owned());
        controllers.wait_for("what never comes", never).await;
    }

    #[::tokio::test]
    async fn missing_binaries_are_named_with_how_to_get_them() {
        let empty = ::tempfile::tempdir().expect("a temporary directory");
        let err = ControlPlane::start(&Options::new(empty.path()))
            .await
            .err()
            .expect("no binaries, no control plane");
        let message = format!("{err:#}");
        assert!(message.contains("etcd in KUBEBUILDER_ASSETS"), "{message}");
        assert!(message.contains("cannot be run"), "{message}");
        assert!(message.contains("setup-envtest"), "{message}");
    }

    #[::tokio::test]
    async fn a_binary_that_is_not_one_is_named() {
        let dir = ::tempfile::tempdir().expect("a temporary directory");
        for binary in BINARIES {
            let path = dir.path().join(binary);
            ::std::fs::write(&path, "#!/bin/sh\necho 'not a control plane' >&2\nexit 3\n")
                .expect("a fake binary");
            let executable = ::std::os::unix::fs::PermissionsExt::from_mode(0o755);
            ::std::fs::set_permissions(&path, executable).expect("an executable");
        }
        let err = ControlPlane::start(&Options::new(dir.path()))
            .await
            .err()
            .expect("no working binaries, no control plane");
        let message = format!("{err:#}");
        assert!(message.contains("fails `--version`"), "{message}");
        assert!(message.contains("not a control plane"), "{message}");
    }

    #[::tokio::test]
    #[ignore = "needs a control plane: `make test-integration`"]
    async fn a_taken_port_fails_quickly_and_leaves_nothing_running() {
        let Some(mut options) = Options::from_env_or_skip() else {
            return;
        };
        let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
        options.api_server_port = Some(taken.local_addr().expect("its address").port());
        let started = Instant::now();
        let err = ControlPlane::start(&options)
            .await
            .err()
            .expect("the port is taken");
        let message = format!("{err:#}");
        assert!(message.contains("kube-apiserver exited"), "{message}");
        assert!(message.contains("address already in use"), "{message}");
        assert!(started.elapsed() < options.ready_timeout, "{message}");
    }

    #[::tokio::test]
    #[ignore = "needs a control plane: `make test-integration`"]
    async fn a_control_plane_never_ready_is_reported() {
        let Some(mut options) = Options::from_env_or_skip() else {
            return;
        };
        options.ready_timeout = Duration::ZERO;
        let err = ControlPlane::start(&options)
            .await
            .err()
            .expect("no time to get ready");
        let message = format!("{err:#}");
        assert!(
            message.contains("did not serve clients within 0ns"),
            "{message}"
        );
        assert!(message.contains("--- last lines of"), "{message}");
    }

    #[::tokio::test]
    #[ignore = "needs a control plane: `make test-integration`"]
    async fn dropping_the_environment_stops_every_process() {
        struct NoKinds;
        impl Project for NoKinds {
            const NAME: &'static str = "opgen-runtime";
            const ROOT: &'static str = env!("CARGO_MANIFEST_DIR");
            fn crds() -> ::anyhow::Result<Vec<CustomResourceDefinition>> {
                Ok(Vec::new())
            }
            async fn controllers(ctx: Context) -> ::anyhow::Result<()> {
                ctx.shutdown.cancelled().await;
                Ok(())
            }
        }
        let Some(env) = TestEnv::<NoKinds>::start().await else {
            return;
        };
        let ids = env.control_plane().process_ids();
        let dir = env.control_plane().dir().to_owned();
        assert_eq!(running(&ids), ids, "etcd and kube-apiserver run");
        drop(env);
        assert!(running(&ids).is_empty(), "every process is gone");
        assert!(!dir.exists(), "{} is deleted", dir.display());
    }
}
