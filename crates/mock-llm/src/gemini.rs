//! The Gemini `generateContent` wire format: with `?alt=sse`, each `data:` frame is a whole
//! `GenerateContentResponse` (CRLF line ends, as Google sends them; thought parts flagged
//! `thought: true`; `finishReason` and full `usageMetadata` on the last; no `[DONE]`), without
//! it a JSON array of the same objects; Google-shaped errors and model list.

use serde_json::{json, Value};

use crate::script::{text_in, token_count, Prompt, Stop};
use crate::stream::{Frame, Misfits, Turn};

/// The gRPC status name Google gives `status`.
pub fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

pub fn error_body(status: u16, message: &str) -> Value {
    json!({"error": {"code": status, "message": message, "status": status_name(status)}})
}

/// Google's answer to a rejected key (a 400, not a 401).
pub fn bad_key_body() -> Value {
    json!({"error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        }],
    }})
}

pub fn missing_key_body() -> Value {
    json!({"error": {
        "code": 403,
        "message": "Method doesn't allow unregistered callers (callers without established \
                    identity). Please use API Key or other form of API consumer identity to call \
                    this API.",
        "status": "PERMISSION_DENIED",
    }})
}

pub fn prompt(model: &str, body: &Value) -> Prompt {
    let mut prompt = Prompt {
        model: Some(model.to_string()),
        ..Prompt::default()
    };
    if let Some(system) = body
        .get("systemInstruction")
        .or_else(|| body.get("system_instruction"))
    {
        prompt.system = text_in(system);
        prompt.texts.push(prompt.system.clone());
    }
    for content in body["contents"].as_array().into_iter().flatten() {
        let text = text_in(content);
        prompt.texts.push(text.clone());
        prompt.last_message = text;
    }
    prompt
}

/// `generationConfig.maxOutputTokens` (the REST API takes snake case too).
pub fn max_tokens(body: &Value) -> Option<usize> {
    let config = body
        .get("generationConfig")
        .or_else(|| body.get("generation_config"))?;
    token_count(&config["maxOutputTokens"]).or_else(|| token_count(&config["max_output_tokens"]))
}

/// Google's answer to a prompt longer than the context.
pub fn prompt_too_long(prompt_tokens: usize, n_ctx: usize) -> Value {
    error_body(
        400,
        &format!(
            "The input token count ({prompt_tokens}) exceeds the maximum number of tokens \
             allowed ({n_ctx})."
        ),
    )
}

fn finish_reason(turn: &Turn) -> &'static str {
    match turn.reply.stop_reason {
        Stop::EndTurn => "STOP",
        Stop::MaxTokens => "MAX_TOKENS",
    }
}

fn usage(turn: &Turn, complete: bool) -> Value {
    let mut usage = json!({
        "promptTokenCount": turn.input_tokens,
        "totalTokenCount": turn.input_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": turn.input_tokens}],
    });
    if complete {
        let thoughts = turn.thinking_tokens();
        let candidates = turn.output_tokens() - thoughts;
        usage["candidatesTokenCount"] = json!(candidates);
        usage["totalTokenCount"] = json!(turn.input_tokens + turn.output_tokens());
        if thoughts > 0 {
            usage["thoughtsTokenCount"] = json!(thoughts);
        }
    }
    usage
}

fn response(turn: &Turn, parts: Value, finish: Option<&str>, complete: bool) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(finish) = finish {
        candidate["finishReason"] = json!(finish);
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": usage(turn, complete),
        "modelVersion": turn.model,
        "responseId": format!("mock-response-{}", turn.n),
    })
}

/// The responses a stream is made of, each a (value, piece) pair; the piece is empty for the
/// closing one.
fn responses(turn: &Turn) -> Vec<(Value, Option<String>)> {
    let mut out = Vec::new();
    for piece in turn.thinking_chunks() {
        out.push((
            response(turn, json!([{"text": piece, "thought": true}]), None, false),
            Some(piece),
        ));
    }
    for piece in turn.text_chunks() {
        out.push((
            response(turn, json!([{"text": piece}]), None, false),
            Some(piece),
        ));
    }
    out.push((
        response(turn, json!([{"text": ""}]), Some(finish_reason(turn)), true),
        None,
    ));
    out
}

/// `alt=sse` frames when `sse`, else the pieces of one JSON array.
pub fn frames(turn: &Turn, sse: bool) -> Vec<Frame> {
    let mut frames = Vec::new();
    if !sse {
        frames.push(Frame::preamble("["));
    }
    for (i, (value, piece)) in responses(turn).into_iter().enumerate() {
        let bytes = if sse {
            format!("data: {value}\r\n\r\n")
        } else if i == 0 {
            value.to_string()
        } else {
            format!(",\r\n{value}")
        };
        frames.push(match piece {
            Some(piece) => Frame::content(bytes, &piece),
            None => Frame::closing(bytes),
        });
    }
    if !sse {
        frames.push(Frame::closing("]"));
    }
    frames
}

pub fn misfits(message: &str, sse: bool) -> Misfits {
    let error = error_body(503, message);
    Misfits {
        malformed: if sse {
            b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\r\n\r\n".to_vec()
        } else {
            b",\r\n{\"candidates\":[{\"content\":".to_vec()
        },
        error: if sse {
            format!("data: {error}\r\n\r\n").into_bytes()
        } else {
            format!(",\r\n{error}]").into_bytes()
        },
    }
}

pub fn whole(turn: &Turn) -> Value {
    let mut parts = Vec::new();
    if let Some(thinking) = turn.thinking() {
        parts.push(json!({"text": thinking, "thought": true}));
    }
    parts.push(json!({"text": turn.text()}));
    response(turn, json!(parts), Some(finish_reason(turn)), true)
}

pub const MODELS: &[&str] = &[
    "gemini-2.5-flash",
    "gemini-2.5-pro",
    "gemini-2.5-flash-lite",
];

pub fn models(ids: &[String]) -> Value {
    let models: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({
                "name": format!("models/{id}"), "version": "001", "displayName": id,
                "description": "A scripted model served by mock-llm.",
                "inputTokenLimit": 1_048_576, "outputTokenLimit": 65_536,
                "supportedGenerationMethods": ["generateContent", "countTokens", "streamGenerateContent"],
                "temperature": 1.0, "topP": 0.95, "topK": 64, "maxTemperature": 2.0, "thinking": true,
            })
        })
        .collect();
    json!({"models": models})
}
