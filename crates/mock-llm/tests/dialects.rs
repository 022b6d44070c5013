//! Anthropic, Gemini and Ollama streams over a real socket, framed with Aula's SSE decoder and
//! read frame by frame (Aula's decoders for these dialects are not committed yet), plus model
//! lists, speech and per-vendor auth errors.

mod support;

use aula_mock_llm::{start, Reply, Script};
use serde_json::{json, Value};
use support::*;

const LESSON: &str = "Plants turn light into sugar; 光合作用 makes oxygen.";

fn thinking_script() -> Script {
    Script {
        default: Some(Reply::thinking("Light first, then sugar.", LESSON)),
        chunk_words: 2,
        ..Script::default()
    }
}

fn anthropic_request(stream: bool) -> Value {
    json!({
        "model": "claude-sonnet-4-5", "max_tokens": 256, "stream": stream,
        "system": [{"type": "text", "text": "You are a teacher."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "What is light?"}]}],
    })
}

#[test]
fn anthropic_stream_has_the_real_event_sequence() {
    let server = start(0, thinking_script()).unwrap();
    let answer = post_json(
        server.addr(),
        "/v1/messages",
        ANTHROPIC,
        &anthropic_request(true),
    );
    assert_eq!(answer.status, 200);
    assert!(answer.complete);
    let frames = sse_frames(&answer.body);
    let mut names: Vec<String> = frames.iter().filter_map(|f| f.event.clone()).collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let data: Vec<Value> = frames
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect();
    for (frame, value) in frames.iter().zip(&data) {
        assert_eq!(frame.event.as_deref(), value["type"].as_str());
    }
    let deltas = |kind: &str, field: &str| -> String {
        data.iter()
            .filter(|d| d["delta"]["type"] == kind)
            .filter_map(|d| d["delta"][field].as_str())
            .collect()
    };
    assert_eq!(
        deltas("thinking_delta", "thinking"),
        "Light first, then sugar."
    );
    assert_eq!(deltas("text_delta", "text"), LESSON);
    assert!(!deltas("signature_delta", "signature").is_empty());
    let start = &data[0]["message"];
    // system 5 + message 4 tokens
    assert_eq!(start["usage"]["input_tokens"], 9);
    let end = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(end["delta"]["stop_reason"], "end_turn");
    assert_eq!(
        end["usage"]["output_tokens"],
        json!(Reply::thinking("Light first, then sugar.", LESSON).output_tokens())
    );
}

#[test]
fn anthropic_whole_message_and_its_errors() {
    let server = start(0, thinking_script()).unwrap();
    let answer = post_json(
        server.addr(),
        "/v1/messages",
        ANTHROPIC,
        &anthropic_request(false),
    );
    let message = answer.json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["content"][0]["type"], "thinking");
    assert_eq!(message["content"][1]["text"], LESSON);

    let cases: &[(&[&str], u16, &str)] = &[
        (
            &["anthropic-version: 2023-06-01"],
            401,
            "authentication_error",
        ),
        (
            &["x-api-key: bad-key", "anthropic-version: 2023-06-01"],
            401,
            "authentication_error",
        ),
        (
            &[
                "Authorization: Bearer bad-key",
                "anthropic-version: 2023-06-01",
            ],
            401,
            "authentication_error",
        ),
        (&["x-api-key: sk-ant"], 400, "invalid_request_error"),
        (
            &[
                "x-api-key: sk-ant",
                "anthropic-version: 2023-06-01",
                "Origin: http://localhost:8080",
            ],
            401,
            "authentication_error",
        ),
    ];
    for (headers, status, kind) in cases {
        let answer = post_json(
            server.addr(),
            "/v1/messages",
            headers,
            &anthropic_request(true),
        );
        assert_eq!(
            (answer.status, &answer.json()["error"]["type"]),
            (*status, &json!(kind)),
            "{headers:?}"
        );
        assert_eq!(answer.json()["type"], "error");
    }
    let browser = [
        "x-api-key: sk-ant",
        "anthropic-version: 2023-06-01",
        "Origin: http://localhost:8080",
        "anthropic-dangerous-direct-browser-access: true",
    ];
    assert_eq!(
        post_json(
            server.addr(),
            "/v1/messages",
            &browser,
            &anthropic_request(true)
        )
        .status,
        200
    );
    let mut no_max = anthropic_request(true);
    no_max.as_object_mut().unwrap().remove("max_tokens");
    let answer = post_json(server.addr(), "/v1/messages", ANTHROPIC, &no_max);
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json()["error"]["message"],
        "max_tokens: Field required"
    );
}

fn gemini_request() -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": "You are a teacher."}]},
        "contents": [{"role": "user", "parts": [{"text": "What is light?"}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": true}},
    })
}

