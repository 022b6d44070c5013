//! The mock behaving like a local llama.cpp (or Ollama) server on a small CPU: slots that
//! queue requests, a context that refuses long prompts and cuts long replies, `max_tokens`,
//! a prompt that takes time to read, `GET /props` and `POST /api/show`; over real sockets.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use aula_mock_llm::{start, Script};
use serde_json::{json, Value};
use support::*;

/// 31 words, 172 characters: 43 tokens.
const LESSON: &str = "Plants turn light into sugar. The green pigment, chlorophyll, catches the \
                      light, and the leaf keeps the energy in sugar while oxygen is what is left \
                      over for us to breathe.";

fn script(json: Value) -> Script {
    Script::from_json(&json.to_string(), "test script").unwrap()
}

fn openai_body(content: &str, stream: bool) -> Value {
    json!({"model": "qwen2.5-7b-instruct", "stream": stream,
           "messages": [{"role": "user", "content": content}]})
}

fn openai_chat(addr: SocketAddr, content: &str) -> Answer {
    post_json(
        addr,
        "/v1/chat/completions",
        &[AUTH],
        &openai_body(content, true),
    )
}

fn log(addr: SocketAddr) -> Vec<Value> {
    let log = send(addr, "GET", "/__requests", &[], b"").json();
    log.as_array().cloned().unwrap_or_default()
}

/// The log's chat requests, by chat number.
fn chats(addr: SocketAddr) -> Vec<Value> {
    let mut chats: Vec<Value> = log(addr)
        .into_iter()
        .filter(|r| r["chat_number"].is_u64())
        .collect();
    chats.sort_by_key(|r| r["chat_number"].as_u64());
    chats
}

