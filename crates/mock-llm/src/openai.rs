//! The OpenAI chat-completions wire format: `chat.completion.chunk` frames over SSE ending in
//! `data: [DONE]`, or one `chat.completion` object, and OpenAI-shaped error bodies.

use std::io::{self, Write};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::http::{write_head, write_response};
use crate::script::{chunks, Fault, Script};

/// An error body the way OpenAI writes one.
pub fn error_body(message: &str, kind: &str, code: Option<&str>) -> Vec<u8> {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        .to_string()
        .into_bytes()
}

pub fn write_error(
    out: &mut impl Write,
    status: u16,
    message: &str,
    kind: &str,
    code: Option<&str>,
    extra: &[(&str, String)],
) -> io::Result<()> {
    write_response(
        out,
        status,
        "application/json",
        &error_body(message, kind, code),
        extra,
    )
}

fn rough_tokens(text: &str) -> usize {
    text.split_whitespace().count()
}

fn prompt_tokens(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter_map(|m| m["content"].as_str())
                .map(rough_tokens)
                .sum()
        })
        .unwrap_or(0)
}

/// Answers chat request number `n` (from 1) whose JSON body is `request`.
pub fn answer(out: &mut impl Write, request: &Value, script: &Script, n: usize) -> io::Result<()> {
    let fault = script.fault(n);
    if let Some(Fault::HttpError {
        status,
        message,
        retry_after_s,
        ..
    }) = fault
    {
        let (kind, code) = match status {
            429 => ("requests", Some("rate_limit_exceeded")),
            401 | 403 => ("invalid_request_error", Some("invalid_api_key")),
            404 => ("invalid_request_error", Some("model_not_found")),
            s if *s >= 500 => ("server_error", None),
            _ => ("invalid_request_error", None),
        };
        let extra: Vec<(&str, String)> = retry_after_s
            .iter()
            .map(|s| ("Retry-After", s.to_string()))
            .collect();
        return write_error(out, *status, message, kind, code, &extra);
    }

    let reply = script.reply(n);
    let model = request["model"]
        .as_str()
        .unwrap_or(&script.model)
        .to_string();
    let id = format!("chatcmpl-mock-{n}");
    let created = 1_764_633_600 + n as u64;
    let usage = json!({
        "prompt_tokens": prompt_tokens(request),
        "completion_tokens": rough_tokens(&reply.text),
        "total_tokens": prompt_tokens(request) + rough_tokens(&reply.text),
    });

    if request["stream"] != json!(true) {
        let mut message = json!({"role": "assistant", "content": reply.text});
        if let Some(reasoning) = &reply.reasoning {
            message["reasoning_content"] = json!(reasoning);
        }
        let body = json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage,
        });
        return write_response(
            out,
            200,
            "application/json",
            body.to_string().as_bytes(),
            &[],
        );
    }

    write_head(
        out,
        200,
        &[
            ("Content-Type", "text/event-stream".to_string()),
            ("Cache-Control", "no-cache".to_string()),
        ],
    )?;
    let frame = |delta: Value, finish: Value, usage: Option<&Value>| {
        let mut chunk = json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let Some(usage) = usage {
            chunk["usage"] = usage.clone();
        }
        format!("data: {chunk}\n\n")
    };
    let delay = Duration::from_millis(script.chunk_delay_ms);
    let send = |out: &mut dyn Write, text: String| -> io::Result<()> {
        if !delay.is_zero() {
            thread::sleep(delay);
        }
        out.write_all(text.as_bytes())?;
        out.flush()
    };

    send(
        out,
        frame(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
            None,
        ),
    )?;
    if let Some(reasoning) = &reply.reasoning {
        for piece in chunks(reasoning, script.chunk_words) {
            send(
                out,
                frame(json!({"reasoning_content": piece}), Value::Null, None),
            )?;
        }
    }
    for (sent, piece) in chunks(&reply.text, script.chunk_words)
        .into_iter()
        .enumerate()
    {
        match fault {
            Some(Fault::CutStream { after_chunks, .. }) if sent == *after_chunks => {
                return Ok(()); // close without finishing
            }
            Some(Fault::StreamError {
                after_chunks,
                message,
                ..
            }) if sent == *after_chunks => {
                let error = String::from_utf8_lossy(&error_body(message, "server_error", None))
                    .into_owned();
                return send(out, format!("data: {error}\n\n"));
            }
            _ => {}
        }
        send(out, frame(json!({"content": piece}), Value::Null, None))?;
    }
    // A fault placed at or past the last chunk still strikes before the stream finishes.
    match fault {
        Some(Fault::CutStream { .. }) => return Ok(()),
        Some(Fault::StreamError { message, .. }) => {
            let error =
                String::from_utf8_lossy(&error_body(message, "server_error", None)).into_owned();
            return send(out, format!("data: {error}\n\n"));
        }
        _ => {}
    }
    send(out, frame(json!({}), json!("stop"), Some(&usage)))?;
    send(out, "data: [DONE]\n\n".to_string())
}
