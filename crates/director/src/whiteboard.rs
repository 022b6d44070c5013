//! What the whiteboard got this round, for the prompts.
//!
//! The round's whiteboard actions are kept in a ledger ([`LedgerEntry`]). The director sees a
//! count and who drew ([`summarize_ledger`]), so it can steer away from agents who would crowd
//! the board; each agent sees one line per drawing still there ([`round_drawings`]), so it builds
//! on them instead of drawing them again. [`describe`] gives the short note for one action.

use aula_course::action::{ChartKind, CodeEditOperation, LineEnd, WhiteboardShape};

use crate::model::{clip, Action, LedgerEntry};

/// How many characters of a text or formula a note quotes.
const QUOTE_CHARS: usize = 30;

/// How many chart labels a note lists.
const CHART_LABELS: usize = 4;

/// The board is crowded from this many elements on.
pub const CROWDED_AT: usize = 6;

/// What the board holds after this round's ledger is replayed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BoardSummary {
    /// Drawings minus deletions since the last clear (never below 0).
    pub element_count: usize,
    /// The names of the agents who drew this round, first drawing first, each once. A clear
    /// does not remove anyone.
    pub contributors: Vec<String>,
}

impl BoardSummary {
    /// Whether the board holds [`CROWDED_AT`] elements or more.
    pub fn is_crowded(&self) -> bool {
        self.element_count >= CROWDED_AT
    }
}

/// Replays the ledger: `wb_clear` sets the count to 0 (contributors stay), `wb_delete` lowers it
/// by one (not below 0), every `wb_draw_*` raises it by one and adds the agent to the
/// contributors. Code edits, opening and closing the board and other actions change nothing.
pub fn summarize_ledger(ledger: &[LedgerEntry]) -> BoardSummary {
    let mut summary = BoardSummary::default();
    for entry in ledger {
        match &entry.action {
            Action::WbClear(_) => summary.element_count = 0,
            Action::WbDelete(_) => summary.element_count = summary.element_count.saturating_sub(1),
            action if action.kind().is_some_and(|k| k.draws_on_whiteboard()) => {
                summary.element_count += 1;
                if !summary.contributors.contains(&entry.agent_name) {
                    summary.contributors.push(entry.agent_name.clone());
                }
            }
            _ => {}
        }
    }
    summary
}

/// A short note for one whiteboard action (`wrote "F = ma"`, `drew a 3×4 table`, `cleared the
/// whiteboard`, ...), or `None` for opening or closing the board and for actions off the board.
pub fn describe(action: &Action) -> Option<String> {
    Some(match action {
        Action::WbDrawText(a) => format!("wrote \"{}\"", quote(&a.content)),
        Action::WbDrawShape(a) => format!("drew a {}", shape_name(a.shape)),
        Action::WbDrawChart(a) => {
            let chart = chart_name(a.chart_type);
            let labels = &a.data.labels;
            if labels.is_empty() {
                format!("drew {chart}")
            } else {
                let mut shown = labels[..labels.len().min(CHART_LABELS)].join(", ");
                if labels.len() > CHART_LABELS {
                    shown.push_str(", …");
                }
                format!("drew {chart} (labels: {shown})")
            }
        }
        Action::WbDrawLatex(a) => format!("wrote formula \"{}\"", quote(&a.latex)),
        Action::WbDrawTable(a) => {
            let columns = a.data.iter().map(Vec::len).max().unwrap_or(0);
            format!("drew a {}×{columns} table", a.data.len())
        }
        Action::WbDrawLine(a) if a.ends.contains(&LineEnd::Arrow) => "drew an arrow".to_owned(),
        Action::WbDrawLine(_) => "drew a line".to_owned(),
        Action::WbDrawCode(a) => {
            let title = a
                .file_name
                .as_deref()
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .unwrap_or(&a.language);
            let lines = a.code.lines().count();
            let plural = if lines == 1 { "" } else { "s" };
            format!(
                "wrote code \"{title}\" ({}, {lines} line{plural})",
                a.language
            )
        }
        Action::WbEditCode(a) => format!("edited code ({})", operation_name(a.operation)),
        Action::WbClear(_) => "cleared the whiteboard".to_owned(),
        Action::WbDelete(a) => format!("removed \"{}\"", a.element_id),
        _ => return None,
    })
}

