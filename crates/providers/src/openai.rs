//! The OpenAI chat-completions dialect, spoken by OpenAI and most other vendors (OpenRouter,
//! DeepSeek, Groq, Mistral, Moonshot, Ollama's `/v1`, llama.cpp, vLLM, …): the request body, and
//! the decoder from `chat.completion.chunk` frames to [`StreamEvent`]s.
//!
//! What the decoder reads, as vendors send it:
//! - only choice 0, found by its `index` (choices of an `n > 1` reply may come in any order, or
//!   one to a chunk); a chunk without `index` is the only choice;
//! - `delta.content` (or tool-call arguments) as the reply, `reasoning_content` / `reasoning` as
//!   thinking, `delta.refusal` as the model declining: its pieces are joined, and the reply ends
//!   in [`ProviderError::Refused`] with its words instead of `Done`;
//! - an `error` object (with or without `choices`) as the end of the stream, classed by
//!   [`ProviderError::from_stream_error`]; if a `finish_reason` came before it, a
//!   [`StreamEvent::Stopped`] with that reason precedes the error.

use crate::error::parse_frame;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ProviderError;
use crate::event::{push_failure, StopReason, StreamEvent};
use crate::request::{ChatRequest, ChatRole, Thinking};
use crate::sse::SseFrame;

/// The JSON body of a streamed `POST {base}/chat/completions`.
pub fn request_body(request: &ChatRequest, model: &str) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        let role = match message.role {
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        messages.push(json!({"role": role, "content": message.content}));
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(n) = request.max_tokens {
        body["max_tokens"] = json!(n);
    }
    if let Some(schema) = &request.json_schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": true},
        });
    }
    // Thinking switches differ per vendor on this dialect: see `vendor_body`.
    body
}

/// [`request_body`] with the switches only some vendors take: how to turn reasoning on or off,
/// and OpenAI's reasoning models' own rules (no `temperature`, `max_completion_tokens`).
pub fn vendor_body(request: &ChatRequest, provider_id: &str, model: &str) -> Value {
    let mut body = request_body(request, model);
    let on = match request.thinking {
        Thinking::ProviderDefault => None,
        Thinking::Off => Some(false),
        Thinking::On { .. } => Some(true),
    };
    let budget = match request.thinking {
        Thinking::On { budget_tokens } => budget_tokens,
        _ => None,
    };
    match (provider_id, on) {
        ("openai", _) => {
            if let Some(n) = body.as_object_mut().and_then(|b| b.remove("max_tokens")) {
                body["max_completion_tokens"] = n;
            }
            if is_openai_reasoning_model(model) {
                if let Some(b) = body.as_object_mut() {
                    b.remove("temperature");
                }
                match on {
                    Some(true) => body["reasoning_effort"] = json!(effort_for(budget)),
                    Some(false) => body["reasoning_effort"] = json!("minimal"),
                    None => {}
                }
            }
        }
        ("deepseek" | "zhipu" | "zai", Some(on)) => {
            body["thinking"] = json!({"type": if on { "enabled" } else { "disabled" }});
        }
        ("qwen" | "siliconflow", Some(on)) => {
            body["enable_thinking"] = json!(on);
            if let Some(n) = budget {
                body["thinking_budget"] = json!(n);
            }
        }
        ("openrouter", Some(false)) => body["reasoning"] = json!({"enabled": false}),
        ("openrouter", Some(true)) => {
            body["reasoning"] = match budget {
                Some(n) => json!({"max_tokens": n}),
                None => json!({"enabled": true}),
            }
        }
        ("ollama" | "groq" | "xai", Some(true)) => {
            body["reasoning_effort"] = json!(effort_for(budget));
        }
        _ => {}
    }
    body
}

/// OpenAI's reasoning models, which refuse `temperature` and take `reasoning_effort`.
fn is_openai_reasoning_model(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    m.starts_with("gpt-5") || m.starts_with("o1") || m.starts_with("o3") || m.starts_with("o4")
}

