//! LLM providers: one request shape ([`ChatRequest`]), one event type for every streamed reply
//! ([`StreamEvent`]), the four wire dialects (OpenAI chat completions, Anthropic Messages, Gemini
//! native, Ollama native) behind one incremental decoder ([`ChatStream`]), the provider presets
//! table ([`PRESETS`]), retry and stall policy, model lists, speech requests, token estimates, the
//! [`Transport`] and [`Sleeper`] ports through which bytes and time move, and an error taxonomy
//! whose messages tell the learner what to do and never contain a key.
//!
//! This crate decides and decodes; it does not do I/O. It must never depend on a browser type
//! (web-sys, gloo, wasm-bindgen), an HTTP client or an async runtime: the browser's fetch
//! transport lives in `app`, and a scripted one in [`transport::memory`] for tests.

pub mod anthropic;
pub mod budget;
mod chat;
pub mod error;
pub mod event;
pub mod gemini;
pub mod limits;
pub mod models;
pub mod ollama;
pub mod openai;
pub mod presets;
pub mod request;
pub mod retry;
pub mod speech;
pub mod sse;
pub mod stream;
pub mod tokens;
pub mod transport;
pub mod wire;

#[cfg(test)]
mod chat_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests_support;

pub use error::ProviderError;
pub use event::{StopReason, StreamEvent};
pub use limits::{LearnerLimits, LimitSource, ModelLimits, ServerLimits};
pub use models::{list_models, models_request, parse_models};
pub use openai::OpenAiChatDecoder;
pub use presets::{explain_network_failure, preset, BrowserAccess, KeyNeed, Preset, PRESETS};
pub use request::{ChatMessage, ChatRequest, ChatRole, Dialect, Endpoint, JsonSchema, Thinking};
pub use retry::{stream_chat_with_retry, RetryDecision, RetryPolicy, Sleeper};
pub use speech::{parse_transcription, transcription_request, tts_request, AudioFormat};
pub use sse::{SseDecoder, SseFrame};
pub use stream::ChatStream;
pub use tokens::{estimate_tokens, TokenCounter};
pub use transport::{
    AbortHandle, ByteStream, HttpRequest, HttpResponse, Method, PendingResponse, Transport,
    TransportError,
};

pub(crate) use chat::{
    auth_headers, drive_attempt, http_failure, next_chunk, transport_failure, Patience,
};
pub use chat::{http_request, stream_chat};