/// The lines that tell an agent what was drawn on the board this round, so it does not draw it
/// again: one `[by <agent name>] <note>` line per drawing still there after the replay, oldest
/// first. A `wb_clear` drops every earlier line, a `wb_delete` drops the drawing with that element
/// id, and a drawing that reuses an element id replaces the earlier one in place (as the player
/// does). Empty when nothing drawn this round remains.
pub fn round_drawings(ledger: &[LedgerEntry]) -> Vec<String> {
    let mut drawings: Vec<(&str, String)> = Vec::new();
    for entry in ledger {
        match &entry.action {
            Action::WbClear(_) => drawings.clear(),
            Action::WbDelete(delete) => drawings.retain(|(id, _)| *id != delete.element_id),
            action => {
                let (Some(id), Some(note)) =
                    (aula_timeline::drawn_element_id(action), describe(action))
                else {
                    continue;
                };
                let line = format!("[by {}] {note}", entry.agent_name);
                match drawings.iter_mut().find(|(drawn, _)| *drawn == id) {
                    Some(earlier) => earlier.1 = line,
                    None => drawings.push((id, line)),
                }
            }
        }
    }
    drawings.into_iter().map(|(_, line)| line).collect()
}

/// `text` on one line, cut to [`QUOTE_CHARS`] characters.
fn quote(text: &str) -> String {
    clip(text, QUOTE_CHARS)
}

fn shape_name(shape: WhiteboardShape) -> &'static str {
    match shape {
        WhiteboardShape::Rectangle => "rectangle",
        WhiteboardShape::Circle => "circle",
        WhiteboardShape::Triangle => "triangle",
    }
}

/// The chart kind with its article.
fn chart_name(kind: ChartKind) -> &'static str {
    match kind {
        ChartKind::Bar => "a bar chart",
        ChartKind::Column => "a column chart",
        ChartKind::Line => "a line chart",
        ChartKind::Pie => "a pie chart",
        ChartKind::Ring => "a ring chart",
        ChartKind::Area => "an area chart",
        ChartKind::Radar => "a radar chart",
        ChartKind::Scatter => "a scatter chart",
    }
}

