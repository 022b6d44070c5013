//! Tests of one streamed chat (`chat`) in every dialect, against recorded transcripts.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde_json::json;

use crate::chat::*;
use crate::fixtures::{
    ANTHROPIC_TRANSCRIPT, DEEPSEEK_TRANSCRIPT, GEMINI_TRANSCRIPT, OLLAMA_TRANSCRIPT,
    OPENAI_REFUSAL_TRANSCRIPT, OPENAI_SERVER_ERROR_TRANSCRIPT, OPENAI_TRANSCRIPT,
    OPENAI_TWO_CHOICES_TRANSCRIPT, OPENROUTER_LENGTH_THEN_ERROR_TRANSCRIPT,
};
use crate::transport::memory::{run_to_end, ScriptedAnswer, ScriptedTransport};
use crate::*;

const KEY: &str = "sk-test-9f8e7d6c5b4a39281706";

fn endpoint_for(id: &str, model: &str) -> Endpoint {
    Endpoint::from_preset(preset(id).unwrap(), model, Some(KEY.into()))
}

fn endpoint() -> Endpoint {
    let mut e = endpoint_for("openai", "gpt-4o-mini");
    e.base_url.push('/');
    e
}

fn request() -> ChatRequest {
    ChatRequest::new("Teach.", vec![ChatMessage::user("What is light?")])
}

fn collect_with(transport: &ScriptedTransport, endpoint: Endpoint) -> Vec<StreamEvent> {
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    let (_abort, drive) = stream_chat(transport, endpoint, &request(), move |e| {
        sink.borrow_mut().push(e)
    });
    run_to_end(drive);
    let out = events.borrow().clone();
    out
}

fn collect(transport: &ScriptedTransport) -> Vec<StreamEvent> {
    collect_with(transport, endpoint())
}

fn chunks_of(text: &str, size: usize) -> Vec<Vec<u8>> {
    text.as_bytes().chunks(size).map(<[u8]>::to_vec).collect()
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

fn decode_whole(dialect: Dialect, input: &[u8]) -> Vec<StreamEvent> {
    let mut stream = ChatStream::new(dialect, "Test");
    let mut events = stream.push(input);
    events.extend(stream.finish());
    events
}

fn decode_cut(dialect: Dialect, input: &[u8], cuts: &[usize]) -> Vec<StreamEvent> {
    let mut stream = ChatStream::new(dialect, "Test");
    let mut events = Vec::new();
    let mut from = 0;
    for &cut in cuts {
        events.extend(stream.push(&input[from..cut]));
        from = cut;
    }
    events.extend(stream.push(&input[from..]));
    events.extend(stream.finish());
    events
}

fn assert_same_at_every_boundary(dialect: Dialect, input: &str, expected: &[StreamEvent]) {
    let input = input.as_bytes();
    assert_eq!(decode_whole(dialect, input), expected);
    for cut in 0..=input.len() {
        assert_eq!(
            decode_cut(dialect, input, &[cut]),
            expected,
            "split at {cut}"
        );
    }
    let every: Vec<usize> = (1..input.len()).collect();
    assert_eq!(decode_cut(dialect, input, &every), expected, "byte by byte");
}

fn leaf_reply(thoughts: &[&str], usage: (u64, u64, u64)) -> Vec<StreamEvent> {
    let mut events: Vec<StreamEvent> = thoughts
        .iter()
        .map(|t| StreamEvent::ThinkingDelta(t.to_string()))
        .collect();
    events.extend([
        StreamEvent::ThinkingEnd,
        StreamEvent::TextDelta("Leaves look green because ".into()),
        StreamEvent::TextDelta("chlorophyll reflects green light — 叶绿素 🌿.".into()),
        StreamEvent::Usage {
            input: usage.0,
            output: usage.1,
            cached: usage.2,
        },
        StreamEvent::Done {
            stop_reason: Some(StopReason::EndTurn),
        },
    ]);
    events
}

// --- every dialect's real transcript, split anywhere ---

#[test]
fn openai_transcript_decodes_the_same_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::OpenAiChat,
        OPENAI_TRANSCRIPT,
        &[
            StreamEvent::TextDelta("Plants turn light ".into()),
            StreamEvent::TextDelta("into sugar — 光合作用 🌱.".into()),
            StreamEvent::Usage {
                input: 42,
                output: 9,
                cached: 32,
            },
            StreamEvent::Done {
                stop_reason: Some(StopReason::EndTurn),
            },
        ],
    );
}

#[test]
fn deepseek_reasoning_transcript_decodes_the_same_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::OpenAiChat,
        DEEPSEEK_TRANSCRIPT,
        &[
            StreamEvent::ThinkingDelta("Leaves reflect ".into()),
            StreamEvent::ThinkingDelta("green light.".into()),
            StreamEvent::ThinkingEnd,
            StreamEvent::TextDelta("Chlorophyll reflects green — 叶绿素.".into()),
            StreamEvent::Usage {
                input: 20,
                output: 31,
                cached: 0,
            },
            StreamEvent::Done {
                stop_reason: Some(StopReason::EndTurn),
            },
        ],
    );
}

#[test]
fn anthropic_transcript_decodes_the_same_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::Anthropic,
        ANTHROPIC_TRANSCRIPT,
        &leaf_reply(
            &[
                "The learner asks why leaves are green. ",
                "Chlorophyll absorbs red and blue.",
            ],
            (472 + 2048, 58, 2048),
        ),
    );
}

