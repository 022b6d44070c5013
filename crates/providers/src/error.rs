//! What can go wrong talking to a provider, in words a learner can act on. No message ever
//! contains an API key: text that comes from a provider or the network goes through
//! [`redact`] before it is stored in an error.
//!
//! Two doors lead in: [`ProviderError::from_http`] for a non-success answer, read from its
//! status and body, and [`ProviderError::from_stream_error`] for an error object sent in the
//! middle of a stream (with a 200), read from its type and code (a vendor's name for the
//! problem, or an HTTP status as a number). Both know a request too long for the model's
//! context (OpenAI's `context_length_exceeded`, llama.cpp's `exceed_context_size_error`, and
//! the same in words). A model declining to answer is not an HTTP error at all: the decoders
//! build [`ProviderError::Refused`] from its words.

use thiserror::Error;

/// The longest piece of a provider's own message kept in an error.
const MAX_MESSAGE_CHARS: usize = 300;

/// The longest piece of a model's refusal quoted to the learner.
const MAX_REFUSAL_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProviderError {
    #[error("The key was rejected by {provider} ({status}). Check it in Settings → AI provider.")]
    KeyRejected { provider: String, status: u16 },

    #[error(
        "{provider} is limiting requests right now{}. Wait a moment and try again, or pick \
         another model in Settings → AI provider.",
        retry_hint(*retry_after_ms)
    )]
    RateLimited {
        provider: String,
        retry_after_ms: Option<u64>,
    },

    #[error(
        "Your {provider} account has no credit left for this request. Add credit on the \
         provider's site or choose another provider in Settings → AI provider."
    )]
    QuotaExhausted { provider: String },

    #[error(
        "{provider} has no model called \"{model}\" (or the base URL is wrong). Pick another \
         model in Settings → AI provider."
    )]
    ModelNotFound { provider: String, model: String },

    #[error(
        "{provider} did not accept the request ({status}): {}. Check the model and base URL in \
         Settings → AI provider.",
        clause(message)
    )]
    BadRequest {
        provider: String,
        status: u16,
        message: String,
    },

    #[error(
        "{provider} had a problem on its side ({status}): {}. Try again in a minute.",
        clause(message)
    )]
    ServerError {
        provider: String,
        status: u16,
        message: String,
    },

    /// No answer at all. `fix` is the advice for this provider, from
    /// [`crate::explain_network_failure`].
    #[error("Could not reach {provider} ({detail}). {fix}")]
    Network {
        provider: String,
        detail: String,
        fix: String,
    },

    #[error(
        "{provider} refused requests from a web page for this account: an admin of your \
         organisation has turned off browser (CORS) access. Ask them to allow it in the \
         provider's console, or reach the same models through OpenRouter."
    )]
    BrowserAccessDenied { provider: String },

    #[error("The reply from {provider} stopped before it was finished. Try again.")]
    StreamCut { provider: String },

    #[error(
        "{provider} sent nothing for {seconds} s, so Aula stopped waiting. Try again, or pick a \
         faster model in Settings → AI provider."
    )]
    Stalled { provider: String, seconds: u64 },

    #[error("The request to {provider} was stopped.")]
    Aborted { provider: String },

    #[error(
        "{provider} sent a reply Aula could not read ({detail}). Try again, or pick another model."
    )]
    MalformedReply { provider: String, detail: String },

    #[error(
        "{provider} reported a problem: {}. Try again, or pick another model in Settings → AI \
         provider.",
        clause(message)
    )]
    Upstream { provider: String, message: String },

    /// The model answered with a refusal instead of a reply; `message` is its own words. Asking
    /// the same again gets the same answer, so it is not retried.
    #[error(
        "The model on {provider} declined to answer: \"{}\". Rephrase the request, or choose \
         another model in Settings → AI provider.",
        clause(message)
    )]
    Refused { provider: String, message: String },

    /// The request does not fit the model's context window. `prompt_tokens` is what the request
    /// needed and `context_tokens` what the model holds, when the provider said.
    #[error(
        "The model on {provider} has too small a context for this request{}. Choose a model \
         with a larger context in Settings → AI provider, or, if the model runs on your own \
         computer, start its server with a larger context size (llama.cpp: --ctx-size; Ollama: \
         OLLAMA_CONTEXT_LENGTH).",
        context_sizes(*prompt_tokens, *context_tokens)
    )]
    ContextTooLong {
        provider: String,
        prompt_tokens: Option<u32>,
        context_tokens: Option<u32>,
    },
}