/// The operation as course files spell it.
fn operation_name(operation: CodeEditOperation) -> &'static str {
    match operation {
        CodeEditOperation::InsertAfter => "insert_after",
        CodeEditOperation::InsertBefore => "insert_before",
        CodeEditOperation::DeleteLines => "delete_lines",
        CodeEditOperation::ReplaceLines => "replace_lines",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn action(value: Value) -> Action {
        serde_json::from_value(value).unwrap()
    }

    fn entry(agent: &str, value: Value) -> LedgerEntry {
        LedgerEntry {
            agent_id: agent.to_lowercase(),
            agent_name: agent.into(),
            action: action(value),
        }
    }

    fn text(id: &str, content: &str) -> Value {
        json!({"type": "wb_draw_text", "id": id, "content": content, "x": 10, "y": 10})
    }

    fn text_with_element(id: &str, element_id: &str, content: &str) -> Value {
        json!({
            "type": "wb_draw_text", "id": id, "element_id": element_id,
            "content": content, "x": 10, "y": 10
        })
    }

    fn shape(id: &str, kind: &str) -> Value {
        json!({
            "type": "wb_draw_shape", "id": id, "shape": kind,
            "x": 0, "y": 0, "width": 100, "height": 100
        })
    }

    fn clear() -> Value {
        json!({"type": "wb_clear", "id": "c"})
    }

    fn delete(element_id: &str) -> Value {
        json!({"type": "wb_delete", "id": "d", "element_id": element_id})
    }

    fn describe_json(value: Value) -> Option<String> {
        describe(&action(value))
    }

    #[test]
    fn an_empty_ledger_leaves_an_empty_board() {
        assert_eq!(summarize_ledger(&[]), BoardSummary::default());
        assert!(round_drawings(&[]).is_empty());
    }

    #[test]
    fn drawings_count_and_contributors_are_kept_once_in_order() {
        let ledger = [
            entry("Lin", text("t1", "F = ma")),
            entry("Mia", shape("s1", "circle")),
            entry("Lin", text("t2", "a = F/m")),
            entry("Leo", json!({"type": "wb_open", "id": "o"})),
        ];
        assert_eq!(
            summarize_ledger(&ledger),
            BoardSummary {
                element_count: 3,
                contributors: vec!["Lin".into(), "Mia".into()],
            }
        );
    }

    #[test]
    fn a_clear_empties_the_count_but_keeps_the_contributors() {
        let ledger = [
            entry("Lin", text("t1", "one")),
            entry("Mia", text("t2", "two")),
            entry("Lin", clear()),
            entry("Leo", text("t3", "three")),
        ];
        assert_eq!(
            summarize_ledger(&ledger),
            BoardSummary {
                element_count: 1,
                contributors: vec!["Lin".into(), "Mia".into(), "Leo".into()],
            }
        );
    }

    #[test]
    fn deletes_lower_the_count_but_never_below_zero() {
        let ledger = [
            entry("Lin", text("t1", "one")),
            entry("Lin", delete("t1")),
            entry("Lin", delete("earlier")),
            entry("Lin", delete("older")),
        ];
        assert_eq!(summarize_ledger(&ledger).element_count, 0);
        let ledger = [
            entry("Lin", delete("earlier")),
            entry("Lin", text("t1", "one")),
        ];
        assert_eq!(summarize_ledger(&ledger).element_count, 1);
    }

    #[test]
    fn edits_open_close_and_other_actions_change_nothing() {
        let ledger = [
            entry(
                "Lin",
                json!({"type": "wb_edit_code", "id": "e", "element_id": "c1",
                       "operation": "delete_lines", "line_ids": ["l1"]}),
            ),
            entry("Lin", json!({"type": "wb_open", "id": "o"})),
            entry("Lin", json!({"type": "wb_close", "id": "x"})),
            entry(
                "Lin",
                json!({"type": "spotlight", "id": "s", "element_id": "title"}),
            ),
            entry("Lin", json!({"type": "wb_draw_hologram", "id": "h"})),
        ];
        assert_eq!(summarize_ledger(&ledger), BoardSummary::default());
        assert!(round_drawings(&ledger).is_empty());
    }

    #[test]
    fn the_board_is_crowded_at_six_elements_not_five() {
        let drawings = |n: usize| -> Vec<LedgerEntry> {
            (0..n)
                .map(|i| entry("Lin", text(&format!("t{i}"), "x")))
                .collect()
        };
        assert!(!summarize_ledger(&drawings(5)).is_crowded());
        assert!(summarize_ledger(&drawings(6)).is_crowded());
        assert!(summarize_ledger(&drawings(9)).is_crowded());
    }

    #[test]
    fn text_and_formulas_are_quoted_up_to_thirty_characters() {
        assert_eq!(
            describe_json(text("t", "F = ma")).as_deref(),
            Some("wrote \"F = ma\"")
        );
        let long = "Newton's second law:\nforce equals mass times acceleration";
        assert_eq!(
            describe_json(text("t", long)).as_deref(),
            Some("wrote \"Newton's second law: force equ…\"")
        );
        assert_eq!(
            describe_json(text("t", &"x".repeat(30))),
            Some(format!("wrote \"{}\"", "x".repeat(30)))
        );
        assert_eq!(
            describe_json(
                json!({"type": "wb_draw_latex", "id": "l", "latex": "E = mc^2", "x": 0, "y": 0})
            )
            .as_deref(),
            Some("wrote formula \"E = mc^2\"")
        );
        assert_eq!(
            describe_json(json!({"type": "wb_draw_latex", "id": "l",
                                 "latex": "\\int_0^1 x^2 \\, dx = \\frac{1}{3} + C", "x": 0, "y": 0}))
            .as_deref(),
            Some("wrote formula \"\\int_0^1 x^2 \\, dx = \\frac{1}{…\"")
        );
    }

    #[test]
    fn shapes_use_their_real_kind() {
        assert_eq!(
            describe_json(shape("s", "circle")).as_deref(),
            Some("drew a circle")
        );
        assert_eq!(
            describe_json(shape("s", "triangle")).as_deref(),
            Some("drew a triangle")
        );
        assert_eq!(
            describe_json(shape("s", "rectangle")).as_deref(),
            Some("drew a rectangle")
        );
    }

    #[test]
    fn charts_name_their_kind_and_up_to_four_labels() {
        let chart = |kind: &str, labels: Vec<&str>| {
            json!({
                "type": "wb_draw_chart", "id": "c", "chart_type": kind,
                "x": 0, "y": 0, "width": 300, "height": 200,
                "data": {"labels": labels, "series": [[1, 2, 3, 4, 5]]}
            })
        };
        assert_eq!(
            describe_json(chart("bar", vec!["a", "b", "c", "d"])).as_deref(),
            Some("drew a bar chart (labels: a, b, c, d)")
        );
        assert_eq!(
            describe_json(chart("area", vec!["a", "b", "c", "d", "e"])).as_deref(),
            Some("drew an area chart (labels: a, b, c, d, …)")
        );
        assert_eq!(
            describe_json(chart("pie", vec![])).as_deref(),
            Some("drew a pie chart")
        );
    }

    #[test]
    fn tables_give_rows_by_columns() {
        let table = json!({
            "type": "wb_draw_table", "id": "t", "x": 0, "y": 0, "width": 400, "height": 160,
            "data": [["x", "y", "z", "w"], ["1", "2", "3", "4"], ["5", "6", "7", "8"]]
        });
        assert_eq!(describe_json(table).as_deref(), Some("drew a 3×4 table"));
    }

    #[test]
    fn lines_are_arrows_when_either_end_is_an_arrow_head() {
        let line = |ends: Value| {
            let mut value = json!({
                "type": "wb_draw_line", "id": "l",
                "start_x": 0, "start_y": 0, "end_x": 100, "end_y": 100
            });
            if !ends.is_null() {
                value["ends"] = ends;
            }
            value
        };
        assert_eq!(
            describe_json(line(Value::Null)).as_deref(),
            Some("drew a line")
        );
        assert_eq!(
            describe_json(line(json!(["plain", "arrow"]))).as_deref(),
            Some("drew an arrow")
        );
        assert_eq!(
            describe_json(line(json!(["arrow", "plain"]))).as_deref(),
            Some("drew an arrow")
        );
        assert_eq!(
            describe_json(line(json!(["plain", "plain"]))).as_deref(),
            Some("drew a line")
        );
    }

    #[test]
    fn code_names_its_file_or_language_and_counts_lines() {
        let code = |file_name: Option<&str>, code: &str| {
            let mut value = json!({
                "type": "wb_draw_code", "id": "c", "language": "python",
                "code": code, "x": 0, "y": 0
            });
            if let Some(name) = file_name {
                value["file_name"] = json!(name);
            }
            value
        };
        assert_eq!(
            describe_json(code(Some("fib.py"), "def fib(n):\n    return n\n")).as_deref(),
            Some("wrote code \"fib.py\" (python, 2 lines)")
        );
        assert_eq!(
            describe_json(code(None, "print(1)")).as_deref(),
            Some("wrote code \"python\" (python, 1 line)")
        );
        assert_eq!(
            describe_json(
                json!({"type": "wb_edit_code", "id": "e", "element_id": "c1",
                                 "operation": "replace_lines", "line_ids": ["l2"], "content": "x"})
            )
            .as_deref(),
            Some("edited code (replace_lines)")
        );
    }

    #[test]
    fn clear_and_delete_are_described_open_and_close_are_not() {
        assert_eq!(
            describe_json(clear()).as_deref(),
            Some("cleared the whiteboard")
        );
        assert_eq!(
            describe_json(delete("step_2")).as_deref(),
            Some("removed \"step_2\"")
        );
        assert_eq!(describe_json(json!({"type": "wb_open", "id": "o"})), None);
        assert_eq!(describe_json(json!({"type": "wb_close", "id": "x"})), None);
        assert_eq!(
            describe_json(json!({"type": "speech", "id": "s", "text": "Hi"})),
            None
        );
        assert_eq!(
            describe_json(json!({"type": "wb_draw_hologram", "id": "h"})),
            None
        );
    }

    #[test]
    fn round_drawings_name_who_drew_what() {
        let ledger = [
            entry("Professor Lin", text("t1", "F = ma")),
            entry("Mia", json!({"type": "wb_open", "id": "o"})),
            entry("Mia", shape("s1", "circle")),
        ];
        assert_eq!(
            round_drawings(&ledger),
            [
                "[by Professor Lin] wrote \"F = ma\"",
                "[by Mia] drew a circle"
            ]
        );
    }

    #[test]
    fn a_clear_drops_the_earlier_drawings() {
        let ledger = [
            entry("Lin", text("t1", "old")),
            entry("Mia", shape("s1", "circle")),
            entry("Lin", clear()),
            entry("Leo", shape("s2", "triangle")),
        ];
        assert_eq!(round_drawings(&ledger), ["[by Leo] drew a triangle"]);
        let ledger = [entry("Lin", text("t1", "old")), entry("Lin", clear())];
        assert!(round_drawings(&ledger).is_empty());
    }

    #[test]
    fn a_delete_drops_the_drawing_with_that_element_id() {
        let ledger = [
            entry("Lin", text_with_element("a1", "step_1", "first")),
            entry("Lin", text_with_element("a2", "step_2", "second")),
            entry("Lin", delete("step_1")),
            entry("Lin", delete("not_from_this_round")),
        ];
        assert_eq!(round_drawings(&ledger), ["[by Lin] wrote \"second\""]);
        // Without an element id, a drawing is known by its action id.
        let ledger = [
            entry("Lin", text("a1", "first")),
            entry("Lin", delete("a1")),
        ];
        assert!(round_drawings(&ledger).is_empty());
    }

    #[test]
    fn redrawing_an_element_id_replaces_the_earlier_line() {
        let ledger = [
            entry("Lin", text_with_element("a1", "step", "draft")),
            entry("Mia", shape("s1", "circle")),
            entry("Lin", text_with_element("a2", "step", "final")),
        ];
        assert_eq!(
            round_drawings(&ledger),
            ["[by Lin] wrote \"final\"", "[by Mia] drew a circle"]
        );
    }
}
