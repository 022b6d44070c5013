//! Each fault kind as the client sees it on the wire, `times`, and the control endpoints.

mod support;

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use aula_mock_llm::{start, Script};
use serde_json::{json, Value};
use support::*;

const LESSON: &str = "one two three four five six seven eight nine ten";

fn script(json: Value) -> Script {
    Script::from_json(&json.to_string(), "test script").unwrap()
}

fn openai_chat(addr: std::net::SocketAddr, content: &str) -> Answer {
    post_json(
        addr,
        "/v1/chat/completions",
        &[AUTH],
        &json!({"model": "gpt-4o-mini", "stream": true,
                "messages": [{"role": "user", "content": content}]}),
    )
}

fn text(answer: &Answer) -> String {
    text_of(&decode_openai(&answer.body))
}

#[test]
fn times_gives_429_once_then_the_reply() {
    let server = start(
        0,
        script(json!({"default": {"text": LESSON},
                      "faults": [{"times": 1, "http_error": {"status": 429, "retry_after_s": 2}}]})),
    )
    .unwrap();
    let first = openai_chat(server.addr(), "hi");
    assert_eq!(
        (first.status, first.header("retry-after")),
        (429, Some("2"))
    );
    assert_eq!(text(&openai_chat(server.addr(), "hi")), LESSON);
    assert_eq!(text(&openai_chat(server.addr(), "hi")), LESSON);
}

#[test]
fn a_rules_faults_count_only_its_own_requests() {
    let server = start(
        0,
        script(json!({"rules": [
            {"match": {"last_message_contains": "flaky"}, "reply": {"text": "ok"},
             "faults": [{"times": 2, "http_error": {"status": 500}}]}]})),
    )
    .unwrap();
    let addr = server.addr();
    assert_eq!(openai_chat(addr, "steady").status, 200);
    assert_eq!(openai_chat(addr, "flaky").status, 500);
    assert_eq!(openai_chat(addr, "steady").status, 200);
    assert_eq!(openai_chat(addr, "flaky").status, 500);
    assert_eq!(text(&openai_chat(addr, "flaky")), "ok");
}

#[test]
fn http_errors_take_each_vendors_shape_or_a_given_body() {
    let server = start(
        0,
        script(json!({"faults": [{"http_error": {"status": 529, "message": "Overloaded"}}]})),
    )
    .unwrap();
    let anthropic = post_json(
        server.addr(),
        "/v1/messages",
        ANTHROPIC,
        &json!({"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(anthropic.status, 529);
    assert_eq!(anthropic.json()["error"]["type"], "overloaded_error");
    let gemini = post_json(
        server.addr(),
        "/v1beta/models/g:generateContent",
        &[GEMINI_KEY],
        &json!({"contents": []}),
    );
    assert_eq!(gemini.json()["error"]["code"], 529);
    let ollama = post_json(
        server.addr(),
        "/api/chat",
        &[],
        &json!({"model": "m", "messages": []}),
    );
    assert_eq!(ollama.json(), json!({"error": "Overloaded"}));

    server.set_script(script(
        json!({"faults": [{"http_error": {"status": 503, "body": "upstream connect error"}}]}),
    ));
    let raw = openai_chat(server.addr(), "hi");
    assert_eq!(
        (raw.status, raw.text().as_str()),
        (503, "upstream connect error")
    );
}

#[test]
fn cut_after_bytes_leaves_a_partial_unterminated_body() {
    let server = start(
        0,
        script(json!({"default": {"text": LESSON}, "faults": [{"cut_after_bytes": 300}]})),
    )
    .unwrap();
    let answer = openai_chat(server.addr(), "hi");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body.len(), 300);
    assert!(!answer.complete);
}

#[test]
fn stall_pauses_the_stream_after_the_first_chunk() {
    let server = start(
        0,
        script(json!({"default": {"text": LESSON}, "faults": [{"stall_ms": 300}]})),
    )
    .unwrap();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]})
            .to_string();
    use std::io::Write;
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\n{AUTH}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(150)))
        .unwrap();
    let began = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0; 4096];
    // Read until the socket goes quiet: that is the stall.
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    let seen = String::from_utf8_lossy(&seen).into_owned();
    assert!(seen.contains("\"content\":\"one two three \""), "{seen}");
    assert!(!seen.contains("four"), "nothing after the first chunk yet");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).unwrap();
    assert!(String::from_utf8_lossy(&rest).contains("[DONE]"));
    assert!(began.elapsed() >= Duration::from_millis(300));
}

