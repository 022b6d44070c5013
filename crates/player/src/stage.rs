//! What the view shows at a moment of a scene, as a pure fold over the scene's timeline: the
//! whiteboard (from the board the earlier scenes left), the slide effects, the caption and the
//! notices. The player keeps no board of its own, so a seek lands on exactly what playing to
//! the same moment shows.

use aula_course::action::{
    CodeEditOperation, WbDrawChart, WbDrawLatex, WbDrawLine, WbDrawShape, WbDrawTable, WbDrawText,
    WbEditCode,
};
use aula_course::Action;
use aula_timeline::{drawn_element_id, BoardState, Segment, Timeline};

use crate::layout;
use crate::sentences::sentences;
use crate::PlayState;

/// Everything the view draws at this moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub scene_index: usize,
    pub state: PlayState,
    /// Where in the scene playback is, in ms of the scene's timeline (1× speed).
    pub scene_ms: f64,
    pub scene_total_ms: f64,
    pub board_open: bool,
    /// In z-order: later items are drawn on top.
    pub board: Vec<BoardItem>,
    /// The slide element lit up, and how dark the rest gets.
    pub spotlight: Option<(String, f64)>,
    /// The slide element pointed at, and the dot's colour.
    pub laser: Option<(String, String)>,
    /// The sentence being spoken now.
    pub caption: Option<Caption>,
    /// Set while `state` is [`PlayState::DiscussionOffered`].
    pub discussion: Option<DiscussionCue>,
    /// The slide video the script started most recently in this scene, for the view to play.
    pub video: Option<String>,
    /// What this scene skipped and why, for the learner.
    pub notices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Caption {
    /// An agent id.
    pub speaker: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DiscussionCue {
    pub topic: String,
    /// How the discussion should go, when the course says.
    pub prompt: Option<String>,
    /// Who opens the discussion; a classmate when the script names nobody.
    pub agent_id: Option<String>,
    pub has_recording: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BoardItem {
    pub element_id: String,
    pub content: BoardContent,
    /// Where the view draws it (after [`layout::place`]); a line is drawn by its own
    /// coordinates and this is their bounding box.
    pub frame: Rect,
    /// How far the drawing animation has got, 0 to 1.
    pub progress: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BoardContent {
    Text(WbDrawText),
    Shape(WbDrawShape),
    Chart(WbDrawChart),
    Latex(WbDrawLatex),
    Table(WbDrawTable),
    Line(WbDrawLine),
    Code {
        language: String,
        file_name: Option<String>,
        lines: Vec<CodeLine>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct CodeLine {
    pub id: String,
    pub text: String,
}

/// A box on the 1000 × 562.5 canvas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// The spotlight (element, dimming) and the laser (element, colour) showing.
pub(crate) type Effects = (Option<(String, f64)>, Option<(String, String)>);

/// A formula without a height gets this one until the view measures it.
pub const LATEX_DEFAULT_HEIGHT: f64 = 80.0;

/// The whiteboard: open or not, and what is on it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Board {
    pub open: bool,
    pub items: Vec<BoardItem>,
}

impl Board {
    /// The same board as the timeline counts it.
    pub fn state(&self) -> BoardState {
        BoardState {
            open: self.open,
            elements: self.items.iter().map(|i| i.element_id.clone()).collect(),
        }
    }

    /// Applies `segment` as it stands `progress` (0..=1) of the way through. `frame` is where
    /// layout put it, for a drawing. Every `wb_*` action plays, lines and code included
    /// (OpenMAIC's lecture playback skipped `wb_draw_line`, `wb_draw_code` and `wb_edit_code`).
    fn apply(&mut self, segment: &Segment, frame: Option<Rect>, progress: f64) {
        match &segment.action {
            Action::WbOpen(_) => self.open = true,
            Action::WbClose(_) => self.open = false,
            // The cascade plays out in the view; the elements go when it is over.
            Action::WbClear(_) if progress >= 1.0 => self.items.clear(),
            Action::WbDelete(d) => self.items.retain(|i| i.element_id != d.element_id),
            Action::WbEditCode(edit) => {
                if let Some(BoardContent::Code { lines, .. }) = self
                    .items
                    .iter_mut()
                    .find(|i| i.element_id == edit.element_id)
                    .map(|i| &mut i.content)
                {
                    edit_code(lines, edit);
                }
            }
            action => {
                let (Some(id), Some(content), Some(frame)) =
                    (drawn_element_id(action), content_of(action), frame)
                else {
                    return;
                };
                let item = BoardItem {
                    element_id: id.to_string(),
                    content,
                    frame,
                    progress,
                };
                match self.items.iter_mut().find(|i| i.element_id == id) {
                    Some(existing) => *existing = item,
                    None => self.items.push(item),
                }
            }
        }
    }
}

pub(crate) fn content_of(action: &Action) -> Option<BoardContent> {
    Some(match action {
        Action::WbDrawText(a) => BoardContent::Text(a.clone()),
        Action::WbDrawShape(a) => BoardContent::Shape(a.clone()),
        Action::WbDrawChart(a) => BoardContent::Chart(a.clone()),
        Action::WbDrawLatex(a) => BoardContent::Latex(a.clone()),
        Action::WbDrawTable(a) => BoardContent::Table(a.clone()),
        Action::WbDrawLine(a) => BoardContent::Line(a.clone()),
        Action::WbDrawCode(a) => BoardContent::Code {
            language: a.language.clone(),
            file_name: a.file_name.clone(),
            lines: a
                .code
                .split('\n')
                .enumerate()
                .map(|(n, text)| CodeLine {
                    id: format!("L{}", n + 1),
                    text: text.to_string(),
                })
                .collect(),
        },
        _ => return None,
    })
}

/// Where a drawing asks to go, before layout.
pub(crate) fn requested_frame(action: &Action) -> Option<Rect> {
    let rect = |x, y, width, height| Rect {
        x,
        y,
        width,
        height,
    };
    Some(match action {
        Action::WbDrawText(a) => rect(a.x, a.y, a.width, a.height),
        Action::WbDrawShape(a) => rect(a.x, a.y, a.width, a.height),
        Action::WbDrawChart(a) => rect(a.x, a.y, a.width, a.height),
        Action::WbDrawLatex(a) => rect(a.x, a.y, a.width, a.height.unwrap_or(LATEX_DEFAULT_HEIGHT)),
        Action::WbDrawTable(a) => rect(a.x, a.y, a.width, a.height),
        Action::WbDrawCode(a) => rect(a.x, a.y, a.width, a.height),
        Action::WbDrawLine(a) => rect(
            a.start_x.min(a.end_x),
            a.start_y.min(a.end_y),
            (a.end_x - a.start_x).abs(),
            (a.end_y - a.start_y).abs(),
        ),
        _ => return None,
    })
}

/// Applies one code edit. Lines are named `L1..Ln` when drawn; inserted lines are named after
/// the edit action (`<action id>.<n>`), which no other edit can produce, so ids stay unique and
/// a replay names them the same; a replace keeps the replaced lines' ids by position.
pub(crate) fn edit_code(lines: &mut Vec<CodeLine>, edit: &WbEditCode) {
    let content = edit.content.as_deref().unwrap_or("");
    let mut fresh = 0usize;
    let mut new_line = |text: &str, id: Option<String>| CodeLine {
        id: id.unwrap_or_else(|| {
            fresh += 1;
            format!("{}.{fresh}", edit.id)
        }),
        text: text.to_string(),
    };
    let position = |lines: &[CodeLine], id: Option<&str>| {
        id.and_then(|id| lines.iter().position(|l| l.id == id))
    };
    match edit.operation {
        CodeEditOperation::InsertAfter | CodeEditOperation::InsertBefore => {
            let at = match (edit.operation, position(lines, edit.line_id.as_deref())) {
                (CodeEditOperation::InsertAfter, Some(i)) => i + 1,
                (_, Some(i)) => i,
                // An unknown anchor: after the last line, or before the first.
                (CodeEditOperation::InsertAfter, None) => lines.len(),
                (_, None) => 0,
            };
            let inserted: Vec<CodeLine> = content.split('\n').map(|t| new_line(t, None)).collect();
            lines.splice(at..at, inserted);
        }
        CodeEditOperation::DeleteLines => lines.retain(|l| !edit.line_ids.contains(&l.id)),
        CodeEditOperation::ReplaceLines => {
            let replaced: Vec<usize> = (0..lines.len())
                .filter(|&i| edit.line_ids.contains(&lines[i].id))
                .collect();
            let Some(&first) = replaced.first() else {
                return;
            };
            let reused: Vec<String> = replaced.iter().map(|&i| lines[i].id.clone()).collect();
            let replacement: Vec<CodeLine> = content
                .split('\n')
                .enumerate()
                .map(|(n, t)| new_line(t, reused.get(n).cloned()))
                .collect();
            lines.retain(|l| !reused.contains(&l.id));
            lines.splice(first..first, replacement);
        }
    }
}

/// A scene ready to play: its timeline, the board it starts from, and where layout put each
/// drawing (decided once, so every fold agrees).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScenePlan {
    pub timeline: Timeline,
    pub board_at_start: Board,
    /// Per segment: the frame of the element it draws.
    pub frames: Vec<Option<Rect>>,
}

impl ScenePlan {
    /// Plans a scene whose timeline was resolved from `board_at_start`; returns it and the
    /// board it leaves for the next scene.
    pub fn new(timeline: Timeline, board_at_start: Board) -> (ScenePlan, Board) {
        let mut board = board_at_start.clone();
        let mut frames = Vec::with_capacity(timeline.segments.len());
        for segment in &timeline.segments {
            let id = drawn_element_id(&segment.action);
            let frame = requested_frame(&segment.action).map(|wanted| {
                if matches!(segment.action, Action::WbDrawLine(_)) {
                    // A line connects things where they are: never nudged, never in the way.
                    return wanted;
                }
                let others: Vec<Rect> = board
                    .items
                    .iter()
                    .filter(|i| Some(i.element_id.as_str()) != id)
                    .filter(|i| !matches!(i.content, BoardContent::Line(_)))
                    .map(|i| i.frame)
                    .collect();
                layout::place(wanted, &others)
            });
            board.apply(segment, frame, 1.0);
            frames.push(frame);
        }
        (
            ScenePlan {
                timeline,
                board_at_start,
                frames,
            },
            board,
        )
    }

    fn started(&self, t: f64) -> impl Iterator<Item = (usize, &Segment)> {
        let count = self
            .timeline
            .segments
            .partition_point(|s| s.start_ms as f64 <= t);
        self.timeline.segments[..count].iter().enumerate()
    }

    /// The board at `t` ms into the scene.
    pub fn board_at(&self, t: f64) -> Board {
        let mut board = self.board_at_start.clone();
        for (i, segment) in self.started(t) {
            board.apply(segment, self.frames[i], progress(segment, t));
        }
        board
    }

    /// The spotlight and the laser showing at `t`: the latest started of each that is still up.
    pub fn effects_at(&self, t: f64) -> Effects {
        let (mut spotlight, mut laser) = (None, None);
        for (_, segment) in self.started(t) {
            if t >= segment.end_ms() as f64 {
                continue;
            }
            match &segment.action {
                Action::Spotlight(s) => spotlight = Some((s.element_id.clone(), s.dim_opacity)),
                Action::Laser(l) => laser = Some((l.element_id.clone(), l.color.clone())),
                _ => {}
            }
        }
        (spotlight, laser)
    }

    /// The latest video started by `t`.
    pub fn video_at(&self, t: f64) -> Option<String> {
        self.started(t)
            .filter_map(|(_, s)| match &s.action {
                Action::PlayVideo(v) => Some(v.element_id.clone()),
                _ => None,
            })
            .last()
    }

    /// The speech segment playing at `t` and the index of the sentence its share of time
    /// gives to `t`.
    pub fn speech_at(&self, t: f64) -> Option<(usize, usize)> {
        let index = self.timeline.segment_at(t.max(0.0) as u64)?;
        let windows = sentence_windows(&self.timeline.segments[index])?;
        let sentence = windows.iter().rposition(|w| w.start <= t).unwrap_or(0);
        Some((index, sentence))
    }

    /// The notices of the segments started by `t`, each from `notice`.
    pub fn notices_at(&self, t: f64, notice: impl Fn(&Action) -> Option<String>) -> Vec<String> {
        self.started(t)
            .filter_map(|(_, s)| notice(&s.action))
            .collect()
    }
}

fn progress(segment: &Segment, t: f64) -> f64 {
    if segment.duration_ms == 0 {
        1.0
    } else {
        ((t - segment.start_ms as f64) / segment.duration_ms as f64).clamp(0.0, 1.0)
    }
}

/// One sentence of a speech and the part of the speech's time it is given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SentenceWindow<'a> {
    pub text: &'a str,
    pub start: f64,
    pub end: f64,
}

/// The sentences of a speech segment with their share of its time, by length. `None` for a
/// segment that is not a speech or has nothing to say.
pub(crate) fn sentence_windows(segment: &Segment) -> Option<Vec<SentenceWindow<'_>>> {
    let Action::Speech(speech) = &segment.action else {
        return None;
    };
    let parts = sentences(&speech.text);
    let total: usize = parts.iter().map(|p| p.chars().count()).sum();
    if parts.is_empty() || total == 0 {
        return None;
    }
    let (start, duration) = (segment.start_ms as f64, segment.duration_ms as f64);
    let mut done = 0usize;
    let windows = parts
        .into_iter()
        .map(|text| {
            let from = start + duration * done as f64 / total as f64;
            done += text.chars().count();
            SentenceWindow {
                text,
                start: from,
                end: start + duration * done as f64 / total as f64,
            }
        })
        .collect();
    Some(windows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(ids: &[&str]) -> Vec<CodeLine> {
        ids.iter()
            .map(|id| CodeLine {
                id: id.to_string(),
                text: format!("line {id}"),
            })
            .collect()
    }

    fn edit(
        op: CodeEditOperation,
        line_id: Option<&str>,
        ids: &[&str],
        content: &str,
    ) -> WbEditCode {
        WbEditCode {
            id: "e7".into(),
            element_id: "code".into(),
            operation: op,
            line_id: line_id.map(Into::into),
            line_ids: ids.iter().map(|s| s.to_string()).collect(),
            content: Some(content.into()),
        }
    }

    fn ids(lines: &[CodeLine]) -> Vec<&str> {
        lines.iter().map(|l| l.id.as_str()).collect()
    }

    #[test]
    fn inserted_lines_get_fresh_ids_that_name_the_edit() {
        let mut code = lines(&["L1", "L2", "L3"]);
        edit_code(
            &mut code,
            &edit(CodeEditOperation::InsertAfter, Some("L1"), &[], "a\nb"),
        );
        assert_eq!(ids(&code), ["L1", "e7.1", "e7.2", "L2", "L3"]);
        assert_eq!(code[1].text, "a");
        edit_code(
            &mut code,
            &edit(CodeEditOperation::InsertBefore, Some("L1"), &[], "top"),
        );
        assert_eq!(ids(&code)[0], "e7.1");
    }

    #[test]
    fn inserting_at_an_unknown_line_appends_after_or_prepends_before() {
        let mut code = lines(&["L1"]);
        edit_code(
            &mut code,
            &edit(CodeEditOperation::InsertAfter, Some("L9"), &[], "end"),
        );
        edit_code(
            &mut code,
            &edit(CodeEditOperation::InsertBefore, None, &[], "start"),
        );
        let texts: Vec<&str> = code.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["start", "line L1", "end"]);
    }

    #[test]
    fn deleting_lines_removes_exactly_those() {
        let mut code = lines(&["L1", "L2", "L3", "L4"]);
        let mut delete = edit(
            CodeEditOperation::DeleteLines,
            None,
            &["L2", "L4", "L9"],
            "",
        );
        delete.content = None;
        edit_code(&mut code, &delete);
        assert_eq!(ids(&code), ["L1", "L3"]);
    }

    #[test]
    fn replacing_reuses_the_old_ids_by_position() {
        let mut code = lines(&["L1", "L2", "L3", "L4"]);
        edit_code(
            &mut code,
            &edit(
                CodeEditOperation::ReplaceLines,
                None,
                &["L2", "L3"],
                "x\ny\nz",
            ),
        );
        assert_eq!(ids(&code), ["L1", "L2", "L3", "e7.1", "L4"]);
        let texts: Vec<&str> = code.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["line L1", "x", "y", "z", "line L4"]);

        // Fewer new lines than replaced ones: the rest go.
        edit_code(
            &mut code,
            &edit(
                CodeEditOperation::ReplaceLines,
                None,
                &["L2", "L3", "e7.1"],
                "only",
            ),
        );
        assert_eq!(ids(&code), ["L1", "L2", "L4"]);
        assert_eq!(code[1].text, "only");
    }

    #[test]
    fn replacing_lines_that_are_not_there_changes_nothing() {
        let mut code = lines(&["L1"]);
        edit_code(
            &mut code,
            &edit(CodeEditOperation::ReplaceLines, None, &["L7"], "x"),
        );
        assert_eq!(code, lines(&["L1"]));
    }
}
