//! The action DSL: what a teacher or classmate does during a scene (speak, point, draw on the
//! whiteboard, start a discussion, drive a widget).
//!
//! Every action carries an `id`. Action types this version does not know are kept as
//! [`Action::Unknown`] with their raw JSON, so a course written by a newer Aula loads, plays what it
//! can, and saves back without losing anything.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::fields::Fields;

/// Declares the known action kinds once: the enum of actions, the enum of kinds, their file names
/// and the (de)serialization that maps between them.
macro_rules! action_dsl {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal ),* $(,)?) => {
        /// One step of a scene's script. Serialized as a JSON object tagged by `"type"`.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Action {
            $( $(#[$doc])* $variant($variant), )*
            /// An action type this version does not know; `raw` is the whole object as read, and is
            /// written back unchanged.
            Unknown { type_name: String, raw: Value },
        }

        /// The known action types, without their fields.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ActionKind {
            $( $variant, )*
        }

        impl ActionKind {
            /// Every known kind, in declaration order.
            pub const ALL: &'static [ActionKind] = &[$(ActionKind::$variant),*];

            /// The `"type"` string used in course files.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ActionKind::$variant => $name, )*
                }
            }

            /// The kind named by a `"type"` string, if this version knows it.
            pub fn from_name(name: &str) -> Option<ActionKind> {
                match name {
                    $( $name => Some(ActionKind::$variant), )*
                    _ => None,
                }
            }
        }

        impl Action {
            /// The kind of a known action; `None` for [`Action::Unknown`].
            pub fn kind(&self) -> Option<ActionKind> {
                match self {
                    $( Action::$variant(_) => Some(ActionKind::$variant), )*
                    Action::Unknown { .. } => None,
                }
            }

            /// The action's id. An unknown action without a string `id` gives `""` (validation
            /// reports it).
            pub fn id(&self) -> &str {
                match self {
                    $( Action::$variant(a) => &a.id, )*
                    Action::Unknown { raw, .. } => raw.get("id").and_then(Value::as_str).unwrap_or(""),
                }
            }
        }

        impl Serialize for Action {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Action::$variant(a) => Tagged { type_name: $name, fields: a }.serialize(serializer), )*
                    Action::Unknown { raw, .. } => raw.serialize(serializer),
                }
            }
        }

        impl<'de> Deserialize<'de> for Action {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let Value::Object(mut fields) = Value::deserialize(deserializer)? else {
                    return Err(D::Error::custom("an action must be a JSON object with a \"type\""));
                };
                let type_name = match fields.get("type") {
                    Some(Value::String(name)) => name.clone(),
                    Some(_) => return Err(D::Error::custom("an action's \"type\" must be a string")),
                    None => return Err(D::Error::custom("an action needs a \"type\" field")),
                };
                let Some(kind) = ActionKind::from_name(&type_name) else {
                    return Ok(Action::Unknown { type_name, raw: Value::Object(fields) });
                };
                fields.remove("type");
                let bad = |e: String| {
                    D::Error::custom(format!("in a `{type_name}` action: {e}"))
                };
                let mut fields = Fields::of(fields);
                Ok(match kind {
                    $( ActionKind::$variant => {
                        let read = $variant::read(&mut fields).and_then(|a| fields.done().map(|()| a));
                        Action::$variant(read.map_err(bad)?)
                    } )*
                })
            }
        }
    };
}

action_dsl! {
    /// Say something aloud; blocks until the audio (or the reading-time estimate) ends.
    Speech => "speech",
    /// Dim everything on the slide but one element. Fire-and-forget.
    Spotlight => "spotlight",
    /// Point a laser dot at one slide element. Fire-and-forget.
    Laser => "laser",
    /// Play a video element of the slide to its end.
    PlayVideo => "play_video",
    /// Open the whiteboard over the slide.
    WbOpen => "wb_open",
    /// Close the whiteboard, showing the slide again.
    WbClose => "wb_close",
    /// Write text on the whiteboard.
    WbDrawText => "wb_draw_text",
    /// Draw a basic shape on the whiteboard.
    WbDrawShape => "wb_draw_shape",
    /// Draw a chart on the whiteboard.
    WbDrawChart => "wb_draw_chart",
    /// Write a LaTeX formula on the whiteboard.
    WbDrawLatex => "wb_draw_latex",
    /// Draw a table on the whiteboard (row 0 is the header).
    WbDrawTable => "wb_draw_table",
    /// Draw a line or arrow on the whiteboard.
    WbDrawLine => "wb_draw_line",
    /// Type a block of code on the whiteboard.
    WbDrawCode => "wb_draw_code",
    /// Change lines of a code block already on the whiteboard.
    WbEditCode => "wb_edit_code",
    /// Remove one element from the whiteboard.
    WbDelete => "wb_delete",
    /// Wipe the whiteboard.
    WbClear => "wb_clear",
    /// Offer the learner a discussion, started by one agent.
    Discussion => "discussion",
    /// Highlight a part of the scene's interactive widget.
    WidgetHighlight => "widget_highlight",
    /// Put a note on a part of the interactive widget.
    WidgetAnnotation => "widget_annotation",
    /// Reveal a hidden part of the interactive widget.
    WidgetReveal => "widget_reveal",
    /// Set the interactive widget's state.
    WidgetSetState => "widget_set_state",
}