/// A provider's message, to sit inside a sentence: without its closing full stop.
fn clause(message: &str) -> &str {
    let trimmed = message.trim().trim_end_matches(['.', '。']);
    if trimmed.is_empty() {
        "no details given"
    } else {
        trimmed
    }
}

fn context_sizes(prompt_tokens: Option<u32>, context_tokens: Option<u32>) -> String {
    match (prompt_tokens, context_tokens) {
        (Some(p), Some(c)) => format!(" (it needs {p} tokens; the model holds {c})"),
        (Some(p), None) => format!(" (it needs {p} tokens)"),
        (None, Some(c)) => format!(" (the model holds {c} tokens)"),
        (None, None) => String::new(),
    }
}

fn retry_hint(retry_after_ms: Option<u64>) -> String {
    match retry_after_ms {
        Some(ms) => format!(" (it asks to wait {} s)", ms.div_ceil(1000)),
        None => String::new(),
    }
}

impl ProviderError {
    /// Whether trying the same request again later may work.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::ServerError { .. }
                | ProviderError::Network { .. }
                | ProviderError::StreamCut { .. }
                | ProviderError::Stalled { .. }
        )
    }

    /// Classifies a non-success HTTP answer. `body` is the provider's error body; `secret` is the
    /// key that was sent, which is removed from anything kept.
    pub fn from_http(
        provider: &str,
        model: &str,
        status: u16,
        headers: &[(String, String)],
        body: &str,
        secret: &str,
    ) -> ProviderError {
        let provider = provider.to_string();
        let (message, code) = error_message(body);
        let message = redact(&message, secret);
        if body.contains("CORS requests are not allowed") || body.contains("CORS requests must") {
            return ProviderError::BrowserAccessDenied { provider };
        }
        // Gemini answers a bad key with 400 INVALID_ARGUMENT.
        if body.contains("API_KEY_INVALID") || body.contains("API key not valid") {
            return ProviderError::KeyRejected { provider, status };
        }
        if matches!(status, 400 | 413 | 422)
            && is_context_overflow(code.as_deref().unwrap_or(""), &message)
        {
            let (prompt_tokens, context_tokens) = context_counts(body, &message);
            return ProviderError::ContextTooLong {
                provider,
                prompt_tokens,
                context_tokens,
            };
        }
        let out_of_credit = code.as_deref() == Some("insufficient_quota")
            || message.contains("credit balance is too low")
            || message.contains("Insufficient Balance");
        match status {
            401 | 403 => ProviderError::KeyRejected { provider, status },
            402 => ProviderError::QuotaExhausted { provider },
            400 | 429 if out_of_credit => ProviderError::QuotaExhausted { provider },
            429 => ProviderError::RateLimited {
                provider,
                retry_after_ms: retry_after_ms(headers),
            },
            404 => ProviderError::ModelNotFound {
                provider,
                model: model.to_string(),
            },
            500..=599 => ProviderError::ServerError {
                provider,
                status,
                message,
            },
            _ => ProviderError::BadRequest {
                provider,
                status,
                message,
            },
        }
    }

    /// Classifies an error object a provider sent in the middle of a stream. `kind` and `code`
    /// are its names for the problem: OpenAI's `type` and `code`, Anthropic's `error.type`,
    /// Gemini's `status`; a `code` that is a number (vLLM, llama.cpp, OpenRouter, Gemini) is
    /// read as the HTTP status the error would have had.
    pub fn from_stream_error(
        provider: &str,
        message: &str,
        kind: Option<&str>,
        code: Option<&str>,
    ) -> ProviderError {
        let provider = provider.to_string();
        let hint = format!("{} {}", kind.unwrap_or(""), code.unwrap_or("")).to_ascii_lowercase();
        let status = code
            .and_then(|c| c.trim().parse::<u16>().ok())
            .filter(|s| (400..600).contains(s));
        let has = |names: &[&str]| names.iter().any(|n| hint.contains(n));
        let server = |status: u16| ProviderError::ServerError {
            provider: provider.clone(),
            status,
            message: redact(message, ""),
        };
        if is_context_overflow(&hint, message) {
            let (prompt_tokens, context_tokens) = context_counts("", message);
            ProviderError::ContextTooLong {
                provider,
                prompt_tokens,
                context_tokens,
            }
        } else if has(&["insufficient_quota"]) || status == Some(402) {
            ProviderError::QuotaExhausted { provider }
        } else if has(&["rate_limit", "resource_exhausted"]) || status == Some(429) {
            ProviderError::RateLimited {
                provider,
                retry_after_ms: None,
            }
        } else if has(&["invalid_api_key", "authentication", "unauthenticated"])
            || status == Some(401)
        {
            ProviderError::KeyRejected {
                provider,
                status: 401,
            }
        } else if has(&["permission"]) || status == Some(403) {
            ProviderError::KeyRejected {
                provider,
                status: 403,
            }
        } else if has(&["overloaded"]) {
            server(529) // Anthropic's "overloaded" status
        } else if has(&["unavailable"]) {
            server(503)
        } else if has(&["server_error", "servererror", "api_error", "internal"])
            || status.is_some_and(|s| s >= 500)
        {
            // OpenAI's `server_error`, Anthropic's `api_error`, vLLM's `InternalServerError`,
            // Gemini's `INTERNAL`: the provider's trouble, like a 5xx.
            server(status.filter(|s| *s >= 500).unwrap_or(500))
        } else if has(&[
            "invalid_request",
            "badrequest",
            "invalid_argument",
            "not_found",
        ]) || status.is_some()
        {
            let fallback = if has(&["not_found"]) { 404 } else { 400 };
            ProviderError::BadRequest {
                provider,
                status: status.unwrap_or(fallback),
                message: redact(message, ""),
            }
        } else {
            ProviderError::Upstream {
                provider,
                message: redact(message, ""),
            }
        }
    }

    /// The model's refusal, in its own words (without anything that looks like a key, and
    /// shortened).
    pub fn refused(provider: &str, words: &str) -> ProviderError {
        ProviderError::Refused {
            provider: provider.to_string(),
            message: shorten(redact(words.trim(), ""), MAX_REFUSAL_CHARS),
        }
    }
}

