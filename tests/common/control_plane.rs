//! A Kubernetes control plane on loopback for tests: etcd, kube-apiserver and
//! kube-controller-manager, started from the binaries in `KUBEBUILDER_ASSETS` (the envtest
//! layout that `scripts/control-plane.sh` builds), in a temporary directory, on free ports.
//!
//! No kubelet and no scheduler: Deployments and StatefulSets get their ReplicaSets and pods
//! (the controller manager makes them), but no pod ever runs. The controller manager is there
//! for what the operators rely on: garbage collection of owned objects, workload status, the
//! `default` ServiceAccount of each namespace.
//!
//! Identities: an admin (a static token in group `system:masters`) for the test itself, and
//! service-account tokens (`kubectl create token`) signed with a key generated here, so that
//! an operator can run with exactly the RBAC its project generates.

use std::{
    hash::{BuildHasher, RandomState},
    net::TcpListener,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use anyhow::{Context as _, bail};

use super::{http::http_get, kubectl::Kubectl, process::Process};

/// The binaries of the control plane, as `KUBEBUILDER_ASSETS` holds them.
pub const BINARIES: [&str; 3] = ["etcd", "kube-apiserver", "kube-controller-manager"];

/// How to get the binaries, for every error about them.
const HOW_TO_GET_BINARIES: &str = "build them with `scripts/control-plane.sh` (Go and the Go \
     module proxy are all it needs; cached after the first run) and \
     `export KUBEBUILDER_ASSETS=$(scripts/control-plane.sh)`, or use `setup-envtest use -p path` \
     plus a kube-controller-manager of the same release";

/// The Kubernetes release tests run on unless they ask for another: the oldest one Kubernetes
/// still supports, which `opgen init` targets by default.
pub const DEFAULT_KUBERNETES: &str = "1.35";

/// The binaries of the default release; see [`assets_for`].
pub fn assets() -> anyhow::Result<PathBuf> {
    assets_for(DEFAULT_KUBERNETES)
}

/// The directory of the binaries of Kubernetes `minor` (`1.35`): `$KUBEBUILDER_ASSETS` if its
/// kube-apiserver is of that release, else what `scripts/control-plane.sh <minor>` prints (it
/// builds them once, then finds its cache in a second). Checked to hold working binaries.
pub fn assets_for(minor: &str) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("KUBEBUILDER_ASSETS").filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        check_assets(&dir)?;
        let release = release(&dir)?;
        if release.starts_with(&format!("v{minor}.")) {
            return Ok(dir);
        }
        eprintln!("KUBEBUILDER_ASSETS holds Kubernetes {release}; this test needs {minor}");
    }
    let dir = run_script(minor)?;
    check_assets(&dir)?;
    Ok(dir)
}

fn run_script(minor: &str) -> anyhow::Result<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/control-plane.sh");
    eprintln!(
        "running {} {minor} (a first build takes long; then it is cached)",
        script.display()
    );
    // Its progress goes to our stderr; its stdout is the directory.
    let output = Command::new("bash")
        .arg(&script)
        .arg(minor)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", script.display()))?;
    if !output.status.success() {
        bail!(
            "no Kubernetes {minor} in KUBEBUILDER_ASSETS, and `scripts/control-plane.sh {minor}` \
             failed ({}): see its messages above; {HOW_TO_GET_BINARIES}",
            output.status
        );
    }
    let dir = String::from_utf8(output.stdout)?.trim().to_owned();
    Ok(PathBuf::from(dir))
}

/// The release of the kube-apiserver in `dir`: `v1.35.4`.
fn release(dir: &Path) -> anyhow::Result<String> {
    let output = Command::new(dir.join("kube-apiserver"))
        .arg("--version")
        .output()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .find(|word| word.starts_with('v'))
        .map(str::to_owned)
        .with_context(|| {
            format!(
                "kube-apiserver --version in {} says {text:?}",
                dir.display()
            )
        })
}

/// Fails, naming the binary and how to get it, unless every binary in `dir` runs `--version`.
pub fn check_assets(dir: &Path) -> anyhow::Result<()> {
    for binary in BINARIES {
        let path = dir.join(binary);
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
            "{binary} in KUBEBUILDER_ASSETS={} {problem}: {HOW_TO_GET_BINARIES}",
            dir.display()
        );
    }
    Ok(())
}

/// `N` ports free on 127.0.0.1, all distinct: held open together until they are returned.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1"))
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// What a test may change about a control plane; the defaults are for real use.
pub struct Options {
    /// Directory holding the binaries.
    pub assets: PathBuf,
    /// Where the control plane's temporary directory is made.
    pub temp_parent: PathBuf,
    /// kube-apiserver's port instead of a free one.
    pub api_server_port: Option<u16>,
    /// An etcd to use instead of starting one.
    pub etcd_url: Option<String>,
    /// How long each process may take to become ready.
    pub ready_timeout: Duration,
    /// The Services' address range: a /24 holds 254 Services, enough for a test, not for a
    /// benchmark's thousands.
    pub service_cluster_ip_range: String,
    /// More kube-apiserver flags (an audit policy, say).
    pub api_server_args: Vec<String>,
}