/// Serializes a tagged value (an action, a slide element) as `{"type": name, ...fields}` with the
/// type first.
#[derive(Serialize)]
pub(crate) struct Tagged<'a, T: Serialize> {
    #[serde(rename = "type")]
    pub(crate) type_name: &'static str,
    #[serde(flatten)]
    pub(crate) fields: &'a T,
}

impl ActionKind {
    /// THE definition of which actions do not hold up the script: the cursor moves on at once.
    /// Only the slide effects (spotlight, laser) are fire-and-forget; everything else blocks.
    pub fn is_fire_and_forget(self) -> bool {
        matches!(self, ActionKind::Spotlight | ActionKind::Laser)
    }

    /// A visual effect on the slide that stays until the effect timer clears it.
    pub fn is_slide_effect(self) -> bool {
        matches!(self, ActionKind::Spotlight | ActionKind::Laser)
    }

    /// Any `wb_*` action.
    pub fn is_whiteboard(self) -> bool {
        self.as_str().starts_with("wb_")
    }

    /// A whiteboard action that needs the board open and opens it first when it is closed
    /// (every `wb_*` except open and close themselves).
    pub fn opens_whiteboard_implicitly(self) -> bool {
        self.is_whiteboard() && !matches!(self, ActionKind::WbOpen | ActionKind::WbClose)
    }

    /// Adds one element to the whiteboard.
    pub fn draws_on_whiteboard(self) -> bool {
        self.as_str().starts_with("wb_draw_")
    }

    /// Talks to the interactive widget of the scene.
    pub fn is_widget(self) -> bool {
        self.as_str().starts_with("widget_")
    }
}

impl Action {
    /// Whether this action lets the script move on at once. Unknown actions cannot be performed,
    /// so they never hold the script up either.
    pub fn is_fire_and_forget(&self) -> bool {
        self.kind().is_none_or(ActionKind::is_fire_and_forget)
    }

    /// The `"type"` string of this action, known or not.
    pub fn type_name(&self) -> &str {
        match self {
            Action::Unknown { type_name, .. } => type_name,
            known => known.kind().map(ActionKind::as_str).unwrap_or_default(),
        }
    }
}

