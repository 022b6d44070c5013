//! The Ollama native chat format: `POST /api/chat` answers newline-delimited JSON objects
//! (`message.content`, `message.thinking`), the last with `done: true`, `done_reason` and the
//! prompt/eval counts; with `"stream": false`, one such object. Errors are `{"error": "..."}`.
//! `POST /api/show` describes a model: `model_info` holds `"<architecture>.context_length"`
//! and `parameters` the Modelfile's parameters (`num_ctx` among them), one per line.

use serde_json::{json, Value};

use crate::llamacpp;
use crate::script::{prompt_from_messages, token_count, Prompt, Stop};
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

/// `options.num_predict`; a negative one (-1 "no limit", -2 "fill the context") sets none.
pub fn max_tokens(body: &Value) -> Option<usize> {
    token_count(&body["options"]["num_predict"])
}

/// `options.num_ctx`: the context the request asks the model to be loaded with.
pub fn num_ctx(body: &Value) -> Option<usize> {
    token_count(&body["options"]["num_ctx"]).filter(|n| *n > 0)
}

/// Ollama's refusal of a prompt longer than the context (what it answers with
/// `"truncate": false`): llama.cpp's error, passed on as the message.
pub fn prompt_too_long(prompt_tokens: usize, n_ctx: usize) -> Value {
    error_body(&llamacpp::context_error(prompt_tokens, n_ctx))
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

/// The GGUF architecture a model name suggests, which names its `model_info` keys.
fn architecture(model: &str) -> &'static str {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    [
        ("qwen3", "qwen3"),
        ("qwen", "qwen2"),
        ("gemma3", "gemma3"),
        ("gemma", "gemma2"),
        ("phi", "phi3"),
    ]
    .into_iter()
    .find(|(prefix, _)| name.starts_with(prefix))
    .map_or("llama", |(_, arch)| arch)
}

/// The context length a model was trained for, when the script sets no `n_ctx`.
const TRAINED_CONTEXT: usize = 32_768;

/// `POST /api/show` for `model`: with `n_ctx`, both the model's context length and a
/// `num_ctx` parameter say it; without, the trained length and no `num_ctx` (Ollama's own
/// default then applies).
pub fn show(model: &str, n_ctx: Option<usize>) -> Value {
    let arch = architecture(model);
    let mut parameters = Vec::new();
    let mut modelfile = format!("# Modelfile of {model}, served by mock-llm\nFROM {model}\n");
    if let Some(n) = n_ctx {
        parameters.push(format!("{:<30} {n}", "num_ctx"));
        modelfile.push_str(&format!("PARAMETER num_ctx {n}\n"));
    }
    parameters.push(format!("{:<30} \"<|im_end|>\"", "stop"));
    modelfile.push_str("PARAMETER stop \"<|im_end|>\"\n");
    let mut info = serde_json::Map::new();
    info.insert("general.architecture".into(), json!(arch));
    info.insert("general.parameter_count".into(), json!(8_030_261_248u64));
    info.insert("general.file_type".into(), json!(15));
    info.insert(
        format!("{arch}.context_length"),
        json!(n_ctx.unwrap_or(TRAINED_CONTEXT)),
    );
    info.insert(format!("{arch}.block_count"), json!(32));
    info.insert(format!("{arch}.embedding_length"), json!(4096));
    json!({
        "license": "",
        "modelfile": modelfile,
        "parameters": parameters.join("\n"),
        "template": "{{ if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}<|im_start|>user\n{{ .Prompt }}<|im_end|>\n<|im_start|>assistant\n",
        "details": {"parent_model": "", "format": "gguf", "family": arch, "families": [arch],
                    "parameter_size": "8.0B", "quantization_level": "Q4_K_M"},
        "model_info": info,
        "capabilities": ["completion"],
        "modified_at": CREATED_AT,
    })
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
