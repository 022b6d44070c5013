//! Resolving a long script, against two baselines measured in the same run:
//! - the floor: cloning the actions (resolve clones each one into its segment);
//! - the naive seek a player without a timeline does: re-walking the script from the start,
//!   summing durations, for every seek position; against resolving once and binary-searching
//!   the segments for each position.
//!
//! `cargo bench -p aula-timeline` prints criterion's estimates, then one line per comparison
//! with the ratio, from medians measured with `std::time`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use aula_course::action::{
    CodeEditOperation, Discussion, Laser, Speech, Spotlight, WbClear, WbClose, WbDelete,
    WbDrawCode, WbDrawLatex, WbDrawShape, WbDrawText, WbEditCode, WhiteboardShape,
};
use aula_course::durations;
use aula_course::{Action, ActionKind};
use aula_timeline::{resolve, BoardState, NoKnownDurations, SegmentSource, Timeline};
use criterion::Criterion;

const ACTIONS: usize = 10_000;
/// A learner scrubbing the seek bar for a couple of seconds, one position per frame.
const SEEKS: usize = 100;

/// A small deterministic generator, so every run benches the same script.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

const WORDS: &[&str] = &[
    "light",
    "leaf",
    "water",
    "sugar",
    "oxygen",
    "carbon",
    "chlorophyll",
    "the",
    "makes",
    "into",
    "plant",
    "energy",
    "cell",
    "green",
    "sun",
    "and",
    "then",
    "because",
];

/// A lecture-like script: mostly speech, effects now and then, whiteboard work in bursts
/// (draws, code edits, deletes, a clear, a close), the odd discussion and unknown action.
fn lecture(count: usize) -> Vec<Action> {
    let mut rng = Lcg(0x5eed);
    let mut actions = Vec::with_capacity(count);
    let mut drawn: Vec<String> = Vec::new();
    let mut code_blocks: Vec<String> = Vec::new();
    for n in 0..count {
        let id = format!("a{n}");
        let roll = rng.next(100);
        let action = match roll {
            0..=54 => {
                let words = 6 + rng.next(30) as usize;
                let text: Vec<&str> = (0..words)
                    .map(|_| WORDS[rng.next(WORDS.len() as u64) as usize])
                    .collect();
                Action::Speech(Speech {
                    id,
                    text: format!("{}.", text.join(" ")),
                    speaker: None,
                    audio_id: None,
                })
            }
            55..=61 => Action::Spotlight(Spotlight {
                id,
                element_id: "title".into(),
                dim_opacity: 0.5,
            }),
            62..=67 => Action::Laser(Laser {
                id,
                element_id: "diagram".into(),
                color: "#ff0000".into(),
            }),
            68..=75 => {
                drawn.push(id.clone());
                Action::WbDrawText(WbDrawText {
                    id,
                    element_id: None,
                    content: "Light + water + carbon dioxide".into(),
                    x: rng.next(600) as f64,
                    y: rng.next(400) as f64,
                    width: 400.0,
                    height: 100.0,
                    font_size: 18.0,
                    color: "#333333".into(),
                })
            }
            76..=79 => {
                drawn.push(id.clone());
                Action::WbDrawShape(WbDrawShape {
                    id,
                    element_id: None,
                    shape: WhiteboardShape::Circle,
                    x: rng.next(800) as f64,
                    y: rng.next(400) as f64,
                    width: 100.0,
                    height: 100.0,
                    fill_color: "#facc15".into(),
                })
            }
            80..=82 => {
                drawn.push(id.clone());
                Action::WbDrawLatex(WbDrawLatex {
                    id,
                    element_id: None,
                    latex: "6CO_2 + 6H_2O \\to C_6H_{12}O_6 + 6O_2".into(),
                    x: 100.0,
                    y: 60.0,
                    width: 800.0,
                    height: Some(80.0),
                    color: "#000000".into(),
                })
            }
            83..=85 => {
                drawn.push(id.clone());
                code_blocks.push(id.clone());
                let lines = 1 + rng.next(12) as usize;
                Action::WbDrawCode(WbDrawCode {
                    id,
                    element_id: None,
                    language: "python".into(),
                    code: vec!["rate = min(light * 0.5, 27)"; lines].join("\n"),
                    x: 100.0,
                    y: 60.0,
                    width: 500.0,
                    height: 300.0,
                    file_name: None,
                })
            }
            86..=88 if !code_blocks.is_empty() => Action::WbEditCode(WbEditCode {
                id,
                element_id: code_blocks[rng.next(code_blocks.len() as u64) as usize].clone(),
                operation: CodeEditOperation::ReplaceLines,
                line_id: None,
                line_ids: vec!["L1".into()],
                content: Some("light = 80".into()),
            }),
            89..=91 if !drawn.is_empty() => {
                let element_id = drawn.swap_remove(rng.next(drawn.len() as u64) as usize);
                Action::WbDelete(WbDelete { id, element_id })
            }
            92..=93 => {
                drawn.clear();
                code_blocks.clear();
                Action::WbClear(WbClear { id })
            }
            94..=95 => Action::WbClose(WbClose { id }),
            96 => Action::Discussion(Discussion {
                id,
                topic: "Do plants breathe at night?".into(),
                prompt: None,
                agent_id: None,
                recording: vec![],
            }),
            97 => Action::Unknown {
                type_name: "wb_draw_mindmap".into(),
                raw: serde_json::json!({"type": "wb_draw_mindmap", "id": id}),
            },
            _ => Action::Speech(Speech {
                id,
                text: "光合作用把光变成植物的食物。".into(),
                speaker: None,
                audio_id: None,
            }),
        };
        actions.push(action);
    }
    actions
}

