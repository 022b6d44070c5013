//! [`ChatStream`]: one incremental decoder for every dialect. Push the bytes of a reply as they
//! arrive and get [`StreamEvent`]s; chunk boundaries may fall anywhere. On top of each dialect's
//! decoder it does what all share: reasoning from any source (a dialect's own field, or
//! `<think>…</think>` written inline by raw open models) becomes `ThinkingDelta`, `ThinkingEnd`
//! fires once when the answer starts, a requested JSON reply arrives as `JsonDelta`, and nothing
//! follows the one terminal event. An error from outside the reply (the connection, a stall)
//! ends it through [`ChatStream::fail`], which keeps the rule of [`StreamEvent::Stopped`].

use crate::anthropic::AnthropicDecoder;
use crate::error::ProviderError;
use crate::event::{push_failure, StopReason, StreamEvent};
use crate::gemini::GeminiDecoder;
use crate::ollama::{LineSplitter, OllamaDecoder};
use crate::openai::OpenAiChatDecoder;
use crate::request::Dialect;
use crate::sse::{SseDecoder, SseFrame};

const OPEN_TAG: &str = "<think>";
const CLOSE_TAG: &str = "</think>";

enum Decoder {
    OpenAi(OpenAiChatDecoder),
    Anthropic(AnthropicDecoder),
    Gemini(GeminiDecoder),
}

impl Decoder {
    fn decode(&mut self, frame: &SseFrame) -> Vec<StreamEvent> {
        match self {
            Decoder::OpenAi(d) => d.decode(frame),
            Decoder::Anthropic(d) => d.decode(frame),
            Decoder::Gemini(d) => d.decode(frame),
        }
    }

    fn finish(&mut self) -> Vec<StreamEvent> {
        match self {
            Decoder::OpenAi(d) => d.finish(),
            Decoder::Anthropic(d) => d.finish(),
            Decoder::Gemini(d) => d.finish(),
        }
    }

    fn stop_reason(&self) -> Option<StopReason> {
        match self {
            Decoder::OpenAi(d) => d.stop_reason(),
            Decoder::Anthropic(d) => d.stop_reason(),
            Decoder::Gemini(d) => d.stop_reason(),
        }
    }
}

enum Framing {
    Sse(SseDecoder, Decoder),
    Lines(LineSplitter, OllamaDecoder),
}

/// Where the inline `<think>` reader stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tags {
    /// No visible text yet: a reply may still open with `<think>`.
    Start,
    InThink,
    /// Just after `</think>`: the blank lines that follow it are dropped.
    Closed,
    /// Plain text from here on.
    Text,
}

/// The shared post-processing of decoded events.
#[derive(Debug)]
struct Shaper {
    json: bool,
    thinking_open: bool,
    tags: Tags,
    /// Text held back because it may be the start of a tag.
    held: String,
}

impl Shaper {
    fn thought(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.thinking_open = true;
            out.push(StreamEvent::ThinkingDelta(text.to_string()));
        }
    }

    fn end_thinking(&mut self, out: &mut Vec<StreamEvent>) {
        if std::mem::take(&mut self.thinking_open) {
            out.push(StreamEvent::ThinkingEnd);
        }
    }

    fn visible(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.end_thinking(out);
            out.push(if self.json {
                StreamEvent::JsonDelta(text.to_string())
            } else {
                StreamEvent::TextDelta(text.to_string())
            });
        }
    }

    /// Reply text, read for inline `<think>` tags.
    fn text(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        let mut buf = std::mem::take(&mut self.held) + text;
        loop {
            match self.tags {
                Tags::Text => return self.visible(&buf, out),
                Tags::Start => {
                    let trimmed = buf.trim_start();
                    if let Some(rest) = trimmed.strip_prefix(OPEN_TAG) {
                        buf = rest.to_string();
                        self.tags = Tags::InThink;
                    } else if OPEN_TAG.starts_with(trimmed) {
                        self.held = buf; // blank, or a prefix of the tag: wait for more
                        return;
                    } else {
                        self.tags = Tags::Text;
                    }
                }
                Tags::InThink => match buf.find(CLOSE_TAG) {
                    Some(at) => {
                        self.thought(&buf[..at], out);
                        buf = buf[at + CLOSE_TAG.len()..].to_string();
                        self.tags = Tags::Closed;
                    }
                    None => {
                        let keep = partial_tag_suffix(&buf, CLOSE_TAG);
                        let split = buf.len() - keep;
                        self.thought(&buf[..split], out);
                        self.held = buf[split..].to_string();
                        return;
                    }
                },
                Tags::Closed => {
                    let trimmed = buf.trim_start();
                    if trimmed.is_empty() {
                        return;
                    }
                    self.tags = Tags::Text;
                    buf = trimmed.to_string();
                }
            }
        }
    }

    fn accept(&mut self, event: StreamEvent, out: &mut Vec<StreamEvent>) {
        match event {
            StreamEvent::TextDelta(t) => self.text(&t, out),
            StreamEvent::ThinkingDelta(t) => self.thought(&t, out),
            StreamEvent::ThinkingEnd => {} // recomputed here for every dialect
            StreamEvent::JsonDelta(j) => {
                self.end_thinking(out);
                out.push(StreamEvent::JsonDelta(j));
            }
            usage @ StreamEvent::Usage { .. } => out.push(usage),
            // `Stopped` closes the reply like the terminal event it precedes.
            end @ (StreamEvent::Stopped { .. }
            | StreamEvent::Done { .. }
            | StreamEvent::Error(_)) => {
                self.flush(out);
                self.end_thinking(out);
                out.push(end);
            }
        }
    }

    /// Text held back at the end of the reply is what it looked like.
    fn flush(&mut self, out: &mut Vec<StreamEvent>) {
        let held = std::mem::take(&mut self.held);
        match self.tags {
            Tags::InThink => self.thought(&held, out),
            Tags::Start | Tags::Text => self.visible(&held, out),
            Tags::Closed => {}
        }
    }
}

