//! Streamed replies over Server-Sent Events: `aula_providers::SseDecoder` and the OpenAI,
//! Anthropic and Gemini decoders behind `aula_providers::ChatStream`.
//!
//! The first byte picks the dialect (and whether the request asked for JSON); the rest is the
//! stream. Read whole, a byte at a time, or cut where the hash says, the stream gives the same
//! frames and the same events (pieces of text joined), and it ends with exactly one terminal
//! event, last, with `Stopped` at most once and only right before an `Error`.
#![no_main]

use aula_fuzz::{byte_chunkings, joined};
use aula_providers::{ChatStream, Dialect, SseDecoder, StreamEvent};
use libfuzzer_sys::fuzz_target;

fn frames(chunks: &[&[u8]]) -> Vec<aula_providers::SseFrame> {
    let mut decoder = SseDecoder::new();
    let mut out: Vec<_> = chunks.iter().flat_map(|c| decoder.push(c)).collect();
    out.extend(decoder.finish());
    out
}

fn join(a: &StreamEvent, b: &StreamEvent) -> Option<StreamEvent> {
    use StreamEvent::*;
    match (a, b) {
        (TextDelta(a), TextDelta(b)) => Some(TextDelta(format!("{a}{b}"))),
        (ThinkingDelta(a), ThinkingDelta(b)) => Some(ThinkingDelta(format!("{a}{b}"))),
        (JsonDelta(a), JsonDelta(b)) => Some(JsonDelta(format!("{a}{b}"))),
        _ => None,
    }
}

/// The events of a stream read in `chunks`, checked for the rules every stream keeps.
pub fn events(dialect: Dialect, json: bool, chunks: &[&[u8]]) -> Vec<StreamEvent> {
    let mut stream = ChatStream::new(dialect, "fuzz");
    if json {
        stream = stream.expecting_json();
    }
    let mut out: Vec<StreamEvent> = chunks.iter().flat_map(|c| stream.push(c)).collect();
    out.extend(stream.finish());
    assert!(stream.is_done(), "a finished stream is done");
    let terminal: Vec<usize> = (0..out.len()).filter(|&i| out[i].is_terminal()).collect();
    assert_eq!(
        terminal,
        [out.len() - 1],
        "one terminal event, last: {out:?}"
    );
    for (i, event) in out.iter().enumerate() {
        if matches!(event, StreamEvent::Stopped { .. }) {
            assert!(
                matches!(out.get(i + 1), Some(StreamEvent::Error(_))),
                "Stopped comes right before an Error: {out:?}"
            );
        }
    }
    joined(out, join)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, stream)) = data.split_first() else {
        return;
    };
    let dialect = match pick % 3 {
        0 => Dialect::OpenAiChat,
        1 => Dialect::Anthropic,
        _ => Dialect::Gemini,
    };
    let json = pick & 0x80 != 0;
    let [whole, bytes, hashed] = byte_chunkings(stream);
    let expected = frames(&whole);
    assert_eq!(frames(&bytes), expected, "a byte at a time");
    assert_eq!(frames(&hashed), expected, "cut anywhere");
    let expected = events(dialect, json, &whole);
    assert_eq!(events(dialect, json, &bytes), expected, "a byte at a time");
    assert_eq!(events(dialect, json, &hashed), expected, "cut anywhere");
});
