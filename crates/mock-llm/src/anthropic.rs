//! The Anthropic Messages wire format: named SSE events (`message_start`, per block
//! `content_block_start` / `content_block_delta` / `content_block_stop`, a `ping`,
//! `message_delta` with stop reason and usage, `message_stop`), thinking blocks with
//! `thinking_delta` and a closing `signature_delta`; the whole-message JSON; Anthropic-shaped
//! errors and model list.

use serde_json::{json, Value};

use crate::script::{prompt_from_messages, token_count, Prompt, Stop};
use crate::stream::{Frame, Misfits, Turn};

/// Stands in for the opaque signature that closes a thinking block (base64, like the real one).
pub const SIGNATURE: &str = "RXhhbXBsZSBzaWduYXR1cmUgZnJvbSBtb2NrLWxsbQ==";

pub fn error_body(kind: &str, message: &str, n: usize) -> Value {
    json!({
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": format!("req_mock{n:06}"),
    })
}

/// The error type Anthropic names for `status`.
pub fn error_kind(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    }
}

pub fn prompt(body: &Value) -> Prompt {
    prompt_from_messages(
        body["model"].as_str().map(str::to_string),
        body.get("system"),
        &body["messages"],
    )
}

pub fn max_tokens(body: &Value) -> Option<usize> {
    token_count(&body["max_tokens"])
}

/// Anthropic's answer to a prompt longer than the context.
pub fn prompt_too_long(prompt_tokens: usize, n_ctx: usize, n: usize) -> Value {
    error_body(
        "invalid_request_error",
        &format!("prompt is too long: {prompt_tokens} tokens > {n_ctx} maximum"),
        n,
    )
}

fn stop_reason(turn: &Turn) -> &'static str {
    match turn.reply.stop_reason {
        Stop::EndTurn => "end_turn",
        Stop::MaxTokens => "max_tokens",
    }
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn usage(turn: &Turn, output: usize) -> Value {
    json!({
        "input_tokens": turn.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output,
    })
}

pub fn frames(turn: &Turn) -> Vec<Frame> {
    let start = json!({
        "type": "message_start",
        "message": {
            "id": format!("msg_mock{:06}", turn.n), "type": "message", "role": "assistant",
            "model": turn.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage(turn, 1),
        },
    });
    let mut frames = vec![Frame::preamble(event("message_start", start))];
    let mut index = 0;
    let block_start = |index: usize, block: Value| {
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block}),
        )
    };
    let delta = |index: usize, delta: Value| {
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    };
    let block_stop = |index: usize| {
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        )
    };
    let ping = event("ping", json!({"type": "ping"}));

    if turn.thinking().is_some() {
        frames.push(Frame::preamble(block_start(
            index,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        )));
        frames.push(Frame::preamble(ping.clone()));
        for piece in turn.thinking_chunks() {
            frames.push(Frame::content(
                delta(index, json!({"type": "thinking_delta", "thinking": piece})),
                &piece,
            ));
        }
        frames.push(Frame::content(
            delta(
                index,
                json!({"type": "signature_delta", "signature": SIGNATURE}),
            ),
            "",
        ));
        frames.push(Frame::content(block_stop(index), ""));
        index += 1;
    }
    let text_start = block_start(index, json!({"type": "text", "text": ""}));
    if index == 0 {
        frames.push(Frame::preamble(text_start));
        frames.push(Frame::preamble(ping));
    } else {
        frames.push(Frame::content(text_start, ""));
    }
    for piece in turn.text_chunks() {
        frames.push(Frame::content(
            delta(index, json!({"type": "text_delta", "text": piece})),
            &piece,
        ));
    }
    frames.push(Frame::closing(block_stop(index)));
    frames.push(Frame::closing(event(
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
            "usage": usage(turn, turn.output_tokens()),
        }),
    )));
    frames.push(Frame::closing(event(
        "message_stop",
        json!({"type": "message_stop"}),
    )));
    frames
}

pub fn misfits(message: &str, n: usize) -> Misfits {
    let mut error = error_body("overloaded_error", message, n);
    if let Some(map) = error.as_object_mut() {
        map.remove("request_id");
    }
    Misfits {
        malformed: b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\n\n".to_vec(),
        error: event("error", error).into_bytes(),
    }
}

pub fn whole(turn: &Turn) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = turn.thinking() {
        content.push(json!({"type": "thinking", "thinking": thinking, "signature": SIGNATURE}));
    }
    content.push(json!({"type": "text", "text": turn.text()}));
    json!({
        "id": format!("msg_mock{:06}", turn.n), "type": "message", "role": "assistant",
        "model": turn.model, "content": content, "stop_reason": stop_reason(turn),
        "stop_sequence": null, "usage": usage(turn, turn.output_tokens()),
    })
}

pub const MODELS: &[&str] = &["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"];

pub fn models(ids: &[String]) -> Value {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-09-29T00:00:00Z"})
        })
        .collect();
    json!({
        "data": data, "has_more": false,
        "first_id": ids.first(), "last_id": ids.last(),
    })
}
