//! The Anthropic Messages dialect: the request body (system prompt at the top level, a required
//! `max_tokens`, extended thinking) and the decoder from its named SSE events to
//! [`StreamEvent`]s.

use crate::error::parse_frame;
use serde_json::{json, Value};

use crate::error::ProviderError;
use crate::event::{push_failure, StopReason, StreamEvent};
use crate::request::{ChatRequest, ChatRole, Thinking};
use crate::sse::SseFrame;

/// Anthropic requires `max_tokens`; this is the cap when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The smallest thinking budget Anthropic accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

/// The instruction that stands in for structured output, which this dialect does not take
/// through the API Aula uses: the schema goes into the system prompt.
pub(crate) fn schema_instruction(name: &str, schema: &Value) -> String {
    format!(
        "Reply with exactly one JSON document and nothing else (no prose, no code fence). It is \
         a \"{name}\" and must match this JSON Schema:\n{schema}"
    )
}

/// The JSON body of a streamed `POST {base}/messages`.
pub fn request_body(request: &ChatRequest, model: &str) -> Value {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                ChatRole::User => "user",
                ChatRole::Assistant => "assistant",
            };
            json!({"role": role, "content": m.content})
        })
        .collect();
    let mut system = request.system.clone();
    if let Some(schema) = &request.json_schema {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str(&schema_instruction(&schema.name, &schema.schema));
    }
    let mut max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    match request.thinking {
        Thinking::ProviderDefault => {}
        Thinking::Off => body["thinking"] = json!({"type": "disabled"}),
        Thinking::On { budget_tokens } => {
            let budget = budget_tokens
                .unwrap_or(MIN_THINKING_BUDGET * 2)
                .max(MIN_THINKING_BUDGET);
            // The budget is part of max_tokens and must leave room for the answer.
            if max_tokens <= budget {
                max_tokens = budget + DEFAULT_MAX_TOKENS;
            }
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        }
    }
    body["max_tokens"] = json!(max_tokens);
    // Anthropic refuses a temperature together with extended thinking.
    if let (Some(t), false) = (
        request.temperature,
        matches!(request.thinking, Thinking::On { .. }),
    ) {
        body["temperature"] = json!(t);
    }
    body
}

/// Reads Anthropic's `stop_reason`.
pub fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "max_tokens" => StopReason::MaxTokens,
        "tool_use" => StopReason::ToolUse,
        "refusal" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_string()),
    }
}

/// Turns the named events of one streamed reply into events. Reasoning arrives as
/// `ThinkingDelta`; [`crate::ChatStream`] adds `ThinkingEnd`.
#[derive(Debug)]
pub struct AnthropicDecoder {
    provider: String,
    input: u64,
    cached: u64,
    output: u64,
    stop_reason: Option<String>,
    done: bool,
}

