//! A plain-HTTP GET on loopback, enough to ask etcd and the manager whether they are ready.

use std::{
    io::{Read as _, Write as _},
    net::TcpStream,
    time::Duration,
};

/// The status code of `GET path` at `127.0.0.1:port`, or `None` when nothing answers.
pub fn status(port: u16, path: &str) -> Option<u16> {
    let timeout = Duration::from_secs(2);
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&address, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 64];
    let read = stream.read(&mut head).ok()?;
    parse_status(&head[..read])
}

/// `HTTP/1.1 200 OK` → 200.
fn parse_status(head: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(head).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_status_line() {
        assert_eq!(
            parse_status(b"HTTP/1.1 503 Service Unavailable\r\n"),
            Some(503)
        );
        assert_eq!(parse_status(b"garbage"), None);
    }

    #[test]
    fn nothing_listening_is_none() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert_eq!(status(port, "/readyz"), None);
    }
}
