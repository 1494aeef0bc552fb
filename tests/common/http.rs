//! HTTP on loopback: the endpoints of etcd and of a running operator, whose /metrics is
//! HTTPS with a self-signed certificate.

use std::time::Duration;

/// GET of a plain-HTTP URL on loopback: its status code and body, whatever the status.
pub fn http_get(url: &str) -> Result<(u16, String), ureq::Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut response = agent.get(url).call()?;
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string()?;
    Ok((status, body))
}

/// GET of an HTTPS URL on loopback, sending `token` as a bearer token if there is one, and
/// trusting whatever certificate the server has (the manager's self-signed one): its status
/// code and body, whatever the status.
pub fn https_get(url: &str, token: Option<&str>) -> Result<(u16, String), ureq::Error> {
    let tls = ureq::tls::TlsConfig::builder()
        .disable_verification(true)
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .tls_config(tls)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut request = agent.get(url);
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    let mut response = request.call()?;
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string()?;
    Ok((status, body))
}
