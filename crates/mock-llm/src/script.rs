//! What the mock says, and how it misbehaves. A script is JSON:
//!
//! ```json
//! {
//!   "replies": [{"text": "First answer."}, {"text": "Second.", "reasoning": "Think first."}],
//!   "chunk_words": 3,
//!   "chunk_delay_ms": 20,
//!   "model": "mock-model",
//!   "faults": [{"type": "http_error", "request": 2, "status": 429, "retry_after_s": 3}]
//! }
//! ```
//!
//! Chat requests take the replies in order (the last one repeats). A fault applies to one
//! request (`request`, counted from 1 over all chat requests, whatever the wire format) or, when
//! it names none, to every request. The script does not name a wire format: the request path
//! does, so one script serves every dialect the server speaks.

use serde::Deserialize;
use thiserror::Error;

pub const DEFAULT_REPLY: &str = "Hello from mock-llm. This reply is scripted, so a test knows \
                                 exactly which words arrive and in what order.";

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default = "default_replies")]
    pub replies: Vec<Reply>,
    /// Words per streamed chunk.
    #[serde(default = "default_chunk_words")]
    pub chunk_words: usize,
    /// Pause before each streamed chunk.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    /// The model name echoed in replies.
    #[serde(default = "default_model")]
    pub model: String,
    #[serde(default)]
    pub faults: Vec<Fault>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    pub text: String,
    /// Streamed as reasoning before the text, for thinking-model tests.
    #[serde(default)]
    pub reasoning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Answer with this HTTP status and a provider-shaped error body instead of a reply.
    HttpError {
        #[serde(default)]
        request: Option<usize>,
        status: u16,
        #[serde(default = "default_error_message")]
        message: String,
        /// Sent as `Retry-After`.
        #[serde(default)]
        retry_after_s: Option<u64>,
    },
    /// Close the connection after this many text chunks, without finishing the stream.
    CutStream {
        #[serde(default)]
        request: Option<usize>,
        after_chunks: usize,
    },
    /// Send a provider error object in the stream after this many text chunks, then close.
    StreamError {
        #[serde(default)]
        request: Option<usize>,
        after_chunks: usize,
        #[serde(default = "default_error_message")]
        message: String,
    },
}

impl Fault {
    fn request(&self) -> Option<usize> {
        match self {
            Fault::HttpError { request, .. }
            | Fault::CutStream { request, .. }
            | Fault::StreamError { request, .. } => *request,
        }
    }

    /// Whether this fault applies to chat request number `n` (from 1).
    pub fn applies_to(&self, n: usize) -> bool {
        self.request().is_none_or(|r| r == n)
    }
}

fn default_replies() -> Vec<Reply> {
    vec![Reply {
        text: DEFAULT_REPLY.to_string(),
        reasoning: None,
    }]
}

fn default_chunk_words() -> usize {
    3
}

fn default_model() -> String {
    "mock-model".to_string()
}

fn default_error_message() -> String {
    "The mock server was told to fail this request.".to_string()
}

impl Default for Script {
    fn default() -> Script {
        Script {
            replies: default_replies(),
            chunk_words: default_chunk_words(),
            chunk_delay_ms: 0,
            model: default_model(),
            faults: Vec::new(),
        }
    }
}

#[derive(Debug, Error)]
pub enum ScriptError {
    #[error("Cannot read the script {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("The script {path} is not valid: {detail}")]
    Invalid { path: String, detail: String },
}

impl Script {
    /// Parses and checks a script; `path` only names it in errors.
    pub fn from_json(text: &str, path: &str) -> Result<Script, ScriptError> {
        let invalid = |detail: String| ScriptError::Invalid {
            path: path.to_string(),
            detail,
        };
        let script: Script = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if script.replies.is_empty() {
            return Err(invalid("\"replies\" needs at least one reply".into()));
        }
        if script.chunk_words == 0 {
            return Err(invalid("\"chunk_words\" must be at least 1".into()));
        }
        if script.faults.iter().any(|f| f.request() == Some(0)) {
            return Err(invalid("fault requests are counted from 1".into()));
        }
        Ok(script)
    }

    pub fn load(path: &str) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_string(),
            source,
        })?;
        Script::from_json(&text, path)
    }

    /// The reply to chat request number `n` (from 1): the replies in order, the last repeating.
    pub fn reply(&self, n: usize) -> &Reply {
        let last = self.replies.len().saturating_sub(1);
        &self.replies[n.saturating_sub(1).min(last)]
    }

    /// The first fault that applies to chat request `n`.
    pub fn fault(&self, n: usize) -> Option<&Fault> {
        self.faults.iter().find(|f| f.applies_to(n))
    }
}

fn starts_word_alone(c: char) -> bool {
    // Chinese, Japanese and Korean have no spaces: each character counts as a word.
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x9FFF | 0xAC00..=0xD7AF)
}

/// Splits `text` into chunks of `words` words each, keeping every character (spaces stay
/// at the end of the chunk before them), so the chunks joined give `text` back.
pub fn chunks(text: &str, words: usize) -> Vec<String> {
    let words = words.max(1);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_chunk = 0;
    let mut prev_space = true;
    for c in text.chars() {
        let starts_word = !c.is_whitespace() && (prev_space || starts_word_alone(c));
        if starts_word {
            if in_chunk == words {
                out.push(std::mem::take(&mut current));
                in_chunk = 0;
            }
            in_chunk += 1;
        }
        current.push(c);
        prev_space = c.is_whitespace();
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_join_back_into_the_text() {
        let text = "  Plants  turn light\ninto sugar, using water. ";
        let parts = chunks(text, 2);
        assert_eq!(parts.concat(), text);
        assert_eq!(parts[0], "  Plants  turn ");
        assert_eq!(parts.len(), 4);
    }

    #[test]
    fn cjk_text_is_chunked_per_character() {
        let parts = chunks("光合作用很重要", 3);
        assert_eq!(parts, ["光合作", "用很重", "要"]);
    }

    #[test]
    fn empty_text_has_no_chunks() {
        assert!(chunks("", 3).is_empty());
    }

    #[test]
    fn replies_go_in_order_and_the_last_repeats() {
        let script = Script::from_json(
            r#"{"replies": [{"text": "one"}, {"text": "two"}]}"#,
            "t.json",
        )
        .unwrap();
        let texts: Vec<_> = (1..=4).map(|n| script.reply(n).text.as_str()).collect();
        assert_eq!(texts, ["one", "two", "two", "two"]);
    }

    #[test]
    fn a_fault_applies_to_its_request_or_to_all() {
        let script = Script::from_json(
            r#"{"faults": [{"type": "cut_stream", "request": 2, "after_chunks": 1},
                           {"type": "http_error", "status": 500}]}"#,
            "t.json",
        )
        .unwrap();
        assert!(matches!(
            script.fault(1),
            Some(Fault::HttpError { status: 500, .. })
        ));
        assert!(matches!(script.fault(2), Some(Fault::CutStream { .. })));
    }

    #[test]
    fn a_bad_script_is_refused_with_its_path() {
        for text in [
            r#"{"replies": []}"#,
            r#"{"chunk_words": 0}"#,
            r#"{"faults": [{"type": "explode"}]}"#,
            r#"{"replys": []}"#,
            r#"{"faults": [{"type": "cut_stream", "request": 0, "after_chunks": 1}]}"#,
        ] {
            let err = Script::from_json(text, "bad.json").unwrap_err();
            assert!(err.to_string().contains("bad.json"), "{err}");
        }
    }
}