/// Names vendors give a request too long for the model's context: OpenAI's (and Groq's,
/// OpenRouter's) code, llama.cpp's type.
const CONTEXT_OVERFLOW_CODES: &[&str] = &["context_length_exceeded", "exceed_context_size"];

/// The same said in words: OpenAI, DeepSeek and vLLM ("This model's maximum context length is
/// …"), llama.cpp, OpenAI's newer wording, Anthropic ("prompt is too long: …").
const CONTEXT_OVERFLOW_WORDS: &[&str] = &[
    "maximum context length",
    "exceeds the available context size",
    "exceeds the context window",
    "prompt is too long",
];

fn is_context_overflow(hint: &str, message: &str) -> bool {
    let hint = hint.to_ascii_lowercase();
    let message = message.to_ascii_lowercase();
    CONTEXT_OVERFLOW_CODES.iter().any(|c| hint.contains(c))
        || CONTEXT_OVERFLOW_WORDS.iter().any(|w| message.contains(w))
}

/// The tokens a too-long request needed and the tokens the model holds: llama.cpp's
/// `n_prompt_tokens` and `n_ctx` in `body`, or the numbers in the provider's sentence.
fn context_counts(body: &str, message: &str) -> (Option<u32>, Option<u32>) {
    let error = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|json| json.get("error").cloned());
    let field = |name: &str| {
        error
            .as_ref()
            .and_then(|e| e.get(name))
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let needed = field("n_prompt_tokens").or_else(|| {
        number_after(
            message,
            &["resulted in ", "you requested ", "request (", "too long: "],
        )
    });
    let holds = field("n_ctx").or_else(|| {
        number_after(
            message,
            &["maximum context length is ", "context size (", " tokens > "],
        )
    });
    (needed, holds)
}