#[test]
fn gemini_transcript_decodes_the_same_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::Gemini,
        GEMINI_TRANSCRIPT,
        &leaf_reply(
            &["**Explaining leaf colour**\n\nChlorophyll absorbs red and blue."],
            (12, 20 + 48, 0),
        ),
    );
}

#[test]
fn ollama_transcript_decodes_the_same_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::OllamaNative,
        OLLAMA_TRANSCRIPT,
        &leaf_reply(
            &[
                "The learner asks why leaves are green. ",
                "Chlorophyll absorbs red and blue.",
            ],
            (26, 282, 0),
        ),
    );
}

#[test]
fn every_dialect_reports_a_reply_cut_before_its_end() {
    for (dialect, transcript) in [
        (Dialect::OpenAiChat, DEEPSEEK_TRANSCRIPT),
        (Dialect::Anthropic, ANTHROPIC_TRANSCRIPT),
        (Dialect::Gemini, GEMINI_TRANSCRIPT),
        (Dialect::OllamaNative, OLLAMA_TRANSCRIPT),
    ] {
        let half = &transcript.as_bytes()[..transcript.len() / 2];
        let events = decode_whole(dialect, half);
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Error(ProviderError::StreamCut {
                provider: "Test".into()
            })),
            "{dialect:?}"
        );
    }
}

// --- mid-stream errors ---

#[test]
fn anthropic_overload_mid_stream_is_a_retryable_server_error() {
    let transcript = [
            &ANTHROPIC_TRANSCRIPT[..ANTHROPIC_TRANSCRIPT.find("event: content_block_stop").unwrap()],
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ]
        .concat();
    let events = decode_whole(Dialect::Anthropic, transcript.as_bytes());
    let last = events.last().unwrap();
    assert_eq!(
        last,
        &StreamEvent::Error(ProviderError::ServerError {
            provider: "Test".into(),
            status: 529,
            message: "Overloaded".into()
        })
    );
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
    // Thinking was open when the error came; it is closed before the terminal event.
    assert_eq!(events[events.len() - 2], StreamEvent::ThinkingEnd);
}

#[test]
fn gemini_error_frame_mid_stream_keeps_its_kind() {
    let frame = "data: {\"error\": {\"code\": 429,\"message\": \"Resource has been exhausted (e.g. check quota).\",\"status\": \"RESOURCE_EXHAUSTED\"}}\r\n\r\n";
    let transcript = [
        &GEMINI_TRANSCRIPT[..GEMINI_TRANSCRIPT
            .find("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"chlo")
            .unwrap()],
        frame,
    ]
    .concat();
    let events = decode_whole(Dialect::Gemini, transcript.as_bytes());
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Error(ProviderError::RateLimited { .. }))
    ));
    let unavailable = "data: {\"error\": {\"code\": 503,\"message\": \"The model is overloaded. Please try again later.\",\"status\": \"UNAVAILABLE\"}}\r\n\r\n";
    assert!(matches!(
        decode_whole(Dialect::Gemini, unavailable.as_bytes()).as_slice(),
        [StreamEvent::Error(ProviderError::ServerError {
            status: 503,
            ..
        })]
    ));
}

#[test]
fn ollama_error_line_mid_stream_is_passed_on() {
    let transcript = [
        &OLLAMA_TRANSCRIPT[..OLLAMA_TRANSCRIPT
            .find("{\"model\":\"qwen3\",\"created_at\":\"2025-06-01T10:00:00.000004Z\"")
            .unwrap()],
        "{\"error\":\"an error was encountered while running the model: unexpected EOF\"}\n",
    ]
    .concat();
    let events = decode_whole(Dialect::OllamaNative, transcript.as_bytes());
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Error(ProviderError::Upstream {
            provider: "Test".into(),
            message: "an error was encountered while running the model: unexpected EOF".into()
        }))
    );
}

// --- what real vendors send on the OpenAI dialect ---

#[test]
fn an_openai_refusal_is_the_models_words_not_an_empty_reply_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::OpenAiChat,
        OPENAI_REFUSAL_TRANSCRIPT,
        &[
            StreamEvent::Usage {
                input: 58,
                output: 19,
                cached: 0,
            },
            StreamEvent::Stopped {
                stop_reason: StopReason::EndTurn,
            },
            StreamEvent::Error(ProviderError::Refused {
                provider: "Test".into(),
                message: "I’m sorry, but I can’t help with making a poison at home.".into(),
            }),
        ],
    );
}

#[test]
fn a_refusal_is_reported_once_and_never_retried() {
    let transport = ScriptedTransport::answering(
        vec![],
        ScriptedAnswer::streaming(chunks_of(OPENAI_REFUSAL_TRANSCRIPT, 29)),
    );
    let (events, retries) = with_retry(
        &transport,
        &InstantSleeper::default(),
        RetryPolicy::default(),
    );
    assert!(retries.is_empty());
    assert_eq!(transport.requests.borrow().len(), 1);
    let Some(StreamEvent::Error(err @ ProviderError::Refused { .. })) = events.last() else {
        panic!("{events:?}");
    };
    let text = err.to_string();
    assert!(
        text.contains("\"I’m sorry, but I can’t help with making a poison at home\""),
        "{text}"
    );
    assert!(text.contains("Rephrase") && text.contains("Settings → AI provider"));
    assert_eq!(text_of(&events), "");
}

#[test]
fn a_server_error_object_mid_stream_ends_the_reply_as_a_server_error_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::OpenAiChat,
        OPENAI_SERVER_ERROR_TRANSCRIPT,
        &[
            StreamEvent::TextDelta("Chlorophyll ".into()),
            StreamEvent::Error(ProviderError::ServerError {
                provider: "Test".into(),
                status: 500,
                message: "The server had an error while processing your request. Sorry about that!"
                    .into(),
            }),
        ],
    );
}