fn count(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

impl AnthropicDecoder {
    pub fn new(provider: impl Into<String>) -> AnthropicDecoder {
        AnthropicDecoder {
            provider: provider.into(),
            input: 0,
            cached: 0,
            output: 0,
            stop_reason: None,
            done: false,
        }
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Why the model stopped, once a `message_delta` has said.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop_reason.as_deref().map(stop_reason)
    }

    fn take_usage(&mut self, usage: &Value) {
        // `input_tokens` excludes the cached part; ours includes it.
        let fresh = count(usage, "input_tokens");
        let read = count(usage, "cache_read_input_tokens");
        let written = count(usage, "cache_creation_input_tokens");
        if fresh.is_some() || read.is_some() || written.is_some() {
            self.cached = read.unwrap_or(self.cached);
            self.input =
                fresh.unwrap_or_default() + read.unwrap_or_default() + written.unwrap_or_default();
        }
        if let Some(out) = count(usage, "output_tokens") {
            self.output = out; // cumulative
        }
    }

    fn end(&mut self, events: &mut Vec<StreamEvent>) {
        self.done = true;
        events.push(StreamEvent::Usage {
            input: self.input,
            output: self.output,
            cached: self.cached,
        });
        events.push(StreamEvent::Done {
            stop_reason: self.stop_reason.as_deref().map(stop_reason),
        });
    }

    pub fn decode(&mut self, frame: &SseFrame) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        let data: Value = match parse_frame(&self.provider, "an event", &frame.data) {
            Ok(v) => v,
            Err(error) => {
                self.done = true;
                push_failure(&mut events, self.stop_reason(), error);
                return events;
            }
        };
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(frame.event.as_deref())
            .unwrap_or_default();
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.take_usage(usage);
                }
            }
            "content_block_start" => {
                // Blocks usually start empty; text, if any, counts.
                let block = &data["content_block"];
                match block["type"].as_str() {
                    Some("text") => push_text(&mut events, &block["text"], StreamEvent::TextDelta),
                    Some("thinking") => {
                        push_text(&mut events, &block["thinking"], StreamEvent::ThinkingDelta)
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        push_text(&mut events, &delta["text"], StreamEvent::TextDelta)
                    }
                    Some("thinking_delta") => {
                        push_text(&mut events, &delta["thinking"], StreamEvent::ThinkingDelta)
                    }
                    Some("input_json_delta") => {
                        push_text(&mut events, &delta["partial_json"], StreamEvent::JsonDelta)
                    }
                    // The signature seals a thinking block; Aula does not send thinking back.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    self.take_usage(usage);
                }
            }
            "message_stop" => self.end(&mut events),
            "error" => {
                self.done = true;
                let error = &data["error"];
                let error = ProviderError::from_stream_error(
                    &self.provider,
                    error["message"].as_str().unwrap_or("no details given"),
                    error["type"].as_str(),
                    None,
                );
                push_failure(&mut events, self.stop_reason(), error);
            }
            _ => {} // ping, content_block_stop, and event types added later
        }
        events
    }

    /// The byte stream closed: done if the reply said why it stopped, otherwise cut.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        if self.stop_reason.is_some() {
            self.end(&mut events);
        } else {
            self.done = true;
            events.push(StreamEvent::Error(ProviderError::StreamCut {
                provider: self.provider.clone(),
            }));
        }
        events
    }
}

fn push_text(events: &mut Vec<StreamEvent>, value: &Value, make: fn(String) -> StreamEvent) {
    if let Some(text) = value.as_str().filter(|t| !t.is_empty()) {
        events.push(make(text.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{ChatMessage, JsonSchema};

    #[test]
    fn system_goes_top_level_and_max_tokens_is_always_set() {
        let mut request = ChatRequest::new("Teach.", vec![ChatMessage::user("Hi")]);
        request.temperature = Some(0.5);
        let body = request_body(&request, "claude-haiku-4-5");
        assert_eq!(body["system"], "Teach.");
        assert_eq!(body["messages"][0]["role"], "user");
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(1));
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(body["stream"], true);
    }

    #[test]
    fn thinking_budget_fits_inside_max_tokens_and_drops_temperature() {
        let mut request = ChatRequest::new("", vec![ChatMessage::user("Hi")]);
        request.max_tokens = Some(1000);
        request.temperature = Some(0.0);
        request.thinking = Thinking::On {
            budget_tokens: Some(3000),
        };
        let body = request_body(&request, "m");
        assert!(body.get("system").is_none());
        assert_eq!(body["thinking"]["budget_tokens"], 3000);
        assert!(body["max_tokens"].as_u64().unwrap() > 3000);
        assert!(body.get("temperature").is_none());
    }

    #[test]
    fn a_schema_becomes_an_instruction_in_the_system_prompt() {
        let mut request = ChatRequest::new("Direct.", vec![ChatMessage::user("Next?")]);
        request.json_schema = Some(JsonSchema {
            name: "director_decision".into(),
            schema: json!({"type": "object", "required": ["next_agent"]}),
        });
        let body = request_body(&request, "m");
        let system = body["system"].as_str().unwrap();
        assert!(system.starts_with("Direct.\n\n"));
        assert!(system.contains("director_decision"));
        assert!(system.contains("\"required\":[\"next_agent\"]"));
        assert!(body.get("output_format").is_none() && body.get("tools").is_none());
    }
}