/// Say `text` aloud, as `speaker` (an agent id; the course's teacher when absent).
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct Speech {
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    /// Pre-generated narration stored with the course's media.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct Spotlight {
    pub id: String,
    pub element_id: String,
    /// How dark the rest of the slide gets, 0 (not at all) to 1 (black).
    #[serde(default = "defaults::dim_opacity")]
    pub dim_opacity: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct Laser {
    pub id: String,
    pub element_id: String,
    #[serde(default = "defaults::laser_color")]
    pub color: String,
}

/// Play a slide's video element; `element_id` must name a video.
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct PlayVideo {
    pub id: String,
    pub element_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbOpen {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbClose {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbClear {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDelete {
    pub id: String,
    pub element_id: String,
}

/// Coordinates on the whiteboard use the slide canvas: 1000 × 562.5.
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDrawText {
    pub id: String,
    /// The id the drawn element gets, so later actions can edit or delete it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    pub content: String,
    pub x: f64,
    pub y: f64,
    #[serde(default = "defaults::text_width")]
    pub width: f64,
    #[serde(default = "defaults::text_height")]
    pub height: f64,
    #[serde(default = "defaults::font_size")]
    pub font_size: f64,
    #[serde(default = "defaults::ink")]
    pub color: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhiteboardShape {
    Rectangle,
    Circle,
    Triangle,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDrawShape {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    pub shape: WhiteboardShape,
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    #[serde(default = "defaults::shape_fill")]
    pub fill_color: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    Bar,
    Column,
    Line,
    Pie,
    Ring,
    Area,
    Radar,
    Scatter,
}

/// `series[i]` holds the values of `legends[i]`, one per label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartData {
    pub labels: Vec<String>,
    #[serde(default)]
    pub legends: Vec<String>,
    pub series: Vec<Vec<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDrawChart {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    pub chart_type: ChartKind,
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub data: ChartData,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub theme_colors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDrawLatex {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    pub latex: String,
    pub x: f64,
    pub y: f64,
    #[serde(default = "defaults::latex_width")]
    pub width: f64,
    /// Sized to the formula when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<f64>,
    #[serde(default = "defaults::latex_color")]
    pub color: String,
}

/// A table; `data[0]` is the header row and every row has the same number of cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDrawTable {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub data: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineStyle {
    #[default]
    Solid,
    Dashed,
}

/// How one end of a line looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineEnd {
    #[default]
    Plain,
    Arrow,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDrawLine {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    pub start_x: f64,
    pub start_y: f64,
    pub end_x: f64,
    pub end_y: f64,
    #[serde(default = "defaults::ink")]
    pub color: String,
    #[serde(default = "defaults::line_width")]
    pub width: f64,
    #[serde(default)]
    pub style: LineStyle,
    /// The start and end caps.
    #[serde(default)]
    pub ends: [LineEnd; 2],
}

#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbDrawCode {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_id: Option<String>,
    pub language: String,
    /// Lines separated by `\n`.
    pub code: String,
    pub x: f64,
    pub y: f64,
    #[serde(default = "defaults::code_width")]
    pub width: f64,
    #[serde(default = "defaults::code_height")]
    pub height: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeEditOperation {
    InsertAfter,
    InsertBefore,
    DeleteLines,
    ReplaceLines,
}

/// Inserts need `line_id` and `content`; deletes and replaces need `line_ids`; replaces also
/// need `content`. Validation checks these.
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WbEditCode {
    pub id: String,
    pub element_id: String,
    pub operation: CodeEditOperation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// Offer a discussion on `topic`, opened by `agent_id` (a classmate when absent).
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct Discussion {
    pub id: String,
    pub topic: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// A scripted discussion, played turn by turn when no AI provider is configured (offline, an
    /// LMS page without a key). With a provider the agents discuss live and this is not used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recording: Vec<RecordedTurn>,
}

/// One turn of a recorded discussion: what one agent says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedTurn {
    /// The id of a course agent.
    pub speaker: String,
    pub text: String,
}

/// Draw attention to `target` (a CSS selector inside the widget page), with an optional note.
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WidgetHighlight {
    pub id: String,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// Attach the note `content` to `target` (a CSS selector inside the widget page).
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WidgetAnnotation {
    pub id: String,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// Show the hidden part `target` (a CSS selector inside the widget page).
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WidgetReveal {
    pub id: String,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// Replace keys of the widget's state (see [`crate::widget`]); `content` is a note for the
/// learner, not sent to the widget.
#[derive(Debug, Clone, PartialEq, Serialize)]
// Read by `ReadFields` (see `fields`); the derive stays for tests that compare the two.
#[cfg_attr(test, derive(Deserialize))]
#[serde(deny_unknown_fields)]
pub struct WidgetSetState {
    pub id: String,
    pub state: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// An action's fields, read by hand (see [`crate::fields`]); `Action`'s reader checks that
/// nothing is left over.
trait ReadFields: Sized {
    fn read(f: &mut Fields) -> Result<Self, String>;
}

impl ReadFields for Speech {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(Speech {
            id: f.req("id"),
            text: f.req("text"),
            speaker: f.opt("speaker"),
            audio_id: f.opt("audio_id"),
        })
    }
}

impl ReadFields for Spotlight {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(Spotlight {
            id: f.req("id"),
            element_id: f.req("element_id"),
            dim_opacity: f.or("dim_opacity", defaults::dim_opacity()),
        })
    }
}

impl ReadFields for Laser {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(Laser {
            id: f.req("id"),
            element_id: f.req("element_id"),
            color: f.or("color", defaults::laser_color()),
        })
    }
}

impl ReadFields for PlayVideo {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(PlayVideo {
            id: f.req("id"),
            element_id: f.req("element_id"),
        })
    }
}

impl ReadFields for WbOpen {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbOpen { id: f.req("id") })
    }
}

impl ReadFields for WbClose {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbClose { id: f.req("id") })
    }
}

impl ReadFields for WbClear {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbClear { id: f.req("id") })
    }
}

impl ReadFields for WbDelete {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDelete {
            id: f.req("id"),
            element_id: f.req("element_id"),
        })
    }
}