#[test]
fn a_server_error_object_before_any_text_is_retried_like_a_5xx() {
    // The role chunk, then the error: nothing was shown before it failed.
    let first_chunk_end = OPENAI_SERVER_ERROR_TRANSCRIPT.find("\n\n").unwrap() + 2;
    let error_at = OPENAI_SERVER_ERROR_TRANSCRIPT
        .find("data: {\"error\"")
        .unwrap();
    let failing = [
        &OPENAI_SERVER_ERROR_TRANSCRIPT[..first_chunk_end],
        &OPENAI_SERVER_ERROR_TRANSCRIPT[error_at..],
    ]
    .concat();
    let transport = ScriptedTransport::answering(
        vec![ScriptedAnswer::streaming(chunks_of(&failing, 17))],
        ScriptedAnswer::streaming(chunks_of(OPENAI_TRANSCRIPT, 64)),
    );
    let (events, retries) = with_retry(
        &transport,
        &InstantSleeper::default(),
        RetryPolicy::default(),
    );
    assert_eq!(retries.len(), 1, "{events:?}");
    assert!(matches!(
        retries[0].2,
        ProviderError::ServerError { status: 500, .. }
    ));
    assert_eq!(
        text_of(&events),
        "Plants turn light into sugar — 光合作用 🌱."
    );
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })));
}

fn cut_for_length_then(error: ProviderError) -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta("Osmosis moves water ".into()),
        StreamEvent::TextDelta("across a membrane — 渗透".into()),
        StreamEvent::Stopped {
            stop_reason: StopReason::MaxTokens,
        },
        StreamEvent::Error(error),
    ]
}

#[test]
fn an_error_after_a_length_stop_keeps_both_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::OpenAiChat,
        OPENROUTER_LENGTH_THEN_ERROR_TRANSCRIPT,
        &cut_for_length_then(ProviderError::ServerError {
            provider: "Test".into(),
            status: 502,
            message: "Upstream provider closed the stream unexpectedly".into(),
        }),
    );
}

#[test]
fn a_length_stop_reaches_the_caller_before_the_error_through_the_retrying_stream() {
    let transport = ScriptedTransport::answering(
        vec![],
        ScriptedAnswer::streaming(chunks_of(OPENROUTER_LENGTH_THEN_ERROR_TRANSCRIPT, 41)),
    );
    let (events, retries) = with_retry(
        &transport,
        &InstantSleeper::default(),
        RetryPolicy::default(),
    );
    // Text was shown, so the server error is not retried; the caller learns both.
    assert!(retries.is_empty());
    assert_eq!(
        crate::tests_support::coalesce(events),
        crate::tests_support::coalesce(cut_for_length_then(ProviderError::ServerError {
            provider: "OpenAI".into(),
            status: 502,
            message: "Upstream provider closed the stream unexpectedly".into(),
        }))
    );
}

#[test]
fn a_connection_lost_after_a_length_stop_reports_the_stop_and_the_cut() {
    let upto = OPENROUTER_LENGTH_THEN_ERROR_TRANSCRIPT
            .find("data: {\"id\":\"gen-1764634200-aBcDeFgHiJkLmNoP\",\"provider\":\"DeepInfra\",\"model\":\"meta-llama/llama-3.3-70b-instruct\",\"object\":\"chat.completion.chunk\",\"created\":1764634200,\"error\"")
            .unwrap();
    let mut cut = ScriptedAnswer::streaming(chunks_of(
        &OPENROUTER_LENGTH_THEN_ERROR_TRANSCRIPT[..upto],
        50,
    ));
    cut.ending = Some(TransportError::Network("connection reset".into()));
    let transport = ScriptedTransport::answering(vec![], cut);
    let events = crate::tests_support::coalesce(collect(&transport));
    assert_eq!(
        events[events.len() - 2..],
        [
            StreamEvent::Stopped {
                stop_reason: StopReason::MaxTokens
            },
            StreamEvent::Error(ProviderError::StreamCut {
                provider: "OpenAI".into()
            })
        ]
    );
}

#[test]
fn only_choice_zero_is_read_by_its_index_split_at_every_byte() {
    assert_same_at_every_boundary(
        Dialect::OpenAiChat,
        OPENAI_TWO_CHOICES_TRANSCRIPT,
        &[
            StreamEvent::TextDelta("Roots pull ".into()),
            StreamEvent::TextDelta("water up — 根.".into()),
            StreamEvent::Usage {
                input: 15,
                output: 24,
                cached: 0,
            },
            StreamEvent::Done {
                stop_reason: Some(StopReason::EndTurn),
            },
        ],
    );
}

