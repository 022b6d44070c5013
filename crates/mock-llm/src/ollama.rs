//! The Ollama native chat format: `POST /api/chat` answers newline-delimited JSON objects
//! (`message.content`, `message.thinking`), the last with `done: true`, `done_reason` and the
//! prompt/eval counts; with `"stream": false`, one such object. Errors are `{"error": "..."}`.

use serde_json::{json, Value};

use crate::script::{prompt_from_messages, Prompt, Stop};
use crate::stream::{Frame, Misfits, Turn};

const CREATED_AT: &str = "2025-12-02T00:00:00.000000Z";

pub fn error_body(message: &str) -> Value {
    json!({"error": message})
}

pub fn prompt(body: &Value) -> Prompt {
    prompt_from_messages(
        body["model"].as_str().map(str::to_string),
        None,
        &body["messages"],
    )
}

/// Ollama streams unless told `"stream": false`.
pub fn streams(body: &Value) -> bool {
    body["stream"] != json!(false)
}

fn line(value: Value) -> String {
    format!("{value}\n")
}

fn last(turn: &Turn, message: Value) -> Value {
    let output = turn.output_tokens();
    json!({
        "model": turn.model, "created_at": CREATED_AT, "message": message,
        "done_reason": match turn.reply.stop_reason { Stop::EndTurn => "stop", Stop::MaxTokens => "length" },
        "done": true,
        "total_duration": 1_000_000 * (10 + output as u64), "load_duration": 1_000_000,
        "prompt_eval_count": turn.input_tokens, "prompt_eval_duration": 1_000_000,
        "eval_count": output, "eval_duration": 1_000_000 * output as u64,
    })
}

pub fn frames(turn: &Turn) -> Vec<Frame> {
    let piece = |message: Value| {
        line(
            json!({"model": turn.model, "created_at": CREATED_AT, "message": message, "done": false}),
        )
    };
    let mut frames = Vec::new();
    for thought in turn.thinking_chunks() {
        frames.push(Frame::content(
            piece(json!({"role": "assistant", "content": "", "thinking": thought})),
            &thought,
        ));
    }
    for text in turn.text_chunks() {
        frames.push(Frame::content(
            piece(json!({"role": "assistant", "content": text})),
            &text,
        ));
    }
    frames.push(Frame::closing(line(last(
        turn,
        json!({"role": "assistant", "content": ""}),
    ))));
    frames
}

pub fn misfits(message: &str) -> Misfits {
    Misfits {
        malformed: b"{\"model\":\"mock\",\"message\":{\"role\":\"assistant\",\"content\":\"\n"
            .to_vec(),
        error: line(error_body(message)).into_bytes(),
    }
}

pub fn whole(turn: &Turn) -> Value {
    let mut message = json!({"role": "assistant", "content": turn.text()});
    if let Some(thinking) = turn.thinking() {
        message["thinking"] = json!(thinking);
    }
    last(turn, message)
}

pub const MODELS: &[&str] = &["llama3.2:latest", "qwen3:8b", "gemma3:4b"];

pub fn tags(ids: &[String]) -> Value {
    let models: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({
                "name": id, "model": id, "modified_at": CREATED_AT, "size": 2_019_393_189u64,
                "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
                "details": {"parent_model": "", "format": "gguf", "family": "llama",
                            "families": ["llama"], "parameter_size": "3.2B",
                            "quantization_level": "Q4_K_M"},
            })
        })
        .collect();
    json!({"models": models})
}
