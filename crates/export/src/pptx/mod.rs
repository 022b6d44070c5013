//! The PowerPoint export. A course becomes a [`Deck`] first: one slide per slide scene, every
//! element already placed in EMU on a 16:9 slide and reduced to a few drawing primitives (text
//! boxes, preset or freeform shapes, lines, pictures, tables, groups), with the scene's narration
//! as speaker notes. A [`DeckWriter`] then turns the deck into a file; [`PptxWriter`] writes
//! Office Open XML by hand. The mapping decides what the slide shows, the writer only how a
//! format spells it, so another format (or a better writer) can be swapped in without touching
//! the course side.
//!
//! Both steps are pure and deterministic: the same course and time give the same bytes, and no
//! course that `Course::validate` accepts makes them panic.

mod chart;
mod deck;
mod ooxml;
mod text;
mod xml;

#[cfg(test)]
mod tests;

use aula_course::{Course, Frame, CANVAS_HEIGHT, CANVAS_WIDTH};

pub use ooxml::PptxWriter;

/// A 16:9 slide, 13.333 × 7.5 inches.
pub const SLIDE_WIDTH_EMU: i64 = 12_192_000;
pub const SLIDE_HEIGHT_EMU: i64 = 6_858_000;
/// One canvas unit (the course's 1000 × 562.5 canvas) on the slide: 12,192 EMU, 0.96 pt.
pub const EMU_PER_CANVAS_UNIT: f64 = SLIDE_WIDTH_EMU as f64 / CANVAS_WIDTH;
pub const EMU_PER_POINT: f64 = 12_700.0;
/// Space between a table cell's border and its text.
pub const TABLE_CELL_MARGIN_X_EMU: i64 = 68_580;
pub const TABLE_CELL_MARGIN_Y_EMU: i64 = 34_290;

/// A canvas length in EMU. Non-finite lengths become 0 and absurd ones are clamped to ten slide
/// widths, so no arithmetic on them can overflow.
pub fn canvas_to_emu(length: f64) -> i64 {
    if !length.is_finite() {
        return 0;
    }
    let limit = 10.0 * SLIDE_WIDTH_EMU as f64;
    (length * EMU_PER_CANVAS_UNIT).clamp(-limit, limit).round() as i64
}

/// A canvas font size (px at 1000 wide) in hundredths of a point, as DrawingML wants it; within
/// the 1–4000 pt PowerPoint accepts.
pub fn canvas_font_to_centipoints(size: f64) -> u32 {
    let size = if size.is_finite() { size } else { 20.0 };
    let points = size * EMU_PER_CANVAS_UNIT / EMU_PER_POINT;
    (points * 100.0).round().clamp(100.0, 400_000.0) as u32
}

/// A rectangle on the slide, in EMU; `cx` and `cy` are never negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmuRect {
    pub x: i64,
    pub y: i64,
    pub cx: i64,
    pub cy: i64,
}

impl EmuRect {
    pub fn from_canvas(left: f64, top: f64, width: f64, height: f64) -> EmuRect {
        EmuRect {
            x: canvas_to_emu(left),
            y: canvas_to_emu(top),
            cx: canvas_to_emu(width).max(0),
            cy: canvas_to_emu(height).max(0),
        }
    }

    pub fn from_frame(frame: Frame) -> EmuRect {
        EmuRect::from_canvas(frame.left, frame.top, frame.width, frame.height)
    }

    /// The whole slide.
    pub fn slide() -> EmuRect {
        EmuRect::from_canvas(0.0, 0.0, CANVAS_WIDTH, CANVAS_HEIGHT)
    }
}

/// An sRGB colour with opacity (255 is opaque).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Color {
    pub rgb: [u8; 3],
    pub alpha: u8,
}

impl Color {
    pub const fn rgb(r: u8, g: u8, b: u8) -> Color {
        Color {
            rgb: [r, g, b],
            alpha: 255,
        }
    }

    /// Reads a course colour: `#rgb`, `#rrggbb`, `#rrggbbaa` or one of the named colours the
    /// course format allows. `None` for anything else, and for `transparent`.
    pub fn parse(text: &str) -> Option<Color> {
        let text = text.trim();
        if let Some(hex) = text.strip_prefix('#') {
            let digit = |i: usize| {
                hex.as_bytes()
                    .get(i)
                    .and_then(|b| (*b as char).to_digit(16))
                    .map(|d| d as u8)
            };
            let pair = |i: usize| Some(digit(i)? * 16 + digit(i + 1)?);
            return match hex.len() {
                3 => Some(Color::rgb(digit(0)? * 17, digit(1)? * 17, digit(2)? * 17)),
                6 => Some(Color::rgb(pair(0)?, pair(2)?, pair(4)?)),
                8 => Some(Color {
                    rgb: [pair(0)?, pair(2)?, pair(4)?],
                    alpha: pair(6)?,
                }),
                _ => None,
            };
        }
        let named = match text.to_ascii_lowercase().as_str() {
            "black" => 0x000000,
            "white" => 0xffffff,
            "gray" | "grey" => 0x808080,
            "silver" => 0xc0c0c0,
            "red" => 0xff0000,
            "maroon" => 0x800000,
            "orange" => 0xffa500,
            "gold" => 0xffd700,
            "yellow" => 0xffff00,
            "olive" => 0x808000,
            "lime" => 0x00ff00,
            "green" => 0x008000,
            "teal" => 0x008080,
            "cyan" => 0x00ffff,
            "blue" => 0x0000ff,
            "navy" => 0x000080,
            "purple" => 0x800080,
            "magenta" => 0xff00ff,
            "pink" => 0xffc0cb,
            "brown" => 0xa52a2a,
            _ => return None,
        };
        Some(Color::rgb(
            (named >> 16) as u8,
            (named >> 8 & 0xff) as u8,
            (named & 0xff) as u8,
        ))
    }