#[test]
fn anthropic_and_gemini_errors_after_a_max_tokens_stop_keep_the_stop() {
    let upto = ANTHROPIC_TRANSCRIPT.find("event: message_delta").unwrap();
    let anthropic = [
            &ANTHROPIC_TRANSCRIPT[..upto],
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":64}}\n\n",
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n",
        ]
        .concat();
    let events = decode_whole(Dialect::Anthropic, anthropic.as_bytes());
    assert_eq!(
        events[events.len() - 2..],
        [
            StreamEvent::Stopped {
                stop_reason: StopReason::MaxTokens
            },
            StreamEvent::Error(ProviderError::ServerError {
                provider: "Test".into(),
                status: 500,
                message: "Internal server error".into()
            })
        ]
    );
    let gemini = [
            "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Leaves look green because\"}],\"role\": \"model\"},\"finishReason\": \"MAX_TOKENS\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 12,\"candidatesTokenCount\": 4,\"totalTokenCount\": 16},\"modelVersion\": \"gemini-2.5-flash\"}\r\n\r\n",
            "data: {\"error\": {\"code\": 500,\"message\": \"An internal error has occurred.\",\"status\": \"INTERNAL\"}}\r\n\r\n",
        ]
        .concat();
    let events = decode_whole(Dialect::Gemini, gemini.as_bytes());
    assert_eq!(
        events[events.len() - 2..],
        [
            StreamEvent::Stopped {
                stop_reason: StopReason::MaxTokens
            },
            StreamEvent::Error(ProviderError::ServerError {
                provider: "Test".into(),
                status: 500,
                message: "An internal error has occurred.".into()
            })
        ]
    );
}

#[test]
fn llama_cpp_and_openai_context_overflows_are_told_apart_from_other_bad_requests() {
    let llama = r#"{"error":{"code":400,"message":"request (9030 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9030,"n_ctx":8192}}"#;
    let transport =
        ScriptedTransport::answering(vec![], ScriptedAnswer::status(400, vec![], llama));
    let local = Endpoint::from_preset(preset("llamacpp").unwrap(), "qwen3-8b", None);
    let events = collect_with(&transport, local);
    let [StreamEvent::Error(err)] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert_eq!(
        err,
        &ProviderError::ContextTooLong {
            provider: "llama.cpp server (on this computer)".into(),
            prompt_tokens: Some(9030),
            context_tokens: Some(8192),
        }
    );
    let openai = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let transport = ScriptedTransport::answering(
        vec![ScriptedAnswer::status(400, vec![], openai)],
        ScriptedAnswer::streaming(chunks_of(OPENAI_TRANSCRIPT, 64)),
    );
    let (events, retries) = with_retry(
        &transport,
        &InstantSleeper::default(),
        RetryPolicy::default(),
    );
    assert!(retries.is_empty(), "a request too long is not retried");
    assert_eq!(
        events,
        [StreamEvent::Error(ProviderError::ContextTooLong {
            provider: "OpenAI".into(),
            prompt_tokens: Some(131072),
            context_tokens: Some(128000),
        })]
    );
}

#[test]
fn anthropic_tool_arguments_arrive_as_json() {
    let transcript = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"decide\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"next\\\": \"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"mia\\\"}\"}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
    assert_eq!(
        decode_whole(Dialect::Anthropic, transcript.as_bytes()),
        [
            StreamEvent::JsonDelta("{\"next\": ".into()),
            StreamEvent::JsonDelta("\"mia\"}".into()),
            StreamEvent::Usage {
                input: 10,
                output: 9,
                cached: 0
            },
            StreamEvent::Done {
                stop_reason: Some(StopReason::ToolUse)
            },
        ]
    );
}

// --- request building, per dialect ---

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn openai_request_has_bearer_and_content_type_only() {
    let http = http_request(&endpoint(), &request());
    assert_eq!(http.method, Method::Post);
    assert_eq!(http.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(
        http.headers,
        headers(&[
            ("content-type", "application/json"),
            ("authorization", &format!("Bearer {KEY}"))
        ])
    );
    let body = http.json_body();
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Teach."})
    );
    assert!(
        !format!("{http:?}").contains(KEY),
        "Debug must hide the key"
    );
}

#[test]
fn local_server_without_a_key_gets_no_authorization_header() {
    let local = Endpoint::from_preset(preset("ollama").unwrap(), "llama3.2", None);
    let http = http_request(&local, &request());
    assert_eq!(http.url, "http://localhost:11434/v1/chat/completions");
    assert_eq!(
        http.headers,
        headers(&[("content-type", "application/json")])
    );
    let blank = Endpoint {
        api_key: Some("  ".into()),
        ..local
    };
    assert_eq!(http_request(&blank, &request()).headers.len(), 1);
}

