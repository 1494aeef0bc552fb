//! A stand-in for an OpenTelemetry collector on loopback: it accepts OTLP/HTTP exports in
//! JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) at `/v1/traces` and keeps their spans, for
//! the end-to-end test of a manager built with the `otel` feature.

use std::{
    collections::BTreeMap,
    io::{BufRead as _, BufReader, Read as _, Write as _},
    net::{TcpListener, TcpStream},
    sync::{Arc, Mutex, PoisonError},
};

use serde_json::Value;

/// One span received, with the service that sent it.
#[derive(Clone, Debug)]
pub struct Span {
    /// The `service.name` attribute of the exporting resource.
    pub service: String,
    pub name: String,
    pub span_id: String,
    /// The span it runs in; empty for a trace's root.
    pub parent_span_id: String,
    /// String attributes as they are; others in their JSON form.
    pub attributes: BTreeMap<String, String>,
}

pub struct Collector {
    endpoint: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Collector {
    /// Listens on a free loopback port, answering each connection on a thread of its own.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let received = Arc::clone(&spans);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let received = Arc::clone(&received);
                std::thread::spawn(move || {
                    if let Err(err) = serve(stream, &received) {
                        eprintln!("[otlp collector] {err}");
                    }
                });
            }
        });
        Self { endpoint, spans }
    }

    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` is set to (the exporter appends `/v1/traces`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Answers the requests of one keep-alive connection until the client closes it.
fn serve(stream: TcpStream, spans: &Mutex<Vec<Span>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let status = if request_line.starts_with("POST /v1/traces ") {
            match serde_json::from_slice::<Value>(&body) {
                Ok(export) => {
                    let received = spans_of(&export);
                    spans
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .extend(received);
                    "200 OK"
                }
                Err(_) => "400 Bad Request",
            }
        } else {
            "404 Not Found"
        };
        write!(
            writer,
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{{}}"
        )?;
    }
}

/// The spans of an `ExportTraceServiceRequest` in OTLP's JSON encoding.
fn spans_of(export: &Value) -> Vec<Span> {
    let mut spans = Vec::new();
    for resource_spans in array(&export["resourceSpans"]) {
        let service = attributes(&resource_spans["resource"]["attributes"])
            .remove("service.name")
            .unwrap_or_default();
        for scope_spans in array(&resource_spans["scopeSpans"]) {
            for span in array(&scope_spans["spans"]) {
                spans.push(Span {
                    service: service.clone(),
                    name: span["name"].as_str().unwrap_or_default().to_owned(),
                    span_id: span["spanId"].as_str().unwrap_or_default().to_owned(),
                    parent_span_id: span["parentSpanId"].as_str().unwrap_or_default().to_owned(),
                    attributes: attributes(&span["attributes"]),
                });
            }
        }
    }
    spans
}

fn array(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// OTLP's `[{"key": …, "value": {"stringValue": …}}]` as a map.
fn attributes(list: &Value) -> BTreeMap<String, String> {
    array(list)
        .iter()
        .filter_map(|kv| {
            let key = kv["key"].as_str()?.to_owned();
            let value = &kv["value"];
            let value = match value["stringValue"].as_str() {
                Some(text) => text.to_owned(),
                None => value.to_string(),
            };
            Some((key, value))
        })
        .collect()
}