/// A token budget expressed as the low/medium/high effort some vendors take instead.
fn effort_for(budget: Option<u32>) -> &'static str {
    match budget {
        Some(n) if n < 2048 => "low",
        Some(n) if n >= 8192 => "high",
        _ => "medium",
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<ChunkUsage>,
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct Choice {
    /// Which of the request's `n` replies this is; absent for the only one.
    index: Option<u64>,
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    /// DeepSeek, Moonshot, Qwen and others.
    reasoning_content: Option<String>,
    /// OpenRouter's name for the same thing.
    reasoning: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
    /// The model declining, in words, instead of `content` (OpenAI).
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: String,
    #[serde(rename = "type")]
    kind: Option<String>,
    code: Option<Value>,
}

/// Turns the frames of one streamed reply into events. Feed it every frame, then call
/// [`finish`](Self::finish) when the byte stream closes.
#[derive(Debug)]
pub struct OpenAiChatDecoder {
    provider: String,
    json_reply: bool,
    finish_reason: Option<String>,
    /// The refusal's pieces so far.
    refusal: String,
    thinking: bool,
    done: bool,
}

impl OpenAiChatDecoder {
    /// `provider` is the display name used in error messages.
    pub fn new(provider: impl Into<String>) -> OpenAiChatDecoder {
        OpenAiChatDecoder {
            provider: provider.into(),
            json_reply: false,
            finish_reason: None,
            refusal: String::new(),
            thinking: false,
            done: false,
        }
    }

    /// The request asked for a JSON schema: content arrives as [`StreamEvent::JsonDelta`].
    pub fn expecting_json(mut self) -> OpenAiChatDecoder {
        self.json_reply = true;
        self
    }

    /// Whether the stream has ended (with `Done` or `Error`).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Why the model stopped, once choice 0 has said.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.finish_reason.as_deref().map(StopReason::from_openai)
    }

    pub fn decode(&mut self, frame: &SseFrame) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        if frame.is_done_marker() {
            return self.end();
        }
        let chunk: Chunk = match parse_frame(&self.provider, "a stream chunk", &frame.data) {
            Ok(chunk) => chunk,
            Err(error) => return self.fail(error),
        };
        // An error ends the stream even in a chunk that also has choices (OpenRouter sends one
        // with `finish_reason: "error"`, which says nothing about why the model stopped).
        if let Some(error) = chunk.error {
            let code = error.code.as_ref().map(|c| match c {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            return self.fail(ProviderError::from_stream_error(
                &self.provider,
                &error.message,
                error.kind.as_deref(),
                code.as_deref(),
            ));
        }
        for choice in chunk.choices {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            let delta = choice.delta;
            if let Some(thought) = delta.reasoning_content.or(delta.reasoning) {
                if !thought.is_empty() {
                    self.thinking = true;
                    events.push(StreamEvent::ThinkingDelta(thought));
                }
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.end_thinking(&mut events);
                events.push(if self.json_reply {
                    StreamEvent::JsonDelta(text)
                } else {
                    StreamEvent::TextDelta(text)
                });
            }
            for call in delta.tool_calls.into_iter().flatten() {
                if let Some(args) = call.function.and_then(|f| f.arguments) {
                    if !args.is_empty() {
                        self.end_thinking(&mut events);
                        events.push(StreamEvent::JsonDelta(args));
                    }
                }
            }
            if let Some(words) = delta.refusal {
                self.refusal.push_str(&words);
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        if let Some(usage) = chunk.usage {
            events.push(StreamEvent::Usage {
                input: usage.prompt_tokens,
                output: usage.completion_tokens,
                cached: usage
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .unwrap_or(0),
            });
        }
        events
    }

    /// The byte stream closed. Without `[DONE]`, a reply that reported why it finished still
    /// counts as done (some compatible servers omit the marker); anything else was cut off.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.done {
            return Vec::new();
        }
        if self.finish_reason.is_some() {
            self.end()
        } else {
            let cut = ProviderError::StreamCut {
                provider: self.provider.clone(),
            };
            self.fail(cut)
        }
    }

    /// The reply is over: `Done`, or the model's refusal if that is what it wrote.
    fn end(&mut self) -> Vec<StreamEvent> {
        if self.refusal.trim().is_empty() {
            let mut events = Vec::new();
            self.end_thinking(&mut events);
            self.done = true;
            events.push(StreamEvent::Done {
                stop_reason: self.stop_reason(),
            });
            events
        } else {
            let refused = ProviderError::refused(&self.provider, &self.refusal);
            self.fail(refused)
        }
    }

    fn fail(&mut self, error: ProviderError) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        self.end_thinking(&mut events);
        self.done = true;
        push_failure(&mut events, self.stop_reason(), error);
        events
    }

    fn end_thinking(&mut self, events: &mut Vec<StreamEvent>) {
        if std::mem::take(&mut self.thinking) {
            events.push(StreamEvent::ThinkingEnd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{ChatMessage, JsonSchema};
    use crate::sse::SseDecoder;

    fn decode_all(transcript: &str, decoder: OpenAiChatDecoder) -> Vec<StreamEvent> {
        let mut decoder = decoder;
        let mut sse = SseDecoder::new();
        let mut frames = sse.push(transcript.as_bytes());
        frames.extend(sse.finish());
        let mut events: Vec<StreamEvent> = frames.iter().flat_map(|f| decoder.decode(f)).collect();
        events.extend(decoder.finish());
        events
    }

    fn chunk(delta: &str, finish: &str) -> String {
        format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    }

    #[test]
    fn content_usage_and_finish_reason_become_events() {
        let events = decode_all(
            crate::fixtures::OPENAI_TRANSCRIPT,
            OpenAiChatDecoder::new("OpenRouter"),
        );
        assert_eq!(
            events,
            [
                StreamEvent::TextDelta("Plants turn light ".into()),
                StreamEvent::TextDelta("into sugar — 光合作用 🌱.".into()),
                StreamEvent::Usage {
                    input: 42,
                    output: 9,
                    cached: 32
                },
                StreamEvent::Done {
                    stop_reason: Some(StopReason::EndTurn)
                },
            ]
        );
    }

    #[test]
    fn reasoning_content_streams_as_thinking_then_ends_before_the_answer() {
        let transcript = [
            chunk(
                r#"{"role":"assistant","reasoning_content":"The user asks about "}"#,
                "null",
            ),
            chunk(r#"{"reasoning_content":"chlorophyll."}"#, "null"),
            chunk(r#"{"content":"Chlorophyll is green."}"#, "null"),
            chunk("{}", "\"stop\""),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let events = decode_all(&transcript, OpenAiChatDecoder::new("DeepSeek"));
        assert_eq!(
            events,
            [
                StreamEvent::ThinkingDelta("The user asks about ".into()),
                StreamEvent::ThinkingDelta("chlorophyll.".into()),
                StreamEvent::ThinkingEnd,
                StreamEvent::TextDelta("Chlorophyll is green.".into()),
                StreamEvent::Done {
                    stop_reason: Some(StopReason::EndTurn)
                },
            ]
        );
    }

    #[test]
    fn openrouter_reasoning_field_counts_as_thinking() {
        let transcript = [
            chunk(r#"{"reasoning":"hmm"}"#, "null"),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let events = decode_all(&transcript, OpenAiChatDecoder::new("OpenRouter"));
        assert_eq!(
            events,
            [
                StreamEvent::ThinkingDelta("hmm".into()),
                StreamEvent::ThinkingEnd,
                StreamEvent::Done { stop_reason: None }
            ]
        );
    }

    #[test]
    fn requested_json_and_tool_arguments_arrive_as_json_deltas() {
        let transcript = [
            chunk(r#"{"content":"{\"next_agent\":"}"#, "null"),
            chunk(r#"{"content":"\"mia\"}"}"#, "\"stop\""),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let events = decode_all(
            &transcript,
            OpenAiChatDecoder::new("OpenAI").expecting_json(),
        );
        assert_eq!(events[0], StreamEvent::JsonDelta("{\"next_agent\":".into()));
        let tools = [
            chunk(r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"decide","arguments":""}}]}"#, "null"),
            chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}"#, "\"tool_calls\""),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        assert_eq!(
            decode_all(&tools, OpenAiChatDecoder::new("OpenAI")),
            [
                StreamEvent::JsonDelta("{\"a\":1}".into()),
                StreamEvent::Done {
                    stop_reason: Some(StopReason::ToolUse)
                }
            ]
        );
    }

    #[test]
    fn an_error_object_mid_stream_ends_the_stream_with_an_error() {
        let transcript = [
            chunk(r#"{"content":"Par"}"#, "null"),
            "data: {\"error\":{\"message\":\"Rate limit reached for gpt-4o-mini\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}\n\n".into(),
            chunk(r#"{"content":"ignored"}"#, "null"),
        ]
        .concat();
        let events = decode_all(&transcript, OpenAiChatDecoder::new("OpenAI"));
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(
            events[1],
            StreamEvent::Error(ProviderError::RateLimited { .. })
        ));
    }

    #[test]
    fn a_stream_that_closes_before_finishing_is_reported_cut() {
        let transcript = chunk(r#"{"content":"Half a sen"}"#, "null");
        let events = decode_all(&transcript, OpenAiChatDecoder::new("Groq"));
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Error(ProviderError::StreamCut {
                provider: "Groq".into()
            }))
        );
    }

    #[test]
    fn a_finished_reply_without_the_done_marker_still_completes() {
        let transcript = chunk(r#"{"content":"Done."}"#, "\"length\"");
        let events = decode_all(&transcript, OpenAiChatDecoder::new("Ollama"));
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Done {
                stop_reason: Some(StopReason::MaxTokens)
            })
        );
    }

    #[test]
    fn a_chunk_that_is_not_json_is_a_malformed_reply() {
        let events = decode_all("data: {oops\n\n", OpenAiChatDecoder::new("X"));
        assert!(matches!(
            events.as_slice(),
            [StreamEvent::Error(ProviderError::MalformedReply { .. })]
        ));
    }

    #[test]
    fn request_body_has_system_first_streaming_usage_and_the_schema() {
        let mut request = ChatRequest::new(
            "You are the director.",
            vec![ChatMessage::user("Who speaks next?")],
        );
        request.temperature = Some(0.0);
        request.max_tokens = Some(64);
        request.json_schema = Some(JsonSchema {
            name: "director_decision".into(),
            schema: json!({"type": "object"}),
        });
        let body = request_body(&request, "gpt-4o-mini");
        assert_eq!(body["model"], "gpt-4o-mini");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["content"], "Who speaks next?");
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(
            body["response_format"]["json_schema"]["name"],
            "director_decision"
        );
    }

    #[test]
    fn thinking_switches_follow_each_vendor() {
        let mut request = ChatRequest::new("", vec![ChatMessage::user("Hi")]);
        request.thinking = Thinking::On {
            budget_tokens: Some(4000),
        };
        assert_eq!(
            vendor_body(&request, "deepseek", "deepseek-chat")["thinking"]["type"],
            "enabled"
        );
        assert_eq!(
            vendor_body(&request, "qwen", "qwen-plus")["enable_thinking"],
            true
        );
        assert_eq!(
            vendor_body(&request, "openrouter", "x")["reasoning"]["max_tokens"],
            4000
        );
        assert_eq!(
            vendor_body(&request, "openai", "gpt-5-mini")["reasoning_effort"],
            "medium"
        );
        request.thinking = Thinking::Off;
        assert_eq!(
            vendor_body(&request, "zai", "glm-4.6")["thinking"]["type"],
            "disabled"
        );
        assert!(vendor_body(&request, "mistral", "m")
            .get("thinking")
            .is_none());
        request.thinking = Thinking::ProviderDefault;
        assert!(vendor_body(&request, "deepseek", "d")
            .get("thinking")
            .is_none());
    }

    #[test]
    fn openai_reasoning_models_get_no_temperature_and_completion_tokens() {
        let mut request = ChatRequest::new("", vec![ChatMessage::user("Hi")]);
        request.temperature = Some(0.2);
        request.max_tokens = Some(100);
        let body = vendor_body(&request, "openai", "gpt-5-mini");
        assert!(body.get("temperature").is_none());
        assert!(body.get("max_tokens").is_none());
        assert_eq!(body["max_completion_tokens"], 100);
        let body = vendor_body(&request, "openai", "gpt-4o-mini");
        assert!(body.get("temperature").is_some());
        let body = vendor_body(&request, "groq", "llama");
        assert_eq!(body["max_tokens"], 100);
    }
}
