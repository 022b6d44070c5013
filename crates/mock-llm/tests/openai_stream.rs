//! The mock, started in-process, spoken to over a raw TCP socket, and its stream decoded with
//! Aula's own SSE and OpenAI decoders: what the browser app will see.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aula_mock_llm::{start, Fault, Reply, Script};
use aula_providers::{OpenAiChatDecoder, ProviderError, SseDecoder, StopReason, StreamEvent};

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

fn send(addr: SocketAddr, method: &str, path: &str, headers: &[&str], body: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for h in headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
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
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

const AUTH: &str = "Authorization: Bearer sk-test-mock";

fn chat(addr: SocketAddr, stream: bool) -> Answer {
    let body = serde_json::json!({
        "model": "gpt-4o-mini",
        "stream": stream,
        "messages": [{"role": "system", "content": "Teach."}, {"role": "user", "content": "What is light?"}],
    })
    .to_string();
    send(
        addr,
        "POST",
        "/v1/chat/completions",
        &[AUTH, "Content-Type: application/json"],
        &body,
    )
}

/// Decodes a streamed body the way the app does, feeding it in small pieces.
fn decode(body: &[u8]) -> Vec<StreamEvent> {
    let mut sse = SseDecoder::new();
    let mut openai = OpenAiChatDecoder::new("mock-llm");
    let mut events = Vec::new();
    for piece in body.chunks(5) {
        for frame in sse.push(piece) {
            events.extend(openai.decode(&frame));
        }
    }
    if let Some(frame) = sse.finish() {
        events.extend(openai.decode(&frame));
    }
    events.extend(openai.finish());
    events
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn script(texts: &[&str]) -> Script {
    Script {
        replies: texts
            .iter()
            .map(|t| Reply {
                text: t.to_string(),
                reasoning: None,
            })
            .collect(),
        ..Script::default()
    }
}

const LESSON: &str = "Plants turn light into sugar. The green pigment, chlorophyll, catches \
                      the light — 光合作用 — and oxygen is what is left over.";

#[test]
fn streamed_reply_arrives_whole_through_the_apps_decoders() {
    let server = start(0, script(&[LESSON])).unwrap();
    let answer = chat(server.addr(), true);
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
    let events = decode(&answer.body);
    assert_eq!(text_of(&events), LESSON);
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count()
            > 5,
        "the reply is streamed in several chunks"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, StreamEvent::Usage { input: 4, .. })));
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop_reason: Some(StopReason::EndTurn)
        })
    );
    let body = String::from_utf8_lossy(&answer.body);
    assert!(body.contains("\"object\":\"chat.completion.chunk\""));
    assert!(body.ends_with("data: [DONE]\n\n"));
}

#[test]
fn each_request_gets_the_next_scripted_reply() {
    let server = start(0, script(&["First.", "Second."])).unwrap();
    let texts: Vec<String> = (0..3)
        .map(|_| text_of(&decode(&chat(server.addr(), true).body)))
        .collect();
    assert_eq!(texts, ["First.", "Second.", "Second."]);
    assert_eq!(server.chat_requests(), 3);
}

#[test]
fn reasoning_streams_before_the_text() {
    let mut s = script(&["Green."]);
    s.replies[0].reasoning = Some("Which colour does chlorophyll reflect?".into());
    let server = start(0, s).unwrap();
    let events = decode(&chat(server.addr(), true).body);
    let end = events
        .iter()
        .position(|e| *e == StreamEvent::ThinkingEnd)
        .expect("thinking ends");
    assert!(matches!(events[0], StreamEvent::ThinkingDelta(_)));
    assert_eq!(events[end + 1], StreamEvent::TextDelta("Green.".into()));
}

#[test]
fn non_streamed_request_gets_one_completion_object() {
    let server = start(0, script(&[LESSON])).unwrap();
    let answer = chat(server.addr(), false);
    assert_eq!(answer.status, 200);
    let json = answer.json();
    assert_eq!(json["object"], "chat.completion");
    assert_eq!(json["choices"][0]["message"]["content"], LESSON);
    assert_eq!(json["choices"][0]["finish_reason"], "stop");
}

#[test]
fn missing_or_rejected_key_gets_an_openai_shaped_401() {
    let server = start(0, Script::default()).unwrap();
    let body = r#"{"model":"m","stream":true,"messages":[]}"#;
    for headers in [vec![], vec!["Authorization: Bearer bad-key"]] {
        let answer = send(
            server.addr(),
            "POST",
            "/v1/chat/completions",
            &headers,
            body,
        );
        assert_eq!(answer.status, 401);
        assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
        assert!(answer.json()["error"]["message"].is_string());
        assert_eq!(answer.json()["error"]["type"], "invalid_request_error");
    }
    assert_eq!(server.chat_requests(), 0);
}

#[test]
fn preflight_is_answered_with_cors_headers() {
    let server = start(0, Script::default()).unwrap();
    let answer = send(
        server.addr(),
        "OPTIONS",
        "/v1/chat/completions",
        &[
            "Origin: http://localhost:8080",
            "Access-Control-Request-Method: POST",
            "Access-Control-Request-Headers: authorization, content-type",
        ],
        "",
    );
    assert_eq!(answer.status, 204);
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
    let allowed = answer
        .header("access-control-allow-headers")
        .unwrap_or_default();
    assert!(allowed.contains("authorization") && allowed.contains("content-type"));
    assert!(answer
        .header("access-control-allow-methods")
        .unwrap_or_default()
        .contains("POST"));
}

