//! What the mock says, and how it misbehaves: rules (first match wins) that pick a reply and a
//! list of faults, a default reply, and the pacing of streamed chunks. The format is documented
//! with an example in the crate's top-level doc.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;

pub const DEFAULT_REPLY: &str = "Hello from mock-llm. This reply is scripted, so a test knows \
                                 exactly which words arrive and in what order.";

pub const DEFAULT_TRANSCRIPT: &str = "Hello from mock-llm.";

/// The four wire formats the server speaks, chosen by the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    Openai,
    Anthropic,
    Gemini,
    Ollama,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Openai => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::Ollama => "ollama",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// The reply when no rule gives one.
    #[serde(default)]
    pub default: Option<Reply>,
    /// Older form: replies taken in order by chat request number (the last repeats), used when
    /// no rule gives a reply. Takes precedence over `default`.
    #[serde(default)]
    pub replies: Vec<Reply>,
    /// Words per streamed chunk.
    #[serde(default = "default_chunk_words")]
    pub chunk_words: usize,
    /// Pause before each streamed frame.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    /// The model named in replies when the request names none.
    #[serde(default = "default_model")]
    pub model: String,
    /// Faults for requests whose rule has no `faults` of its own.
    #[serde(default, deserialize_with = "fault_list")]
    pub faults: Vec<FaultSet>,
    /// What `POST /v1/audio/transcriptions` hears.
    #[serde(default = "default_transcript")]
    pub transcript: String,
    /// Model ids listed by the model-list endpoints (each dialect has its own default list).
    #[serde(default)]
    pub models: Option<Vec<String>>,
    /// How many chat requests are answered at once, across dialects (llama.cpp's slots);
    /// the others wait their turn in arrival order. Absent = no limit. Set, the OpenAI
    /// dialect also takes requests without a key, as a llama.cpp server started without
    /// `--api-key` does.
    #[serde(default)]
    pub slots: Option<usize>,
    /// The context per slot, in estimated tokens: a longer prompt is refused and a reply is
    /// cut where the context is full. Absent = no limit.
    #[serde(default)]
    pub n_ctx: Option<usize>,
    /// How fast the prompt is read before the first token, in estimated tokens per second.
    #[serde(default)]
    pub prompt_tokens_per_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    #[serde(rename = "match", default)]
    pub when: Match,
    #[serde(default)]
    pub reply: Option<Reply>,
    /// When present, replaces the script's top-level `faults` for requests this rule matches.
    #[serde(default, deserialize_with = "some_fault_list")]
    pub faults: Option<Vec<FaultSet>>,
}

/// Every given condition must hold; an empty match matches everything.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    pub dialect: Option<Dialect>,
    pub model: Option<String>,
    pub last_message_contains: Option<String>,
    pub system_contains: Option<String>,
}

/// What a request asked, reduced to what rules look at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    pub model: Option<String>,
    pub system: String,
    pub last_message: String,
    /// Every text the request carried (system and messages), for the token estimate.
    pub texts: Vec<String>,
}

impl Prompt {
    pub fn input_tokens(&self) -> usize {
        self.texts.iter().map(|t| estimate_tokens(t)).sum()
    }
}

