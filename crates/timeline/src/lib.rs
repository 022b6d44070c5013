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

/// The whiteboard as far as timing cares: is it open, and which elements are on it (by id, so a
/// redraw of the same element or a delete of a missing one does not miscount a clear's cascade).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BoardState {
    pub open: bool,
    pub elements: Vec<String>,
}

/// The id of the whiteboard element a `wb_draw_*` action puts on the board: its `element_id`,
/// or the action's own id when it names none (action ids are unique in a course). `None` for
/// every other action. The player names its board items by this same rule.
pub fn drawn_element_id(action: &Action) -> Option<&str> {
    let element_id = match action {
        Action::WbDrawText(a) => &a.element_id,
        Action::WbDrawShape(a) => &a.element_id,
        Action::WbDrawChart(a) => &a.element_id,
        Action::WbDrawLatex(a) => &a.element_id,
        Action::WbDrawTable(a) => &a.element_id,
        Action::WbDrawLine(a) => &a.element_id,
        Action::WbDrawCode(a) => &a.element_id,
        _ => return None,
    };
    Some(element_id.as_deref().unwrap_or(action.id()))
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

impl Timeline {
    /// The blocking segment playing at `ms`: the one with `start_ms <= ms < end_ms`. `None` at or
    /// past the end. Zero-length segments are instants, never "playing". A binary search, so a
    /// seek bar can ask on every frame.
    pub fn segment_at(&self, ms: u64) -> Option<usize> {
        // Blocking segments tile [0, total_ms) in script order, so the last one starting by `ms`
        // with any length is the one; fire-and-forget and zero-length ones sit between them.
        let started = self.segments.partition_point(|s| s.start_ms <= ms);
        self.segments[..started]
            .iter()
            .rposition(|s| s.blocking && s.duration_ms > 0)
            .filter(|&i| self.segments[i].end_ms() > ms)
    }
}

/// Lengths the durations table cannot know: a speech's audio clip, a video, a discussion the
/// player will skip. A known length replaces the table's for any blocking action (a video's is
/// still capped at `MAX_VIDEO_WAIT_MS`); fire-and-forget actions never take cursor time.
pub trait KnownDurations {
    /// The real length of this action in ms at 1× speed, if known.
    fn known_ms(&self, action: &Action) -> Option<u64>;
}

/// Nothing is known: speech uses the reading-time estimate, videos take 0.
pub struct NoKnownDurations;

impl KnownDurations for NoKnownDurations {
    fn known_ms(&self, _: &Action) -> Option<u64> {
        None
    }
}

/// Lengths keyed by action id.
impl KnownDurations for HashMap<String, u64> {
    fn known_ms(&self, action: &Action) -> Option<u64> {
        self.get(action.id()).copied()
    }
}

/// Lengths from a function, e.g. one that looks the audio up in the media store's index.
pub struct DurationsFrom<F>(pub F);

impl<F: Fn(&Action) -> Option<u64>> KnownDurations for DurationsFrom<F> {
    fn known_ms(&self, action: &Action) -> Option<u64> {
        (self.0)(action)
    }
}

fn blocking_ms(action: &Action, board: &BoardState, known: &dyn KnownDurations) -> u64 {
    let table = || durations::action_ms(action, board.elements.len());
    match action {
        Action::PlayVideo(_) => known.known_ms(action).unwrap_or(0).min(MAX_VIDEO_WAIT_MS),
        _ => known.known_ms(action).unwrap_or_else(table),
    }
}

fn apply_to_board(action: &Action, board: &mut BoardState) {
    match action {
        Action::WbOpen(_) => board.open = true,
        Action::WbClose(_) => board.open = false,
        Action::WbClear(_) => board.elements.clear(),
        Action::WbDelete(d) => board.elements.retain(|id| *id != d.element_id),
        _ => {
            if let Some(id) = drawn_element_id(action) {
                // A redraw of an element already on the board replaces it.
                if !board.elements.iter().any(|e| e == id) {
                    board.elements.push(id.to_string());
                }
            }
        }
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
            let duration_ms = blocking_ms(&open, &board, known);
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
            blocking_ms(action, &board, known)
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
        if kind.is_some() {
            apply_to_board(action, &mut board);
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
        CodeEditOperation, Discussion, Laser, PlayVideo, Speech, Spotlight, WbClear, WbClose,
        WbDelete, WbDrawCode, WbDrawShape, WbDrawTable, WbDrawText, WbEditCode, WhiteboardShape,
    };
    use aula_course::durations::{
        clear_cascade_ms, code_typing_ms, reading_time_ms, DISCUSSION_TRIGGER_DELAY_MS,
        WB_CLOSE_MS, WB_CODE_MAX_MS, WB_DELETE_MS, WB_DRAW_MS, WB_EDIT_CODE_MS, WB_OPEN_MS,
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
            elements: vec![],
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
        assert!(t.board_after.elements.is_empty());
    }

    #[test]
    fn board_state_carries_from_one_scene_to_the_next() {
        let first = plain(&[shape("d1"), shape("d2")]);
        assert_eq!(
            first.board_after,
            BoardState {
                open: true,
                elements: vec!["d1".into(), "d2".into()]
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
            recording: vec![],
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

    fn text(id: &str, content: &str) -> Action {
        Action::WbDrawText(WbDrawText {
            id: id.into(),
            element_id: None,
            content: content.into(),
            x: 100.0,
            y: 100.0,
            width: 400.0,
            height: 100.0,
            font_size: 18.0,
            color: "#333333".into(),
        })
    }

    fn code(id: &str, lines: usize) -> Action {
        Action::WbDrawCode(WbDrawCode {
            id: id.into(),
            element_id: None,
            language: "python".into(),
            code: vec!["x = 1"; lines].join("\n"),
            x: 100.0,
            y: 100.0,
            width: 500.0,
            height: 300.0,
            file_name: None,
        })
    }

    fn open_board() -> BoardState {
        BoardState {
            open: true,
            elements: vec![],
        }
    }

    #[test]
    fn code_typing_takes_a_base_plus_a_cost_per_line_up_to_a_cap() {
        let t = resolve(
            &[code("k1", 1), code("k4", 4), code("k100", 100)],
            open_board(),
            &NoKnownDurations,
        );
        let lengths: Vec<u64> = t.segments.iter().map(|s| s.duration_ms).collect();
        assert_eq!(lengths, [850, 1000, WB_CODE_MAX_MS]);
        assert_eq!(lengths[1], code_typing_ms("a\nb\nc\nd"));
    }

    #[test]
    fn editing_code_takes_its_table_time() {
        let edit = Action::WbEditCode(WbEditCode {
            id: "e".into(),
            element_id: "k1".into(),
            operation: CodeEditOperation::DeleteLines,
            line_id: None,
            line_ids: vec!["L1".into()],
            content: None,
        });
        let t = resolve(&[code("k1", 2), edit], open_board(), &NoKnownDurations);
        assert_eq!(t.segments[1].duration_ms, WB_EDIT_CODE_MS);
    }

    #[test]
    fn drawing_empty_text_or_an_empty_table_takes_no_time() {
        let empty_table = Action::WbDrawTable(WbDrawTable {
            id: "tb".into(),
            element_id: None,
            x: 0.0,
            y: 0.0,
            width: 100.0,
            height: 100.0,
            data: vec![vec![]],
        });
        let t = resolve(
            &[text("blank", "   "), empty_table, text("full", "Light")],
            open_board(),
            &NoKnownDurations,
        );
        assert_eq!(
            spans(&t),
            [("blank", 0, 0), ("tb", 0, 0), ("full", 0, WB_DRAW_MS)]
        );
        assert!(t.segments.iter().all(|s| s.blocking));
    }

    #[test]
    fn an_empty_text_draw_on_a_closed_board_still_waits_for_the_full_open() {
        let t = plain(&[text("blank", "")]);
        assert_eq!(
            spans(&t),
            [
                (IMPLICIT_WB_OPEN_ID, 0, WB_OPEN_MS),
                ("blank", WB_OPEN_MS, WB_OPEN_MS)
            ]
        );
    }

    #[test]
    fn the_open_or_closed_board_carries_into_the_next_scene() {
        let first = plain(&[shape("d1")]);
        let second = resolve(&[shape("d2")], first.board_after.clone(), &NoKnownDurations);
        assert_eq!(spans(&second), [("d2", 0, WB_DRAW_MS)]);
        let closed = plain(&[shape("d1"), close("c")]);
        assert!(!closed.board_after.open);
        let third = resolve(&[shape("d3")], closed.board_after, &NoKnownDurations);
        assert_eq!(third.segments[0].action.id(), IMPLICIT_WB_OPEN_ID);
        assert_eq!(third.board_after.elements, ["d1", "d3"]);
    }

    #[test]
    fn a_redraw_or_a_delete_of_a_missing_element_does_not_miscount_the_cascade() {
        let named = |id: &str, element: &str| match text(id, "Light") {
            Action::WbDrawText(mut t) => {
                t.element_id = Some(element.into());
                Action::WbDrawText(t)
            }
            _ => unreachable!(),
        };
        let delete_missing = Action::WbDelete(WbDelete {
            id: "x".into(),
            element_id: "nowhere".into(),
        });
        let clear = Action::WbClear(WbClear { id: "clr".into() });
        let t = resolve(
            &[
                named("a", "note"),
                named("b", "note"),
                delete_missing,
                clear,
            ],
            open_board(),
            &NoKnownDurations,
        );
        // One element on the board: 380 + 55.
        assert_eq!(t.segments[3].duration_ms, clear_cascade_ms(1));
    }

    #[test]
    fn drawn_elements_are_named_by_their_element_id_or_else_their_action_id() {
        assert_eq!(drawn_element_id(&text("t1", "x")), Some("t1"));
        let Action::WbDrawText(mut named) = text("t2", "x") else {
            unreachable!()
        };
        named.element_id = Some("note".into());
        assert_eq!(drawn_element_id(&Action::WbDrawText(named)), Some("note"));
        assert_eq!(drawn_element_id(&speech("s", 1)), None);
    }

    #[test]
    fn a_known_length_replaces_the_table_for_any_blocking_action() {
        let discussion = Action::Discussion(Discussion {
            id: "d".into(),
            topic: "Night".into(),
            prompt: None,
            agent_id: None,
            recording: vec![],
        });
        let skip = DurationsFrom(|a: &Action| (a.id() == "d").then_some(0));
        let t = resolve(&[discussion, speech("s", 1)], BoardState::default(), &skip);
        assert_eq!(spans(&t), [("d", 0, 0), ("s", 0, 2000)]);
        // Fire-and-forget effects never take cursor time, whatever is known.
        let always = DurationsFrom(|_: &Action| Some(9999));
        let t = resolve(
            &[laser("fx"), speech("s", 1)],
            BoardState::default(),
            &always,
        );
        assert_eq!(t.segments[1].start_ms, 0);
    }

    #[test]
    fn segment_at_finds_the_blocking_segment_playing_at_a_time() {
        // [implicit open 0..2000) [blank draw at 2000, 0 ms] fx at 2000 [s1 2000..4000)
        let t = plain(&[text("blank", ""), laser("fx"), speech("s1", 1)]);
        assert_eq!(t.segment_at(0), Some(0));
        assert_eq!(t.segment_at(1999), Some(0));
        assert_eq!(t.segment_at(2000), Some(3));
        assert_eq!(t.segment_at(3999), Some(3));
        assert_eq!(t.segment_at(4000), None);
        assert_eq!(plain(&[]).segment_at(0), None);
    }

    #[test]
    fn empty_scene_has_no_length() {
        let t = plain(&[]);
        assert_eq!(t.total_ms, 0);
        assert!(t.segments.is_empty());
    }
}