/// The whole number right after the first of `markers` found in `text`.
fn number_after(text: &str, markers: &[&str]) -> Option<u32> {
    markers.iter().find_map(|marker| {
        let at = text.find(marker)? + marker.len();
        let digits: String = text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

/// The human part of an error body (`{"error":{"message":…,"code":…}}`, `{"error":"…"}`,
/// `{"message":…}`, or plain text) and its machine code, if any.
fn error_message(body: &str) -> (String, Option<String>) {
    let text_of = |v: &serde_json::Value| v.as_str().map(str::to_string);
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let error = json.get("error").unwrap_or(&json);
        let code = error
            .get("code")
            .and_then(text_of)
            .or_else(|| error.get("type").and_then(text_of));
        let message = error
            .get("message")
            .and_then(text_of)
            .or_else(|| text_of(error));
        if let Some(message) = message {
            return (message, code);
        }
    }
    let trimmed = body.trim();
    let message = if trimmed.is_empty() {
        "no details given".to_string()
    } else {
        trimmed.to_string()
    };
    (message, None)
}

/// How long a 429 asks to wait: `retry-after-ms`, or `retry-after` in seconds.
pub fn retry_after_ms(headers: &[(String, String)]) -> Option<u64> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return (ms.is_finite() && ms >= 0.0).then_some(ms.ceil() as u64);
    }
    let seconds = header("retry-after")?.parse::<f64>().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).ceil() as u64)
}

/// Key prefixes providers use; a token starting with one of these is masked wherever it shows
/// up, even when it is not the key that was sent.
const KEY_PREFIXES: &[&str] = &["sk-", "sk_", "AIza", "gsk_", "xai-", "key-", "Bearer "];
const MIN_KEY_BODY: usize = 12;

