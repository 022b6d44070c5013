//! Ollama's native dialect (`POST /api/chat`): the request body (`format` for structured output,
//! `think` for reasoning, `options` for sampling) and the decoder from its newline-delimited JSON
//! objects to [`StreamEvent`]s, plus the line splitter for that framing.

use crate::error::parse_frame;
use serde_json::{json, Map, Value};

use crate::error::ProviderError;
use crate::event::{StopReason, StreamEvent};
use crate::request::{ChatRequest, ChatRole, Thinking};

/// The JSON body of a streamed `POST {base}/api/chat`.
pub fn request_body(request: &ChatRequest, model: &str) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for m in &request.messages {
        let role = match m.role {
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        messages.push(json!({"role": role, "content": m.content}));
    }
    let mut body = json!({"model": model, "messages": messages, "stream": true});
    let mut options = Map::new();
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if !options.is_empty() {
        body["options"] = Value::Object(options);
    }
    if let Some(schema) = &request.json_schema {
        body["format"] = schema.schema.clone();
    }
    match request.thinking {
        Thinking::ProviderDefault => {}
        Thinking::Off => body["think"] = json!(false),
        Thinking::On { .. } => body["think"] = json!(true),
    }
    body
}

/// Splits a byte stream into lines, whatever the chunking.
#[derive(Debug, Default)]
pub struct LineSplitter {
    line: Vec<u8>,
}

impl LineSplitter {
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..pos]);
            let line = std::mem::take(&mut self.line);
            lines.extend(non_blank(&line));
            rest = &rest[pos + 1..];
        }
        self.line.extend_from_slice(rest);
        lines
    }

    /// The last line, if the stream did not end with a newline.
    pub fn finish(&mut self) -> Option<String> {
        let line = std::mem::take(&mut self.line);
        non_blank(&line)
    }
}

fn non_blank(line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Turns the JSON lines of one streamed reply into events. `message.thinking` arrives as
/// `ThinkingDelta`; [`crate::ChatStream`] adds `ThinkingEnd`.
#[derive(Debug)]
pub struct OllamaDecoder {
    provider: String,
    called_tool: bool,
    done: bool,
}

impl OllamaDecoder {
    pub fn new(provider: impl Into<String>) -> OllamaDecoder {
        OllamaDecoder {
            provider: provider.into(),
            called_tool: false,
            done: false,
        }
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    pub fn decode(&mut self, line: &str) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if self.done {
            return events;
        }
        let data: Value = match parse_frame(&self.provider, "a stream line", line) {
            Ok(v) => v,
            Err(error) => {
                self.done = true;
                events.push(StreamEvent::Error(error));
                return events;
            }
        };
        if let Some(error) = data.get("error") {
            self.done = true;
            let message = error
                .as_str()
                .or_else(|| error["message"].as_str())
                .unwrap_or("no details given");
            events.push(StreamEvent::Error(ProviderError::from_stream_error(
                &self.provider,
                message,
                None,
                None,
            )));
            return events;
        }
        let message = &data["message"];
        if let Some(thought) = message["thinking"].as_str().filter(|t| !t.is_empty()) {
            events.push(StreamEvent::ThinkingDelta(thought.to_string()));
        }
        if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
            events.push(StreamEvent::TextDelta(text.to_string()));
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            self.called_tool = true;
            events.push(StreamEvent::JsonDelta(
                call["function"]["arguments"].to_string(),
            ));
        }
        if data["done"].as_bool() == Some(true) {
            self.done = true;
            let n = |key: &str| data[key].as_u64().unwrap_or(0);
            events.push(StreamEvent::Usage {
                input: n("prompt_eval_count"),
                output: n("eval_count"),
                cached: 0,
            });
            let reason = data["done_reason"].as_str();
            let stop = match reason {
                _ if self.called_tool => Some(StopReason::ToolUse),
                Some(r) => Some(StopReason::from_openai(r)),
                None => None,
            };
            events.push(StreamEvent::Done { stop_reason: stop });
        }
        events
    }

    /// The byte stream closed: a reply without its `done: true` line was cut.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.done {
            return Vec::new();
        }
        self.done = true;
        vec![StreamEvent::Error(ProviderError::StreamCut {
            provider: self.provider.clone(),
        })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{ChatMessage, JsonSchema};

    #[test]
    fn schema_goes_to_format_and_thinking_to_think() {
        let mut request = ChatRequest::new("Direct.", vec![ChatMessage::user("Next?")]);
        request.json_schema = Some(JsonSchema {
            name: "d".into(),
            schema: json!({"type": "object"}),
        });
        request.thinking = Thinking::Off;
        request.max_tokens = Some(80);
        let body = request_body(&request, "qwen3");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["format"], json!({"type": "object"}));
        assert_eq!(body["think"], false);
        assert_eq!(body["options"]["num_predict"], 80);
        assert_eq!(body["stream"], true);
    }

    #[test]
    fn lines_are_split_whatever_the_chunking() {
        let mut s = LineSplitter::default();
        assert!(s.push(b"{\"a\"").is_empty());
        assert_eq!(
            s.push(b":1}\r\n\n{\"b\":2}\n{\"c\""),
            ["{\"a\":1}", "{\"b\":2}"]
        );
        assert_eq!(s.finish().as_deref(), Some("{\"c\""));
        assert_eq!(s.finish(), None);
    }
}
