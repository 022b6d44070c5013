//! Scenes and what they show: slides with positioned elements, quizzes, interactive pages and
//! projects.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::action::{defaults, Action, ChartData, ChartKind, LineEnd, LineStyle, Tagged};
use crate::widget::WidgetKind;

/// Slide and whiteboard coordinates run from (0, 0) at the top left to this size: 16:9.
pub const CANVAS_WIDTH: f64 = 1000.0;
pub const CANVAS_HEIGHT: f64 = 562.5;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    pub id: String,
    pub title: String,
    pub content: SceneContent,
    /// The scene's script, played in order.
    #[serde(default)]
    pub actions: Vec<Action>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SceneContent {
    Slide(Slide),
    Quiz(Quiz),
    Interactive(Interactive),
    Pbl(ProjectBriefing),
}

impl SceneContent {
    /// The `"type"` string of this content.
    pub fn kind_name(&self) -> &'static str {
        match self {
            SceneContent::Slide(_) => "slide",
            SceneContent::Quiz(_) => "quiz",
            SceneContent::Interactive(_) => "interactive",
            SceneContent::Pbl(_) => "pbl",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slide {
    /// The background colour (see [`crate::is_color`]); the theme's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
    /// In paint order: later elements are drawn on top.
    pub elements: Vec<SlideElement>,
}

impl Slide {
    pub fn element(&self, id: &str) -> Option<&SlideElement> {
        self.elements.iter().find(|e| e.id() == id)
    }
}

/// Where an element sits on the canvas, in canvas units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

impl Frame {
    /// The middle of the frame, where a laser dot lands.
    pub fn center(&self) -> (f64, f64) {
        (self.left + self.width / 2.0, self.top + self.height / 2.0)
    }

    /// Whether any part of the frame is on the 1000 × 562.5 canvas (a frame entirely off it can
    /// never be seen).
    pub fn overlaps_canvas(&self) -> bool {
        self.left < CANVAS_WIDTH
            && self.left + self.width > 0.0
            && self.top < CANVAS_HEIGHT
            && self.top + self.height > 0.0
    }
}

/// Declares the slide element kinds once: the enum, each kind's `"type"` name, and the
/// (de)serialization that maps between them.
macro_rules! slide_elements {
    ($( $(#[$doc:meta])* $variant:ident($element:ident) => $name:literal ),* $(,)?) => {
        /// One thing drawn on a slide. Serialized as a JSON object tagged by `"type"`. Unlike
        /// actions, an element type this version does not know is an error: a slide missing an
        /// element would be shown wrongly, not just played partly.
        #[derive(Debug, Clone, PartialEq)]
        pub enum SlideElement {
            $( $(#[$doc])* $variant($element), )*
        }

        impl SlideElement {
            /// Every element `"type"`, in declaration order.
            pub const KINDS: &'static [&'static str] = &[$($name),*];

            /// The `"type"` string of this element.
            pub fn kind_name(&self) -> &'static str {
                match self {
                    $( SlideElement::$variant(_) => $name, )*
                }
            }

            /// The id that spotlight, laser and play_video actions target.
            pub fn id(&self) -> &str {
                match self {
                    $( SlideElement::$variant(e) => &e.id, )*
                }
            }
        }

        impl Serialize for SlideElement {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( SlideElement::$variant(e) => Tagged { type_name: $name, fields: e }.serialize(serializer), )*
                }
            }
        }

        impl<'de> Deserialize<'de> for SlideElement {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = Value::deserialize(deserializer)?;
                let Value::Object(mut fields) = raw else {
                    return Err(D::Error::custom("a slide element must be a JSON object with a \"type\""));
                };
                let type_name = match fields.remove("type") {
                    Some(Value::String(name)) => name,
                    Some(_) => return Err(D::Error::custom("a slide element's \"type\" must be a string")),
                    None => return Err(D::Error::custom("a slide element needs a \"type\" field")),
                };
                let fields = Value::Object(fields);
                let bad = |e: serde_json::Error| {
                    D::Error::custom(format!("in a `{type_name}` element: {e}"))
                };
                match type_name.as_str() {
                    $( $name => serde_json::from_value(fields).map(SlideElement::$variant).map_err(bad), )*
                    _ => Err(D::Error::custom(format!(
                        "this version of Aula has no slide element of type `{type_name}` (it knows {}); \
                         replace that element, or open the course in a newer Aula",
                        SlideElement::KINDS.join(", ")
                    ))),
                }
            }
        }
    };
}

slide_elements! {
    /// Rich text, written in Markdown.
    Text(TextElement) => "text",
    Image(ImageElement) => "image",
    /// A filled basic shape, optionally with text inside.
    Shape(ShapeElement) => "shape",
    /// A video, started by a `play_video` action.
    Video(VideoElement) => "video",
    /// A straight line or arrow between two points.
    Line(LineElement) => "line",
    Chart(ChartElement) => "chart",
    Table(TableElement) => "table",
    /// A formula, typeset from LaTeX.
    Latex(LatexElement) => "latex",
    /// A block of source code.
    Code(CodeElement) => "code",
}

impl SlideElement {
    /// Where the element sits: what spotlight and laser aim at. A line's frame is the bounding box
    /// of its stroke (its end points widened by half the line width on every side), so even a
    /// horizontal line has a height.
    pub fn frame(&self) -> Frame {
        let (left, top, width, height) = match self {
            SlideElement::Text(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Image(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Shape(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Video(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Chart(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Table(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Latex(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Code(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Line(e) => return line_frame(e.start, e.end, e.width),
        };
        Frame {
            left,
            top,
            width,
            height,
        }
    }
}

/// The bounding box of a stroke from `start` to `end`, `width` thick.
pub(crate) fn line_frame(start: [f64; 2], end: [f64; 2], width: f64) -> Frame {
    let half = width.max(0.0) / 2.0;
    let left = start[0].min(end[0]) - half;
    let top = start[1].min(end[1]) - half;
    Frame {
        left,
        top,
        width: (start[0] - end[0]).abs() + 2.0 * half,
        height: (start[1] - end[1]).abs() + 2.0 * half,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextAlign {
    #[default]
    Left,
    Center,
    Right,
}

/// Rich text as Markdown (CommonMark with tables and strikethrough). Raw HTML inside it is never
/// interpreted: the renderer shows `<b>` as the literal text `<b>`, so a course file cannot inject
/// markup into the page. Use `**bold**`, not `<b>bold</b>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub markdown: String,
    /// In canvas units; the theme's body size when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub font_size: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default)]
    pub align: TextAlign,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    /// A media id of the course bundle, or a URL.
    pub src: String,
    /// Read out to learners who cannot see the picture.
    #[serde(default)]
    pub alt: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeKind {
    Rectangle,
    RoundedRectangle,
    Ellipse,
    Triangle,
    Arrow,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub shape: ShapeKind,
    /// A colour (see [`crate::is_color`]).
    pub fill: String,
    /// Text written inside the shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub src: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poster: Option<String>,
}

/// A line from `start` to `end` (each `[x, y]` in canvas units); the same styles as the
/// whiteboard's `wb_draw_line`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineElement {
    pub id: String,
    pub start: [f64; 2],
    pub end: [f64; 2],
    #[serde(default = "defaults::ink")]
    pub color: String,
    /// The stroke width, in canvas units.
    #[serde(default = "defaults::line_width")]
    pub width: f64,
    #[serde(default)]
    pub style: LineStyle,
    /// The start and end caps.
    #[serde(default)]
    pub ends: [LineEnd; 2],
}

/// A chart; `data` works as on the whiteboard's `wb_draw_chart`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub chart_type: ChartKind,
    pub data: ChartData,
    /// Series colours in order; the theme's when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub colors: Vec<String>,
}

/// A table of plain-text cells; every row has the same number of cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub rows: Vec<Vec<String>>,
    /// Whether `rows[0]` is a header row.
    #[serde(default = "defaults::yes")]
    pub header: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatexElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub latex: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    /// For highlighting, e.g. `python`, `rust`.
    pub language: String,
    /// Lines separated by `\n`.
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quiz {
    pub questions: Vec<QuizQuestion>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QuizQuestion {
    /// Exactly one option is right.
    Single(SingleChoice),
    /// One or more options are right; all of them must be picked.
    Multiple(MultipleChoice),
    /// A written answer, graded against a reference answer.
    Short(ShortAnswer),
}

impl QuizQuestion {
    pub fn id(&self) -> &str {
        match self {
            QuizQuestion::Single(q) => &q.id,
            QuizQuestion::Multiple(q) => &q.id,
            QuizQuestion::Short(q) => &q.id,
        }
    }

    pub fn points(&self) -> u32 {
        match self {
            QuizQuestion::Single(q) => q.points,
            QuizQuestion::Multiple(q) => q.points,
            QuizQuestion::Short(q) => q.points,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuizOption {
    pub id: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SingleChoice {
    pub id: String,
    pub question: String,
    pub options: Vec<QuizOption>,
    /// The id of the right option.
    pub answer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Whole points, 0 or more; a 0-point question is practice and does not count.
    #[serde(default = "one_point", deserialize_with = "whole_points")]
    pub points: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultipleChoice {
    pub id: String,
    pub question: String,
    pub options: Vec<QuizOption>,
    /// The ids of every right option.
    pub answers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Whole points, 0 or more; a 0-point question is practice and does not count.
    #[serde(default = "one_point", deserialize_with = "whole_points")]
    pub points: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShortAnswer {
    pub id: String,
    pub question: String,
    /// What a full-marks answer says; the grader compares against it.
    pub reference_answer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Whole points, 0 or more; a 0-point question is practice and does not count.
    #[serde(default = "one_point", deserialize_with = "whole_points")]
    pub points: u32,
}

fn one_point() -> u32 {
    1
}

/// Reads `points` with a message a course author understands, instead of "expected u32".
fn whole_points<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let value = Value::deserialize(deserializer)?;
    let whole = value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
            .map(|f| f as u64)
    });
    whole.and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
        D::Error::custom(format!(
            "a question's `points` must be a whole number, 0 or more; found {value}"
        ))
    })
}

/// A self-contained HTML page, run in an iframe with `sandbox="allow-scripts allow-forms"` (no same-origin
/// access) and driven through the messages of [`crate::widget`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interactive {
    pub html: String,
    /// What kind of widget the page is, when it was generated as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widget: Option<WidgetKind>,
}

/// A project the learner works on with the agents (the `pbl` scene).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectBriefing {
    /// The task as the learner first reads it.
    pub briefing: String,
    /// What the learner should be able to do by the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objectives: Vec<String>,
    /// The project team and its issue board; absent for a briefing-only project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectConfig>,
}

/// A project as generated: its team and its issue board. The file holds the starting point; the
/// player shows it and never writes it back (progress through a session lives in the session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    pub title: String,
    /// The background the team works from, beyond the briefing.
    #[serde(default)]
    pub description: String,
    /// The project's roles; names are unique, and issues name their owner by it.
    pub agents: Vec<ProjectAgent>,
    /// The issue board, in working order.
    #[serde(default)]
    pub issues: Vec<ProjectIssue>,
}

/// One role in the project team (not a course agent: these exist only inside the project).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectAgent {
    pub name: String,
    /// The part they play, e.g. `Botanist` or `Project manager`.
    pub role: String,
    /// How they think and talk; goes into their prompt.
    pub persona: String,
}

/// One task on the project's issue board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectIssue {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// The `name` of the project agent in charge of it.
    pub owner: String,
    #[serde(default)]
    pub done: bool,
}

// SceneContent and QuizQuestion read their variant through `Value`, like slide elements and
// actions, instead of serde's derived internally-tagged path (which buffers into its own
// `Content` type): every struct below then has one deserializer in the wasm, not two. The
// messages are the ones the derive gives.

impl<'de> Deserialize<'de> for SceneContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = deserializer.deserialize_any(UniqueKeys {
            lenient: Some("elements"),
        })?;
        scene_content(value).map_err(D::Error::custom)
    }
}

fn scene_content(value: Value) -> Result<SceneContent, serde_json::Error> {
    const KINDS: &[&str] = &["slide", "quiz", "interactive", "pbl"];
    let (kind, fields) = split_tag(value, "internally tagged enum SceneContent", KINDS, false)?;
    match kind {
        0 => serde_json::from_value(fields).map(SceneContent::Slide),
        1 => serde_json::from_value(fields).map(SceneContent::Quiz),
        2 => serde_json::from_value(fields).map(SceneContent::Interactive),
        _ => serde_json::from_value(fields).map(SceneContent::Pbl),
    }
}

impl<'de> Deserialize<'de> for QuizQuestion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        quiz_question(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

fn quiz_question(value: Value) -> Result<QuizQuestion, serde_json::Error> {
    const KINDS: &[&str] = &["single", "multiple", "short"];
    // Nested in a scene's content, serde's derive also took a variant index for the tag.
    let (kind, fields) = split_tag(value, "internally tagged enum QuizQuestion", KINDS, true)?;
    match kind {
        0 => serde_json::from_value(fields).map(QuizQuestion::Single),
        1 => serde_json::from_value(fields).map(QuizQuestion::Multiple),
        _ => serde_json::from_value(fields).map(QuizQuestion::Short),
    }
}

/// Splits a value tagged by `"type"` into the index of its kind in `kinds` and the rest of its
/// fields. Like serde's internally tagged enums it also takes `[tag, field, ...]`.
fn split_tag(
    value: Value,
    expected: &'static str,
    kinds: &'static [&'static str],
    takes_index: bool,
) -> Result<(usize, Value), serde_json::Error> {
    let (tag, fields) = match value {
        Value::Object(mut fields) => match fields.remove("type") {
            Some(tag) => (tag, Value::Object(fields)),
            None => return Err(serde_json::Error::missing_field("type")),
        },
        Value::Array(mut items) if !items.is_empty() => {
            let tag = items.remove(0);
            (tag, Value::Array(items))
        }
        Value::Array(_) => return Err(serde_json::Error::missing_field("type")),
        other => {
            return Err(serde_json::Error::invalid_type(
                unexpected(&other),
                &expected,
            ))
        }
    };
    if let (true, Some(index)) = (takes_index, tag.as_u64()) {
        return match usize::try_from(index) {
            Ok(kind) if kind < kinds.len() => Ok((kind, fields)),
            _ => Err(serde_json::Error::invalid_value(
                Unexpected::Unsigned(index),
                &format!("variant index 0 <= i < {}", kinds.len()).as_str(),
            )),
        };
    }
    let Value::String(name) = tag else {
        return Err(serde_json::Error::invalid_type(
            unexpected(&tag),
            &"variant identifier",
        ));
    };
    kinds
        .iter()
        .position(|kind| *kind == name)
        .map(|kind| (kind, fields))
        .ok_or_else(|| serde_json::Error::unknown_variant(&name, kinds))
}

/// A JSON value read like [`Value`], except that an object naming a key twice is an error, as it
/// is for serde's derived structs; the value of the `lenient` key is read as a plain `Value`
/// (slide elements, which always kept the last of a repeated key).
struct UniqueKeys {
    lenient: Option<&'static str>,
}

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(UniqueKeys { lenient: None })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if self.lenient == Some(key.as_str()) {
                map.next_value::<Value>()?
            } else {
                map.next_value_seed(UniqueKeys { lenient: None })?
            };
            if fields.contains_key(&key) {
                return Err(A::Error::custom(format_args!("duplicate field `{key}`")));
            }
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

/// How serde names a JSON value in an "invalid type" message.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (None, Some(i), _) => Unexpected::Signed(i),
            (None, None, f) => Unexpected::Float(f.unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(start: [f64; 2], end: [f64; 2], width: f64) -> SlideElement {
        SlideElement::Line(LineElement {
            id: "arrow".into(),
            start,
            end,
            color: defaults::ink(),
            width,
            style: LineStyle::Solid,
            ends: [LineEnd::Plain, LineEnd::Arrow],
        })
    }

    #[test]
    fn a_lines_frame_is_the_bounding_box_of_its_stroke() {
        let diagonal = line([700.0, 270.0], [500.0, 330.0], 4.0).frame();
        assert_eq!(
            diagonal,
            Frame {
                left: 498.0,
                top: 268.0,
                width: 204.0,
                height: 64.0
            }
        );
        assert_eq!(diagonal.center(), (600.0, 300.0));
        let horizontal = line([100.0, 50.0], [300.0, 50.0], 2.0).frame();
        assert_eq!(horizontal.height, 2.0, "a flat line still has a height");
    }

    #[test]
    fn frames_overlap_the_canvas_unless_entirely_beside_it() {
        let frame = |left, top| Frame {
            left,
            top,
            width: 100.0,
            height: 50.0,
        };
        assert!(frame(950.0, 540.0).overlaps_canvas());
        assert!(frame(-60.0, -20.0).overlaps_canvas());
        assert!(!frame(1000.0, 100.0).overlaps_canvas());
        assert!(!frame(100.0, -50.0).overlaps_canvas());
    }

    #[test]
    fn element_kind_names_are_their_file_names_and_come_first() {
        let element = line([0.0, 0.0], [10.0, 10.0], 2.0);
        assert_eq!(element.kind_name(), "line");
        assert!(SlideElement::KINDS.contains(&"line"));
        let text = serde_json::to_string(&element).unwrap();
        assert!(text.starts_with(r#"{"type":"line","id":"arrow""#), "{text}");
        let back: SlideElement = serde_json::from_str(&text).unwrap();
        assert_eq!(back, element);
    }

    #[test]
    fn defaults_fill_an_element_written_with_only_its_required_fields() {
        let table: SlideElement = serde_json::from_value(json!({
            "type": "table", "id": "t", "left": 0, "top": 0, "width": 100, "height": 50,
            "rows": [["a"]]
        }))
        .unwrap();
        let SlideElement::Table(table) = table else {
            panic!("not a table")
        };
        assert!(table.header);
        let text: SlideElement = serde_json::from_value(json!({
            "type": "text", "id": "t", "left": 0, "top": 0, "width": 100, "height": 50,
            "markdown": "Hi"
        }))
        .unwrap();
        let SlideElement::Text(text) = text else {
            panic!("not a text")
        };
        assert_eq!(
            (text.align, text.font_size, text.color),
            (TextAlign::Left, None, None)
        );
    }

    #[test]
    fn an_element_that_is_not_a_tagged_object_is_rejected() {
        for (bad, says) in [
            (json!(["text"]), "JSON object"),
            (json!({"id": "x"}), "needs a \"type\""),
            (json!({"type": 7, "id": "x"}), "must be a string"),
        ] {
            let err = serde_json::from_value::<SlideElement>(bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{err}");
        }
    }
}
