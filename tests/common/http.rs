//! Plain HTTP on loopback: the endpoints of etcd and of a running operator.

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
