//! An agent's streamed reply in class, `aula_director::reply::ReplyParser`: speech and actions
//! read as the JSON array streams in.
//!
//! Read whole, a character at a time, or cut where the hash says, the reply gives the same
//! speech and the same actions and drops (pieces of speech joined), and `action_count` counts
//! the actions it gave.
#![no_main]

use aula_director::reply::{ReplyEvent, ReplyParser};
use aula_fuzz::{joined, text_chunkings};
use libfuzzer_sys::fuzz_target;

fn events(chunks: &[&str]) -> Vec<ReplyEvent> {
    let mut parser = ReplyParser::new();
    let mut out: Vec<ReplyEvent> = chunks.iter().flat_map(|c| parser.push(c)).collect();
    out.extend(parser.finish());
    let actions = out
        .iter()
        .filter(|e| matches!(e, ReplyEvent::Action(_)))
        .count();
    assert_eq!(
        parser.action_count(),
        actions,
        "action_count counts the actions"
    );
    assert_eq!(
        parser.had_text(),
        out.iter().any(|e| matches!(e, ReplyEvent::Text(_))),
        "had_text says whether there was speech"
    );
    for event in &out {
        if let ReplyEvent::Text(text) = event {
            assert!(!text.is_empty(), "speech is never empty");
        }
    }
    joined(out, |a, b| match (a, b) {
        (ReplyEvent::Text(a), ReplyEvent::Text(b)) => Some(ReplyEvent::Text(format!("{a}{b}"))),
        _ => None,
    })
}

fuzz_target!(|data: &[u8]| {
    let reply = String::from_utf8_lossy(data);
    let [whole, by_char, hashed] = text_chunkings(&reply);
    let expected = events(&whole);
    assert_eq!(events(&by_char), expected, "a character at a time");
    assert_eq!(events(&hashed), expected, "cut anywhere");
});