#[test]
fn health_says_ok() {
    let server = start(0, Script::default()).unwrap();
    let answer = send(server.addr(), "GET", "/health", &[], "");
    assert_eq!(
        (answer.status, answer.body.as_slice()),
        (200, b"ok".as_slice())
    );
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
}

#[test]
fn unknown_paths_and_bad_json_get_openai_shaped_errors() {
    let server = start(0, Script::default()).unwrap();
    let answer = send(server.addr(), "GET", "/v1/models/x", &[AUTH], "");
    assert_eq!(answer.status, 404);
    assert!(answer.json()["error"]["message"].is_string());
    let answer = send(
        server.addr(),
        "POST",
        "/v1/chat/completions",
        &[AUTH],
        "{nope",
    );
    assert_eq!(answer.status, 400);
}

#[test]
fn scripted_http_error_is_sent_with_retry_after() {
    let mut s = script(&["Fine."]);
    s.faults.push(Fault::HttpError {
        request: Some(1),
        status: 429,
        message: "Slow down.".into(),
        retry_after_s: Some(3),
    });
    let server = start(0, s).unwrap();
    let answer = chat(server.addr(), true);
    assert_eq!(answer.status, 429);
    assert_eq!(answer.header("retry-after"), Some("3"));
    let headers = answer.headers.clone();
    let err = ProviderError::from_http(
        "mock-llm",
        "gpt-4o-mini",
        answer.status,
        &headers,
        &String::from_utf8_lossy(&answer.body),
        "sk-test-mock",
    );
    assert_eq!(
        err,
        ProviderError::RateLimited {
            provider: "mock-llm".into(),
            retry_after_ms: Some(3000)
        }
    );
    assert_eq!(text_of(&decode(&chat(server.addr(), true).body)), "Fine.");
}

#[test]
fn scripted_cut_stream_is_seen_as_a_cut_stream() {
    let mut s = script(&[LESSON]);
    s.faults.push(Fault::CutStream {
        request: None,
        after_chunks: 2,
    });
    let server = start(0, s).unwrap();
    let events = decode(&chat(server.addr(), true).body);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count(),
        2
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Error(ProviderError::StreamCut {
            provider: "mock-llm".into()
        }))
    );
}

#[test]
fn scripted_stream_error_arrives_as_an_error_event() {
    let mut s = script(&[LESSON]);
    s.faults.push(Fault::StreamError {
        request: None,
        after_chunks: 1,
        message: "The model is overloaded.".into(),
    });
    let server = start(0, s).unwrap();
    let events = decode(&chat(server.addr(), true).body);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Error(ProviderError::Upstream {
            provider: "mock-llm".into(),
            message: "The model is overloaded.".into()
        }))
    );
}

#[test]
fn chunk_delay_spreads_the_stream_out() {
    let mut s = script(&["one two three four five six"]);
    s.chunk_words = 1;
    s.chunk_delay_ms = 15;
    let server = start(0, s).unwrap();
    let began = Instant::now();
    let events = decode(&chat(server.addr(), true).body);
    // role chunk + 6 words + finish + [DONE] = 9 pauses
    assert!(began.elapsed() >= Duration::from_millis(9 * 15));
    assert_eq!(text_of(&events), "one two three four five six");
}

#[test]
fn the_binary_prints_its_port_first_and_serves_the_script() {
    let dir = std::env::temp_dir().join(format!("mock-llm-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script_path = dir.join("script.json");
    std::fs::write(
        &script_path,
        r#"{"replies": [{"text": "Scripted from a file."}], "chunk_words": 2}"#,
    )
    .unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .args(["--port", "0", "--script"])
        .arg(&script_path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first_line = String::new();
    if let Some(stdout) = child.stdout.take() {
        BufReader::new(stdout).read_line(&mut first_line).unwrap();
    }
    let addr: Option<SocketAddr> = first_line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|a| a.parse().ok());
    let outcome = addr.map(|addr| {
        (
            send(addr, "GET", "/health", &[], "").status,
            text_of(&decode(&chat(addr, true).body)),
        )
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);

    assert!(
        first_line.starts_with("listening on 127.0.0.1:"),
        "{first_line:?}"
    );
    assert_eq!(outcome, Some((200, "Scripted from a file.".to_string())));
}

#[test]
fn a_bad_script_file_stops_the_binary_with_a_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .args(["--script", "/nonexistent/script.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/script.json"));
}

#[test]
fn a_connection_that_sends_nothing_gets_no_stray_answer() {
    let server = start(0, Script::default()).unwrap();
    let mut idle = TcpStream::connect(server.addr()).unwrap();
    idle.shutdown(std::net::Shutdown::Write).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut raw = Vec::new();
    idle.read_to_end(&mut raw).unwrap();
    assert!(raw.is_empty(), "{:?}", String::from_utf8_lossy(&raw));
    assert_eq!(send(server.addr(), "GET", "/health", &[], "").status, 200);
}