impl Options {
    pub fn new(assets: PathBuf) -> Self {
        Self {
            assets,
            temp_parent: std::env::temp_dir(),
            api_server_port: None,
            etcd_url: None,
            // Generous: on a busy two-core machine kube-apiserver takes tens of seconds.
            ready_timeout: Duration::from_secs(120),
            service_cluster_ip_range: "10.0.0.0/24".to_owned(),
            api_server_args: Vec::new(),
        }
    }
}

/// A running control plane; dropping it stops every process and deletes its directory.
pub struct ControlPlane {
    // Stopped in this order (fields drop in declaration order), before `dir` is deleted.
    controller_manager: Process,
    api_server: Process,
    etcd: Option<Process>,
    admin: Kubectl,
    server: String,
    dir: tempfile::TempDir,
}

impl ControlPlane {
    /// Starts a control plane of Kubernetes `minor` (`1.35`); see [`assets_for`].
    pub fn start(minor: &str) -> anyhow::Result<Self> {
        Self::start_with(Options::new(assets_for(minor)?))
    }

    pub fn start_with(options: Options) -> anyhow::Result<Self> {
        check_assets(&options.assets)?;
        let dir = tempfile::Builder::new()
            .prefix("opgen-control-plane-")
            .tempdir_in(&options.temp_parent)
            .context("cannot create the control plane's directory")?;
        let files = Files::write(dir.path())?;
        let [etcd_port, etcd_peer_port, free_api_server_port] = free_ports();
        let api_server_port = options.api_server_port.unwrap_or(free_api_server_port);
        let server = format!("https://127.0.0.1:{api_server_port}");
        let bin = |name: &str| options.assets.join(name);

        let (etcd, etcd_url) = match &options.etcd_url {
            Some(url) => (None, url.clone()),
            None => {
                let url = format!("http://127.0.0.1:{etcd_port}");
                let mut etcd = Process::start(
                    "etcd",
                    etcd_command(&bin("etcd"), dir.path(), &url, etcd_peer_port),
                    &dir.path().join("etcd.log"),
                );
                etcd.wait_until("serve clients", options.ready_timeout, || {
                    etcd_healthy(&url)
                })?;
                (Some(etcd), url)
            }
        };

        let admin_kubeconfig = dir.path().join("admin.kubeconfig");
        write_kubeconfig(&admin_kubeconfig, &server, &files.ca, &files.admin_token)?;
        let admin = Kubectl::new(&admin_kubeconfig);
        let mut api_server_command = api_server_command(
            &bin("kube-apiserver"),
            &files,
            &etcd_url,
            api_server_port,
            &server,
        );
        api_server_command
            .arg(format!(
                "--service-cluster-ip-range={}",
                options.service_cluster_ip_range
            ))
            .args(&options.api_server_args);
        let mut api_server = Process::start(
            "kube-apiserver",
            api_server_command,
            &dir.path().join("kube-apiserver.log"),
        );
        api_server.wait_until("answer /readyz", options.ready_timeout, || {
            admin.try_ok(&["get", "--raw", "/readyz"]).map(drop)
        })?;

        let mut controller_manager = Process::start(
            "kube-controller-manager",
            controller_manager_command(&bin("kube-controller-manager"), &files, &admin_kubeconfig),
            &dir.path().join("kube-controller-manager.log"),
        );
        // Its service-account controller makes this; proof that its controllers run.
        controller_manager.wait_until(
            "create the default ServiceAccount",
            options.ready_timeout,
            || {
                admin
                    .try_ok(&["get", "serviceaccount", "default", "--namespace", "default"])
                    .map(drop)
            },
        )?;

        Ok(Self {
            controller_manager,
            api_server,
            etcd,
            admin,
            server,
            dir,
        })
    }

    /// The process ids of etcd (when it started one), kube-apiserver and
    /// kube-controller-manager, with their names.
    pub fn processes(&self) -> Vec<(&str, u32)> {
        let mut processes: Vec<&Process> = self.etcd.iter().collect();
        processes.extend([&self.api_server, &self.controller_manager]);
        processes.iter().map(|p| (p.name(), p.id())).collect()
    }

    /// `kubectl` as a cluster administrator.
    pub fn admin(&self) -> &Kubectl {
        &self.admin
    }

    /// The API server's URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The control plane's temporary directory, for a test's own files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a kubeconfig named `name` that authenticates with `token`, and returns its path.
    pub fn kubeconfig_with_token(&self, name: &str, token: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{name}.kubeconfig"));
        let ca = Files::ca(self.dir.path());
        write_kubeconfig(&path, &self.server, &ca, token.trim()).unwrap();
        path
    }

    /// Fails, quoting the log, if a process of the control plane has exited.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        if let Some(etcd) = &mut self.etcd {
            etcd.check_running()?;
        }
        self.api_server.check_running()?;
        self.controller_manager.check_running()
    }
}