impl ReadFields for WbDrawText {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDrawText {
            id: f.req("id"),
            element_id: f.opt("element_id"),
            content: f.req("content"),
            x: f.req("x"),
            y: f.req("y"),
            width: f.or("width", defaults::text_width()),
            height: f.or("height", defaults::text_height()),
            font_size: f.or("font_size", defaults::font_size()),
            color: f.or("color", defaults::ink()),
        })
    }
}

impl ReadFields for WbDrawShape {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDrawShape {
            id: f.req("id"),
            element_id: f.opt("element_id"),
            shape: f.serde("shape")?,
            x: f.req("x"),
            y: f.req("y"),
            width: f.req("width"),
            height: f.req("height"),
            fill_color: f.or("fill_color", defaults::shape_fill()),
        })
    }
}

impl ReadFields for WbDrawChart {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDrawChart {
            id: f.req("id"),
            element_id: f.opt("element_id"),
            chart_type: f.serde("chart_type")?,
            x: f.req("x"),
            y: f.req("y"),
            width: f.req("width"),
            height: f.req("height"),
            data: f.serde("data")?,
            theme_colors: f.serde_or_default("theme_colors"),
        })
    }
}

impl ReadFields for WbDrawLatex {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDrawLatex {
            id: f.req("id"),
            element_id: f.opt("element_id"),
            latex: f.req("latex"),
            x: f.req("x"),
            y: f.req("y"),
            width: f.or("width", defaults::latex_width()),
            height: f.opt("height"),
            color: f.or("color", defaults::latex_color()),
        })
    }
}

impl ReadFields for WbDrawTable {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDrawTable {
            id: f.req("id"),
            element_id: f.opt("element_id"),
            x: f.req("x"),
            y: f.req("y"),
            width: f.req("width"),
            height: f.req("height"),
            data: f.serde("data")?,
        })
    }
}

impl ReadFields for WbDrawLine {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDrawLine {
            id: f.req("id"),
            element_id: f.opt("element_id"),
            start_x: f.req("start_x"),
            start_y: f.req("start_y"),
            end_x: f.req("end_x"),
            end_y: f.req("end_y"),
            color: f.or("color", defaults::ink()),
            width: f.or("width", defaults::line_width()),
            style: f.serde_or_default("style"),
            ends: f.serde_or_default("ends"),
        })
    }
}

impl ReadFields for WbDrawCode {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbDrawCode {
            id: f.req("id"),
            element_id: f.opt("element_id"),
            language: f.req("language"),
            code: f.req("code"),
            x: f.req("x"),
            y: f.req("y"),
            width: f.or("width", defaults::code_width()),
            height: f.or("height", defaults::code_height()),
            file_name: f.opt("file_name"),
        })
    }
}

impl ReadFields for WbEditCode {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WbEditCode {
            id: f.req("id"),
            element_id: f.req("element_id"),
            operation: f.serde("operation")?,
            line_id: f.opt("line_id"),
            line_ids: f.serde_or_default("line_ids"),
            content: f.opt("content"),
        })
    }
}

impl ReadFields for Discussion {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(Discussion {
            id: f.req("id"),
            topic: f.req("topic"),
            prompt: f.opt("prompt"),
            agent_id: f.opt("agent_id"),
            recording: f.serde_or_default("recording"),
        })
    }
}

/// The three widget actions that point at a part of the page share their fields.
fn widget_target(f: &mut Fields) -> (String, String, Option<String>) {
    (f.req("id"), f.req("target"), f.opt("content"))
}

impl ReadFields for WidgetHighlight {
    fn read(f: &mut Fields) -> Result<Self, String> {
        let (id, target, content) = widget_target(f);
        Ok(WidgetHighlight {
            id,
            target,
            content,
        })
    }
}

impl ReadFields for WidgetAnnotation {
    fn read(f: &mut Fields) -> Result<Self, String> {
        let (id, target, content) = widget_target(f);
        Ok(WidgetAnnotation {
            id,
            target,
            content,
        })
    }
}

