//! What can go wrong talking to a provider, in words a learner can act on. No message ever
//! contains an API key: text that comes from a provider or the network goes through
//! [`redact`] before it is stored in an error.

use thiserror::Error;

/// The longest piece of a provider's own message kept in an error.
const MAX_MESSAGE_CHARS: usize = 300;

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

    /// Classifies an error object a provider sent in the middle of a stream.
    pub fn from_stream_error(
        provider: &str,
        message: &str,
        kind: Option<&str>,
        code: Option<&str>,
    ) -> ProviderError {
        let provider = provider.to_string();
        // OpenAI `type`/`code`, Anthropic `error.type`, Gemini `status` (upper case).
        let hint = format!("{} {}", kind.unwrap_or(""), code.unwrap_or("")).to_ascii_lowercase();
        let server = |status: u16| ProviderError::ServerError {
            provider: provider.clone(),
            status,
            message: redact(message, ""),
        };
        if hint.contains("insufficient_quota") {
            ProviderError::QuotaExhausted { provider }
        } else if hint.contains("rate_limit") || hint.contains("resource_exhausted") {
            ProviderError::RateLimited {
                provider,
                retry_after_ms: None,
            }
        } else if hint.contains("invalid_api_key")
            || hint.contains("authentication")
            || hint.contains("unauthenticated")
        {
            ProviderError::KeyRejected {
                provider,
                status: 401,
            }
        } else if hint.contains("permission") {
            ProviderError::KeyRejected {
                provider,
                status: 403,
            }
        } else if hint.contains("overloaded") {
            server(529) // Anthropic's "overloaded" status
        } else if hint.contains("unavailable") {
            server(503)
        } else if hint.contains("api_error") || hint.trim() == "internal" {
            server(500)
        } else {
            ProviderError::Upstream {
                provider,
                message: redact(message, ""),
            }
        }
    }
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
    if out.chars().count() > MAX_MESSAGE_CHARS {
        out = out.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
    }
    out
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
            ProviderError::from_stream_error("X", "Odd.", Some("server_error"), None),
            ProviderError::Upstream {
                provider: "X".into(),
                message: "Odd.".into()
            }
        );
    }
}
