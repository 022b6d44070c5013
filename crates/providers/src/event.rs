//! What comes back: every provider's stream is decoded into these events.
//!
//! A stream ends with exactly one terminal event, [`StreamEvent::Done`] or
//! [`StreamEvent::Error`]. When it ends in an error after the provider had said why the model
//! stopped (a `finish_reason: "length"` chunk, then an error object; or the connection dropping
//! before the end marker), [`StreamEvent::Stopped`] carries that reason just before the
//! `Error`, so a caller learns both that the reply was cut for length and what went wrong.

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

/// One step of a streamed reply. A stream ends with exactly one `Done` or one `Error`; a
/// `Stopped` comes at most once, right before an `Error`.
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
    /// The reply ended well; `stop_reason` is why, when the provider said.
    Done { stop_reason: Option<StopReason> },
    /// Why the model stopped, when the provider said so and the stream then ends in an `Error`
    /// instead of `Done`: the reply so far is what the model wrote (cut short, for
    /// [`StopReason::MaxTokens`]), and the error that follows is what went wrong after.
    Stopped { stop_reason: StopReason },
    /// The reply failed; nothing follows.
    Error(ProviderError),
}

impl StreamEvent {
    /// Whether this event ends the stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamEvent::Done { .. } | StreamEvent::Error(_))
    }
}

/// Ends a decoder's events with `error`, after the reason the model stopped if it is known.
pub(crate) fn push_failure(
    events: &mut Vec<StreamEvent>,
    stop_reason: Option<StopReason>,
    error: ProviderError,
) {
    if let Some(stop_reason) = stop_reason {
        events.push(StreamEvent::Stopped { stop_reason });
    }
    events.push(StreamEvent::Error(error));
}
