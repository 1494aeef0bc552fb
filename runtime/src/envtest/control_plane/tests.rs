use super::*;

#[test]
fn a_certificate_counts_as_written_once_whole_and_followed_by_its_key() {
    let dir = ::tempfile::tempdir().expect("a directory");
    let ca = dir.path().join("apiserver.crt");
    let key = dir.path().join("apiserver.key");
    let certificate = ::rcgen::generate_simple_self_signed(["localhost".to_owned()])
        .expect("a certificate")
        .cert
        .pem();

    assert!(certificate_written(&ca, &key).is_err(), "no file yet");
    // Created, nothing written yet: what a client that read it then would trust.
    ::std::fs::write(&ca, "").unwrap();
    assert!(certificate_written(&ca, &key).is_err(), "an empty file");
    ::std::fs::write(&ca, &certificate[..certificate.len() / 2]).unwrap();
    assert!(
        certificate_written(&ca, &key).is_err(),
        "half a certificate"
    );
    ::std::fs::write(&ca, &certificate).unwrap();
    assert!(certificate_written(&ca, &key).is_err(), "no key yet");
    ::std::fs::write(&key, "").unwrap();
    assert_eq!(certificate_written(&ca, &key), Ok(()));
}
