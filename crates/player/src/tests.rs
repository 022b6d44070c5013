use std::collections::HashMap;

use aula_course::action::{Laser, Speech, WbClear};
use aula_course::Action;
use aula_timeline::{resolve, BoardState, Timeline};
use proptest::prelude::*;

use super::*;
use PlaybackEvent::{SegmentEnded as Ended, SegmentStarted as Started, StateChanged};

fn speech(id: &str) -> Action {
    Action::Speech(Speech {
        id: id.into(),
        text: "Light is energy.".into(),
        speaker: None,
        audio_id: None,
    })
}

fn laser(id: &str) -> Action {
    Action::Laser(Laser {
        id: id.into(),
        element_id: "title".into(),
        color: "#ff0000".into(),
    })
}

/// Speeches with exact audio lengths, so times in tests are easy to read.
fn timeline(actions: &[(Action, u64)]) -> Timeline {
    let known: HashMap<String, u64> = actions
        .iter()
        .map(|(a, ms)| (a.id().to_string(), *ms))
        .collect();
    let actions: Vec<Action> = actions.iter().map(|(a, _)| a.clone()).collect();
    resolve(&actions, BoardState::default(), &known)
}

/// s1 [0, 1000), s2 [1000, 3000).
fn two_speeches() -> Player {
    Player::new(timeline(&[(speech("s1"), 1000), (speech("s2"), 2000)]))
}

fn started(segment: usize) -> PlaybackEvent {
    Started {
        segment,
        offset_ms: 0,
    }
}

#[test]
fn play_starts_the_segment_at_the_position() {
    let mut p = two_speeches();
    assert_eq!(p.state(), PlaybackState::Idle);
    assert_eq!(
        p.play(10_000),
        [StateChanged(PlaybackState::Playing), started(0)]
    );
    assert_eq!(p.active_segments(), [0]);
}

#[test]
fn speech_segment_stays_active_until_its_duration_has_passed() {
    let mut p = two_speeches();
    p.play(0);
    assert_eq!(p.advance(999), []);
    assert_eq!(p.active_segments(), [0]);
    assert_eq!(p.advance(1000), [Ended { segment: 0 }, started(1)]);
    assert_eq!(p.position_ms(), 1000);
}

#[test]
fn reaching_the_end_ends_every_segment_then_playback() {
    let mut p = two_speeches();
    p.play(0);
    assert_eq!(
        p.advance(60_000),
        [
            Ended { segment: 0 },
            Started {
                segment: 1,
                offset_ms: 2000
            },
            Ended { segment: 1 },
            StateChanged(PlaybackState::Ended)
        ]
    );
    assert_eq!(p.state(), PlaybackState::Ended);
    assert_eq!(p.position_ms(), 3000);
    assert!(p.active_segments().is_empty());
    assert_eq!(p.advance(70_000), []);
}

#[test]
fn advance_does_nothing_unless_playing() {
    let mut p = two_speeches();
    assert_eq!(p.advance(5000), []);
    assert_eq!(p.position_ms(), 0);
}

#[test]
fn pause_freezes_the_position_and_play_resumes_from_it() {
    let mut p = two_speeches();
    p.play(0);
    assert_eq!(p.pause(400), [StateChanged(PlaybackState::Paused)]);
    assert_eq!(p.advance(50_000), []);
    assert_eq!(p.position_ms(), 400);
    assert_eq!(p.active_segments(), [0], "a paused speech stays on screen");
    assert_eq!(p.play(100_000), [StateChanged(PlaybackState::Playing)]);
    assert_eq!(p.advance(100_599), []);
    assert_eq!(p.advance(100_600), [Ended { segment: 0 }, started(1)]);
}

#[test]
fn pause_reports_what_happened_up_to_the_pause() {
    let mut p = two_speeches();
    p.play(0);
    assert_eq!(
        p.pause(1500),
        [
            Ended { segment: 0 },
            Started {
                segment: 1,
                offset_ms: 500
            },
            StateChanged(PlaybackState::Paused)
        ]
    );
}

#[test]
fn double_speed_moves_the_position_twice_as_fast() {
    let mut p = two_speeches();
    p.set_speed(2.0, 0).unwrap();
    p.play(0);
    assert_eq!(p.advance(500), [Ended { segment: 0 }, started(1)]);
    assert_eq!(p.position_ms(), 1000);
}

#[test]
fn changing_speed_mid_way_keeps_the_position_reached() {
    let mut p = two_speeches();
    p.play(0);
    p.advance(500);
    p.set_speed(0.5, 500).unwrap();
    p.advance(1400);
    assert_eq!(p.position_ms(), 950);
    assert_eq!(p.advance(1500), [Ended { segment: 0 }, started(1)]);
}

#[test]
fn unsupported_speed_is_refused_and_the_old_one_kept() {
    let mut p = two_speeches();
    assert_eq!(
        p.set_speed(10.0, 0),
        Err(PlayerError::UnsupportedSpeed(10.0))
    );
    assert!(p.set_speed(f64::NAN, 0).is_err());
    assert!(p.set_speed(0.0, 0).is_err());
    assert_eq!(p.speed(), 1.0);
    assert!(p
        .set_speed(0.0, 0)
        .unwrap_err()
        .to_string()
        .contains("between 0.25× and 4×"));
}

#[test]
fn seek_into_a_segment_starts_it_part_way_and_ends_what_was_showing() {
    let mut p = two_speeches();
    p.play(0);
    assert_eq!(
        p.seek(2500, 100),
        [
            PlaybackEvent::Seeked { position_ms: 2500 },
            Ended { segment: 0 },
            Started {
                segment: 1,
                offset_ms: 1500
            }
        ]
    );
    assert_eq!(p.advance(599), []);
    assert_eq!(
        p.advance(600),
        [Ended { segment: 1 }, StateChanged(PlaybackState::Ended)]
    );
}