    /// `RRGGBB`, as `a:srgbClr` wants it.
    pub fn hex(&self) -> String {
        format!("{:02X}{:02X}{:02X}", self.rgb[0], self.rgb[1], self.rgb[2])
    }

    /// Relative luminance, 0 (black) to 1 (white), for picking readable text on a fill.
    pub fn luminance(&self) -> f64 {
        let channel = |c: u8| {
            let c = c as f64 / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(self.rgb[0])
            + 0.7152 * channel(self.rgb[1])
            + 0.0722 * channel(self.rgb[2])
    }
}

/// A whole presentation, laid out and ready to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Deck {
    pub title: String,
    /// A language tag such as `en` or `zh-CN`, for the runs' spelling and font choice.
    pub language: String,
    /// Unix milliseconds.
    pub created_ms: u64,
    pub slides: Vec<DeckSlide>,
    /// Pictures, referenced by index from [`Picture::media`].
    pub media: Vec<Media>,
}

impl Deck {
    /// Lays out every slide scene of `course`, in order; quiz, interactive and project scenes
    /// have no slide.
    pub fn from_course(course: &Course) -> Deck {
        deck::deck_from_course(course)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeckSlide {
    /// The scene's title; always shown somewhere on the slide.
    pub title: String,
    pub background: Option<Color>,
    /// In paint order: later items are drawn on top.
    pub items: Vec<DeckItem>,
    /// Speaker notes: paragraphs separated by blank lines.
    pub notes: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Jpeg,
    Gif,
}

impl ImageFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Gif => "gif",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Gif => "image/gif",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    pub format: ImageFormat,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DeckItem {
    Shape(Shape),
    Line(Line),
    Picture(Picture),
    Table(Table),
    Group(Group),
}

/// What a shape is to the presentation: its slide title, a plain text box, or a drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeRole {
    Title,
    TextBox,
    Drawing,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Geometry {
    Rectangle,
    RoundedRectangle,
    Ellipse,
    Triangle,
    RightArrow,
    /// A freeform path through points relative to the shape's top left, in EMU.
    Path {
        points: Vec<[i64; 2]>,
        closed: bool,
    },
}

/// A shape's border line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stroke {
    pub color: Color,
    pub width_emu: i64,
    pub dashed: bool,
}

/// A shape with optional fill, outline and text; a text box is a rectangle with neither.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub name: String,
    /// Alternative text.
    pub description: String,
    pub role: ShapeRole,
    pub frame: EmuRect,
    pub geometry: Geometry,
    pub fill: Option<Color>,
    pub outline: Option<Stroke>,
    pub text: Option<TextBody>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Top,
    Middle,
    Bottom,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TextBody {
    pub paragraphs: Vec<Paragraph>,
    pub anchor: Anchor,
    /// The same inset on every side.
    pub inset_emu: i64,
    pub wrap: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Center,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bullet {
    None,
    Disc,
    /// Numbered; the number is the list's first, the same on every item (the viewer counts).
    Number(u32),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Paragraph {
    pub runs: Vec<Run>,
    pub align: Align,
    pub bullet: Bullet,
    /// Indent level, 0 for none.
    pub level: u8,
    /// Space above, in hundredths of a point.
    pub space_before: u32,
}

impl Paragraph {
    pub fn plain(text: &str, style: RunStyle, align: Align) -> Paragraph {
        Paragraph {
            runs: vec![Run {
                text: text.to_string(),
                style,
            }],
            align,
            bullet: Bullet::None,
            level: 0,
            space_before: 0,
        }
    }

    /// The paragraph's text, without formatting.
    pub fn text(&self) -> String {
        self.runs.iter().map(|r| r.text.as_str()).collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typeface {
    /// The theme's body font.
    Body,
    Monospace,
    Math,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunStyle {
    /// Hundredths of a point.
    pub size: u32,
    pub bold: bool,
    pub italic: bool,
    pub strike: bool,
    pub color: Option<Color>,
    pub typeface: Typeface,
}

impl RunStyle {
    pub fn sized(size: u32) -> RunStyle {
        RunStyle {
            size,
            bold: false,
            italic: false,
            strike: false,
            color: None,
            typeface: Typeface::Body,
        }
    }
}

/// Text in one style; a `\n` inside is a line break within the paragraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub text: String,
    pub style: RunStyle,
}

/// A straight line between two points on the slide.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub from: [i64; 2],
    pub to: [i64; 2],
    pub outline: Stroke,
    /// Arrowheads at `from` and `to`.
    pub arrows: [bool; 2],
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub name: String,
    pub description: String,
    pub frame: EmuRect,
    /// Index into [`Deck::media`].
    pub media: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub frame: EmuRect,
    /// Column widths; they add up to the frame's width.
    pub columns: Vec<i64>,
    pub row_height: i64,
    /// Every row has one cell per column.
    pub rows: Vec<Vec<Vec<Paragraph>>>,
    pub header: bool,
    pub header_fill: Color,
    pub border: Color,
}

/// Items that move together (a chart's bars and labels).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    pub frame: EmuRect,
    pub items: Vec<DeckItem>,
}

/// Writes a deck as a file.
pub trait DeckWriter {
    fn write(&self, deck: &Deck) -> Vec<u8>;
}

/// The course as a PowerPoint file; `exported_at_ms` (Unix milliseconds) is stamped on the
/// document and its zip entries.
pub fn course_to_pptx(course: &Course, exported_at_ms: u64) -> Vec<u8> {
    PptxWriter {
        modified_ms: exported_at_ms,
    }
    .write(&Deck::from_course(course))
}