#[test]
fn anthropic_request_has_key_version_and_browser_opt_in() {
    let http = http_request(&endpoint_for("anthropic", "claude-haiku-4-5"), &request());
    assert_eq!(http.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(
        http.headers,
        headers(&[
            ("content-type", "application/json"),
            ("x-api-key", KEY),
            ("anthropic-version", "2023-06-01"),
            ("anthropic-dangerous-direct-browser-access", "true"),
        ])
    );
    let body = http.json_body();
    assert_eq!(body["system"], "Teach.");
    assert_eq!(body["messages"][0]["role"], "user");
    assert!(body.get("stream_options").is_none());
    assert!(!format!("{http:?}").contains(KEY));
}

#[test]
fn gemini_request_streams_sse_with_the_key_in_a_header() {
    let http = http_request(
        &endpoint_for("gemini", "models/gemini-2.5-flash"),
        &request(),
    );
    assert_eq!(
            http.url,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
    assert!(!http.url.contains(KEY));
    assert_eq!(
        http.headers,
        headers(&[
            ("content-type", "application/json"),
            ("x-goog-api-key", KEY)
        ])
    );
    assert_eq!(
        http.json_body()["systemInstruction"]["parts"][0]["text"],
        "Teach."
    );
    assert!(!format!("{http:?}").contains(KEY));
}

#[test]
fn ollama_native_request_goes_to_api_chat_without_auth() {
    let local = Endpoint::from_preset(preset("ollama-native").unwrap(), "qwen3", None);
    let mut req = request();
    req.json_schema = Some(JsonSchema {
        name: "d".into(),
        schema: json!({"type": "object"}),
    });
    let http = http_request(&local, &req);
    assert_eq!(http.url, "http://localhost:11434/api/chat");
    assert_eq!(
        http.headers,
        headers(&[("content-type", "application/json")])
    );
    assert_eq!(http.json_body()["format"], json!({"type": "object"}));
}

#[test]
fn a_schema_is_structured_output_where_the_dialect_has_it() {
    let mut req = request();
    req.json_schema = Some(JsonSchema {
        name: "director_decision".into(),
        schema: json!({"type": "object", "properties": {"next": {"type": "string"}}}),
    });
    let openai = http_request(&endpoint(), &req).json_body();
    assert_eq!(openai["response_format"]["type"], "json_schema");
    assert_eq!(openai["response_format"]["json_schema"]["strict"], true);
    let gemini = http_request(&endpoint_for("gemini", "gemini-2.5-flash"), &req).json_body();
    assert_eq!(
        gemini["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert_eq!(
        gemini["generationConfig"]["responseSchema"]["properties"]["next"]["type"],
        "string"
    );
    let anthropic = http_request(&endpoint_for("anthropic", "m"), &req).json_body();
    assert!(anthropic["system"]
        .as_str()
        .unwrap()
        .contains("director_decision"));
}

// --- stream_chat over the transport ---

#[test]
fn streamed_reply_arrives_whole_whatever_the_chunk_size() {
    for size in [1, 7, 64, 4096] {
        let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, size));
        let events = collect(&transport);
        assert_eq!(
            text_of(&events),
            "Plants turn light into sugar — 光合作用 🌱."
        );
        assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
        assert!(events.last().is_some_and(StreamEvent::is_terminal));
    }
}

#[test]
fn every_dialect_streams_through_stream_chat() {
    for (id, model, transcript) in [
        ("deepseek", "deepseek-reasoner", DEEPSEEK_TRANSCRIPT),
        ("anthropic", "claude-sonnet-4-5", ANTHROPIC_TRANSCRIPT),
        ("gemini", "gemini-2.5-flash", GEMINI_TRANSCRIPT),
        ("ollama-native", "qwen3", OLLAMA_TRANSCRIPT),
    ] {
        let transport = ScriptedTransport::streaming(chunks_of(transcript, 13));
        let events = collect_with(&transport, endpoint_for(id, model));
        assert!(
            text_of(&events).starts_with("Le") || text_of(&events).starts_with("Ch"),
            "{id}"
        );
        assert!(events.contains(&StreamEvent::ThinkingEnd), "{id}");
        assert!(
            matches!(events.last(), Some(StreamEvent::Done { .. })),
            "{id}: {events:?}"
        );
    }
}

#[test]
fn a_json_request_streams_json_deltas() {
    let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, 50));
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    let mut req = request();
    req.json_schema = Some(JsonSchema {
        name: "x".into(),
        schema: json!({}),
    });
    let (_abort, drive) = stream_chat(&transport, endpoint(), &req, move |e| {
        sink.borrow_mut().push(e)
    });
    run_to_end(drive);
    assert!(matches!(events.borrow()[0], StreamEvent::JsonDelta(_)));
}

#[test]
fn rejected_key_becomes_an_error_without_the_key() {
    let mut transport = ScriptedTransport::streaming(vec![format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","code":"invalid_api_key"}}}}"#
    )
    .into_bytes()]);
    transport.then.status = 401;
    let events = collect(&transport);
    assert_eq!(
        events,
        [StreamEvent::Error(ProviderError::KeyRejected {
            provider: "OpenAI".into(),
            status: 401
        })]
    );
}

#[test]
fn refused_connection_is_a_network_error_that_names_the_fix() {
    let mut transport = ScriptedTransport::streaming(vec![]);
    transport.then.connect_error = Some(TransportError::Network(format!(
        "TypeError: Failed to fetch https://x/?key={KEY}"
    )));
    let events = collect(&transport);
    let [StreamEvent::Error(err @ ProviderError::Network { .. })] = events.as_slice() else {
        panic!("expected a network error, got {events:?}");
    };
    assert!(err.to_string().contains("CORS"));
    assert!(!err.to_string().contains(KEY));
    let local = Endpoint::from_preset(preset("ollama").unwrap(), "llama3.2", None);
    let events = collect_with(&transport, local);
    let [StreamEvent::Error(err)] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert!(err.to_string().contains("OLLAMA_ORIGINS"), "{err}");
}

#[test]
fn a_local_server_refusing_this_page_is_told_apart_from_a_bad_key() {
    let transport = ScriptedTransport::answering(vec![], ScriptedAnswer::status(403, vec![], ""));
    let local = Endpoint::from_preset(preset("ollama-native").unwrap(), "qwen3", None);
    let events = collect_with(&transport, local);
    let [StreamEvent::Error(err @ ProviderError::Network { .. })] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert!(err.to_string().contains("OLLAMA_ORIGINS"), "{err}");
}

#[test]
fn anthropic_org_without_browser_access_is_told_so() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"CORS requests are not allowed for this Organization because of its settings. Please contact your admin."}}"#;
    let transport = ScriptedTransport::answering(vec![], ScriptedAnswer::status(401, vec![], body));
    let events = collect_with(&transport, endpoint_for("anthropic", "m"));
    assert_eq!(
        events,
        [StreamEvent::Error(ProviderError::BrowserAccessDenied {
            provider: "Anthropic (Claude)".into()
        })]
    );
}

