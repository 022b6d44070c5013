//! The timeline: a scene's actions (an index domain) resolved into timed segments (a time
//! domain). Blocking actions advance a cursor by their duration; fire-and-forget effects start at
//! the cursor and stay until the shared effect timer clears them; a whiteboard action on a closed
//! board gets an implicit `wb_open` first. The player, seeking and every export read this one
//! resolution.
//!
//! Durations come only from `aula_course::durations`, and which actions block only from
//! `Action::is_fire_and_forget`. Times are content time at 1× speed: playback speed is the
//! player's business. This crate is pure: it must never depend on a browser type, a clock, or
//! any Aula crate but `aula-course`.

use std::collections::HashMap;

use aula_course::action::WbOpen;
use aula_course::durations::{self, EFFECT_AUTO_CLEAR_MS, MAX_VIDEO_WAIT_MS};
use aula_course::{Action, ActionKind};

/// The id of the `wb_open` inserted before a whiteboard action on a closed board.
pub const IMPLICIT_WB_OPEN_ID: &str = "__implicit_wb_open__";

/// Where a segment comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentSource {
    /// The action at this index of the resolved slice.
    Action(usize),
    /// An implicit whiteboard open, inserted before the action at this index.
    ImplicitWhiteboardOpen { before: usize },
}

/// One action placed in time.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub source: SegmentSource,
    pub action: Action,
    pub start_ms: u64,
    pub duration_ms: u64,
    /// Whether the cursor waited for this segment before moving on.
    pub blocking: bool,
}

impl Segment {
    pub fn end_ms(&self) -> u64 {
        self.start_ms + self.duration_ms
    }
}

/// The whiteboard as far as timing cares: is it open, and how many elements are on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BoardState {
    pub open: bool,
    pub elements: usize,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// In script order; implicit opens sit right before the action that needed them.
    pub segments: Vec<Segment>,
    /// When the last blocking segment ends: the scene's length. Effects never outlive it.
    pub total_ms: u64,
    /// The whiteboard after the scene, for resolving the next scene.
    pub board_after: BoardState,
}

/// Real lengths of media the table cannot know: a speech's audio clip, a video.
pub trait KnownDurations {
    /// The real length of this action's media in ms at 1× speed, if known.
    fn media_ms(&self, action: &Action) -> Option<u64>;
}

/// Nothing is known: speech uses the reading-time estimate, videos take 0.
pub struct NoKnownDurations;

impl KnownDurations for NoKnownDurations {
    fn media_ms(&self, _: &Action) -> Option<u64> {
        None
    }
}

/// Lengths keyed by action id.
impl KnownDurations for HashMap<String, u64> {
    fn media_ms(&self, action: &Action) -> Option<u64> {
        self.get(action.id()).copied()
    }
}

/// Lengths from a function, e.g. one that looks the audio up in the media store's index.
pub struct DurationsFrom<F>(pub F);

impl<F: Fn(&Action) -> Option<u64>> KnownDurations for DurationsFrom<F> {
    fn media_ms(&self, action: &Action) -> Option<u64> {
        (self.0)(action)
    }
}

fn blocking_ms(action: &Action, board: BoardState, known: &dyn KnownDurations) -> u64 {
    match action {
        Action::Speech(_) => known
            .media_ms(action)
            .unwrap_or_else(|| durations::action_ms(action, board.elements)),
        Action::PlayVideo(_) => known.media_ms(action).unwrap_or(0).min(MAX_VIDEO_WAIT_MS),
        _ => durations::action_ms(action, board.elements),
    }
}

fn apply_to_board(kind: ActionKind, board: &mut BoardState) {
    match kind {
        ActionKind::WbOpen => board.open = true,
        ActionKind::WbClose => board.open = false,
        ActionKind::WbClear => board.elements = 0,
        ActionKind::WbDelete => board.elements = board.elements.saturating_sub(1),
        k if k.draws_on_whiteboard() => board.elements += 1,
        _ => {}
    }
}

