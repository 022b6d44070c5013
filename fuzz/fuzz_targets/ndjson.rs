//! Ollama's streamed replies, one JSON object per line: `aula_providers::ChatStream` with
//! `Dialect::OllamaNative` (the line splitter and the Ollama decoder).
//!
//! The first byte says whether the request asked for JSON; the rest is the stream. Read whole,
//! a byte at a time, or cut where the hash says, it gives the same events (pieces of text
//! joined), ending with exactly one terminal event.
#![no_main]

use aula_fuzz::{byte_chunkings, joined};
use aula_providers::{ChatStream, Dialect, StreamEvent};
use libfuzzer_sys::fuzz_target;

fn join(a: &StreamEvent, b: &StreamEvent) -> Option<StreamEvent> {
    use StreamEvent::*;
    match (a, b) {
        (TextDelta(a), TextDelta(b)) => Some(TextDelta(format!("{a}{b}"))),
        (ThinkingDelta(a), ThinkingDelta(b)) => Some(ThinkingDelta(format!("{a}{b}"))),
        (JsonDelta(a), JsonDelta(b)) => Some(JsonDelta(format!("{a}{b}"))),
        _ => None,
    }
}

fn events(json: bool, chunks: &[&[u8]]) -> Vec<StreamEvent> {
    let mut stream = ChatStream::new(Dialect::OllamaNative, "fuzz");
    if json {
        stream = stream.expecting_json();
    }
    let mut out: Vec<StreamEvent> = chunks.iter().flat_map(|c| stream.push(c)).collect();
    out.extend(stream.finish());
    let terminal: Vec<usize> = (0..out.len()).filter(|&i| out[i].is_terminal()).collect();
    assert_eq!(
        terminal,
        [out.len() - 1],
        "one terminal event, last: {out:?}"
    );
    joined(out, join)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, stream)) = data.split_first() else {
        return;
    };
    let json = pick & 1 != 0;
    let [whole, bytes, hashed] = byte_chunkings(stream);
    let expected = events(json, &whole);
    assert_eq!(events(json, &bytes), expected, "a byte at a time");
    assert_eq!(events(json, &hashed), expected, "cut anywhere");
});