#[test]
fn seek_to_a_segment_start_begins_it_on_the_next_tick() {
    let mut p = two_speeches();
    p.play(0);
    p.advance(200);
    assert_eq!(
        p.seek(1000, 200),
        [
            PlaybackEvent::Seeked { position_ms: 1000 },
            Ended { segment: 0 }
        ]
    );
    assert_eq!(p.advance(200), [started(1)]);
}

#[test]
fn seek_back_replays_segments_already_passed() {
    let mut p = two_speeches();
    p.play(0);
    p.advance(2000);
    p.seek(0, 2000);
    assert_eq!(p.advance(2000), [started(0)]);
}

#[test]
fn seek_past_the_end_is_clamped() {
    let mut p = two_speeches();
    p.seek(99_999, 0);
    assert_eq!(p.position_ms(), 3000);
}

#[test]
fn seek_back_from_the_end_pauses_and_play_from_the_end_starts_over() {
    let mut p = two_speeches();
    p.play(0);
    p.advance(10_000);
    assert_eq!(
        p.seek(500, 10_000),
        [
            PlaybackEvent::Seeked { position_ms: 500 },
            Started {
                segment: 0,
                offset_ms: 500
            },
            StateChanged(PlaybackState::Paused)
        ]
    );

    let mut p = two_speeches();
    p.play(0);
    p.advance(10_000);
    assert_eq!(
        p.play(20_000),
        [
            PlaybackEvent::Seeked { position_ms: 0 },
            StateChanged(PlaybackState::Playing),
            started(0)
        ]
    );
}

#[test]
fn effect_shows_alongside_the_speech_it_starts_with() {
    // laser [0, 5000) next to s1 [0, 6000).
    let mut p = Player::new(timeline(&[(laser("fx"), 0), (speech("s1"), 6000)]));
    assert_eq!(
        p.play(0),
        [StateChanged(PlaybackState::Playing), started(0), started(1)]
    );
    assert_eq!(p.advance(5000), [Ended { segment: 0 }]);
    assert_eq!(p.active_segments(), [1]);
}

#[test]
fn zero_length_segment_starts_and_ends_in_one_tick() {
    // Clearing an empty board takes no time.
    let clear = Action::WbClear(WbClear { id: "c".into() });
    let t = resolve(
        &[clear, speech("s1")],
        BoardState {
            open: true,
            elements: 0,
        },
        &aula_timeline::NoKnownDurations,
    );
    let mut p = Player::new(t);
    assert_eq!(
        p.play(0),
        [
            StateChanged(PlaybackState::Playing),
            started(0),
            Ended { segment: 0 },
            started(1)
        ]
    );
}

#[test]
fn a_clock_going_backwards_does_not_rewind() {
    let mut p = two_speeches();
    p.play(1000);
    p.advance(1500);
    assert_eq!(p.advance(200), []);
    assert_eq!(p.position_ms(), 500);
}

#[test]
fn empty_timeline_ends_as_soon_as_it_plays() {
    let mut p = Player::new(Timeline::default());
    assert_eq!(
        p.play(0),
        [
            StateChanged(PlaybackState::Playing),
            StateChanged(PlaybackState::Ended)
        ]
    );
}

fn arbitrary_script() -> impl Strategy<Value = Vec<(bool, u64)>> {
    // (is an effect, audio length); effects get the 5 s lifetime from the timeline.
    prop::collection::vec((any::<bool>(), 0u64..4000), 0..12)
}

proptest! {
    #[test]
    fn playing_through_starts_and_ends_every_segment_once_in_time_order(
        script in arbitrary_script(),
        ticks in prop::collection::vec(1u64..3000, 1..40),
    ) {
        let actions: Vec<(Action, u64)> = script
            .iter()
            .enumerate()
            .map(|(i, &(effect, ms))| {
                let id = format!("a{i}");
                (if effect { laser(&id) } else { speech(&id) }, ms)
            })
            .collect();
        let t = timeline(&actions);
        let segments = t.segments.clone();
        let mut p = Player::new(t);
        let mut events = p.play(0);
        let mut now = 0;
        for tick in ticks.iter().cycle().take(200) {
            if p.state() == PlaybackState::Ended {
                break;
            }
            now += tick;
            events.extend(p.advance(now));
        }
        prop_assert_eq!(p.state(), PlaybackState::Ended);

        let mut open: Vec<usize> = Vec::new();
        let mut seen_started = vec![0; segments.len()];
        let mut seen_ended = vec![0; segments.len()];
        let mut last_time = 0;
        for event in &events {
            let (segment, time) = match *event {
                Started { segment, .. } => {
                    prop_assert!(!open.contains(&segment));
                    open.push(segment);
                    seen_started[segment] += 1;
                    (segment, segments[segment].start_ms)
                }
                Ended { segment } => {
                    prop_assert!(open.contains(&segment), "ended before it started");
                    open.retain(|&s| s != segment);
                    seen_ended[segment] += 1;
                    (segment, segments[segment].end_ms())
                }
                _ => continue,
            };
            prop_assert!(time >= last_time, "segment {} out of time order", segment);
            last_time = time;
        }
        prop_assert!(open.is_empty());
        prop_assert!(seen_started.iter().all(|&n| n == 1));
        prop_assert!(seen_ended.iter().all(|&n| n == 1));
    }
}