#[test]
fn gemini_sse_frames_are_whole_responses_with_crlf_and_no_done() {
    let server = start(0, thinking_script()).unwrap();
    let answer = post_json(
        server.addr(),
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        &[GEMINI_KEY],
        &gemini_request(),
    );
    assert_eq!(answer.status, 200);
    assert!(answer.text().contains("\r\n\r\n"));
    assert!(!answer.text().contains("[DONE]"));
    let frames: Vec<Value> = sse_frames(&answer.body)
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect();
    let parts = |thought: bool| -> String {
        frames
            .iter()
            .flat_map(|f| {
                f["candidates"][0]["content"]["parts"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|p| p["thought"].as_bool().unwrap_or(false) == thought)
            .filter_map(|p| p["text"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(parts(true), "Light first, then sugar.");
    assert_eq!(parts(false), LESSON);
    let last = frames.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["promptTokenCount"], 9);
    assert_eq!(last["modelVersion"], "gemini-2.5-flash");
    assert!(
        last["usageMetadata"]["thoughtsTokenCount"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn gemini_without_sse_streams_a_json_array_and_generate_content_answers_whole() {
    let server = start(0, thinking_script()).unwrap();
    let answer = post_json(
        server.addr(),
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=AIza-test",
        &[],
        &gemini_request(),
    );
    let array = answer.json();
    assert!(
        array.as_array().is_some_and(|a| a.len() > 3),
        "{}",
        answer.text()
    );
    let answer = post_json(
        server.addr(),
        "/v1beta/models/gemini-2.5-pro:generateContent",
        &[GEMINI_KEY],
        &gemini_request(),
    );
    let parts = &answer.json()["candidates"][0]["content"]["parts"];
    assert_eq!(parts[0]["thought"], true);
    assert_eq!(parts[1]["text"], LESSON);
}

#[test]
fn gemini_key_errors_have_googles_shape() {
    let server = start(0, Script::default()).unwrap();
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    let missing = post_json(server.addr(), path, &[], &gemini_request());
    assert_eq!(missing.status, 403);
    assert_eq!(missing.json()["error"]["status"], "PERMISSION_DENIED");
    let bad = post_json(
        server.addr(),
        &format!("{path}&key=bad-key"),
        &[],
        &gemini_request(),
    );
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.json()["error"]["details"][0]["reason"],
        "API_KEY_INVALID"
    );
    assert_eq!(bad.json()["error"]["code"], 400);
}

#[test]
fn ollama_streams_ndjson_and_ends_with_counts() {
    let server = start(0, thinking_script()).unwrap();
    let body = json!({"model": "qwen3:8b", "messages": [
        {"role": "system", "content": "You are a teacher."},
        {"role": "user", "content": "What is light?"}]});
    let answer = post_json(server.addr(), "/api/chat", &[], &body);
    assert_eq!(answer.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> = answer
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let field = |name: &str| -> String {
        lines
            .iter()
            .filter_map(|l| l["message"][name].as_str())
            .collect()
    };
    assert_eq!(field("thinking"), "Light first, then sugar.");
    assert_eq!(field("content"), LESSON);
    let last = lines.last().unwrap();
    assert_eq!(
        (last["done"].clone(), last["done_reason"].clone()),
        (json!(true), json!("stop"))
    );
    assert_eq!(last["prompt_eval_count"], 9);
    assert!(lines[..lines.len() - 1].iter().all(|l| l["done"] == false));

    let mut whole = body.clone();
    whole["stream"] = json!(false);
    let answer = post_json(server.addr(), "/api/chat", &[], &whole);
    assert_eq!(answer.json()["message"]["content"], LESSON);
    assert_eq!(answer.json()["done"], true);
}

#[test]
fn model_lists_come_in_each_vendors_shape() {
    let server = start(0, Script::default()).unwrap();
    let addr = server.addr();
    let openai = send(addr, "GET", "/v1/models", &[AUTH], b"").json();
    assert_eq!(openai["object"], "list");
    assert_eq!(openai["data"][0]["object"], "model");
    let anthropic = send(addr, "GET", "/v1/models", ANTHROPIC, b"").json();
    assert_eq!(anthropic["data"][0]["type"], "model");
    assert_eq!(anthropic["has_more"], false);
    let gemini = send(addr, "GET", "/v1beta/models", &[GEMINI_KEY], b"").json();
    assert!(gemini["models"][0]["name"]
        .as_str()
        .unwrap()
        .starts_with("models/"));
    let ollama = send(addr, "GET", "/api/tags", &[], b"").json();
    assert_eq!(ollama["models"][0]["details"]["format"], "gguf");
    assert_eq!(send(addr, "GET", "/v1/models", &[], b"").status, 401);
}

#[test]
fn speech_comes_in_the_asked_format_and_transcription_from_the_script() {
    let script = Script {
        transcript: "What is photosynthesis?".into(),
        ..Script::default()
    };
    let server = start(0, script).unwrap();
    for (format, kind, magic) in [
        (None, "audio/mpeg", &[0xFF, 0xFB][..]),
        (Some("opus"), "audio/opus", b"OggS"),
        (Some("wav"), "audio/wav", b"RIFF"),
    ] {
        let mut body = json!({"model": "gpt-4o-mini-tts", "voice": "alloy", "input": "Hello"});
        if let Some(format) = format {
            body["response_format"] = json!(format);
        }
        let answer = post_json(server.addr(), "/v1/audio/speech", &[AUTH], &body);
        assert_eq!(answer.header("content-type"), Some(kind));
        assert!(answer.body.starts_with(magic), "{format:?}");
    }
    let multipart = b"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n\
--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"q.webm\"\r\nContent-Type: audio/webm\r\n\r\nabc\r\n--b--\r\n";
    let answer = send(
        server.addr(),
        "POST",
        "/v1/audio/transcriptions",
        &[AUTH, "Content-Type: multipart/form-data; boundary=b"],
        multipart,
    );
    assert_eq!(answer.json(), json!({"text": "What is photosynthesis?"}));
}