#[test]
fn stall_after_bytes_and_ttft_and_drip_slow_the_stream_down() {
    let cases = [
        (json!({"stall_ms": 200, "stall_after_bytes": 10}), 200),
        (json!({"ttft_ms": 200}), 200),
        // ten one-word chunks of about 1-2 tokens at 50 tokens/s
        (json!({"drip_tokens_per_s": 50.0}), 180),
    ];
    for (fault, at_least_ms) in cases {
        let server = start(
            0,
            script(json!({"default": {"text": LESSON}, "chunk_words": 1, "faults": [fault]})),
        )
        .unwrap();
        let began = Instant::now();
        assert_eq!(text(&openai_chat(server.addr(), "hi")), LESSON, "{fault}");
        assert!(
            began.elapsed() >= Duration::from_millis(at_least_ms),
            "{fault}: {:?}",
            began.elapsed()
        );
    }
}

#[test]
fn malformed_frame_is_one_broken_data_line_in_each_dialect() {
    let server = start(
        0,
        script(json!({"default": {"text": LESSON}, "faults": [{"malformed_frame": true}]})),
    )
    .unwrap();
    let openai = openai_chat(server.addr(), "hi");
    let broken = sse_frames(&openai.body)
        .iter()
        .filter(|f| !f.is_done_marker() && serde_json::from_str::<Value>(&f.data).is_err())
        .count();
    assert_eq!(broken, 1);
    let ollama = post_json(
        server.addr(),
        "/api/chat",
        &[],
        &json!({"model": "m", "messages": []}),
    );
    let broken = ollama
        .text()
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_err())
        .count();
    assert_eq!(broken, 1);
    assert!(
        ollama.text().contains("\"done\":true"),
        "the stream still finishes"
    );
}

#[test]
fn anthropic_stream_error_is_an_error_event() {
    let server = start(
        0,
        script(json!({"default": {"text": LESSON},
        "faults": [{"stream_error": {"message": "Overloaded", "after_chunks": 1}}]})),
    )
    .unwrap();
    let answer = post_json(
        server.addr(),
        "/v1/messages",
        ANTHROPIC,
        &json!({"model": "c", "max_tokens": 5, "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
    );
    let frames = sse_frames(&answer.body);
    let last = frames.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("error"));
    assert_eq!(
        serde_json::from_str::<Value>(&last.data).unwrap()["error"]["type"],
        "overloaded_error"
    );
    assert!(
        answer.complete,
        "the stream ends cleanly after the error event"
    );
}

#[test]
fn script_swap_changes_the_next_reply_and_a_bad_script_is_refused() {
    let server = start(0, Script::default()).unwrap();
    let swap = send(
        server.addr(),
        "POST",
        "/__script",
        &[],
        br#"{"rules": [{"match": {"dialect": "openai"}, "reply": {"text": "Swapped."}}]}"#,
    );
    assert_eq!(swap.status, 200);
    assert_eq!(text(&openai_chat(server.addr(), "hi")), "Swapped.");
    let bad = send(server.addr(), "POST", "/__script", &[], br#"{"rulez": []}"#);
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"].as_str().unwrap().contains("rulez"));
    assert_eq!(text(&openai_chat(server.addr(), "hi")), "Swapped.");
}

#[test]
fn requests_are_logged_with_tokens_and_without_keys_until_reset() {
    let server = start(
        0,
        script(json!({"default": {"text": "光合作用 is sugar."}})),
    )
    .unwrap();
    let addr = server.addr();
    openai_chat(addr, "What is light?");
    post_json(
        addr,
        "/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-secret",
        &[],
        &json!({"contents": [{"parts": [{"text": "光合作用"}]}]}),
    );
    let log = send(addr, "GET", "/__requests", &[], b"").json();
    let log = log.as_array().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["dialect"], "openai");
    assert_eq!(log[0]["model"], "gpt-4o-mini");
    assert_eq!(log[0]["input_tokens"], 4);
    // 4 CJK + " is sugar." (10 characters → 3)
    assert_eq!(log[0]["output_tokens"], 7);
    assert_eq!(log[0]["body"]["messages"][0]["content"], "What is light?");
    assert_eq!(log[1]["dialect"], "gemini");
    assert_eq!(log[1]["model"], "gemini-2.5-flash");
    assert_eq!(log[1]["input_tokens"], 4);
    let everything = serde_json::to_string(log).unwrap();
    assert!(
        !everything.contains("sk-test-mock") && !everything.contains("AIza-secret"),
        "{everything}"
    );
    assert!(everything.contains("[redacted]"));

    assert_eq!(send(addr, "POST", "/__reset", &[], b"").status, 200);
    assert_eq!(send(addr, "GET", "/__requests", &[], b"").json(), json!([]));
}

#[test]
fn oversized_requests_are_refused() {
    let server = start(0, Script::default()).unwrap();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    use std::io::Write;
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\n{AUTH}\r\nContent-Length: 999999999\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = stream.read_to_end(&mut raw);
    assert!(String::from_utf8_lossy(&raw).starts_with("HTTP/1.1 413"));
}
