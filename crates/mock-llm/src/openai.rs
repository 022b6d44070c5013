//! The OpenAI chat-completions wire format: `chat.completion.chunk` frames over SSE ending in
//! `data: [DONE]` (with a usage chunk first when `stream_options.include_usage` is set, and
//! DeepSeek-style `reasoning_content` deltas for thinking), or one `chat.completion` object;
//! OpenAI-shaped error bodies and model list.

use serde_json::{json, Value};

use crate::script::{prompt_from_messages, token_count, Prompt, Stop};
use crate::stream::{Frame, Misfits, Turn};

/// An error body the way OpenAI writes one.
pub fn error_body(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// The error body OpenAI sends with `status`.
pub fn status_error(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        401 => ("invalid_request_error", Some("invalid_api_key")),
        403 => (
            "invalid_request_error",
            Some("unsupported_country_region_territory"),
        ),
        404 => ("invalid_request_error", Some("model_not_found")),
        429 => ("requests", Some("rate_limit_exceeded")),
        s if s >= 500 => ("server_error", None),
        _ => ("invalid_request_error", None),
    };
    error_body(message, kind, code)
}

pub fn prompt(body: &Value) -> Prompt {
    prompt_from_messages(
        body["model"].as_str().map(str::to_string),
        None,
        &body["messages"],
    )
}

/// The reply's token limit: `max_completion_tokens`, or the older `max_tokens`.
pub fn max_tokens(body: &Value) -> Option<usize> {
    token_count(&body["max_completion_tokens"]).or_else(|| token_count(&body["max_tokens"]))
}

pub fn include_usage(body: &Value) -> bool {
    body["stream_options"]["include_usage"] == json!(true)
}

fn finish_reason(turn: &Turn) -> &'static str {
    match turn.reply.stop_reason {
        Stop::EndTurn => "stop",
        Stop::MaxTokens => "length",
    }
}

fn usage(turn: &Turn) -> Value {
    let output = turn.output_tokens();
    json!({
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": output,
        "total_tokens": turn.input_tokens + output,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": turn.thinking_tokens()},
    })
}

fn created(turn: &Turn) -> u64 {
    1_764_633_600 + turn.n as u64
}

pub fn frames(turn: &Turn, include_usage: bool) -> Vec<Frame> {
    let id = format!("chatcmpl-mock-{}", turn.n);
    let chunk = |choices: Value| {
        let mut chunk = json!({
            "id": id, "object": "chat.completion.chunk", "created": created(turn),
            "model": turn.model, "system_fingerprint": "fp_mock", "choices": choices,
        });
        if include_usage {
            chunk["usage"] = Value::Null;
        }
        chunk
    };
    let data = |value: Value| format!("data: {value}\n\n");
    let delta = |delta: Value, finish: Value| {
        data(chunk(
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]),
        ))
    };

    let mut frames = vec![Frame::preamble(delta(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    ))];
    for piece in turn.thinking_chunks() {
        frames.push(Frame::content(
            delta(
                json!({"content": null, "reasoning_content": piece}),
                Value::Null,
            ),
            &piece,
        ));
    }
    for piece in turn.text_chunks() {
        frames.push(Frame::content(
            delta(json!({"content": piece}), Value::Null),
            &piece,
        ));
    }
    frames.push(Frame::closing(delta(json!({}), json!(finish_reason(turn)))));
    if include_usage {
        let mut last = chunk(json!([]));
        last["usage"] = usage(turn);
        frames.push(Frame::closing(data(last)));
    }
    frames.push(Frame::closing("data: [DONE]\n\n"));
    frames
}

pub fn misfits(message: &str) -> Misfits {
    Misfits {
        malformed: b"data: {\"id\":\"chatcmpl-mock\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\n\n".to_vec(),
        error: format!("data: {}\n\n", error_body(message, "server_error", None)).into_bytes(),
    }
}

pub fn whole(turn: &Turn) -> Value {
    let mut message = json!({"role": "assistant", "content": turn.text(), "refusal": null});
    if let Some(thinking) = turn.thinking() {
        message["reasoning_content"] = json!(thinking);
    }
    json!({
        "id": format!("chatcmpl-mock-{}", turn.n), "object": "chat.completion",
        "created": created(turn), "model": turn.model, "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(turn)}],
        "usage": usage(turn),
    })
}

pub const MODELS: &[&str] = &[
    "gpt-4o-mini",
    "gpt-4.1",
    "o4-mini",
    "gpt-4o-mini-tts",
    "whisper-1",
];

pub fn models(ids: &[String]) -> Value {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 1_700_000_000, "owned_by": "mock-llm"}))
        .collect();
    json!({"object": "list", "data": data})
}
