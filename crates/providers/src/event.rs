//! What comes back: every provider's stream is decoded into these events.

use crate::error::ProviderError;

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It hit `max_tokens`; the reply is cut short.
    MaxTokens,
    /// It wants a tool (or produced the forced JSON tool call).
    ToolUse,
    /// The provider withheld the rest.
    ContentFilter,
    Other(String),
}

impl StopReason {
    /// Reads an OpenAI-style `finish_reason`.
    pub fn from_openai(reason: &str) -> StopReason {
        match reason {
            "stop" => StopReason::EndTurn,
            "length" => StopReason::MaxTokens,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            "content_filter" => StopReason::ContentFilter,
            other => StopReason::Other(other.to_string()),
        }
    }
}

/// One step of a streamed reply. A stream ends with exactly one `Done` or one `Error`.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Visible reply text.
    TextDelta(String),
    /// Reasoning text, shown apart from the reply (or not at all).
    ThinkingDelta(String),
    /// Reasoning is over; the reply proper follows.
    ThinkingEnd,
    /// A piece of a structured (JSON) reply.
    JsonDelta(String),
    /// Token counts; `cached` is the part of `input` served from the provider's prompt cache.
    Usage {
        input: u64,
        output: u64,
        cached: u64,
    },
    Done {
        stop_reason: Option<StopReason>,
    },
    Error(ProviderError),
}

impl StreamEvent {
    /// Whether this event ends the stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamEvent::Done { .. } | StreamEvent::Error(_))
    }
}
