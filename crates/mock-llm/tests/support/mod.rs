//! A tiny HTTP client over a raw socket, so tests see exactly the bytes the server sends.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use aula_providers::{OpenAiChatDecoder, SseDecoder, SseFrame, StreamEvent};

pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body with any chunked framing removed.
    pub body: Vec<u8>,
    /// Whether a chunked body ended with its terminating chunk.
    pub complete: bool,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn dechunk(raw: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    let mut rest = raw;
    loop {
        let Some(end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return (body, false);
        };
        let Ok(size) = usize::from_str_radix(String::from_utf8_lossy(&rest[..end]).trim(), 16)
        else {
            return (body, false);
        };
        if size == 0 {
            return (body, true);
        }
        let start = end + 2;
        if rest.len() < start + size {
            body.extend_from_slice(&rest[start..]);
            return (body, false);
        }
        body.extend_from_slice(&rest[start..start + size]);
        rest = rest.get(start + size + 2..).unwrap_or_default();
    }
}

pub fn send(addr: SocketAddr, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for h in headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut answer = Answer {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
        complete: true,
    };
    if answer.header("transfer-encoding") == Some("chunked") {
        let (body, complete) = dechunk(&answer.body);
        answer.body = body;
        answer.complete = complete;
    }
    answer
}

pub fn post_json(
    addr: SocketAddr,
    path: &str,
    headers: &[&str],
    body: &serde_json::Value,
) -> Answer {
    let mut all = vec!["Content-Type: application/json"];
    all.extend_from_slice(headers);
    send(addr, "POST", path, &all, body.to_string().as_bytes())
}

pub const AUTH: &str = "Authorization: Bearer sk-test-mock";
pub const ANTHROPIC: &[&str] = &["x-api-key: sk-ant-test", "anthropic-version: 2023-06-01"];
pub const GEMINI_KEY: &str = "x-goog-api-key: AIza-test";

/// SSE frames of a body, fed to Aula's decoder in small pieces.
pub fn sse_frames(body: &[u8]) -> Vec<SseFrame> {
    let mut sse = SseDecoder::new();
    let mut frames = Vec::new();
    for piece in body.chunks(7) {
        frames.extend(sse.push(piece));
    }
    frames.extend(sse.finish());
    frames
}

/// Decodes an OpenAI stream the way the app does.
pub fn decode_openai(body: &[u8]) -> Vec<StreamEvent> {
    let mut openai = OpenAiChatDecoder::new("mock-llm");
    let mut events = Vec::new();
    for frame in sse_frames(body) {
        events.extend(openai.decode(&frame));
    }
    events.extend(openai.finish());
    events
}

pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}