impl ReadFields for WidgetReveal {
    fn read(f: &mut Fields) -> Result<Self, String> {
        let (id, target, content) = widget_target(f);
        Ok(WidgetReveal {
            id,
            target,
            content,
        })
    }
}

impl ReadFields for WidgetSetState {
    fn read(f: &mut Fields) -> Result<Self, String> {
        Ok(WidgetSetState {
            id: f.req("id"),
            state: f.serde("state")?,
            content: f.opt("content"),
        })
    }
}

/// Field defaults of the DSL, in one place.
pub mod defaults {
    pub fn dim_opacity() -> f64 {
        0.5
    }
    pub fn laser_color() -> String {
        "#ff0000".into()
    }
    pub fn ink() -> String {
        "#333333".into()
    }
    pub fn text_width() -> f64 {
        400.0
    }
    pub fn text_height() -> f64 {
        100.0
    }
    pub fn font_size() -> f64 {
        18.0
    }
    pub fn shape_fill() -> String {
        "#5b9bd5".into()
    }
    pub fn latex_width() -> f64 {
        400.0
    }
    pub fn latex_color() -> String {
        "#000000".into()
    }
    pub fn line_width() -> f64 {
        2.0
    }
    pub fn code_width() -> f64 {
        500.0
    }
    pub fn code_height() -> f64 {
        300.0
    }
    pub fn yes() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kind_names_match_their_serde_names() {
        for kind in ActionKind::ALL {
            let via_serde = serde_json::to_value(kind).unwrap();
            assert_eq!(via_serde, json!(kind.as_str()));
            assert_eq!(ActionKind::from_name(kind.as_str()), Some(*kind));
        }
    }

    #[test]
    fn only_spotlight_and_laser_are_fire_and_forget() {
        let fire_and_forget: Vec<_> = ActionKind::ALL
            .iter()
            .filter(|k| k.is_fire_and_forget())
            .map(|k| k.as_str())
            .collect();
        assert_eq!(fire_and_forget, ["spotlight", "laser"]);
    }

    #[test]
    fn every_whiteboard_action_but_open_and_close_opens_the_board() {
        let implicit: Vec<_> = ActionKind::ALL
            .iter()
            .filter(|k| k.is_whiteboard() && !k.opens_whiteboard_implicitly())
            .map(|k| k.as_str())
            .collect();
        assert_eq!(implicit, ["wb_open", "wb_close"]);
        assert!(ActionKind::WbClear.opens_whiteboard_implicitly());
        assert!(!ActionKind::Speech.opens_whiteboard_implicitly());
    }

