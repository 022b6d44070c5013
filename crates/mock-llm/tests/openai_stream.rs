//! The mock, started in-process, spoken to over a raw TCP socket, and its OpenAI stream decoded
//! with Aula's own SSE and OpenAI decoders: what the browser app will see.

mod support;

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aula_mock_llm::{start, FaultSet, HttpError, Reply, Script, StreamError};
use aula_providers::{ProviderError, StopReason, StreamEvent};
use serde_json::json;
use support::*;

fn chat(addr: SocketAddr, stream: bool) -> Answer {
    post_json(
        addr,
        "/v1/chat/completions",
        &[AUTH],
        &json!({
            "model": "gpt-4o-mini",
            "stream": stream,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "system", "content": "Teach."}, {"role": "user", "content": "What is light?"}],
        }),
    )
}

fn with_fault(texts: &[&str], fault: FaultSet) -> Script {
    Script {
        faults: vec![fault],
        ..Script::replying(texts)
    }
}

const LESSON: &str = "Plants turn light into sugar. The green pigment, chlorophyll, catches \
                      the light — 光合作用 — and oxygen is what is left over.";

#[test]
fn streamed_reply_arrives_whole_through_the_apps_decoders() {
    let server = start(0, Script::replying(&[LESSON])).unwrap();
    let answer = chat(server.addr(), true);
    assert_eq!(answer.status, 200);
    assert!(answer.complete, "the chunked body ends properly");
    assert_eq!(
        answer.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
    let events = decode_openai(&answer.body);
    assert_eq!(text_of(&events), LESSON);
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count()
            > 5,
        "the reply is streamed in several chunks"
    );
    // "Teach." is 2 tokens and "What is light?" 4 by the documented estimate.
    assert!(events
        .iter()
        .any(|e| matches!(e, StreamEvent::Usage { input: 6, .. })));
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop_reason: Some(StopReason::EndTurn)
        })
    );
    let body = answer.text();
    assert!(body.contains("\"object\":\"chat.completion.chunk\""));
    assert!(
        body.contains("\"choices\":[],"),
        "a usage chunk with no choices"
    );
    assert!(body.ends_with("data: [DONE]\n\n"));
}

#[test]
fn usage_chunk_only_when_asked_for() {
    let server = start(0, Script::replying(&["Short."])).unwrap();
    let answer = post_json(
        server.addr(),
        "/v1/chat/completions",
        &[AUTH],
        &json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "Hi"}]}),
    );
    let body = answer.text();
    assert!(!body.contains("\"usage\""), "{body}");
    assert!(body.contains("\"finish_reason\":\"stop\""));
}

#[test]
fn each_request_gets_the_next_scripted_reply() {
    let server = start(0, Script::replying(&["First.", "Second."])).unwrap();
    let texts: Vec<String> = (0..3)
        .map(|_| text_of(&decode_openai(&chat(server.addr(), true).body)))
        .collect();
    assert_eq!(texts, ["First.", "Second.", "Second."]);
    assert_eq!(server.chat_requests(), 3);
}

#[test]
fn reasoning_streams_before_the_text() {
    let script = Script {
        default: Some(Reply::thinking(
            "Which colour does chlorophyll reflect?",
            "Green.",
        )),
        ..Script::default()
    };
    let server = start(0, script).unwrap();
    let answer = chat(server.addr(), true);
    assert!(answer
        .text()
        .contains("\"reasoning_content\":\"Which colour "));
    let events = decode_openai(&answer.body);
    let end = events
        .iter()
        .position(|e| *e == StreamEvent::ThinkingEnd)
        .expect("thinking ends");
    assert!(matches!(events[0], StreamEvent::ThinkingDelta(_)));
    assert_eq!(events[end + 1], StreamEvent::TextDelta("Green.".into()));
}

#[test]
fn non_streamed_request_gets_one_completion_object() {
    let server = start(0, Script::replying(&[LESSON])).unwrap();
    let answer = chat(server.addr(), false);
    assert_eq!(answer.status, 200);
    let json = answer.json();
    assert_eq!(json["object"], "chat.completion");
    assert_eq!(json["choices"][0]["message"]["content"], LESSON);
    assert_eq!(json["choices"][0]["finish_reason"], "stop");
    assert_eq!(json["usage"]["prompt_tokens"], 6);
}

#[test]
fn missing_or_rejected_key_gets_an_openai_shaped_401() {
    let server = start(0, Script::default()).unwrap();
    let body = json!({"model": "m", "stream": true, "messages": []});
    for (headers, code) in [
        (vec![], json!(null)),
        (
            vec!["Authorization: Bearer bad-key"],
            json!("invalid_api_key"),
        ),
    ] {
        let answer = post_json(server.addr(), "/v1/chat/completions", &headers, &body);
        assert_eq!(answer.status, 401);
        assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
        assert!(answer.json()["error"]["message"].is_string());
        assert_eq!(answer.json()["error"]["type"], "invalid_request_error");
        assert_eq!(answer.json()["error"]["code"], code);
    }
    assert_eq!(server.chat_requests(), 0);
}