/// How many bytes at the end of `text` could begin `tag` (a proper prefix of it).
fn partial_tag_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| {
            text.len() >= n
                && text.is_char_boundary(text.len() - n)
                && tag.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// The incremental decoder of one streamed reply, for any [`Dialect`].
pub struct ChatStream {
    framing: Framing,
    shaper: Shaper,
    done: bool,
}

impl ChatStream {
    /// `provider_name` is the name used in error messages.
    pub fn new(dialect: Dialect, provider_name: impl Into<String>) -> ChatStream {
        let name = provider_name.into();
        let framing = match dialect {
            Dialect::OpenAiChat => Framing::Sse(
                SseDecoder::new(),
                Decoder::OpenAi(OpenAiChatDecoder::new(name)),
            ),
            Dialect::Anthropic => Framing::Sse(
                SseDecoder::new(),
                Decoder::Anthropic(AnthropicDecoder::new(name)),
            ),
            Dialect::Gemini => {
                Framing::Sse(SseDecoder::new(), Decoder::Gemini(GeminiDecoder::new(name)))
            }
            Dialect::OllamaNative => {
                Framing::Lines(LineSplitter::default(), OllamaDecoder::new(name))
            }
        };
        ChatStream {
            framing,
            shaper: Shaper {
                json: false,
                thinking_open: false,
                tags: Tags::Start,
                held: String::new(),
            },
            done: false,
        }
    }

    /// The request asked for a JSON reply: its text arrives as [`StreamEvent::JsonDelta`].
    pub fn expecting_json(mut self) -> ChatStream {
        self.shaper.json = true;
        self
    }

    /// Whether the terminal event (`Done` or `Error`) has been returned.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Feeds the next bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<StreamEvent> {
        let mut raw = Vec::new();
        if self.done {
            return raw;
        }
        match &mut self.framing {
            Framing::Sse(sse, decoder) => {
                for frame in sse.push(bytes) {
                    raw.extend(decoder.decode(&frame));
                }
            }
            Framing::Lines(lines, decoder) => {
                for line in lines.push(bytes) {
                    raw.extend(decoder.decode(&line));
                }
            }
        }
        self.shape(raw)
    }

    /// The byte stream has closed; returns the last events, ending with the terminal one if it
    /// has not come yet (a reply that never finished is a cut stream).
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut raw = Vec::new();
        if self.done {
            return raw;
        }
        match &mut self.framing {
            // A last frame or line that is not whole JSON was cut off, not malformed: leave it
            // to the dialect's `finish`, which reports the cut.
            Framing::Sse(sse, decoder) => {
                if let Some(frame) = sse
                    .finish()
                    .filter(|f| f.is_done_marker() || is_json(&f.data))
                {
                    raw.extend(decoder.decode(&frame));
                }
                raw.extend(decoder.finish());
            }
            Framing::Lines(lines, decoder) => {
                if let Some(line) = lines.finish().filter(|l| is_json(l)) {
                    raw.extend(decoder.decode(&line));
                }
                raw.extend(decoder.finish());
            }
        }
        self.shape(raw)
    }

    /// Ends the stream with an error from outside the reply (the connection dropped, or went
    /// silent): the last events, ending with `error`, after a [`StreamEvent::Stopped`] if the
    /// reply had already said why the model stopped. Nothing if the stream has already ended.
    pub fn fail(&mut self, error: ProviderError) -> Vec<StreamEvent> {
        if self.done {
            return Vec::new();
        }
        let stop_reason = match &self.framing {
            Framing::Sse(_, decoder) => decoder.stop_reason(),
            // Ollama says why only on its last line, which ends the stream.
            Framing::Lines(..) => None,
        };
        let mut raw = Vec::new();
        push_failure(&mut raw, stop_reason, error);
        self.shape(raw)
    }

    fn shape(&mut self, raw: Vec<StreamEvent>) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        for event in raw {
            let terminal = event.is_terminal();
            self.shaper.accept(event, &mut out);
            if terminal {
                self.done = true;
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text events as the OpenAI dialect would deliver them, one delta per piece.
    fn openai_text_stream(pieces: &[&str]) -> String {
        let mut s = String::new();
        for p in pieces {
            let delta = serde_json::json!({"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]});
            s.push_str(&format!("data: {delta}\n\n"));
        }
        s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        s
    }

    fn decode(dialect: Dialect, input: &str) -> Vec<StreamEvent> {
        let mut stream = ChatStream::new(dialect, "Test");
        let mut events = stream.push(input.as_bytes());
        events.extend(stream.finish());
        events
    }

    #[test]
    fn inline_think_tags_become_thinking_wherever_the_deltas_split_them() {
        let whole = "<think>Light is energy.</think>\n\nPlants eat light.";
        let expected = [
            StreamEvent::ThinkingDelta("Light is energy.".into()),
            StreamEvent::ThinkingEnd,
            StreamEvent::TextDelta("Plants eat light.".into()),
            StreamEvent::Done {
                stop_reason: Some(crate::StopReason::EndTurn),
            },
        ];
        for a in 0..=whole.len() {
            for b in a..=whole.len() {
                let pieces = [&whole[..a], &whole[a..b], &whole[b..]];
                let events = crate::tests_support::coalesce(decode(
                    Dialect::OpenAiChat,
                    &openai_text_stream(&pieces),
                ));
                assert_eq!(events, expected, "split at {a} and {b}");
            }
        }
    }

    #[test]
    fn think_tags_only_open_a_reply() {
        let events = crate::tests_support::coalesce(decode(
            Dialect::OpenAiChat,
            &openai_text_stream(&["Use the <think>", " tag in HTML? No such tag."]),
        ));
        assert_eq!(
            events[0],
            StreamEvent::TextDelta("Use the <think> tag in HTML? No such tag.".into())
        );
        assert!(!events.contains(&StreamEvent::ThinkingEnd));
    }

    #[test]
    fn an_unclosed_think_at_the_end_stays_thinking_and_a_bare_prefix_stays_text() {
        let events = decode(
            Dialect::OpenAiChat,
            &openai_text_stream(&["<think>hmm </th"]),
        );
        assert_eq!(
            crate::tests_support::coalesce(events)[..2],
            [
                StreamEvent::ThinkingDelta("hmm </th".into()),
                StreamEvent::ThinkingEnd
            ]
        );
        let events = decode(Dialect::OpenAiChat, &openai_text_stream(&["  <thi"]));
        assert_eq!(events[0], StreamEvent::TextDelta("  <thi".into()));
    }

    #[test]
    fn a_json_reply_arrives_as_json_deltas_even_after_inline_thinking() {
        let mut stream = ChatStream::new(Dialect::OpenAiChat, "Test").expecting_json();
        let mut events =
            stream.push(openai_text_stream(&["<think>ok</think>", "{\"a\":", "1}"]).as_bytes());
        events.extend(stream.finish());
        assert_eq!(
            crate::tests_support::coalesce(events)[..3],
            [
                StreamEvent::ThinkingDelta("ok".into()),
                StreamEvent::ThinkingEnd,
                StreamEvent::JsonDelta("{\"a\":1}".into())
            ]
        );
    }

    #[test]
    fn nothing_follows_the_terminal_event() {
        let mut stream = ChatStream::new(Dialect::OpenAiChat, "Test");
        let events = stream.push(openai_text_stream(&["Hi"]).as_bytes());
        assert!(events.last().is_some_and(StreamEvent::is_terminal));
        assert!(stream.is_done());
        assert!(stream.push(b"data: {\"choices\":[]}\n\n").is_empty());
        assert!(stream.finish().is_empty());
    }

    #[test]
    fn partial_tag_suffix_respects_char_boundaries() {
        assert_eq!(partial_tag_suffix("abc</th", CLOSE_TAG), 4);
        assert_eq!(partial_tag_suffix("光<", CLOSE_TAG), 1);
        assert_eq!(partial_tag_suffix("光", CLOSE_TAG), 0);
    }
}