    #[test]
    fn known_action_serializes_with_type_first_and_defaults_filled() {
        let action: Action = serde_json::from_value(json!({
            "type": "laser", "id": "a1", "element_id": "title"
        }))
        .unwrap();
        assert_eq!(
            action,
            Action::Laser(Laser {
                id: "a1".into(),
                element_id: "title".into(),
                color: "#ff0000".into()
            })
        );
        let text = serde_json::to_string(&action).unwrap();
        assert!(text.starts_with(r#"{"type":"laser","#), "{text}");
    }

    #[test]
    fn unknown_action_type_is_kept_with_its_raw_fields() {
        let raw =
            json!({"type": "wb_draw_hologram", "id": "h1", "depth": 3, "nested": {"a": [1, 2]}});
        let action: Action = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(action.type_name(), "wb_draw_hologram");
        assert_eq!(action.id(), "h1");
        assert_eq!(action.kind(), None);
        assert!(action.is_fire_and_forget());
        assert_eq!(serde_json::to_value(&action).unwrap(), raw);
    }

    #[test]
    fn known_action_with_a_misspelt_field_is_rejected_with_its_type_named() {
        let err = serde_json::from_value::<Action>(json!({
            "type": "speech", "id": "s1", "text": "Hi", "speakr": "teacher"
        }))
        .unwrap_err()
        .to_string();
        assert!(err.contains("`speech` action"), "{err}");
        assert!(err.contains("speakr"), "{err}");
    }

    /// What serde's derived readers make of an action object: the reference the hand-written
    /// readers must agree with (same value, or an error where it errs).
    fn derived(value: &Value) -> Result<Action, ()> {
        let Value::Object(mut map) = value.clone() else {
            return Err(());
        };
        let Some(Value::String(name)) = map.remove("type") else {
            return Err(());
        };
        let fields = Value::Object(map);
        macro_rules! via {
            ($($variant:ident),*) => {
                match ActionKind::from_name(&name) {
                    $( Some(ActionKind::$variant) => serde_json::from_value::<$variant>(fields)
                        .map(Action::$variant)
                        .map_err(|_| ()), )*
                    None => Ok(Action::Unknown { type_name: name, raw: value.clone() }),
                }
            };
        }
        via!(
            Speech,
            Spotlight,
            Laser,
            PlayVideo,
            WbOpen,
            WbClose,
            WbDrawText,
            WbDrawShape,
            WbDrawChart,
            WbDrawLatex,
            WbDrawTable,
            WbDrawLine,
            WbDrawCode,
            WbEditCode,
            WbDelete,
            WbClear,
            Discussion,
            WidgetHighlight,
            WidgetAnnotation,
            WidgetReveal,
            WidgetSetState
        )
    }

    /// Every action of the course files, and each of them with one field dropped, nulled, of
    /// another type, or with a field too many.
    fn actions_and_their_mutations() -> Vec<Value> {
        let mut out = Vec::new();
        for file in [
            include_str!("../tests/fixtures/photosynthesis.json"),
            include_str!("../../../public/courses/transformer-en.json"),
            include_str!("../../../public/courses/photosynthesis-zh.json"),
        ] {
            let course: Value = serde_json::from_str(file).unwrap();
            for scene in course["scenes"].as_array().unwrap() {
                for action in scene["actions"].as_array().into_iter().flatten() {
                    out.push(action.clone());
                    let keys: Vec<String> = action.as_object().unwrap().keys().cloned().collect();
                    for key in keys.iter().filter(|k| k.as_str() != "type") {
                        let mut dropped = action.clone();
                        dropped.as_object_mut().unwrap().remove(key);
                        out.push(dropped);
                        for other in [
                            json!(null),
                            json!(3),
                            json!(2.5),
                            json!("x"),
                            json!([]),
                            json!({}),
                        ] {
                            let mut changed = action.clone();
                            changed[key.as_str()] = other;
                            out.push(changed);
                        }
                    }
                    for absent in [
                        "element_id",
                        "color",
                        "width",
                        "speaker",
                        "content",
                        "style",
                    ] {
                        if !keys.iter().any(|k| k == absent) {
                            let mut added = action.clone();
                            added[absent] = json!(null);
                            out.push(added);
                        }
                    }
                    let mut extra = action.clone();
                    extra["zzz"] = json!(1);
                    out.push(extra);
                }
            }
        }
        out
    }

    #[test]
    fn hand_written_readers_agree_with_serde_on_every_action_and_its_mutations() {
        let cases = actions_and_their_mutations();
        assert!(cases.len() > 1000, "{}", cases.len());
        let mut kinds = std::collections::BTreeSet::new();
        for case in &cases {
            let read = serde_json::from_value::<Action>(case.clone()).map_err(|_| ());
            assert_eq!(read, derived(case), "{case}");
            if let Ok(action) = read {
                kinds.extend(action.kind());
            }
        }
        assert_eq!(
            kinds.len(),
            ActionKind::ALL.len(),
            "every kind is exercised"
        );
    }

    #[test]
    fn hand_written_readers_say_what_is_wrong_as_serde_would() {
        let read = |v: Value| serde_json::from_value::<Action>(v).unwrap_err().to_string();
        assert_eq!(
            read(json!({"type": "speech", "id": "s1"})),
            "in a `speech` action: missing field `text`"
        );
        assert_eq!(
            read(json!({"type": "wb_draw_text", "id": "t", "content": "Hi", "x": "left", "y": 1})),
            "in a `wb_draw_text` action: invalid type: string \"left\", expected f64"
        );
        assert!(read(json!({"type": "wb_draw_shape", "id": "s", "shape": "hexagon", "x": 0, "y": 0, "width": 1, "height": 1}))
            .contains("unknown variant `hexagon`"));
    }

    #[test]
    fn action_without_a_type_is_rejected() {
        let err = serde_json::from_value::<Action>(json!({"id": "s1"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"type\""), "{err}");
        assert!(serde_json::from_value::<Action>(json!({"type": 3, "id": "x"})).is_err());
        assert!(serde_json::from_value::<Action>(json!(["speech"])).is_err());
    }
}