/// Resolves one scene's `actions`, starting from the whiteboard as `board` leaves it.
pub fn resolve(actions: &[Action], board: BoardState, known: &dyn KnownDurations) -> Timeline {
    let mut board = board;
    let mut cursor = 0u64;
    let mut segments = Vec::with_capacity(actions.len());

    for (index, action) in actions.iter().enumerate() {
        let kind = action.kind();
        if !board.open && kind.is_some_and(ActionKind::opens_whiteboard_implicitly) {
            let open = Action::WbOpen(WbOpen {
                id: IMPLICIT_WB_OPEN_ID.into(),
            });
            let duration_ms = blocking_ms(&open, board, known);
            segments.push(Segment {
                source: SegmentSource::ImplicitWhiteboardOpen { before: index },
                action: open,
                start_ms: cursor,
                duration_ms,
                blocking: true,
            });
            cursor += duration_ms;
            board.open = true;
        }

        let blocking = !action.is_fire_and_forget();
        let duration_ms = if blocking {
            blocking_ms(action, board, known)
        } else {
            0 // effects get their lifetime below, once the scene's length is known
        };
        segments.push(Segment {
            source: SegmentSource::Action(index),
            action: action.clone(),
            start_ms: cursor,
            duration_ms,
            blocking,
        });
        if blocking {
            cursor += duration_ms;
        }
        if let Some(kind) = kind {
            apply_to_board(kind, &mut board);
        }
    }

    let total_ms = cursor;
    set_effect_lifetimes(&mut segments, total_ms);
    Timeline {
        segments,
        total_ms,
        board_after: board,
    }
}

/// One timer clears every visible effect `EFFECT_AUTO_CLEAR_MS` after the latest one started, so
/// an effect that starts while others are showing keeps them all up. An effect starting exactly
/// when the timer fires starts a new group. Nothing outlives the scene.
fn set_effect_lifetimes(segments: &mut [Segment], total_ms: u64) {
    let is_effect = |s: &Segment| s.action.kind().is_some_and(ActionKind::is_slide_effect);
    let mut group: Vec<usize> = Vec::new();
    let mut deadline = 0u64;
    let close = |segments: &mut [Segment], group: &mut Vec<usize>, deadline: u64| {
        for &i in group.iter() {
            let end = deadline.min(total_ms);
            segments[i].duration_ms = end.saturating_sub(segments[i].start_ms);
        }
        group.clear();
    };
    for i in 0..segments.len() {
        if !is_effect(&segments[i]) {
            continue;
        }
        let start = segments[i].start_ms;
        if !group.is_empty() && start >= deadline {
            close(segments, &mut group, deadline);
        }
        group.push(i);
        deadline = start + EFFECT_AUTO_CLEAR_MS;
    }
    close(segments, &mut group, deadline);
}

#[cfg(test)]
mod tests {
    use super::*;
    use aula_course::action::{
        Discussion, Laser, PlayVideo, Speech, Spotlight, WbClear, WbClose, WbDelete, WbDrawShape,
        WhiteboardShape,
    };
    use aula_course::durations::{
        reading_time_ms, DISCUSSION_TRIGGER_DELAY_MS, WB_CLOSE_MS, WB_DELETE_MS, WB_DRAW_MS,
        WB_OPEN_MS,
    };

    fn speech(id: &str, words: usize) -> Action {
        Action::Speech(Speech {
            id: id.into(),
            text: vec!["word"; words].join(" "),
            speaker: None,
            audio_id: None,
        })
    }

    fn spotlight(id: &str) -> Action {
        Action::Spotlight(Spotlight {
            id: id.into(),
            element_id: "title".into(),
            dim_opacity: 0.5,
        })
    }

    fn laser(id: &str) -> Action {
        Action::Laser(Laser {
            id: id.into(),
            element_id: "chart".into(),
            color: "#ff0000".into(),
        })
    }

    fn shape(id: &str) -> Action {
        Action::WbDrawShape(WbDrawShape {
            id: id.into(),
            element_id: None,
            shape: WhiteboardShape::Circle,
            x: 10.0,
            y: 10.0,
            width: 50.0,
            height: 50.0,
            fill_color: "#5b9bd5".into(),
        })
    }

    fn open(id: &str) -> Action {
        Action::WbOpen(WbOpen { id: id.into() })
    }

    fn close(id: &str) -> Action {
        Action::WbClose(WbClose { id: id.into() })
    }

    fn plain(actions: &[Action]) -> Timeline {
        resolve(actions, BoardState::default(), &NoKnownDurations)
    }

    fn spans(t: &Timeline) -> Vec<(&str, u64, u64)> {
        t.segments
            .iter()
            .map(|s| (s.action.id(), s.start_ms, s.end_ms()))
            .collect()
    }

