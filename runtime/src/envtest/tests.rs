use ::std::net::TcpListener;

use ::anyhow::anyhow;

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
