use ::std::time::Duration;

use ::serde_json::json;
use ::tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use ::tokio::net::TcpStream;
use ::tokio_rustls::rustls;
use ::tokio_rustls::rustls::pki_types::CertificateDer;
use ::tokio_rustls::rustls::pki_types::pem::PemObject as _;

use super::*;
use crate::webhook::Webhooks;
use crate::webhook::tests::{Modes, config_map, review};

#[tokio::test]
async fn the_server_answers_reviews_over_tls() {
    let dir = ::std::env::temp_dir().join(format!("webhook-tls-{}", ::std::process::id()));
    let _ = ::std::fs::remove_dir_all(&dir);
    let certificates = Certificates::local(dir.clone()).unwrap();
    let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let router = Webhooks::new()
        .validation("/validate", Arc::new(Modes))
        .router();
    let server = ::tokio::spawn(serve(listener, router, certificates, shutdown.clone()));

    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&::std::fs::read(dir.join("tls.crt")).unwrap()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = ::tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = connector
        .connect(name, tcp)
        .await
        .expect("the local certificate is valid for localhost");
    let body = review("CREATE", config_map(json!({"mode": "slow", "owner": "me"})));
    let head = format!(
        "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    tls.write_all(&body).await.unwrap();
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""allowed":false"#), "{answer}");

    shutdown.cancel();
    ::tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("stops")
        .unwrap()
        .unwrap();
    let _ = ::std::fs::remove_dir_all(&dir);
}