#[test]
fn preflight_is_answered_with_cors_headers() {
    let server = start(0, Script::default()).unwrap();
    for path in [
        "/v1/chat/completions",
        "/v1/messages",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        "/api/chat",
    ] {
        let answer = send(
            server.addr(),
            "OPTIONS",
            path,
            &[
                "Origin: http://localhost:8080",
                "Access-Control-Request-Method: POST",
                "Access-Control-Request-Headers: authorization, content-type",
            ],
            b"",
        );
        assert_eq!(answer.status, 204);
        assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
        let allowed = answer
            .header("access-control-allow-headers")
            .unwrap_or_default();
        for header in [
            "authorization",
            "content-type",
            "x-api-key",
            "anthropic-version",
            "anthropic-dangerous-direct-browser-access",
            "x-goog-api-key",
        ] {
            assert!(allowed.contains(header), "{header} in {allowed}");
        }
        assert!(answer
            .header("access-control-allow-methods")
            .unwrap_or_default()
            .contains("POST"));
        assert!(answer
            .header("access-control-expose-headers")
            .unwrap_or_default()
            .contains("retry-after"));
    }
}

#[test]
fn health_says_ok() {
    let server = start(0, Script::default()).unwrap();
    let answer = send(server.addr(), "GET", "/health", &[], b"");
    assert_eq!(
        (answer.status, answer.body.as_slice()),
        (200, b"ok".as_slice())
    );
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
}

#[test]
fn unknown_paths_and_bad_json_get_openai_shaped_errors() {
    let server = start(0, Script::default()).unwrap();
    let answer = send(server.addr(), "GET", "/v1/models/x", &[AUTH], b"");
    assert_eq!(answer.status, 404);
    assert!(answer.json()["error"]["message"].is_string());
    let answer = send(
        server.addr(),
        "POST",
        "/v1/chat/completions",
        &[AUTH],
        b"{nope",
    );
    assert_eq!(answer.status, 400);
    let answer = post_json(
        server.addr(),
        "/v1/chat/completions",
        &[AUTH],
        &json!({"messages": []}),
    );
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json()["error"]["message"],
        "you must provide a model parameter"
    );
}

#[test]
fn scripted_http_error_is_sent_with_retry_after_and_read_by_the_app() {
    let fault = FaultSet {
        times: Some(1),
        http_error: Some(HttpError {
            status: 429,
            retry_after_s: Some(3),
            retry_after_ms: None,
            body: None,
            message: Some("Slow down.".into()),
        }),
        ..FaultSet::default()
    };
    let server = start(0, with_fault(&["Fine."], fault)).unwrap();
    let answer = chat(server.addr(), true);
    assert_eq!(answer.status, 429);
    assert_eq!(answer.header("retry-after"), Some("3"));
    assert_eq!(answer.json()["error"]["code"], "rate_limit_exceeded");
    let err = ProviderError::from_http(
        "mock-llm",
        "gpt-4o-mini",
        answer.status,
        &answer.headers,
        &answer.text(),
        "sk-test-mock",
    );
    assert_eq!(
        err,
        ProviderError::RateLimited {
            provider: "mock-llm".into(),
            retry_after_ms: Some(3000)
        }
    );
    assert_eq!(
        text_of(&decode_openai(&chat(server.addr(), true).body)),
        "Fine."
    );
}

#[test]
fn scripted_cut_is_seen_by_the_app_as_a_cut_stream() {
    let fault = FaultSet {
        cut_after_chunks: Some(2),
        ..FaultSet::default()
    };
    let server = start(0, with_fault(&[LESSON], fault)).unwrap();
    let answer = chat(server.addr(), true);
    assert!(!answer.complete, "the chunked body is left unterminated");
    let events = decode_openai(&answer.body);
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
fn scripted_stream_error_arrives_as_a_retryable_server_error() {
    let fault = FaultSet {
        stream_error: Some(StreamError {
            message: "The model is overloaded.".into(),
            after_chunks: 1,
        }),
        ..FaultSet::default()
    };
    let server = start(0, with_fault(&[LESSON], fault)).unwrap();
    let events = decode_openai(&chat(server.addr(), true).body);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Error(ProviderError::ServerError {
            provider: "mock-llm".into(),
            status: 500,
            message: "The model is overloaded.".into()
        }))
    );
}

#[test]
fn chunk_delay_spreads_the_stream_out() {
    let mut script = Script::replying(&["one two three four five six"]);
    script.chunk_words = 1;
    script.chunk_delay_ms = 15;
    let server = start(0, script).unwrap();
    let began = Instant::now();
    let events = decode_openai(&chat(server.addr(), true).body);
    // role chunk + 6 words + finish + usage + [DONE] = 10 pauses
    assert!(began.elapsed() >= Duration::from_millis(10 * 15));
    assert_eq!(text_of(&events), "one two three four five six");
}

#[test]
fn the_binary_prints_its_port_first_and_serves_the_script() {
    let dir = std::env::temp_dir().join(format!("mock-llm-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script_path = dir.join("script.json");
    std::fs::write(
        &script_path,
        r#"{"rules": [], "default": {"text": "Scripted from a file."}, "chunk_words": 2}"#,
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
            send(addr, "GET", "/health", &[], b"").status,
            text_of(&decode_openai(&chat(addr, true).body)),
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
    assert_eq!(send(server.addr(), "GET", "/health", &[], b"").status, 200);
}