/// The files the processes share, in the control plane's directory.
struct Files {
    /// Where kube-apiserver writes its self-signed serving certificate and key.
    cert_dir: PathBuf,
    /// That certificate (and its CA), which clients trust.
    ca: PathBuf,
    /// Signs service-account tokens (kube-apiserver, kube-controller-manager).
    service_account_key: PathBuf,
    /// Verifies them (kube-apiserver).
    service_account_public_key: PathBuf,
    /// kube-apiserver's static tokens: the admin's.
    token_file: PathBuf,
    admin_token: String,
}

impl Files {
    fn write(dir: &Path) -> anyhow::Result<Self> {
        let cert_dir = dir.join("certs");
        std::fs::create_dir(&cert_dir)?;
        let key = rcgen::KeyPair::generate().context("cannot generate a signing key")?;
        let service_account_key = dir.join("service-account.key");
        std::fs::write(&service_account_key, key.serialize_pem())?;
        let service_account_public_key = dir.join("service-account.pub");
        std::fs::write(&service_account_public_key, key.public_key_pem())?;
        let admin_token = random_token();
        let token_file = dir.join("tokens.csv");
        // token,user,uid,"groups"
        std::fs::write(
            &token_file,
            format!("{admin_token},admin,admin,\"system:masters\"\n"),
        )?;
        Ok(Self {
            ca: Self::ca(dir),
            cert_dir,
            service_account_key,
            service_account_public_key,
            token_file,
            admin_token,
        })
    }

    /// The certificate file kube-apiserver generates in its `--cert-dir`.
    fn ca(dir: &Path) -> PathBuf {
        dir.join("certs/apiserver.crt")
    }
}

/// 128 random bits in hex. `RandomState` is seeded from the operating system's randomness,
/// which is all a token for a loopback server that lives for one test needs.
fn random_token() -> String {
    (0..2)
        .map(|_| format!("{:016x}", RandomState::new().hash_one(0u8)))
        .collect()
}

fn etcd_command(binary: &Path, dir: &Path, client_url: &str, peer_port: u16) -> Command {
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let mut command = Command::new(binary);
    command
        .arg(format!("--data-dir={}", dir.join("etcd").display()))
        .arg(format!("--listen-client-urls={client_url}"))
        .arg(format!("--advertise-client-urls={client_url}"))
        // Never the default peer port 2380, which another etcd may hold.
        .arg(format!("--listen-peer-urls={peer_url}"))
        .arg(format!("--initial-advertise-peer-urls={peer_url}"))
        .arg(format!("--initial-cluster=default={peer_url}"))
        // Test data need not survive a power cut; fsync would slow every write.
        .arg("--unsafe-no-fsync=true");
    command
}

fn etcd_healthy(url: &str) -> Result<(), String> {
    let body = http_get(&format!("{url}/health"))
        .map(|(_, body)| body)
        .map_err(|err| err.to_string())?;
    if body.contains("\"health\":\"true\"") {
        Ok(())
    } else {
        Err(body)
    }
}

fn api_server_command(
    binary: &Path,
    files: &Files,
    etcd_url: &str,
    port: u16,
    server: &str,
) -> Command {
    let mut command = Command::new(binary);
    command
        .arg(format!("--etcd-servers={etcd_url}"))
        .arg("--advertise-address=127.0.0.1")
        // Newer releases refuse a loopback address for the endpoints of the `kubernetes`
        // Service, which nothing here uses.
        .arg("--endpoint-reconciler-type=none")
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--secure-port={port}"))
        // No certificate given: it generates a self-signed one here.
        .arg(format!("--cert-dir={}", files.cert_dir.display()))
        .arg(format!("--token-auth-file={}", files.token_file.display()))
        // The default, AlwaysAllow, would hide every missing RBAC rule.
        .arg("--authorization-mode=RBAC")
        .arg(format!("--service-account-issuer={server}"))
        .arg(format!(
            "--service-account-key-file={}",
            files.service_account_public_key.display()
        ))
        .arg(format!(
            "--service-account-signing-key-file={}",
            files.service_account_key.display()
        ));
    command
}

fn controller_manager_command(binary: &Path, files: &Files, kubeconfig: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        // It serves nothing the tests need, and a fixed default port would clash.
        .arg("--secure-port=0")
        .arg("--leader-elect=false")
        .arg(format!(
            "--service-account-private-key-file={}",
            files.service_account_key.display()
        ))
        .arg(format!("--root-ca-file={}", files.ca.display()));
    command
}

fn write_kubeconfig(path: &Path, server: &str, ca: &Path, token: &str) -> anyhow::Result<()> {
    let kubeconfig = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: test
  user:
    token: \"{token}\"
contexts:
- name: test
  context:
    cluster: test
    user: test
current-context: test
",
        ca = ca.display()
    );
    std::fs::write(path, kubeconfig).with_context(|| format!("cannot write {}", path.display()))
}