#[test]
fn gemini_bad_key_is_a_rejected_key_despite_its_400() {
    let body = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}"#;
    let transport = ScriptedTransport::answering(vec![], ScriptedAnswer::status(400, vec![], body));
    let events = collect_with(&transport, endpoint_for("gemini", "gemini-2.5-flash"));
    assert!(matches!(
        events.as_slice(),
        [StreamEvent::Error(ProviderError::KeyRejected {
            status: 400,
            ..
        })]
    ));
}

#[test]
fn connection_lost_mid_reply_is_a_cut_stream() {
    let mut transport = ScriptedTransport::streaming(chunks_of(&OPENAI_TRANSCRIPT[..400], 50));
    transport.then.ending = Some(TransportError::Network("connection reset".into()));
    let events = collect(&transport);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Error(ProviderError::StreamCut {
            provider: "OpenAI".into()
        }))
    );
}

#[test]
fn aborting_before_the_body_ends_with_aborted_only() {
    let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, 40));
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    let (abort, drive) = stream_chat(&transport, endpoint(), &request(), move |e| {
        sink.borrow_mut().push(e)
    });
    abort.abort();
    run_to_end(drive);
    assert_eq!(
        events.borrow().as_slice(),
        [StreamEvent::Error(ProviderError::Aborted {
            provider: "OpenAI".into()
        })]
    );
}

#[test]
fn aborting_mid_reply_keeps_what_arrived_and_ends_with_aborted() {
    let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, 40));
    // The learner presses stop as the first words appear (the handle sets this flag).
    let stop = transport.aborted.clone();
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    let (_abort, drive) = stream_chat(&transport, endpoint(), &request(), move |e| {
        if matches!(e, StreamEvent::TextDelta(_)) {
            stop.set(true);
        }
        sink.borrow_mut().push(e);
    });
    run_to_end(drive);
    assert_eq!(
        events.borrow().as_slice(),
        [
            StreamEvent::TextDelta("Plants turn light ".into()),
            StreamEvent::Error(ProviderError::Aborted {
                provider: "OpenAI".into()
            })
        ]
    );
}

// --- retries ---

/// Sleeps no time at all, and remembers what it was asked.
#[derive(Default)]
struct InstantSleeper {
    asked: RefCell<Vec<u64>>,
}

impl Sleeper for InstantSleeper {
    fn sleep(&self, ms: u64) -> Pin<Box<dyn Future<Output = ()>>> {
        self.asked.borrow_mut().push(ms);
        Box::pin(std::future::ready(()))
    }
}

type Retries = Rc<RefCell<Vec<(u32, u64, ProviderError)>>>;

fn with_retry(
    transport: &ScriptedTransport,
    sleeper: &InstantSleeper,
    policy: RetryPolicy,
) -> (Vec<StreamEvent>, Vec<(u32, u64, ProviderError)>) {
    let events = Rc::new(RefCell::new(Vec::new()));
    let retries: Retries = Rc::default();
    let (sink, log) = (events.clone(), retries.clone());
    let (_abort, drive) = stream_chat_with_retry(
        transport,
        sleeper,
        policy,
        endpoint(),
        &request(),
        move |e| sink.borrow_mut().push(e),
        move |attempt, ms, err: &ProviderError| log.borrow_mut().push((attempt, ms, err.clone())),
    );
    run_to_end(drive);
    let out = (events.borrow().clone(), retries.borrow().clone());
    out
}

#[test]
fn a_rate_limit_then_success_succeeds_after_one_reported_retry() {
    let limited = ScriptedAnswer::status(
        429,
        vec![("retry-after".into(), "2".into())],
        r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
    );
    let transport = ScriptedTransport::answering(
        vec![limited],
        ScriptedAnswer::streaming(chunks_of(OPENAI_TRANSCRIPT, 33)),
    );
    let sleeper = InstantSleeper::default();
    let (events, retries) = with_retry(&transport, &sleeper, RetryPolicy::default());
    assert_eq!(
        text_of(&events),
        "Plants turn light into sugar — 光合作用 🌱."
    );
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })));
    assert!(!events.iter().any(|e| matches!(e, StreamEvent::Error(_))));
    assert_eq!(retries.len(), 1);
    let (attempt, wait, err) = &retries[0];
    assert_eq!((*attempt, *wait), (1, 2_000));
    assert!(matches!(err, ProviderError::RateLimited { .. }));
    assert_eq!(transport.requests.borrow().len(), 2);
    // The sleeper slept the retry wait (and was asked for stall timers, which never fired).
    assert!(sleeper.asked.borrow().contains(&2_000));
}

#[test]
fn a_rejected_key_is_reported_at_once_without_retrying() {
    let transport = ScriptedTransport::answering(vec![], ScriptedAnswer::status(401, vec![], "{}"));
    let (events, retries) = with_retry(
        &transport,
        &InstantSleeper::default(),
        RetryPolicy::default(),
    );
    assert!(retries.is_empty());
    assert!(matches!(
        events.as_slice(),
        [StreamEvent::Error(ProviderError::KeyRejected { .. })]
    ));
    assert_eq!(transport.requests.borrow().len(), 1);
}

#[test]
fn server_errors_are_retried_until_attempts_run_out() {
    let transport =
        ScriptedTransport::answering(vec![], ScriptedAnswer::status(500, vec![], "boom"));
    let (events, retries) = with_retry(
        &transport,
        &InstantSleeper::default(),
        RetryPolicy::default(),
    );
    assert_eq!(retries.len(), 3);
    assert_eq!(retries.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3]);
    for (attempt, wait, _) in &retries {
        let full = 1_000u64 << (attempt - 1);
        assert!((full / 2..=full).contains(wait), "{attempt}: {wait}");
    }
    assert_eq!(events.len(), 1);
    assert!(matches!(
        events[0],
        StreamEvent::Error(ProviderError::ServerError { .. })
    ));
    assert_eq!(transport.requests.borrow().len(), 4);
}

