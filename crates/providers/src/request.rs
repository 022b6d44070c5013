//! What Aula asks a model: one request shape for every provider.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatRole {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: ChatRole::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: ChatRole::Assistant,
            content: content.into(),
        }
    }
}

/// Ask for a reply that is one JSON document matching `schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    /// A short identifier, e.g. `director_decision`.
    pub name: String,
    pub schema: serde_json::Value,
}

/// Whether the model should reason before answering (for models that can).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Thinking {
    /// Whatever the provider does by default.
    #[default]
    ProviderDefault,
    Off,
    On {
        /// A cap on reasoning tokens, where the provider takes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget_tokens: Option<u32>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub system: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<JsonSchema>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub thinking: Thinking,
}

impl ChatRequest {
    pub fn new(system: impl Into<String>, messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            system: system.into(),
            messages,
            json_schema: None,
            temperature: None,
            max_tokens: None,
            thinking: Thinking::default(),
        }
    }
}

/// The wire format a provider speaks. Most vendors speak OpenAI's chat completions; Anthropic,
/// Gemini (native, the only one of its APIs open to web pages) and Ollama's own `/api/chat` each
/// have their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// `POST {base}/chat/completions`, SSE ending with `data: [DONE]`.
    OpenAiChat,
    /// `POST {base}/messages`, SSE with named events.
    Anthropic,
    /// `POST {base}/models/{model}:streamGenerateContent?alt=sse`, one response object per frame.
    Gemini,
    /// `POST {base}/api/chat`, newline-delimited JSON.
    OllamaNative,
}

impl Dialect {
    pub const ALL: [Dialect; 4] = [
        Dialect::OpenAiChat,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::OllamaNative,
    ];

    /// A name for messages when nothing better is known.
    pub fn label(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "the OpenAI-compatible server",
            Dialect::Anthropic => "Anthropic",
            Dialect::Gemini => "Gemini",
            Dialect::OllamaNative => "Ollama",
        }
    }
}

/// Where to send a request: the preset it came from (`"custom"` for a URL the learner typed), the
/// dialect, the base URL, the model and the learner's key (none for local servers). Serializable
/// only to cross from the page to the AI worker (`wire`); never logged (its `Debug` hides the key).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// A [`crate::Preset`] id, or `"custom"`.
    pub provider: String,
    pub dialect: Dialect,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
}

impl Endpoint {
    /// An endpoint on a preset's default URL.
    pub fn from_preset(
        preset: &crate::Preset,
        model: impl Into<String>,
        api_key: Option<String>,
    ) -> Endpoint {
        Endpoint {
            provider: preset.id.to_string(),
            dialect: preset.dialect,
            base_url: preset.base_url.to_string(),
            model: model.into(),
            api_key,
        }
    }

    /// The name the learner knows the provider by, for messages: the preset's name, or the host
    /// of a custom URL.
    pub fn provider_name(&self) -> String {
        match crate::preset(&self.provider) {
            Some(p) if p.id != "custom" => p.name.to_string(),
            _ => {
                let rest = self
                    .base_url
                    .split_once("://")
                    .map_or(self.base_url.as_str(), |(_, r)| r);
                let host = rest.split('/').next().unwrap_or_default();
                if host.is_empty() {
                    self.dialect.label().to_string()
                } else {
                    format!("the server at {host}")
                }
            }
        }
    }

    /// A server on the learner's own computer or network: a local preset, or a URL whose host
    /// is a loopback or private address.
    pub fn is_local(&self) -> bool {
        if crate::preset(&self.provider).is_some_and(|p| p.is_local()) {
            return true;
        }
        let rest = self
            .base_url
            .trim()
            .split_once("://")
            .map_or(self.base_url.as_str(), |(_, r)| r);
        let authority = rest.split('/').next().unwrap_or_default();
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
        }
        .to_ascii_lowercase();
        let private_v4 = |h: &str| {
            let octets: Vec<u8> = h.split('.').filter_map(|o| o.parse().ok()).collect();
            if octets.len() != 4 {
                return false;
            }
            match octets[..] {
                [127, ..] | [10, ..] | [192, 168, ..] => true,
                [172, b, ..] => (16..=31).contains(&b),
                _ => false,
            }
        };
        host == "localhost"
            || host.ends_with(".localhost")
            || host.ends_with(".local")
            || host == "::1"
            || private_v4(&host)
    }

    /// The key, or `""` when there is none (a blank key counts as none).
    pub(crate) fn key(&self) -> &str {
        self.api_key.as_deref().map(str::trim).unwrap_or_default()
    }

    pub(crate) fn base(&self) -> &str {
        self.base_url.trim().trim_end_matches('/')
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("dialect", &self.dialect)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}