    #[test]
    fn speech_blocks_the_cursor_for_its_reading_time() {
        // 20 words at 240 ms = 4.8 s; 5 words hit the 2 s minimum.
        let t = plain(&[speech("s1", 20), speech("s2", 5)]);
        assert_eq!(spans(&t), [("s1", 0, 4800), ("s2", 4800, 6800)]);
        assert_eq!(t.total_ms, 6800);
        assert!(t.segments.iter().all(|s| s.blocking));
    }

    #[test]
    fn known_audio_length_replaces_the_reading_estimate() {
        let known: HashMap<String, u64> = [("s1".to_string(), 3210)].into();
        let t = resolve(
            &[speech("s1", 20), speech("s2", 20)],
            BoardState::default(),
            &known,
        );
        assert_eq!(spans(&t), [("s1", 0, 3210), ("s2", 3210, 8010)]);
    }

    #[test]
    fn known_durations_can_come_from_a_function() {
        let known = DurationsFrom(|a: &Action| (a.id() == "v").then_some(12_000));
        let video = Action::PlayVideo(PlayVideo {
            id: "v".into(),
            element_id: "clip".into(),
        });
        let t = resolve(&[video, speech("s", 1)], BoardState::default(), &known);
        assert_eq!(spans(&t), [("v", 0, 12_000), ("s", 12_000, 14_000)]);
    }

    #[test]
    fn video_of_unknown_length_takes_no_timeline_time_and_long_ones_are_capped() {
        let video = Action::PlayVideo(PlayVideo {
            id: "v".into(),
            element_id: "clip".into(),
        });
        assert_eq!(plain(std::slice::from_ref(&video)).total_ms, 0);
        let known = DurationsFrom(|_: &Action| Some(60 * 60 * 1000));
        let t = resolve(&[video], BoardState::default(), &known);
        assert_eq!(t.total_ms, MAX_VIDEO_WAIT_MS);
    }

    #[test]
    fn effect_does_not_advance_the_cursor() {
        let t = plain(&[spotlight("fx"), speech("s1", 30)]);
        assert_eq!(t.segments[0].start_ms, 0);
        assert!(!t.segments[0].blocking);
        assert_eq!(t.segments[1].start_ms, 0);
        assert_eq!(t.total_ms, 30 * 240);
    }

    #[test]
    fn effect_clears_five_seconds_after_it_started() {
        let t = plain(&[spotlight("fx"), speech("s1", 50)]);
        assert_eq!(t.segments[0].end_ms(), EFFECT_AUTO_CLEAR_MS);
    }

    #[test]
    fn a_later_effect_keeps_earlier_ones_up_through_the_shared_timer() {
        // fx1 at 0, fx2 at 4800 (< 5000): both clear at 4800 + 5000.
        let t = plain(&[
            spotlight("fx1"),
            speech("s1", 20),
            laser("fx2"),
            speech("s2", 100),
        ]);
        assert_eq!(t.segments[0].end_ms(), 9800);
        assert_eq!(t.segments[2].start_ms, 4800);
        assert_eq!(t.segments[2].end_ms(), 9800);
    }

    #[test]
    fn an_effect_starting_exactly_at_the_deadline_does_not_chain() {
        // The speech lasts exactly 5000 ms, so fx2 starts when fx1's timer fires.
        let known = DurationsFrom(|a: &Action| (a.id() == "s1").then_some(EFFECT_AUTO_CLEAR_MS));
        let t = resolve(
            &[
                spotlight("fx1"),
                speech("s1", 1),
                laser("fx2"),
                speech("s2", 100),
            ],
            BoardState::default(),
            &known,
        );
        assert_eq!(t.segments[0].end_ms(), 5000);
        assert_eq!(t.segments[2].start_ms, 5000);
        assert_eq!(t.segments[2].end_ms(), 10_000);
    }

    #[test]
    fn effects_never_outlive_the_scene() {
        let t = plain(&[speech("s1", 5), laser("fx")]);
        assert_eq!(t.total_ms, 2000);
        assert_eq!(spans(&t)[1], ("fx", 2000, 2000));
        let t = plain(&[spotlight("fx"), speech("s1", 5)]);
        assert_eq!(t.segments[0].end_ms(), 2000);
    }

