//! The streamed-reply parser against the naive way of reading a stream: re-parsing everything
//! received so far at every chunk (what a client does when it runs a tolerant JSON parser over
//! the accumulated text each time bytes arrive). Both use the same `ReplyParser`, so the ratio is
//! the difference the incremental design makes, measured in the same run.
//!
//! The reply: ~64 KB of a lecture-like JSON array (speech items with escapes, spotlight and
//! whiteboard actions), fed in 16-byte chunks. `cargo bench -p aula-director` prints criterion's
//! estimates, then one summary line with the ratio from medians measured with `std::time`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use aula_director::reply::{ReplyEvent, ReplyParser};
use criterion::Criterion;

const REPLY_BYTES: usize = 64 * 1024;
const CHUNK_BYTES: usize = 16;

/// A reply of at least `bytes` bytes: text items with quotes, newlines and a little Unicode,
/// every third item an action.
fn reply(bytes: usize) -> String {
    let mut out = String::from("```json\n[");
    let mut n = 0usize;
    while out.len() < bytes {
        if n > 0 {
            out.push(',');
        }
        let item = match n % 3 {
            2 if n.is_multiple_of(2) => format!(
                r#"{{"type":"action","name":"wb_draw_text","params":{{"content":"Step {n}: \"energy\" in","x":{x},"y":{y},"font_size":24}}}}"#,
                x = 40 + n % 500,
                y = 30 + n % 300
            ),
            2 => format!(
                r#"{{"type":"action","name":"spotlight","params":{{"element_id":"el-{n}"}}}}"#
            ),
            _ => format!(
                r#"{{"type":"text","content":"Sentence {n}: light becomes sugar \u2014 the \"engine\" of the leaf.\nThen oxygen leaves — 叶子."}}"#
            ),
        };
        out.push_str(&item);
        n += 1;
    }
    out.push_str("]\n```");
    out
}

/// Splits at (about) `size` bytes, never inside a character.
fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// What a reader needs from the events: how many actions and how much speech.
fn tally(events: &[ReplyEvent]) -> (usize, usize) {
    events.iter().fold((0, 0), |(a, t), e| match e {
        ReplyEvent::Action(_) => (a + 1, t),
        ReplyEvent::Text(text) => (a, t + text.len()),
        ReplyEvent::Dropped { .. } => (a, t),
    })
}

fn incremental(chunks: &[&str]) -> (usize, usize) {
    let mut parser = ReplyParser::new();
    let (mut actions, mut speech) = (0, 0);
    for chunk in chunks {
        let (a, t) = tally(&parser.push(chunk));
        actions += a;
        speech += t;
    }
    let (a, t) = tally(&parser.finish());
    (actions + a, speech + t)
}

/// At every chunk, a fresh parser over everything received so far; the last pass's result is
/// what the reader ends up with.
fn reparse_each_chunk(chunks: &[&str]) -> (usize, usize) {
    let mut received = String::new();
    let mut last = (0, 0);
    for chunk in chunks {
        received.push_str(chunk);
        let mut parser = ReplyParser::new();
        let mut events = parser.push(&received);
        events.extend(parser.finish());
        last = tally(&events);
    }
    last
}

/// The median of `runs` timings of `f`, in µs.
fn median_us(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2].as_secs_f64() * 1e6
}

fn main() {
    let text = reply(REPLY_BYTES);
    let pieces = chunks(&text, CHUNK_BYTES);
    // Both readers must agree before their speed means anything.
    let expected = incremental(&pieces);
    assert_eq!(reparse_each_chunk(&pieces), expected);
    assert!(
        expected.0 > 100 && expected.1 > 30_000,
        "the reply is not lecture-like: {expected:?}"
    );

    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .configure_from_args();
    criterion.bench_function("reply/incremental_64k_16b_chunks", |b| {
        b.iter(|| incremental(black_box(&pieces)))
    });
    criterion.final_summary();

    let incremental_us = median_us(21, || {
        black_box(incremental(black_box(&pieces)));
    });
    // About 8 s a pass: three passes, outside criterion (which wants ten samples at least).
    let reparse_us = median_us(3, || {
        black_box(reparse_each_chunk(black_box(&pieces)));
    });
    println!(
        "reply: incremental parse of a {} KB reply in {} chunks of {CHUNK_BYTES} B = {incremental_us:.0} µs; \
         baseline re-parsing the received text at each chunk {reparse_us:.0} µs; ratio {:.0} (goal >= 50)",
        text.len() / 1024,
        pieces.len(),
        reparse_us / incremental_us
    );
}
