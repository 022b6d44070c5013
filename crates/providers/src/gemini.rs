//! The Gemini native dialect (`streamGenerateContent?alt=sse`): the request body (contents,
//! `systemInstruction`, `generationConfig` with structured output and thinking) and the decoder
//! from its frames, each a whole `GenerateContentResponse`, to [`StreamEvent`]s. The stream has
//! no end marker: the connection closing after a `finishReason` is the end.

use crate::error::parse_frame;
use serde_json::{json, Map, Value};

use crate::error::ProviderError;
use crate::event::{push_failure, StopReason, StreamEvent};
use crate::request::{ChatRequest, ChatRole, Thinking};
use crate::sse::SseFrame;

/// The model id as the URL wants it: `models/gemini-2.5-flash` and `gemini-2.5-flash` both work.
pub fn model_path(model: &str) -> &str {
    model.trim().strip_prefix("models/").unwrap_or(model.trim())
}

/// The JSON body of a streamed `POST {base}/models/{model}:streamGenerateContent?alt=sse`.
pub fn request_body(request: &ChatRequest) -> Value {
    let contents: Vec<Value> = request
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                ChatRole::User => "user",
                ChatRole::Assistant => "model",
            };
            json!({"role": role, "parts": [{"text": m.content}]})
        })
        .collect();
    let mut body = json!({"contents": contents});
    if !request.system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": request.system}]});
    }
    let mut config = Map::new();
    if let Some(t) = request.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_tokens {
        config.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(schema) = &request.json_schema {
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert("responseSchema".into(), response_schema(&schema.schema));
    }
    match request.thinking {
        Thinking::ProviderDefault => {}
        Thinking::Off => {
            config.insert("thinkingConfig".into(), json!({"thinkingBudget": 0}));
        }
        Thinking::On { budget_tokens } => {
            // -1 lets the model decide how long to think.
            let budget = budget_tokens.map_or(-1, i64::from);
            config.insert(
                "thinkingConfig".into(),
                json!({"thinkingBudget": budget, "includeThoughts": true}),
            );
        }
    }
    if !config.is_empty() {
        body["generationConfig"] = Value::Object(config);
    }
    body
}

/// The keys of Gemini's `responseSchema` (an OpenAPI 3.0 subset). Others are dropped, because
/// some (e.g. `additionalProperties`, `$schema`) make the request fail.
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "propertyOrdering",
    "title",
];

/// Rewrites a JSON Schema into the subset `responseSchema` takes: `"type": ["string", "null"]`
/// becomes `"type": "string", "nullable": true`, and unknown keys go.
pub fn response_schema(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in object {
        if !SCHEMA_KEYS.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "type" => match value.as_array() {
                Some(types) => {
                    let mut real = types.iter().filter(|t| t.as_str() != Some("null"));
                    if types.len() > 1 && types.iter().any(|t| t.as_str() == Some("null")) {
                        out.insert("nullable".into(), json!(true));
                    }
                    real.next().cloned().unwrap_or(json!("string"))
                }
                None => value.clone(),
            },
            "items" => response_schema(value),
            "anyOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(response_schema)
                    .collect(),
            ),
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), response_schema(v)))
                    .collect(),
            ),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// Reads Gemini's `finishReason`.
pub fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::EndTurn,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY"
        | "BLOCKED" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_string()),
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    input: u64,
    output: u64,
    cached: u64,
}

/// Turns the frames of one streamed reply into events. Parts flagged `thought: true` arrive as
/// `ThinkingDelta`; [`crate::ChatStream`] adds `ThinkingEnd`.
#[derive(Debug)]
pub struct GeminiDecoder {
    provider: String,
    finish_reason: Option<String>,
    called_function: bool,
    usage: Option<Usage>,
    done: bool,
}

impl GeminiDecoder {
    pub fn new(provider: impl Into<String>) -> GeminiDecoder {
        GeminiDecoder {
            provider: provider.into(),
            finish_reason: None,
            called_function: false,
            usage: None,
            done: false,
        }
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Why the model stopped, once a frame has said.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.finish_reason.as_deref().map(stop_reason)
    }