    #[test]
    fn drawing_on_a_closed_board_opens_it_first() {
        let t = plain(&[shape("d1"), shape("d2")]);
        assert_eq!(
            spans(&t),
            [
                (IMPLICIT_WB_OPEN_ID, 0, WB_OPEN_MS),
                ("d1", WB_OPEN_MS, WB_OPEN_MS + WB_DRAW_MS),
                ("d2", WB_OPEN_MS + WB_DRAW_MS, WB_OPEN_MS + 2 * WB_DRAW_MS),
            ]
        );
        assert_eq!(
            t.segments[0].source,
            SegmentSource::ImplicitWhiteboardOpen { before: 0 }
        );
        assert_eq!(t.segments[1].source, SegmentSource::Action(0));
        assert!(t.board_after.open);
    }

    #[test]
    fn an_open_board_gets_no_implicit_open() {
        let t = plain(&[open("o"), shape("d1")]);
        assert_eq!(spans(&t), [("o", 0, 2000), ("d1", 2000, 2800)]);
        let already_open = BoardState {
            open: true,
            elements: 0,
        };
        let t = resolve(&[shape("d1")], already_open, &NoKnownDurations);
        assert_eq!(spans(&t), [("d1", 0, WB_DRAW_MS)]);
    }

    #[test]
    fn drawing_after_a_close_opens_the_board_again() {
        let t = plain(&[open("o"), close("c"), shape("d1")]);
        let ids: Vec<_> = t.segments.iter().map(|s| s.action.id()).collect();
        assert_eq!(ids, ["o", "c", IMPLICIT_WB_OPEN_ID, "d1"]);
        assert_eq!(
            t.total_ms,
            WB_OPEN_MS + WB_CLOSE_MS + WB_OPEN_MS + WB_DRAW_MS
        );
    }

    #[test]
    fn deleting_on_a_closed_board_opens_it_too_but_closing_does_not() {
        let delete = Action::WbDelete(WbDelete {
            id: "x".into(),
            element_id: "d1".into(),
        });
        let t = plain(&[close("c"), delete]);
        let ids: Vec<_> = t.segments.iter().map(|s| s.action.id()).collect();
        assert_eq!(ids, ["c", IMPLICIT_WB_OPEN_ID, "x"]);
        assert_eq!(t.segments[2].duration_ms, WB_DELETE_MS);
    }

    #[test]
    fn clearing_cascades_over_the_elements_drawn_so_far() {
        let clear = Action::WbClear(WbClear { id: "clr".into() });
        let t = plain(&[shape("d1"), shape("d2"), shape("d3"), clear.clone(), clear]);
        // 3 elements: 380 + 3 × 55; the second clear finds an empty board.
        assert_eq!(t.segments[4].duration_ms, 545);
        assert_eq!(t.segments[5].duration_ms, 0);
        assert_eq!(t.board_after.elements, 0);
    }

    #[test]
    fn board_state_carries_from_one_scene_to_the_next() {
        let first = plain(&[shape("d1"), shape("d2")]);
        assert_eq!(
            first.board_after,
            BoardState {
                open: true,
                elements: 2
            }
        );
        let clear = Action::WbClear(WbClear { id: "clr".into() });
        let second = resolve(&[clear], first.board_after, &NoKnownDurations);
        assert_eq!(spans(&second), [("clr", 0, 490)]);
    }

    #[test]
    fn discussion_waits_its_trigger_delay() {
        let discussion = Action::Discussion(Discussion {
            id: "d".into(),
            topic: "Night".into(),
            prompt: None,
            agent_id: None,
        });
        let t = plain(&[discussion, speech("s", 1)]);
        assert_eq!(
            spans(&t),
            [
                ("d", 0, DISCUSSION_TRIGGER_DELAY_MS),
                ("s", 3000, 3000 + reading_time_ms("word"))
            ]
        );
    }

    #[test]
    fn unknown_action_takes_no_time_and_keeps_its_place() {
        let unknown = Action::Unknown {
            type_name: "wb_draw_hologram".into(),
            raw: serde_json::json!({"type": "wb_draw_hologram", "id": "h"}),
        };
        let t = plain(&[unknown, speech("s", 1)]);
        assert_eq!(spans(&t), [("h", 0, 0), ("s", 0, 2000)]);
        assert!(!t.segments[0].blocking);
        assert!(
            !t.board_after.open,
            "an unknown wb_* must not open the board"
        );
    }

    #[test]
    fn empty_scene_has_no_length() {
        let t = plain(&[]);
        assert_eq!(t.total_ms, 0);
        assert!(t.segments.is_empty());
    }
}