#[test]
fn a_reply_cut_after_text_is_not_retried() {
    let upto = OPENAI_TRANSCRIPT.find("into sugar").unwrap();
    let mut cut = ScriptedAnswer::streaming(chunks_of(&OPENAI_TRANSCRIPT[..upto], 50));
    cut.ending = Some(TransportError::Network("reset".into()));
    let transport = ScriptedTransport::answering(vec![], cut);
    let (events, retries) = with_retry(
        &transport,
        &InstantSleeper::default(),
        RetryPolicy::default(),
    );
    assert!(retries.is_empty());
    assert_eq!(text_of(&events), "Plants turn light ");
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Error(ProviderError::StreamCut { .. }))
    ));
}

#[test]
fn a_silent_stream_stalls_and_is_retried() {
    let mut silent = ScriptedAnswer::streaming(chunks_of(&OPENAI_TRANSCRIPT[..24], 24));
    silent.hangs = true;
    let transport = ScriptedTransport::answering(
        vec![silent],
        ScriptedAnswer::streaming(chunks_of(OPENAI_TRANSCRIPT, 100)),
    );
    let sleeper = InstantSleeper::default();
    let (events, retries) = with_retry(&transport, &sleeper, RetryPolicy::default());
    assert_eq!(retries.len(), 1);
    assert_eq!(
        retries[0].2,
        ProviderError::Stalled {
            provider: "OpenAI".into(),
            seconds: 45
        }
    );
    assert!(sleeper.asked.borrow().contains(&45_000));
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })));
}

#[test]
fn an_answer_that_has_not_started_is_waited_for_longer_than_a_pause_mid_reply() {
    let mut silent = ScriptedAnswer::streaming(Vec::new());
    silent.hangs = true;
    let transport = ScriptedTransport::answering(
        vec![silent],
        ScriptedAnswer::streaming(chunks_of(OPENAI_TRANSCRIPT, 100)),
    );
    let sleeper = InstantSleeper::default();
    let (events, retries) = with_retry(&transport, &sleeper, RetryPolicy::default());
    assert_eq!(
        retries[0].2,
        ProviderError::Stalled {
            provider: "OpenAI".into(),
            seconds: 60
        }
    );
    assert!(matches!(events.last(), Some(StreamEvent::Done { .. })));
}

#[test]
fn a_local_server_gets_minutes_to_read_its_prompt_before_it_counts_as_stalled() {
    let local = Endpoint::from_preset(preset("llamacpp").unwrap(), "qwen", None);
    let policy = RetryPolicy::default().patient_for(&local);
    assert_eq!(policy.first_byte_ms, retry::LOCAL_FIRST_BYTE_MS);
    assert_eq!(policy.stall_ms, retry::LOCAL_STALL_MS);
    assert_eq!(
        RetryPolicy::default().patient_for(&endpoint()),
        RetryPolicy::default()
    );
    let mut silent = ScriptedAnswer::streaming(Vec::new());
    silent.hangs = true;
    let transport = ScriptedTransport::answering(
        vec![silent],
        ScriptedAnswer::streaming(chunks_of(OPENAI_TRANSCRIPT, 100)),
    );
    let sleeper = InstantSleeper::default();
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    let (_abort, drive) = stream_chat_with_retry(
        &transport,
        &sleeper,
        policy,
        local,
        &request(),
        move |e| sink.borrow_mut().push(e),
        |_, _, _: &ProviderError| {},
    );
    run_to_end(drive);
    assert!(sleeper.asked.borrow().contains(&retry::LOCAL_FIRST_BYTE_MS));
    assert!(!sleeper.asked.borrow().contains(&60_000));
}

#[test]
fn loopback_and_private_addresses_are_local_servers() {
    let at = |url: &str| Endpoint {
        provider: "custom".into(),
        dialect: Dialect::OpenAiChat,
        base_url: url.into(),
        model: "m".into(),
        api_key: None,
    };
    for url in [
        "http://localhost:8081/v1",
        "http://127.0.0.1:9000",
        "http://[::1]:8081/v1",
        "http://192.168.1.20:1234/v1",
        "http://10.0.0.5/v1",
        "http://172.20.0.2:8000/v1",
        "http://gpu-box.local:8080/v1",
    ] {
        assert!(at(url).is_local(), "{url}");
    }
    for url in [
        "https://api.openai.com/v1",
        "https://172.64.1.1/v1",
        "https://127.example.com/v1",
        "https://10.example.org",
        "",
    ] {
        assert!(!at(url).is_local(), "{url}");
    }
    assert!(Endpoint::from_preset(preset("ollama").unwrap(), "m", None).is_local());
}

#[test]
fn aborting_a_retrying_stream_stops_it() {
    let transport =
        ScriptedTransport::answering(vec![], ScriptedAnswer::status(500, vec![], "boom"));
    let sleeper = InstantSleeper::default();
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    let (abort, drive) = stream_chat_with_retry(
        &transport,
        &sleeper,
        RetryPolicy::default(),
        endpoint(),
        &request(),
        move |e| sink.borrow_mut().push(e),
        |_, _, _: &ProviderError| {},
    );
    abort.abort();
    run_to_end(drive);
    assert_eq!(
        events.borrow().as_slice(),
        [StreamEvent::Error(ProviderError::Aborted {
            provider: "OpenAI".into()
        })]
    );
    assert!(transport.requests.borrow().is_empty());
}