    pub fn decode(&mut self, frame: &SseFrame) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        let data: Value = match parse_frame(&self.provider, "a stream frame", &frame.data) {
            Ok(v) => v,
            Err(error) => {
                self.done = true;
                push_failure(&mut events, self.stop_reason(), error);
                return events;
            }
        };
        if let Some(error) = data.get("error") {
            self.done = true;
            let code = error.get("code").map(|c| c.to_string());
            let error = ProviderError::from_stream_error(
                &self.provider,
                error["message"].as_str().unwrap_or("no details given"),
                error["status"].as_str(),
                code.as_deref(),
            );
            push_failure(&mut events, self.stop_reason(), error);
            return events;
        }
        let candidate = &data["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(text) = part["text"].as_str().filter(|t| !t.is_empty()) {
                events.push(if part["thought"].as_bool() == Some(true) {
                    StreamEvent::ThinkingDelta(text.to_string())
                } else {
                    StreamEvent::TextDelta(text.to_string())
                });
            }
            if let Some(call) = part.get("functionCall") {
                self.called_function = true;
                events.push(StreamEvent::JsonDelta(call["args"].to_string()));
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            if reason != "FINISH_REASON_UNSPECIFIED" {
                self.finish_reason = Some(reason.to_string());
            }
        }
        if data.pointer("/promptFeedback/blockReason").is_some() {
            self.finish_reason = Some("BLOCKED".into());
        }
        if let Some(usage) = data.get("usageMetadata") {
            let n = |key: &str| usage[key].as_u64().unwrap_or(0);
            self.usage = Some(Usage {
                input: n("promptTokenCount"),
                output: n("candidatesTokenCount") + n("thoughtsTokenCount"),
                cached: n("cachedContentTokenCount"),
            });
        }
        events
    }

    /// The byte stream closed, which is how Gemini ends a reply: done if a frame said why it
    /// finished, otherwise cut.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        self.done = true;
        let Some(reason) = self.finish_reason.as_deref() else {
            events.push(StreamEvent::Error(ProviderError::StreamCut {
                provider: self.provider.clone(),
            }));
            return events;
        };
        if let Some(u) = self.usage {
            events.push(StreamEvent::Usage {
                input: u.input,
                output: u.output,
                cached: u.cached,
            });
        }
        let stop = if self.called_function && reason == "STOP" {
            StopReason::ToolUse
        } else {
            stop_reason(reason)
        };
        events.push(StreamEvent::Done {
            stop_reason: Some(stop),
        });
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{ChatMessage, JsonSchema};

    #[test]
    fn assistant_turns_are_model_turns_and_system_is_an_instruction() {
        let request = ChatRequest::new(
            "Teach.",
            vec![
                ChatMessage::user("Hi"),
                ChatMessage::assistant("Hello"),
                ChatMessage::user("Why?"),
            ],
        );
        let body = request_body(&request);
        assert_eq!(body["contents"][1]["role"], "model");
        assert_eq!(body["contents"][2]["parts"][0]["text"], "Why?");
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "Teach.");
        assert!(body.get("generationConfig").is_none());
    }

    #[test]
    fn schema_becomes_response_schema_in_the_openapi_subset() {
        let mut request = ChatRequest::new("", vec![ChatMessage::user("Next?")]);
        request.json_schema = Some(JsonSchema {
            name: "d".into(),
            schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "next_agent": {"type": ["string", "null"], "enum": ["mia", "leo"]},
                    "lines": {"type": "array", "items": {"type": "string", "pattern": "x"}}
                },
                "required": ["next_agent"]
            }),
        });
        request.thinking = Thinking::On {
            budget_tokens: None,
        };
        let config = &request_body(&request)["generationConfig"];
        assert_eq!(config["responseMimeType"], "application/json");
        let schema = &config["responseSchema"];
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("additionalProperties").is_none());
        assert_eq!(schema["properties"]["next_agent"]["type"], "string");
        assert_eq!(schema["properties"]["next_agent"]["nullable"], true);
        assert!(schema["properties"]["lines"]["items"]
            .get("pattern")
            .is_none());
        assert_eq!(schema["required"][0], "next_agent");
        assert_eq!(config["thinkingConfig"]["thinkingBudget"], -1);
        assert_eq!(config["thinkingConfig"]["includeThoughts"], true);
    }

    #[test]
    fn thinking_off_is_a_zero_budget() {
        let mut request = ChatRequest::new("", vec![ChatMessage::user("Hi")]);
        request.thinking = Thinking::Off;
        request.max_tokens = Some(50);
        let config = &request_body(&request)["generationConfig"];
        assert_eq!(config["thinkingConfig"]["thinkingBudget"], 0);
        assert_eq!(config["maxOutputTokens"], 50);
    }

    #[test]
    fn model_path_accepts_listed_names() {
        assert_eq!(model_path("models/gemini-2.5-flash"), "gemini-2.5-flash");
        assert_eq!(model_path(" gemini-2.5-pro "), "gemini-2.5-pro");
    }
}