/// How a player without a timeline finds the action playing at `at_ms`: walk the script from
/// the start, summing each blocking action's duration (with the implicit opens and the clear
/// cascade, so it agrees with the timeline), until the sum passes the position.
fn naive_action_at(actions: &[Action], at_ms: u64) -> Option<usize> {
    let (mut cursor, mut open, mut elements) = (0u64, false, 0usize);
    for (index, action) in actions.iter().enumerate() {
        let Some(kind) = action.kind() else { continue };
        if kind.is_fire_and_forget() {
            continue;
        }
        if !open && kind.opens_whiteboard_implicitly() {
            cursor += durations::WB_OPEN_MS;
            if at_ms < cursor {
                return Some(index);
            }
            open = true;
        }
        let duration = durations::action_ms(action, elements);
        cursor += duration;
        if at_ms < cursor && duration > 0 {
            return Some(index);
        }
        match kind {
            ActionKind::WbOpen => open = true,
            ActionKind::WbClose => open = false,
            ActionKind::WbClear => elements = 0,
            ActionKind::WbDelete => elements = elements.saturating_sub(1),
            k if k.draws_on_whiteboard() => elements += 1,
            _ => {}
        }
    }
    None
}

fn timeline_action_at(timeline: &Timeline, at_ms: u64) -> Option<usize> {
    timeline
        .segment_at(at_ms)
        .map(|i| match timeline.segments[i].source {
            SegmentSource::Action(index)
            | SegmentSource::ImplicitWhiteboardOpen { before: index } => index,
        })
}

fn seek_positions(total_ms: u64) -> Vec<u64> {
    let mut rng = Lcg(7);
    (0..SEEKS).map(|_| rng.next(total_ms.max(1))).collect()
}

fn resolve_plain(actions: &[Action]) -> Timeline {
    resolve(actions, BoardState::default(), &NoKnownDurations)
}

fn seeks_with_timeline(actions: &[Action], positions: &[u64]) -> usize {
    let timeline = resolve_plain(actions);
    positions
        .iter()
        .filter_map(|&p| timeline_action_at(&timeline, p))
        .sum()
}

fn seeks_naive(actions: &[Action], positions: &[u64]) -> usize {
    positions
        .iter()
        .filter_map(|&p| naive_action_at(actions, p))
        .sum()
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
    let actions = lecture(ACTIONS);
    let timeline = resolve_plain(&actions);
    let positions = seek_positions(timeline.total_ms);
    // The baseline must find what the timeline finds, or the comparison means nothing.
    for &p in &positions {
        assert_eq!(
            naive_action_at(&actions, p),
            timeline_action_at(&timeline, p),
            "at {p} ms"
        );
    }

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("timeline");
    group.bench_function("resolve 10000 actions", |b| {
        b.iter(|| resolve_plain(black_box(&actions)))
    });
    group.bench_function("baseline: clone 10000 actions", |b| {
        b.iter(|| black_box(&actions).to_vec())
    });
    group.bench_function("100 seeks: resolve once + binary search", |b| {
        b.iter(|| seeks_with_timeline(black_box(&actions), black_box(&positions)))
    });
    // About 0.4 s an iteration: give its ten samples the time they need.
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("baseline: 100 seeks re-walking the script", |b| {
        b.iter(|| seeks_naive(black_box(&actions), black_box(&positions)))
    });
    group.finish();
    criterion.final_summary();

    let resolve_us = median_us(21, || {
        black_box(resolve_plain(black_box(&actions)));
    });
    let clone_us = median_us(21, || {
        black_box(black_box(&actions).to_vec());
    });
    let timeline_seeks_us = median_us(11, || {
        black_box(seeks_with_timeline(
            black_box(&actions),
            black_box(&positions),
        ));
    });
    let naive_seeks_us = median_us(3, || {
        black_box(seeks_naive(black_box(&actions), black_box(&positions)));
    });
    println!(
        "timeline: resolve {ACTIONS} actions = {resolve_us:.0} µs; baseline (clone the actions) \
         {clone_us:.0} µs; ratio {:.2}",
        resolve_us / clone_us
    );
    println!(
        "timeline: {SEEKS} seeks in {ACTIONS} actions: resolve once + binary search = \
         {timeline_seeks_us:.0} µs; baseline (re-walk the script per seek) {naive_seeks_us:.0} µs; \
         ratio {:.1}",
        naive_seeks_us / timeline_seeks_us
    );
}