/// Removes `secret` and anything that looks like an API key from `text`, and shortens it.
pub fn redact(text: &str, secret: &str) -> String {
    let mut out = if secret.len() >= 4 {
        text.replace(secret, "[redacted]")
    } else {
        text.to_string()
    };
    for prefix in KEY_PREFIXES {
        let mut from = 0;
        while let Some(found) = out[from..].find(prefix) {
            let start = from + found;
            let body_start = start + prefix.len();
            let body_len = out[body_start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(out.len() - body_start);
            if body_len >= MIN_KEY_BODY {
                out.replace_range(start..body_start + body_len, "[redacted]");
                from = start + "[redacted]".len();
            } else {
                from = body_start;
            }
        }
    }
    shorten(out, MAX_MESSAGE_CHARS)
}

/// `text` cut to `max_chars` characters, with an ellipsis when something was cut.
fn shorten(text: String, max_chars: usize) -> String {
    if text.chars().count() > max_chars {
        text.chars().take(max_chars).collect::<String>() + "…"
    } else {
        text
    }
}

/// Parses one frame of a provider's stream. A frame that is not the JSON it should be becomes a
/// `MalformedReply` naming `what` it was; the decoders end the stream on it.
pub(crate) fn parse_frame<T: serde::de::DeserializeOwned>(
    provider: &str,
    what: &str,
    data: &str,
) -> Result<T, ProviderError> {
    serde_json::from_str(data).map_err(|e| ProviderError::MalformedReply {
        provider: provider.to_owned(),
        detail: format!("{what} is not valid JSON: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-proj-Zx81kQ2mVb7Lw0Rt5Yc3Ns9Ha4Jd6Fe";

    fn http(status: u16, body: &str) -> ProviderError {
        ProviderError::from_http("OpenAI", "gpt-4o-mini", status, &[], body, KEY)
    }

    #[test]
    fn unauthorized_and_forbidden_mean_the_key_was_rejected() {
        let body = format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {KEY}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
        );
        for status in [401, 403] {
            let err = http(status, &body);
            assert_eq!(
                err,
                ProviderError::KeyRejected {
                    provider: "OpenAI".into(),
                    status
                }
            );
            assert!(err.to_string().contains("Settings → AI provider"));
        }
    }

    #[test]
    fn rate_limit_carries_the_retry_after_wait() {
        let headers = vec![("Retry-After".to_string(), "7".to_string())];
        let err = ProviderError::from_http("Groq", "llama", 429, &headers, "{}", KEY);
        assert_eq!(
            err,
            ProviderError::RateLimited {
                provider: "Groq".into(),
                retry_after_ms: Some(7000)
            }
        );
        assert!(err.to_string().contains("wait 7 s"), "{err}");
        assert!(err.is_retryable());
        let ms = vec![("retry-after-ms".to_string(), "1250".to_string())];
        assert_eq!(retry_after_ms(&ms), Some(1250));
        assert_eq!(retry_after_ms(&[]), None);
    }

    #[test]
    fn quota_exhaustion_is_not_a_rate_limit() {
        let body = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        let err = http(429, body);
        assert!(matches!(err, ProviderError::QuotaExhausted { .. }));
        assert!(!err.is_retryable());
    }

    #[test]
    fn not_found_names_the_model() {
        let err = http(
            404,
            r#"{"error":{"message":"The model `gpt-9` does not exist"}}"#,
        );
        assert!(err.to_string().contains("\"gpt-4o-mini\""), "{err}");
    }

    #[test]
    fn server_errors_keep_the_providers_message_and_are_retryable() {
        let err = http(503, r#"{"error":{"message":"The server is overloaded"}}"#);
        assert_eq!(
            err,
            ProviderError::ServerError {
                provider: "OpenAI".into(),
                status: 503,
                message: "The server is overloaded".into()
            }
        );
        assert!(err.is_retryable());
        assert!(matches!(
            http(400, "plain text complaint"),
            ProviderError::BadRequest { status: 400, ref message, .. } if message == "plain text complaint"
        ));
    }

    #[test]
    fn no_error_message_ever_contains_the_api_key() {
        let bodies = [
            format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#),
            format!("upstream said: Authorization: Bearer {KEY}"),
            format!(r#"{{"message":"bad request for key={KEY}"}}"#),
        ];
        for status in [400, 401, 404, 422, 429, 500, 502] {
            for body in &bodies {
                let err = http(status, body);
                assert!(!err.to_string().contains(KEY), "{status}: {err}");
                assert!(!format!("{err:?}").contains(KEY), "{status}: {err:?}");
            }
        }
        let mid_stream = ProviderError::from_stream_error(
            "OpenAI",
            &format!("key {KEY} is disabled"),
            Some("server_error"),
            None,
        );
        assert!(!mid_stream.to_string().contains(KEY), "{mid_stream}");
    }

    #[test]
    fn key_lookalikes_are_masked_even_when_not_the_key_sent() {
        let text = "keys sk-ant-api03-abcdefghijklmnop and AIzaSyA1234567890abcdef leaked";
        let out = redact(text, "");
        assert_eq!(out, "keys [redacted] and [redacted] leaked");
        assert_eq!(redact("sk-short ok", ""), "sk-short ok");
    }

    #[test]
    fn long_provider_messages_are_shortened() {
        let out = redact(&"x".repeat(1000), "");
        assert_eq!(out.chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn mid_stream_errors_are_classified_by_their_code() {
        assert!(matches!(
            ProviderError::from_stream_error("X", "slow down", Some("rate_limit_error"), None),
            ProviderError::RateLimited { .. }
        ));
        assert!(matches!(
            ProviderError::from_stream_error("X", "bad", None, Some("invalid_api_key")),
            ProviderError::KeyRejected { .. }
        ));
        // Overload is the provider's trouble, worth a retry; an unknown kind is passed on.
        assert_eq!(
            ProviderError::from_stream_error("X", "Overloaded", Some("overloaded_error"), None),
            ProviderError::ServerError {
                provider: "X".into(),
                status: 529,
                message: "Overloaded".into()
            }
        );
        assert!(matches!(
            ProviderError::from_stream_error("X", "quota", None, Some("RESOURCE_EXHAUSTED")),
            ProviderError::RateLimited { .. }
        ));
        assert!(matches!(
            ProviderError::from_stream_error("X", "down", None, Some("UNAVAILABLE")),
            ProviderError::ServerError { status: 503, .. }
        ));
        assert_eq!(
            ProviderError::from_stream_error("X", "Odd.", Some("teapot_error"), None),
            ProviderError::Upstream {
                provider: "X".into(),
                message: "Odd.".into()
            }
        );
    }

    #[test]
    fn a_server_error_mid_stream_is_retryable_like_a_5xx_and_other_kinds_keep_their_class() {
        let classed = |kind: Option<&str>, code: Option<&str>| {
            ProviderError::from_stream_error("X", "Something broke.", kind, code)
        };
        let server = |status: u16| ProviderError::ServerError {
            provider: "X".into(),
            status,
            message: "Something broke.".into(),
        };
        let bad = |status: u16| ProviderError::BadRequest {
            provider: "X".into(),
            status,
            message: "Something broke.".into(),
        };
        for (kind, code, expected) in [
            // OpenAI's bare `{"error":{"type":"server_error","code":null}}`.
            (Some("server_error"), None, server(500)),
            // vLLM and llama.cpp: a class name or `server_error`, the status as a number.
            (Some("InternalServerError"), Some("500"), server(500)),
            (Some("server_error"), Some("503"), server(503)),
            // OpenRouter: only a numeric code.
            (None, Some("502"), server(502)),
            (Some("api_error"), None, server(500)),
            (Some("invalid_request_error"), None, bad(400)),
            (Some("BadRequestError"), Some("400"), bad(400)),
            (None, Some("422"), bad(422)),
            (Some("not_found_error"), None, bad(404)),
            (
                Some("tokens"),
                Some("rate_limit_exceeded"),
                ProviderError::RateLimited {
                    provider: "X".into(),
                    retry_after_ms: None,
                },
            ),
            (
                None,
                Some("429"),
                ProviderError::RateLimited {
                    provider: "X".into(),
                    retry_after_ms: None,
                },
            ),
            (
                None,
                Some("402"),
                ProviderError::QuotaExhausted {
                    provider: "X".into(),
                },
            ),
            (
                None,
                Some("401"),
                ProviderError::KeyRejected {
                    provider: "X".into(),
                    status: 401,
                },
            ),
        ] {
            let err = classed(kind, code);
            assert_eq!(err, expected, "{kind:?} {code:?}");
            assert_eq!(
                err.is_retryable(),
                matches!(
                    expected,
                    ProviderError::ServerError { .. } | ProviderError::RateLimited { .. }
                ),
                "{kind:?} {code:?}"
            );
        }
    }

    #[test]
    fn llama_cpp_context_overflow_is_context_too_long_with_its_sizes() {
        let body = r#"{"error":{"code":400,"message":"request (9030 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9030,"n_ctx":8192}}"#;
        let err = ProviderError::from_http("llama.cpp", "qwen3-8b", 400, &[], body, "");
        assert_eq!(
            err,
            ProviderError::ContextTooLong {
                provider: "llama.cpp".into(),
                prompt_tokens: Some(9030),
                context_tokens: Some(8192),
            }
        );
        assert!(!err.is_retryable());
        let text = err.to_string();
        for part in [
            "too small a context for this request",
            "9030 tokens",
            "8192",
            "a larger context in Settings → AI provider",
            "--ctx-size",
        ] {
            assert!(text.contains(part), "{part:?} in {text}");
        }
        // Older servers said it without numbers, as an invalid request.
        let older = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing the context size or enable context shift","type":"invalid_request_error"}}"#;
        assert_eq!(
            ProviderError::from_http("llama.cpp", "m", 400, &[], older, ""),
            ProviderError::ContextTooLong {
                provider: "llama.cpp".into(),
                prompt_tokens: None,
                context_tokens: None,
            }
        );
        // Mid-stream, only the sentence carries the numbers.
        assert_eq!(
            ProviderError::from_stream_error(
                "llama.cpp",
                "request (9030 tokens) exceeds the available context size (8192 tokens), try increasing it",
                Some("exceed_context_size_error"),
                Some("400"),
            ),
            ProviderError::ContextTooLong {
                provider: "llama.cpp".into(),
                prompt_tokens: Some(9030),
                context_tokens: Some(8192),
            }
        );
    }

    #[test]
    fn openai_and_anthropic_context_overflows_are_context_too_long() {
        let openai = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(
            http(400, openai),
            ProviderError::ContextTooLong {
                provider: "OpenAI".into(),
                prompt_tokens: Some(131072),
                context_tokens: Some(128000),
            }
        );
        let newer = r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
        let err = http(400, newer);
        assert_eq!(
            err,
            ProviderError::ContextTooLong {
                provider: "OpenAI".into(),
                prompt_tokens: None,
                context_tokens: None,
            }
        );
        assert!(err
            .to_string()
            .starts_with("The model on OpenAI has too small a context for this request. "));
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 204312 tokens > 200000 maximum"}}"#;
        assert_eq!(
            ProviderError::from_http("Anthropic", "claude", 400, &[], anthropic, KEY),
            ProviderError::ContextTooLong {
                provider: "Anthropic".into(),
                prompt_tokens: Some(204312),
                context_tokens: Some(200000),
            }
        );
        assert!(matches!(
            ProviderError::from_stream_error(
                "OpenRouter",
                "too many tokens",
                None,
                Some("context_length_exceeded")
            ),
            ProviderError::ContextTooLong { .. }
        ));
        // Any other 400 is still a bad request.
        let other = r#"{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}"#;
        assert!(matches!(
            http(400, other),
            ProviderError::BadRequest { status: 400, .. }
        ));
    }

    #[test]
    fn a_refusal_quotes_the_models_words_shortened_and_without_a_key() {
        let err = ProviderError::refused("OpenAI", "  I’m sorry, but I can’t help with that.  ");
        assert_eq!(
            err.to_string(),
            "The model on OpenAI declined to answer: \"I’m sorry, but I can’t help with that\". \
             Rephrase the request, or choose another model in Settings → AI provider."
        );
        assert!(!err.is_retryable());
        let long = format!("I cannot share {KEY}. {}", "No. ".repeat(200));
        let ProviderError::Refused { message, .. } = ProviderError::refused("OpenAI", &long) else {
            panic!("not a refusal");
        };
        assert!(!message.contains(KEY), "{message}");
        assert_eq!(message.chars().count(), MAX_REFUSAL_CHARS + 1);
        assert!(message.ends_with('…'));
    }
}