impl Match {
    pub fn matches(&self, dialect: Dialect, prompt: &Prompt) -> bool {
        self.dialect.is_none_or(|d| d == dialect)
            && self
                .model
                .as_ref()
                .is_none_or(|m| prompt.model.as_deref() == Some(m.as_str()))
            && self
                .last_message_contains
                .as_ref()
                .is_none_or(|s| prompt.last_message.contains(s.as_str()))
            && self
                .system_contains
                .as_ref()
                .is_none_or(|s| prompt.system.contains(s.as_str()))
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    #[default]
    EndTurn,
    MaxTokens,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default)]
    pub text: Option<String>,
    /// A JSON value, sent (compact) as the reply text.
    #[serde(default)]
    pub json: Option<Value>,
    /// Streamed as reasoning before the text, in each dialect's own thinking field.
    #[serde(default, alias = "reasoning")]
    pub thinking: Option<String>,
    #[serde(default)]
    pub stop_reason: Stop,
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: Some(text.into()),
            ..Reply::default()
        }
    }

    pub fn thinking(thinking: impl Into<String>, text: impl Into<String>) -> Reply {
        Reply {
            thinking: Some(thinking.into()),
            ..Reply::text(text)
        }
    }

    /// The reply text as it goes over the wire.
    pub fn body(&self) -> String {
        match (&self.json, &self.text) {
            (Some(json), _) => json.to_string(),
            (None, Some(text)) => text.clone(),
            (None, None) => String::new(),
        }
    }

    pub fn output_tokens(&self) -> usize {
        estimate_tokens(&self.body()) + self.thinking.as_deref().map_or(0, estimate_tokens)
    }

    /// The reply cut to at most `limit` output tokens, with the `max_tokens` stop, as a model
    /// that runs out of tokens leaves it (thinking first, since it is generated first; a
    /// `json` reply becomes the text it was cut to); `None` when the reply fits.
    pub fn cut_to(&self, limit: usize) -> Option<Reply> {
        if self.output_tokens() <= limit {
            return None;
        }
        let thinking = self.thinking.as_deref().unwrap_or_default();
        let thinking_tokens = estimate_tokens(thinking);
        let body = self.body();
        let (thinking, text) = if thinking_tokens >= limit {
            (prefix_within(thinking, limit), "")
        } else {
            (thinking, prefix_within(&body, limit - thinking_tokens))
        };
        Some(Reply {
            text: Some(text.to_string()),
            json: None,
            thinking: self.thinking.as_ref().map(|_| thinking.to_string()),
            stop_reason: Stop::MaxTokens,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpError {
    pub status: u16,
    /// Sent as `Retry-After` (seconds).
    #[serde(default)]
    pub retry_after_s: Option<u64>,
    /// Sent as `retry-after-ms`, which the OpenAI and Anthropic SDKs read first.
    #[serde(default)]
    pub retry_after_ms: Option<u64>,
    /// Replaces the vendor-shaped error body (a string is sent as is, other JSON serialised).
    #[serde(default)]
    pub body: Option<Value>,
    /// The message inside the vendor-shaped error body.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamError {
    #[serde(default = "default_error_message")]
    pub message: String,
    /// How many content chunks go out before the error.
    #[serde(default)]
    pub after_chunks: usize,
}

/// One way to misbehave. Everything given applies together, to the requests `times` and
/// `request` select.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSet {
    /// Apply to this many requests (in list order: after an earlier entry's `times` run out,
    /// the next entry takes over); absent = every request.
    #[serde(default)]
    pub times: Option<usize>,
    /// Apply only to chat request number N (from 1, counted over all dialects).
    #[serde(default)]
    pub request: Option<usize>,
    #[serde(default)]
    pub http_error: Option<HttpError>,
    /// Close the connection once this many body bytes went out (mid-frame if it falls there).
    #[serde(default)]
    pub cut_after_bytes: Option<usize>,
    /// Close the connection before content chunk N (from 0), without finishing.
    #[serde(default)]
    pub cut_after_chunks: Option<usize>,
    /// Go quiet this long after the first content chunk (or after `stall_after_bytes`).
    #[serde(default)]
    pub stall_ms: Option<u64>,
    #[serde(default)]
    pub stall_after_bytes: Option<usize>,
    /// Send one broken frame after the first content chunk.
    #[serde(default)]
    pub malformed_frame: bool,
    /// Pace content chunks at about this many (estimated) tokens per second.
    #[serde(default)]
    pub drip_tokens_per_s: Option<f64>,
    /// Wait this long before the first content chunk.
    #[serde(default)]
    pub ttft_ms: Option<u64>,
    /// Send the dialect's in-stream error and end the stream.
    #[serde(default)]
    pub stream_error: Option<StreamError>,
}

impl FaultSet {
    /// Reads one entry, accepting the older `{"type": "http_error" | "cut_stream" |
    /// "stream_error", ...}` form too.
    fn from_value(value: Value) -> Result<FaultSet, String> {
        let Some(kind) = value
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return serde_json::from_value(value).map_err(|e| e.to_string());
        };
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Legacy {
            #[serde(rename = "type")]
            _type: String,
            #[serde(default)]
            request: Option<usize>,
            #[serde(default)]
            status: Option<u16>,
            #[serde(default)]
            message: Option<String>,
            #[serde(default)]
            retry_after_s: Option<u64>,
            #[serde(default)]
            after_chunks: Option<usize>,
        }
        let old: Legacy = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let mut set = FaultSet {
            request: old.request,
            ..FaultSet::default()
        };
        match kind.as_str() {
            "http_error" => {
                set.http_error = Some(HttpError {
                    status: old.status.ok_or("http_error needs a \"status\"")?,
                    retry_after_s: old.retry_after_s,
                    retry_after_ms: None,
                    body: None,
                    message: old.message,
                });
            }
            "cut_stream" => {
                set.cut_after_chunks = Some(
                    old.after_chunks
                        .ok_or("cut_stream needs \"after_chunks\"")?,
                )
            }
            "stream_error" => {
                set.stream_error = Some(StreamError {
                    message: old.message.unwrap_or_else(default_error_message),
                    after_chunks: old.after_chunks.unwrap_or(0),
                })
            }
            other => return Err(format!("unknown fault type \"{other}\"")),
        }
        Ok(set)
    }
}

fn fault_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<FaultSet>, D::Error> {
    let value = Value::deserialize(d)?;
    let items = match value {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        one => vec![one],
    };
    items
        .into_iter()
        .map(|v| FaultSet::from_value(v).map_err(serde::de::Error::custom))
        .collect()
}

fn default_chunk_words() -> usize {
    3
}

fn default_model() -> String {
    "mock-model".to_string()
}

fn default_transcript() -> String {
    DEFAULT_TRANSCRIPT.to_string()
}

pub fn default_error_message() -> String {
    "The mock server was told to fail this request.".to_string()
}

impl Default for Script {
    fn default() -> Script {
        Script {
            rules: Vec::new(),
            default: None,
            replies: Vec::new(),
            chunk_words: default_chunk_words(),
            chunk_delay_ms: 0,
            model: default_model(),
            faults: Vec::new(),
            transcript: default_transcript(),
            models: None,
            slots: None,
            n_ctx: None,
            prompt_tokens_per_s: None,
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

fn some_fault_list<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<FaultSet>>, D::Error> {
    fault_list(d).map(Some)
}

/// What the script decided for one chat request.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub rule: Option<usize>,
    pub reply: Reply,
    pub fault: Option<FaultSet>,
}

impl Script {
    /// Parses and checks a script; `path` only names it in errors.
    pub fn from_json(text: &str, path: &str) -> Result<Script, ScriptError> {
        let invalid = |detail: String| ScriptError::Invalid {
            path: path.to_string(),
            detail,
        };
        let script: Script = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        script.check().map_err(invalid)?;
        Ok(script)
    }

    fn check(&self) -> Result<(), String> {
        if self.chunk_words == 0 {
            return Err("\"chunk_words\" must be at least 1".into());
        }
        if self.slots == Some(0) {
            return Err("\"slots\" must be at least 1".into());
        }
        if self.n_ctx == Some(0) {
            return Err("\"n_ctx\" must be at least 1".into());
        }
        if !self.prompt_tokens_per_s.is_none_or(is_positive_rate) {
            return Err("\"prompt_tokens_per_s\" must be positive".into());
        }
        let replies = self
            .rules
            .iter()
            .filter_map(|r| r.reply.as_ref())
            .chain(&self.replies)
            .chain(&self.default);
        for reply in replies {
            if reply.text.is_some() && reply.json.is_some() {
                return Err("a reply has both \"text\" and \"json\"; give one".into());
            }
        }
        let faults = self
            .rules
            .iter()
            .filter_map(|r| r.faults.as_ref())
            .flatten()
            .chain(&self.faults);
        for fault in faults {
            if fault.request == Some(0) {
                return Err("fault requests are counted from 1".into());
            }
            if !fault.drip_tokens_per_s.is_none_or(is_positive_rate) {
                return Err("\"drip_tokens_per_s\" must be positive".into());
            }
        }
        Ok(())
    }

    pub fn load(path: &str) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_string(),
            source,
        })?;
        Script::from_json(&text, path)
    }

    /// A script whose replies are these texts, in order.
    pub fn replying(texts: &[&str]) -> Script {
        Script {
            replies: texts.iter().map(|t| Reply::text(*t)).collect(),
            ..Script::default()
        }
    }

    /// The first rule that matches, if any.
    pub fn rule_for(&self, dialect: Dialect, prompt: &Prompt) -> Option<usize> {
        self.rules
            .iter()
            .position(|r| r.when.matches(dialect, prompt))
    }

    /// Decides chat request number `n` (from 1 over all chat requests), which is the `nth`
    /// (from 0) request its scope has seen: the matched rule's, or the whole script's.
    pub fn decide(&self, rule: Option<usize>, n: usize, nth_in_scope: usize) -> Decision {
        let matched = rule.and_then(|i| self.rules.get(i));
        let reply = matched
            .and_then(|r| r.reply.clone())
            .or_else(|| {
                let last = self.replies.len().checked_sub(1)?;
                self.replies.get(n.saturating_sub(1).min(last)).cloned()
            })
            .or_else(|| self.default.clone())
            .unwrap_or_else(|| Reply::text(DEFAULT_REPLY));
        let faults = matched
            .and_then(|r| r.faults.as_ref())
            .unwrap_or(&self.faults);
        Decision {
            rule,
            reply,
            fault: pick_fault(faults, n, nth_in_scope).cloned(),
        }
    }

    /// Whether the rule's own faults (rather than the script's) govern this request.
    pub fn rule_has_faults(&self, rule: Option<usize>) -> bool {
        rule.and_then(|i| self.rules.get(i))
            .is_some_and(|r| r.faults.is_some())
    }
}

