use super::*;

#[tokio::test]
async fn a_certificate_directory_is_ready_once_it_has_files_and_reloads_them() {
    let dir = ::std::env::temp_dir().join(format!("webhook-certs-{}", ::std::process::id()));
    let _ = ::std::fs::remove_dir_all(&dir);
    let waiting = Certificates::from_dir(dir.clone());
    assert!(!waiting.is_ready());

    let local = Certificates::local(dir.clone()).unwrap();
    assert!(local.is_ready());
    let first = ::std::fs::read(dir.join("tls.crt")).unwrap();
    // Made once: a second start keeps the certificate a development cluster trusts.
    Certificates::local(dir.clone()).unwrap();
    assert_eq!(::std::fs::read(dir.join("tls.crt")).unwrap(), first);

    let shutdown = CancellationToken::new();
    ::tokio::spawn(
        waiting
            .clone()
            .watch(Duration::from_millis(20), shutdown.clone()),
    );
    ::tokio::time::timeout(Duration::from_secs(5), waiting.ready())
        .await
        .expect("picked up");
    shutdown.cancel();
    ::std::fs::write(dir.join("tls.crt"), "garbage").unwrap();
    assert!(waiting.reload().is_err());
    assert!(
        waiting.is_ready(),
        "a bad renewal keeps the certificate there was"
    );
    let _ = ::std::fs::remove_dir_all(&dir);
}