// --- no message ever shows the key ---

fn every_error(provider: &str, detail: &str) -> Vec<ProviderError> {
    let p = provider.to_string();
    let d = detail.to_string();
    vec![
        ProviderError::KeyRejected {
            provider: p.clone(),
            status: 401,
        },
        ProviderError::RateLimited {
            provider: p.clone(),
            retry_after_ms: Some(3_000),
        },
        ProviderError::QuotaExhausted {
            provider: p.clone(),
        },
        ProviderError::ModelNotFound {
            provider: p.clone(),
            model: "m".into(),
        },
        ProviderError::BadRequest {
            provider: p.clone(),
            status: 400,
            message: d.clone(),
        },
        ProviderError::ServerError {
            provider: p.clone(),
            status: 500,
            message: d.clone(),
        },
        ProviderError::Network {
            provider: p.clone(),
            detail: d.clone(),
            fix: explain_network_failure(provider),
        },
        ProviderError::BrowserAccessDenied {
            provider: p.clone(),
        },
        ProviderError::StreamCut {
            provider: p.clone(),
        },
        ProviderError::Stalled {
            provider: p.clone(),
            seconds: 45,
        },
        ProviderError::Aborted {
            provider: p.clone(),
        },
        ProviderError::MalformedReply {
            provider: p.clone(),
            detail: d.clone(),
        },
        ProviderError::Upstream {
            provider: p.clone(),
            message: d.clone(),
        },
        ProviderError::refused(provider, &format!("I will not repeat {d}.")),
        ProviderError::ContextTooLong {
            provider: p.clone(),
            prompt_tokens: Some(9030),
            context_tokens: Some(8192),
        },
        ProviderError::ContextTooLong {
            provider: p,
            prompt_tokens: None,
            context_tokens: None,
        },
    ]
}

#[test]
fn every_error_message_is_a_sentence_a_learner_can_act_on() {
    for p in PRESETS {
        for err in every_error(p.name, &error::redact(&format!("bad key {KEY}"), KEY)) {
            let text = err.to_string();
            assert!(!text.contains(KEY), "{text}");
            assert!(!format!("{err:?}").contains(KEY));
            assert!(text.contains(p.name), "{text}");
            assert!(text.ends_with('.') || text.ends_with(')'), "{text}");
        }
    }
}

#[test]
fn no_dialect_leaks_the_key_in_an_error() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","type":"invalid_request_error"}}}}"#
    );
    let leak =
        format!("data: {{\"error\":{{\"message\":\"key {KEY} disabled\",\"type\":\"x\"}}}}\n\n");
    let refusal_leak = format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"refusal\":\"I won't use {KEY}.\"}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n"
        );
    let long = format!(
        r#"{{"error":{{"message":"This model's maximum context length is 8192 tokens; key {KEY}","code":"context_length_exceeded"}}}}"#
    );
    for p in PRESETS {
        let endpoint = Endpoint {
            base_url: if p.base_url.is_empty() {
                "https://proxy.example/v1".into()
            } else {
                p.base_url.into()
            },
            ..endpoint_for(p.id, "m")
        };
        for status in [400, 401, 403, 404, 429, 500] {
            let transport =
                ScriptedTransport::answering(vec![], ScriptedAnswer::status(status, vec![], &echo));
            for event in collect_with(&transport, endpoint.clone()) {
                let shown = format!("{event:?}");
                assert!(!shown.contains(KEY), "{} {status}: {shown}", p.id);
                if let StreamEvent::Error(e) = event {
                    assert!(!e.to_string().contains(KEY), "{} {status}: {e}", p.id);
                }
            }
        }
        let transport = ScriptedTransport::streaming(vec![leak.clone().into_bytes()]);
        for event in collect_with(&transport, endpoint.clone()) {
            assert!(!format!("{event:?}").contains(KEY), "{}", p.id);
        }
        let refusal = ScriptedTransport::streaming(vec![refusal_leak.clone().into_bytes()]);
        for event in collect_with(&refusal, endpoint.clone()) {
            assert!(!format!("{event:?}").contains(KEY), "{}", p.id);
            if let StreamEvent::Error(e) = event {
                assert!(!e.to_string().contains(KEY), "{}: {e}", p.id);
            }
        }
        let overflow =
            ScriptedTransport::answering(vec![], ScriptedAnswer::status(400, vec![], &long));
        for event in collect_with(&overflow, endpoint.clone()) {
            assert!(!format!("{event:?}").contains(KEY), "{}", p.id);
        }
        let mut refused = ScriptedTransport::streaming(vec![]);
        refused.then.connect_error =
            Some(TransportError::Network(format!("fetch failed key={KEY}")));
        for event in collect_with(&refused, endpoint) {
            if let StreamEvent::Error(e) = event {
                assert!(!e.to_string().contains(KEY), "{}: {e}", p.id);
            }
        }
    }
}

#[test]
fn endpoint_debug_hides_the_key_and_custom_endpoints_are_named_by_host() {
    let custom = Endpoint {
        provider: "custom".into(),
        dialect: Dialect::OpenAiChat,
        base_url: "https://llm.school.example/v1".into(),
        model: "m".into(),
        api_key: Some(KEY.into()),
    };
    assert!(!format!("{custom:?}").contains(KEY));
    assert_eq!(custom.provider_name(), "the server at llm.school.example");
    assert_eq!(endpoint().provider_name(), "OpenAI");
}