/// A rate that a duration can be computed from: positive and finite.
fn is_positive_rate(rate: f64) -> bool {
    rate.is_finite() && rate > 0.0
}

/// The longest pause a rate can ask for, so a tiny rate cannot hang a connection for ever.
const MAX_PAUSE: Duration = Duration::from_secs(600);

/// How long `tokens` take at `rate` tokens per second (at most ten minutes).
pub fn time_for(tokens: usize, rate: f64) -> Duration {
    Duration::try_from_secs_f64(tokens as f64 / rate)
        .unwrap_or(MAX_PAUSE)
        .min(MAX_PAUSE)
}

fn pick_fault(faults: &[FaultSet], n: usize, nth: usize) -> Option<&FaultSet> {
    let mut used = 0;
    for fault in faults {
        if let Some(r) = fault.request {
            if r == n {
                return Some(fault);
            }
            continue;
        }
        match fault.times {
            Some(times) => {
                if nth < used + times {
                    return Some(fault);
                }
                used += times;
            }
            None => return Some(fault),
        }
    }
    None
}

/// A token count a request gives (`max_tokens` and the like): a non-negative integer.
pub fn token_count(value: &Value) -> Option<usize> {
    value
        .as_u64()
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// The text in a message's content: a string, or the `text` of each part in a list.
pub fn text_in(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(_) => content
            .get("parts")
            .map(text_in)
            .or_else(|| {
                content
                    .get("text")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The prompt of a request whose `messages` carry `role` and `content` (OpenAI, Ollama and,
/// with `system` given apart, Anthropic).
pub fn prompt_from_messages(
    model: Option<String>,
    system: Option<&Value>,
    messages: &Value,
) -> Prompt {
    let mut prompt = Prompt {
        model,
        ..Prompt::default()
    };
    let mut systems = Vec::new();
    if let Some(system) = system {
        let text = text_in(system);
        prompt.texts.push(text.clone());
        systems.push(text);
    }
    for message in messages.as_array().into_iter().flatten() {
        let text = text_in(&message["content"]);
        if matches!(message["role"].as_str(), Some("system" | "developer")) {
            systems.push(text.clone());
        }
        prompt.texts.push(text.clone());
        prompt.last_message = text;
    }
    prompt.system = systems.join("\n");
    prompt
}

pub use aula_text::is_cjk;

/// The token estimate used for usage numbers and `/__requests`: one token per CJK character
/// (and CJK punctuation), plus one per four other characters (spaces included), rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    let (cjk, other) = text.chars().fold((0usize, 0usize), |(cjk, other), c| {
        if is_cjk(c) {
            (cjk + 1, other)
        } else {
            (cjk, other + 1)
        }
    });
    cjk + other.div_ceil(4)
}

/// The longest start of `text` that [`estimate_tokens`] counts as at most `tokens`.
pub fn prefix_within(text: &str, tokens: usize) -> &str {
    let (mut cjk, mut other) = (0usize, 0usize);
    for (at, c) in text.char_indices() {
        let (next_cjk, next_other) = if is_cjk(c) {
            (cjk + 1, other)
        } else {
            (cjk, other + 1)
        };
        if next_cjk + next_other.div_ceil(4) > tokens {
            return &text[..at];
        }
        (cjk, other) = (next_cjk, next_other);
    }
    text
}

/// Longest run of non-space characters in one chunk, so JSON and long words still stream.
const MAX_WORD_CHARS: usize = 16;

/// Splits `text` into chunks of `words` words each, keeping every character (spaces stay
/// at the end of the chunk before them), so the chunks joined give `text` back. Each CJK
/// character counts as a word, and a word longer than 16 characters counts as several.
pub fn chunks(text: &str, words: usize) -> Vec<String> {
    let words = words.max(1);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_chunk = 0;
    let mut prev_space = true;
    let mut word_len = 0;
    for c in text.chars() {
        let long = word_len >= MAX_WORD_CHARS;
        let starts_word = !c.is_whitespace() && (prev_space || is_cjk(c) || long);
        if starts_word {
            if in_chunk == words {
                out.push(std::mem::take(&mut current));
                in_chunk = 0;
            }
            in_chunk += 1;
            word_len = 0;
        }
        if !c.is_whitespace() {
            word_len += 1;
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

    fn prompt(model: &str, system: &str, last: &str) -> Prompt {
        Prompt {
            model: Some(model.into()),
            system: system.into(),
            last_message: last.into(),
            texts: vec![system.into(), last.into()],
        }
    }

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
    fn compact_json_still_streams_in_pieces() {
        let text = r#"{"title":"Photosynthesis","bullets":["light","water","sugar"]}"#;
        let parts = chunks(text, 1);
        assert!(parts.len() >= 4, "{parts:?}");
        assert_eq!(parts.concat(), text);
    }

    #[test]
    fn empty_text_has_no_chunks() {
        assert!(chunks("", 3).is_empty());
    }

    #[test]
    fn tokens_are_four_latin_characters_or_one_cjk_character() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("What is light?"), 4);
        assert_eq!(estimate_tokens("光合作用"), 4);
        assert_eq!(estimate_tokens("光合 ok"), 3);
    }

    #[test]
    fn older_scripts_still_load_and_replies_go_in_order() {
        let script = Script::from_json(
            r#"{"replies": [{"text": "one"}, {"text": "two", "reasoning": "hm"}],
                "faults": [{"type": "cut_stream", "request": 2, "after_chunks": 1},
                           {"type": "http_error", "status": 500}]}"#,
            "t.json",
        )
        .unwrap();
        let texts: Vec<_> = (1..=3)
            .map(|n| script.decide(None, n, n - 1).reply.body())
            .collect();
        assert_eq!(texts, ["one", "two", "two"]);
        assert_eq!(
            script.decide(None, 2, 1).reply.thinking.as_deref(),
            Some("hm")
        );
        let fault = |n| script.decide(None, n, n - 1).fault.unwrap();
        assert_eq!(fault(1).http_error.unwrap().status, 500);
        assert_eq!(fault(2).cut_after_chunks, Some(1));
    }

    #[test]
    fn first_matching_rule_wins_and_the_default_catches_the_rest() {
        let script = Script::from_json(
            r#"{"rules": [
                  {"match": {"dialect": "anthropic", "system_contains": "teacher"}, "reply": {"text": "A"}},
                  {"match": {"last_message_contains": "quiz"}, "reply": {"json": {"q": 1}}},
                  {"match": {"model": "m2"}, "reply": {"thinking": "t", "text": "C"}}
                ],
                "default": {"text": "D"}}"#,
            "t.json",
        )
        .unwrap();
        let reply = |d, p: &Prompt| {
            let rule = script.rule_for(d, p);
            script.decide(rule, 1, 0).reply
        };
        assert_eq!(
            reply(Dialect::Anthropic, &prompt("m", "a teacher", "quiz")).body(),
            "A"
        );
        assert_eq!(
            reply(Dialect::Openai, &prompt("m", "a teacher", "a quiz")).body(),
            r#"{"q":1}"#
        );
        assert_eq!(
            reply(Dialect::Gemini, &prompt("m2", "", ""))
                .thinking
                .as_deref(),
            Some("t")
        );
        assert_eq!(reply(Dialect::Ollama, &prompt("m3", "", "")).body(), "D");
    }

    #[test]
    fn times_hands_over_to_the_next_fault_then_to_none() {
        let script = Script::from_json(
            r#"{"faults": [{"times": 1, "http_error": {"status": 429}},
                           {"times": 2, "http_error": {"status": 500}}]}"#,
            "t.json",
        )
        .unwrap();
        let statuses: Vec<_> = (0..4)
            .map(|k| {
                script
                    .decide(None, k + 1, k)
                    .fault
                    .and_then(|f| f.http_error)
                    .map(|e| e.status)
            })
            .collect();
        assert_eq!(statuses, [Some(429), Some(500), Some(500), None]);
    }

    #[test]
    fn a_bad_script_is_refused_with_its_path() {
        for text in [
            r#"{"chunk_words": 0}"#,
            r#"{"faults": [{"type": "explode"}]}"#,
            r#"{"replys": []}"#,
            r#"{"faults": [{"type": "cut_stream", "request": 0, "after_chunks": 1}]}"#,
            r#"{"faults": [{"stall": 3}]}"#,
            r#"{"default": {"text": "a", "json": 1}}"#,
            r#"{"rules": [{"match": {"dialect": "cohere"}}]}"#,
            r#"{"slots": 0}"#,
            r#"{"n_ctx": 0}"#,
            r#"{"prompt_tokens_per_s": 0}"#,
            r#"{"prompt_tokens_per_s": -2.5}"#,
            r#"{"faults": [{"drip_tokens_per_s": 0}]}"#,
        ] {
            let err = Script::from_json(text, "bad.json").unwrap_err();
            assert!(err.to_string().contains("bad.json"), "{err}");
        }
    }

    #[test]
    fn a_reply_longer_than_the_limit_is_cut_there_with_the_max_tokens_stop() {
        // 23 characters: 6 tokens.
        let reply = Reply::text("one two three four five");
        assert_eq!(reply.cut_to(6), None);
        let cut = reply.cut_to(3).unwrap();
        assert_eq!(cut.body(), "one two thre");
        assert_eq!(cut.output_tokens(), 3);
        assert_eq!(cut.stop_reason, Stop::MaxTokens);
        assert_eq!(reply.cut_to(0).unwrap().body(), "");
    }

    #[test]
    fn thinking_spends_the_limit_first_and_json_is_cut_as_text() {
        let reply = Reply::thinking("abcdefgh", "ijklmnop");
        let cut = reply.cut_to(3).unwrap();
        assert_eq!(
            (cut.thinking.as_deref(), cut.body().as_str()),
            (Some("abcdefgh"), "ijkl")
        );
        let cut = reply.cut_to(1).unwrap();
        assert_eq!(
            (cut.thinking.as_deref(), cut.body().as_str()),
            (Some("abcd"), "")
        );
        let json = Reply {
            json: Some(serde_json::json!({"scenes": ["Light", "Water"]})),
            ..Reply::default()
        };
        let cut = json.cut_to(3).unwrap();
        assert_eq!(cut.body(), r##"{"scenes":[""##);
        assert!(serde_json::from_str::<Value>(&cut.body()).is_err());
    }

    #[test]
    fn a_prefix_within_a_token_budget_counts_like_the_estimate() {
        assert_eq!(prefix_within("光合 ok", 2), "光合");
        assert_eq!(prefix_within("光合 ok", 3), "光合 ok");
        assert_eq!(prefix_within("光合作用", 0), "");
        for text in ["What is light?", "光合作用 is sugar.", ""] {
            for budget in 0..8 {
                let prefix = prefix_within(text, budget);
                assert!(estimate_tokens(prefix) <= budget, "{text:?} {budget}");
                let longer = text[prefix.len()..].chars().next().map(|c| {
                    let end = prefix.len() + c.len_utf8();
                    estimate_tokens(&text[..end])
                });
                assert!(longer.is_none_or(|t| t > budget), "{text:?} {budget}");
            }
        }
    }

    #[test]
    fn a_tiny_rate_waits_at_most_ten_minutes() {
        assert_eq!(time_for(10, 5.0), Duration::from_secs(2));
        assert_eq!(time_for(10, 1e-300), Duration::from_secs(600));
    }
}
