//! The app's own request builder and stream decoder against the mock, for every dialect: the
//! request Aula builds is accepted, and the reply decodes to the scripted thinking and text.

mod support;

use aula_mock_llm::{start, Reply, Script};
use aula_providers::{
    http_request, ChatMessage, ChatRequest, ChatStream, Dialect, Endpoint, StreamEvent,
};
use support::*;

const TEXT: &str = "Plants turn light into sugar; 光合作用 makes oxygen.";
const THOUGHT: &str = "Start from light, end with sugar.";

fn round_trip(dialect: Dialect, base: &str, model: &str) -> (u16, Vec<StreamEvent>) {
    let server = start(
        0,
        Script {
            default: Some(Reply::thinking(THOUGHT, TEXT)),
            chunk_words: 2,
            ..Script::default()
        },
    )
    .unwrap();
    let endpoint = Endpoint {
        provider: "custom".into(),
        dialect,
        base_url: format!("http://{}{base}", server.addr()),
        model: model.into(),
        api_key: Some("sk-test".into()),
    };
    let request = ChatRequest::new(
        "You are a teacher.",
        vec![ChatMessage::user("What is light?")],
    );
    let http = http_request(&endpoint, &request);
    let path = http
        .url
        .strip_prefix(&format!("http://{}", server.addr()))
        .unwrap()
        .to_string();
    let headers: Vec<String> = http
        .headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let answer = send(
        server.addr(),
        http.method.as_str(),
        &path,
        &headers,
        &http.body,
    );
    let mut stream = ChatStream::new(dialect, "mock-llm");
    let mut events = Vec::new();
    for piece in answer.body.chunks(5) {
        events.extend(stream.push(piece));
    }
    events.extend(stream.finish());
    (answer.status, events)
}

fn check(dialect: Dialect, base: &str, model: &str) {
    let (status, events) = round_trip(dialect, base, model);
    assert_eq!(status, 200, "{dialect:?}: {events:?}");
    let thinking: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, THOUGHT, "{dialect:?}");
    assert_eq!(text_of(&events), TEXT, "{dialect:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::Usage { input: 9, .. })),
        "{dialect:?}: {events:?}"
    );
    assert!(
        matches!(events.last(), Some(StreamEvent::Done { .. })),
        "{dialect:?}: {events:?}"
    );
}

#[test]
fn openai_round_trip() {
    check(Dialect::OpenAiChat, "/v1", "gpt-4o-mini");
}

#[test]
fn anthropic_round_trip() {
    check(Dialect::Anthropic, "/v1", "claude-sonnet-4-5");
}

#[test]
fn gemini_round_trip() {
    check(Dialect::Gemini, "/v1beta", "gemini-2.5-flash");
}

#[test]
fn ollama_round_trip() {
    check(Dialect::OllamaNative, "", "qwen3:8b");
}
