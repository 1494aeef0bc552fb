//! etcd and kube-apiserver started from the binaries in `KUBEBUILDER_ASSETS`, on free loopback
//! ports, in a temporary directory, with an administrator's client; each process killed with
//! its owner.

use ::std::fs::File;
use ::std::net::TcpListener;
use ::std::os::unix::process::CommandExt as _;
use ::std::path::{Path, PathBuf};
use ::std::process::{Child, Command, Stdio};
use ::std::time::{Duration, Instant};

use ::anyhow::{Context as _, anyhow, bail};
use ::kube::api::{Api, Patch, PatchParams};
use ::kube::config::{KubeConfigOptions, Kubeconfig};
use ::kube::{Client, Config};

use super::{
    ASSETS_VARIABLE, BINARIES, CustomResourceDefinition, FIELD_MANAGER, HOW_TO_GET_BINARIES,
    LOG_TAIL_LINES, Options, POLL_INTERVAL,
};

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
        let key = files.cert_dir.join("apiserver.key");
        api_server
            .wait_until("write its certificate", options.ready_timeout, async || {
                certificate_written(&ca, &key)
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
                    // With its causes: a failed connection says why (refused, or the TLS
                    // handshake) only there.
                    .map_err(|err| format!("{:#}", ::anyhow::Error::new(err)))
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

/// Whether the API server serves the CRD's kind.
fn established(crd: &CustomResourceDefinition) -> bool {
    let conditions = crd.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|conditions| {
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    })
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

/// Whether kube-apiserver has written its self-signed certificate `ca` whole: the client reads
/// it once, and one read while the file was still empty would fail every connection after.
/// kube-apiserver writes the certificate, then its `key`.
fn certificate_written(ca: &Path, key: &Path) -> Result<(), String> {
    let pem = ::std::fs::read_to_string(ca).map_err(|err| format!("{}: {err}", ca.display()))?;
    if !pem.trim_end().ends_with("-----END CERTIFICATE-----") {
        return Err(format!("{} is not written whole yet", ca.display()));
    }
    if !key.exists() {
        return Err(format!("no {}", key.display()));
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
mod tests;