/// Waits until the log shows what `done` looks for (a test fails after ten seconds).
fn wait_until(addr: SocketAddr, what: &str, done: impl Fn(&[Value]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(&chats(addr)) {
        assert!(Instant::now() < deadline, "gave up waiting until {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

fn ms(entry: &Value, field: &str) -> u64 {
    entry[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no {field} in {entry}"))
}

/// Sends a chat request on a raw socket and returns it unread.
fn open_chat(addr: SocketAddr, content: &str) -> TcpStream {
    let body = openai_body(content, true).to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\n{AUTH}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

/// Whether the socket stays silent for `time`.
fn silent_for(stream: &mut TcpStream, time: Duration) -> bool {
    stream.set_read_timeout(Some(time)).unwrap();
    let mut byte = [0u8; 1];
    matches!(stream.read(&mut byte), Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut))
}

/// A slow local server: one-word chunks at 100 tokens per second, about half a second a reply.
fn slow(slots: usize) -> Script {
    script(
        json!({"default": {"text": LESSON}, "chunk_words": 1, "slots": slots,
                  "faults": [{"drip_tokens_per_s": 100.0}]}),
    )
}

#[test]
fn one_slot_serves_two_concurrent_requests_one_after_the_other() {
    let server = start(0, slow(1)).unwrap();
    let addr = server.addr();
    let first = thread::spawn(move || openai_chat(addr, "first"));
    wait_until(addr, "the first is served", |c| {
        c.len() == 1 && c[0]["started_ms"].is_u64()
    });
    let second = thread::spawn(move || openai_chat(addr, "second"));
    for answer in [first.join().unwrap(), second.join().unwrap()] {
        assert_eq!(text_of(&decode_openai(&answer.body)), LESSON);
    }
    let chats = chats(addr);
    let (a, b) = (&chats[0], &chats[1]);
    assert!(
        ms(b, "started_ms") >= ms(a, "answered_ms"),
        "the second starts once the first is answered: {a} {b}"
    );
    assert!(
        ms(b, "started_ms") - ms(b, "received_ms") >= 100,
        "the second waited its turn: {b}"
    );
}

#[test]
fn two_slots_serve_two_concurrent_requests_at_once() {
    let server = start(0, slow(2)).unwrap();
    let addr = server.addr();
    let first = thread::spawn(move || openai_chat(addr, "first"));
    wait_until(addr, "the first is served", |c| {
        c.len() == 1 && c[0]["started_ms"].is_u64()
    });
    let second = thread::spawn(move || openai_chat(addr, "second"));
    first.join().unwrap();
    second.join().unwrap();
    let chats = chats(addr);
    let (a, b) = (&chats[0], &chats[1]);
    assert!(
        ms(b, "started_ms") < ms(a, "answered_ms"),
        "the second starts while the first streams: {a} {b}"
    );
}

#[test]
fn a_queued_request_gets_not_even_its_status_line_until_its_turn() {
    let server = start(0, slow(1)).unwrap();
    let addr = server.addr();
    let first = thread::spawn(move || openai_chat(addr, "first"));
    wait_until(addr, "the first is served", |c| {
        c.len() == 1 && c[0]["started_ms"].is_u64()
    });
    let mut second = open_chat(addr, "second");
    assert!(
        silent_for(&mut second, Duration::from_millis(200)),
        "nothing at all while the slot is busy"
    );
    second
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut raw = Vec::new();
    second.read_to_end(&mut raw).unwrap();
    assert!(String::from_utf8_lossy(&raw).starts_with("HTTP/1.1 200"));
    assert!(String::from_utf8_lossy(&raw).contains("[DONE]"));
    first.join().unwrap();
}

#[test]
fn a_queued_request_whose_client_hangs_up_leaves_the_line_unserved() {
    let server = start(0, slow(1)).unwrap();
    let addr = server.addr();
    let first = thread::spawn(move || openai_chat(addr, "first"));
    wait_until(addr, "the first is served", |c| {
        c.len() == 1 && c[0]["started_ms"].is_u64()
    });
    drop(open_chat(addr, "second"));
    wait_until(addr, "the second is given up", |c| {
        c.len() == 2 && c[1]["answered_ms"].is_u64()
    });
    let third = thread::spawn(move || openai_chat(addr, "third"));
    assert_eq!(text_of(&decode_openai(&third.join().unwrap().body)), LESSON);
    first.join().unwrap();
    let chats = chats(addr);
    assert_eq!(chats[1]["started_ms"], Value::Null, "{}", chats[1]);
    assert!(ms(&chats[2], "started_ms") >= ms(&chats[0], "answered_ms"));
}

#[test]
fn a_prompt_longer_than_the_context_is_refused_with_llama_cpps_400() {
    let server = start(0, script(json!({"n_ctx": 8192}))).unwrap();
    // 36 120 characters: 9030 tokens.
    let answer = openai_chat(server.addr(), &"a".repeat(36_120));
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.text(),
        r#"{"error":{"code":400,"message":"request (9030 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9030,"n_ctx":8192}}"#
    );
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let entry = &chats(server.addr())[0];
    assert_eq!(
        (entry["status"].as_u64(), entry["output_tokens"].as_u64()),
        (Some(400), Some(0))
    );
    assert!(entry["answered_ms"].is_u64());
}

#[test]
fn a_prompt_that_fills_the_whole_context_is_refused_too_and_one_token_less_is_answered() {
    let server = start(0, script(json!({"n_ctx": 8, "default": {"text": LESSON}}))).unwrap();
    let full = openai_chat(server.addr(), &"a".repeat(32));
    assert_eq!(full.status, 400);
    assert_eq!(full.json()["error"]["n_prompt_tokens"], 8);
    let fits = openai_chat(server.addr(), &"a".repeat(28));
    assert_eq!(fits.status, 200);
    // One token of room: the reply stops after four characters.
    assert_eq!(text_of(&decode_openai(&fits.body)), "Plan");
}

#[test]
fn each_dialect_refuses_a_prompt_longer_than_the_context_in_its_own_shape() {
    let server = start(0, script(json!({"n_ctx": 4}))).unwrap();
    let addr = server.addr();
    let long = "a".repeat(40);
    let ollama = post_json(
        addr,
        "/api/chat",
        &[],
        &json!({"model": "qwen2.5:7b", "messages": [{"role": "user", "content": long}]}),
    );
    assert_eq!(ollama.status, 400);
    let message = ollama.json()["error"].as_str().unwrap().to_string();
    let inner: Value = serde_json::from_str(&message).unwrap();
    assert_eq!(inner["error"]["type"], "exceed_context_size_error");
    assert_eq!(inner["error"]["n_ctx"], 4);

    let anthropic = post_json(
        addr,
        "/v1/messages",
        ANTHROPIC,
        &json!({"model": "c", "max_tokens": 64, "stream": true,
                "messages": [{"role": "user", "content": long}]}),
    );
    assert_eq!(anthropic.status, 400);
    assert_eq!(anthropic.json()["error"]["type"], "invalid_request_error");
    assert_eq!(
        anthropic.json()["error"]["message"],
        "prompt is too long: 10 tokens > 4 maximum"
    );

    let gemini = post_json(
        addr,
        "/v1beta/models/g:streamGenerateContent?alt=sse",
        &[GEMINI_KEY],
        &json!({"contents": [{"parts": [{"text": long}]}]}),
    );
    assert_eq!(gemini.status, 400);
    assert_eq!(gemini.json()["error"]["status"], "INVALID_ARGUMENT");

    // Ollama loads the model with the context the request asks for.
    let roomy = post_json(
        addr,
        "/api/chat",
        &[],
        &json!({"model": "qwen2.5:7b", "options": {"num_ctx": 64}, "stream": false,
                "messages": [{"role": "user", "content": long}]}),
    );
    assert_eq!(roomy.status, 200);
}

/// The finish reason of an OpenAI stream's last choice.
fn finish_reason(body: &[u8]) -> Value {
    sse_frames(body)
        .iter()
        .filter(|f| !f.is_done_marker())
        .filter_map(|f| serde_json::from_str::<Value>(&f.data).ok())
        .filter_map(|v| v["choices"][0]["finish_reason"].as_str().map(|s| json!(s)))
        .next_back()
        .unwrap_or(Value::Null)
}

#[test]
fn max_tokens_cuts_the_reply_with_each_dialects_length_stop() {
    let server = start(0, script(json!({"default": {"text": LESSON}}))).unwrap();
    let addr = server.addr();
    // Three tokens: twelve characters.
    let cut = "Plants turn ";

    let mut body = openai_body("hi", true);
    body["max_tokens"] = json!(3);
    let openai = post_json(addr, "/v1/chat/completions", &[AUTH], &body);
    assert_eq!(text_of(&decode_openai(&openai.body)), cut);
    assert_eq!(finish_reason(&openai.body), "length");
    body["stream"] = json!(false);
    body.as_object_mut().unwrap().remove("max_tokens");
    body["max_completion_tokens"] = json!(3);
    let whole = post_json(addr, "/v1/chat/completions", &[AUTH], &body).json();
    assert_eq!(whole["choices"][0]["message"]["content"], cut);
    assert_eq!(whole["choices"][0]["finish_reason"], "length");
    assert_eq!(whole["usage"]["completion_tokens"], 3);

    let anthropic = post_json(
        addr,
        "/v1/messages",
        ANTHROPIC,
        &json!({"model": "c", "max_tokens": 3, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .json();
    assert_eq!(anthropic["content"][0]["text"], cut);
    assert_eq!(anthropic["stop_reason"], "max_tokens");
    assert_eq!(anthropic["usage"]["output_tokens"], 3);

    let gemini = post_json(
        addr,
        "/v1beta/models/g:generateContent",
        &[GEMINI_KEY],
        &json!({"contents": [{"parts": [{"text": "hi"}]}],
                "generationConfig": {"maxOutputTokens": 3}}),
    )
    .json();
    assert_eq!(gemini["candidates"][0]["content"]["parts"][0]["text"], cut);
    assert_eq!(gemini["candidates"][0]["finishReason"], "MAX_TOKENS");

    let ollama = post_json(
        addr,
        "/api/chat",
        &[],
        &json!({"model": "m", "options": {"num_predict": 3},
                "messages": [{"role": "user", "content": "hi"}]}),
    );
    let lines: Vec<Value> = ollama
        .text()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let text: String = lines
        .iter()
        .filter_map(|l| l["message"]["content"].as_str())
        .collect();
    assert_eq!(text, cut);
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["done_reason"], &last["eval_count"]),
        (&json!("length"), &json!(3))
    );

    // A limit the reply fits in changes nothing; neither does Ollama's -1, "no limit".
    let mut roomy = openai_body("hi", false);
    roomy["max_tokens"] = json!(43);
    let whole = post_json(addr, "/v1/chat/completions", &[AUTH], &roomy).json();
    assert_eq!(
        (
            &whole["choices"][0]["message"]["content"],
            &whole["choices"][0]["finish_reason"]
        ),
        (&json!(LESSON), &json!("stop"))
    );
    let unlimited = post_json(
        addr,
        "/api/chat",
        &[],
        &json!({"model": "m", "stream": false, "options": {"num_predict": -1},
                "messages": [{"role": "user", "content": "hi"}]}),
    )
    .json();
    assert_eq!(unlimited["message"]["content"], LESSON);
    assert_eq!(unlimited["done_reason"], "stop");
}

#[test]
fn the_context_left_after_the_prompt_cuts_the_reply_where_it_is_full() {
    let server = start(0, script(json!({"n_ctx": 10, "default": {"text": LESSON}}))).unwrap();
    // "What is light?": 4 tokens, which leaves 6 (24 characters).
    let answer = openai_chat(server.addr(), "What is light?");
    assert_eq!(text_of(&decode_openai(&answer.body)), &LESSON[..24]);
    assert_eq!(finish_reason(&answer.body), "length");
    let mut body = openai_body("What is light?", true);
    body["max_tokens"] = json!(2);
    let tighter = post_json(server.addr(), "/v1/chat/completions", &[AUTH], &body);
    assert_eq!(text_of(&decode_openai(&tighter.body)), &LESSON[..8]);
}

#[test]
fn props_reports_the_context_per_slot_and_the_number_of_slots() {
    let server = start(
        0,
        script(json!({"n_ctx": 8192, "slots": 1, "model": "qwen2.5-7b-instruct"})),
    )
    .unwrap();
    let props = send(server.addr(), "GET", "/props", &[], b"");
    assert_eq!(props.status, 200);
    let props = props.json();
    assert_eq!(props["default_generation_settings"]["n_ctx"], 8192);
    assert_eq!(props["total_slots"], 1);
    assert_eq!(props["model_alias"], "qwen2.5-7b-instruct");
    for field in ["model_path", "build_info", "chat_template"] {
        assert!(props[field].is_string(), "{field} in {props}");
    }

    server.set_script(script(json!({"slots": 3})));
    let props = send(server.addr(), "GET", "/props", &[], b"").json();
    assert_eq!(props["total_slots"], 3);
    server.set_script(Script::default());
    let props = send(server.addr(), "GET", "/props", &[], b"").json();
    assert_eq!(
        (
            &props["default_generation_settings"]["n_ctx"],
            &props["total_slots"]
        ),
        (&json!(4096), &json!(1))
    );
}

/// `parameters` of `/api/show`: one `name value` pair per line.
fn parameter(parameters: &Value, name: &str) -> Option<String> {
    parameters.as_str()?.lines().find_map(|line| {
        let (key, value) = line.split_once(char::is_whitespace)?;
        (key == name).then(|| value.trim().to_string())
    })
}

#[test]
fn ollama_show_gives_the_context_under_the_architecture_and_as_num_ctx() {
    let server = start(0, script(json!({"n_ctx": 8192}))).unwrap();
    let addr = server.addr();
    let show = post_json(addr, "/api/show", &[], &json!({"model": "qwen2.5:7b"}));
    assert_eq!(show.status, 200);
    let show = show.json();
    assert_eq!(show["model_info"]["general.architecture"], "qwen2");
    assert_eq!(show["model_info"]["qwen2.context_length"], 8192);
    assert_eq!(
        parameter(&show["parameters"], "num_ctx").as_deref(),
        Some("8192")
    );
    assert_eq!(show["details"]["format"], "gguf");
    let llama = post_json(addr, "/api/show", &[], &json!({"model": "llama3.2:latest"})).json();
    assert_eq!(llama["model_info"]["llama.context_length"], 8192);

    server.set_script(Script::default());
    let stock = post_json(addr, "/api/show", &[], &json!({"model": "qwen3:8b"})).json();
    assert_eq!(stock["model_info"]["qwen3.context_length"], 32_768);
    assert_eq!(parameter(&stock["parameters"], "num_ctx"), None);
    assert!(parameter(&stock["parameters"], "stop").is_some());

    let nameless = post_json(addr, "/api/show", &[], &json!({}));
    assert_eq!(nameless.status, 400);
    assert_eq!(nameless.json(), json!({"error": "model is required"}));
}

/// How long the first byte of an answer takes, from sending the request.
fn time_to_first_byte(addr: SocketAddr, content: &str) -> Duration {
    let began = Instant::now();
    let mut stream = open_chat(addr, content);
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(stream.read(&mut byte).unwrap(), 1);
    began.elapsed()
}

#[test]
fn reading_the_prompt_delays_the_first_chunk_and_even_the_headers() {
    let server = start(
        0,
        script(json!({"prompt_tokens_per_s": 20.0, "default": {"text": LESSON}})),
    )
    .unwrap();
    // 40 characters: 10 tokens, half a second at 20 tokens per second.
    let prompt = "a".repeat(40);
    let waited = time_to_first_byte(server.addr(), &prompt);
    assert!(waited >= Duration::from_millis(500), "{waited:?}");
    let answer = openai_chat(server.addr(), &prompt);
    assert_eq!(text_of(&decode_openai(&answer.body)), LESSON);
}

#[test]
fn a_slow_local_server_reads_then_generates_one_request_at_a_time() {
    // Prompts of 10 tokens at 50/s (0.2 s), then one-word chunks at 150 tokens/s (about 0.3 s).
    let server = start(
        0,
        script(
            json!({"slots": 1, "prompt_tokens_per_s": 50.0, "chunk_words": 1,
                      "default": {"text": LESSON}, "faults": [{"drip_tokens_per_s": 150.0}]}),
        ),
    )
    .unwrap();
    let addr = server.addr();
    let prompt = "a".repeat(40);
    let began = Instant::now();
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let prompt = prompt.clone();
            thread::spawn(move || openai_chat(addr, &prompt))
        })
        .collect();
    for call in calls {
        assert_eq!(text_of(&decode_openai(&call.join().unwrap().body)), LESSON);
    }
    let elapsed = began.elapsed();
    let chats = chats(addr);
    let (a, b) = (&chats[0], &chats[1]);
    assert!(ms(b, "started_ms") >= ms(a, "answered_ms"), "{a} {b}");
    for entry in [a, b] {
        assert!(
            ms(entry, "answered_ms") - ms(entry, "started_ms") >= 400,
            "{entry}"
        );
    }
    assert!(elapsed >= Duration::from_millis(800), "{elapsed:?}");
}

#[test]
fn a_whole_answer_waits_for_every_token_at_the_generation_speed() {
    let server = start(
        0,
        script(json!({"default": {"text": LESSON}, "faults": [{"drip_tokens_per_s": 100.0}]})),
    )
    .unwrap();
    let began = Instant::now();
    let answer = post_json(
        server.addr(),
        "/v1/chat/completions",
        &[AUTH],
        &openai_body("hi", false),
    );
    assert_eq!(answer.json()["choices"][0]["message"]["content"], LESSON);
    // 43 tokens at 100 per second.
    assert!(
        began.elapsed() >= Duration::from_millis(430),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn a_local_server_takes_requests_without_a_key_and_a_cloud_one_does_not() {
    let server = start(0, slow(1)).unwrap();
    let keyless = post_json(
        server.addr(),
        "/v1/chat/completions",
        &[],
        &openai_body("Hi", false),
    );
    assert_eq!(
        keyless.status, 200,
        "a llama.cpp server started without --api-key"
    );
    server.set_script(Script::default());
    let cloud = post_json(
        server.addr(),
        "/v1/chat/completions",
        &[],
        &openai_body("Hi", false),
    );
    assert_eq!(cloud.status, 401, "a cloud provider wants its key");
}

#[test]
fn a_client_that_hangs_up_before_the_first_token_frees_its_slot() {
    let server = start(
        0,
        script(json!({"default": {"text": LESSON}, "slots": 1, "faults": [{"ttft_ms": 20000}]})),
    )
    .unwrap();
    let addr = server.addr();
    let first = open_chat(addr, "first");
    wait_until(addr, "the first is served", |c| {
        c.len() == 1 && c[0]["started_ms"].is_u64()
    });
    drop(first);
    server.set_script(script(json!({"default": {"text": LESSON}, "slots": 1})));
    let answer = openai_chat(addr, "second");
    assert_eq!(text_of(&decode_openai(&answer.body)), LESSON);
    let second = &chats(addr)[1];
    assert!(
        ms(second, "started_ms") - ms(second, "received_ms") < 2000,
        "the second did not wait out the first's silent 20 s: {second}"
    );
}
