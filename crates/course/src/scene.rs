//! Scenes and what they show: slides with positioned elements, quizzes, interactive pages and
//! project briefings.

use serde::{Deserialize, Serialize};

use crate::action::Action;

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SlideElement {
    Text(TextElement),
    Image(ImageElement),
    Shape(ShapeElement),
    Video(VideoElement),
}

impl SlideElement {
    pub fn id(&self) -> &str {
        match self {
            SlideElement::Text(e) => &e.id,
            SlideElement::Image(e) => &e.id,
            SlideElement::Shape(e) => &e.id,
            SlideElement::Video(e) => &e.id,
        }
    }

    pub fn frame(&self) -> Frame {
        let (left, top, width, height) = match self {
            SlideElement::Text(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Image(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Shape(e) => (e.left, e.top, e.width, e.height),
            SlideElement::Video(e) => (e.left, e.top, e.width, e.height),
        };
        Frame {
            left,
            top,
            width,
            height,
        }
    }
}

/// Rich text; `html` uses a small subset (p, span, strong, em, u, h1–h6, inline styles).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextElement {
    pub id: String,
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub html: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quiz {
    pub questions: Vec<QuizQuestion>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(default = "one_point")]
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
    #[serde(default = "one_point")]
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
    #[serde(default = "one_point")]
    pub points: u32,
}

fn one_point() -> u32 {
    1
}

/// A self-contained HTML page, run in a sandboxed frame without same-origin access.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interactive {
    pub html: String,
}

/// A project the learner works on with the agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectBriefing {
    pub briefing: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objectives: Vec<String>,
}
