//! Course → deck: which scenes become slides, where each element lands on the slide and what it
//! becomes, where the scene's title shows, and the speaker notes. Sizes and colours follow the
//! classroom's stylesheet, so the deck looks like the lesson did.

use aula_course::action::{Action, LineEnd, LineStyle};
use aula_course::scene::{
    CodeElement, ImageElement, LatexElement, ShapeElement, ShapeKind, Slide, TableElement,
    TextAlign, TextElement, VideoElement,
};
use aula_course::{Course, Frame, Scene, SceneContent, SlideElement, CANVAS_HEIGHT, CANVAS_WIDTH};

use super::chart::chart_group;
use super::text::{
    code_paragraphs, height_points, markdown_paragraphs, shrink_to_fit, width_em, BaseStyle,
};
use super::{
    canvas_font_to_centipoints, canvas_to_emu, Align, Anchor, Color, Deck, DeckItem, DeckSlide,
    EmuRect, Geometry, ImageFormat, Line, Media, Paragraph, Picture, RunStyle, Shape, ShapeRole,
    Stroke, Table, TextBody, Typeface, EMU_PER_POINT, TABLE_CELL_MARGIN_X_EMU,
    TABLE_CELL_MARGIN_Y_EMU,
};
use aula_render::latex_to_text;

/// The classroom's slide text colour (`--slide-text`).
const SLIDE_TEXT: Color = Color::rgb(0x1f, 0x29, 0x37);
const MUTED_TEXT: Color = Color::rgb(0x64, 0x74, 0x8b);
/// The classroom's default sizes, in canvas units.
const TEXT_SIZE: f64 = 20.0;
const SHAPE_TEXT_SIZE: f64 = 18.0;
const TABLE_TEXT_SIZE: f64 = 16.0;
const CODE_TEXT_SIZE: f64 = 14.0;
const LATEX_MAX_SIZE: f64 = 44.0;
const CODE_BACKGROUND: Color = Color::rgb(0x1e, 0x1e, 0x2e);
const CODE_FILE_NAME: Color = Color::rgb(0xa6, 0xa6, 0xc0);
const TABLE_HEADER: Color = Color::rgb(0xee, 0xf0, 0xfb);
const TABLE_BORDER: Color = Color::rgb(0xd7, 0xdb, 0xe6);
const PLACEHOLDER_FILL: Color = Color::rgb(0xf1, 0xf5, 0xf9);
const PLACEHOLDER_BORDER: Color = Color::rgb(0x94, 0xa3, 0xb8);
const VIDEO_FILL: Color = Color::rgb(0x0f, 0x17, 0x2a);
const INK: Color = Color::rgb(0x33, 0x33, 0x33);
const WHITE: Color = Color::rgb(0xff, 0xff, 0xff);
/// URLs shown on placeholders are cut to this many characters.
const MAX_SHOWN_URL_CHARS: usize = 120;

pub(crate) fn deck_from_course(course: &Course) -> Deck {
    let mut media = Vec::new();
    let slides = course
        .scenes
        .iter()
        .filter_map(|scene| match &scene.content {
            SceneContent::Slide(slide) => Some(deck_slide(scene, slide, &mut media)),
            SceneContent::Quiz(_) | SceneContent::Interactive(_) | SceneContent::Pbl(_) => None,
        })
        .collect();
    Deck {
        title: course.title.clone(),
        language: course.language.clone(),
        created_ms: course.created_at,
        slides,
        media,
    }
}

/// The scene's narration: every speech, in script order, separated by blank lines.
pub(crate) fn speaker_notes(scene: &Scene) -> String {
    scene
        .actions
        .iter()
        .filter_map(|action| match action {
            Action::Speech(speech) => Some(speech.text.trim()),
            _ => None,
        })
        .filter(|text| !text.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Text compared for "does the slide already show its title": as written, without spaces.
fn normalized(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn deck_slide(scene: &Scene, slide: &Slide, media: &mut Vec<Media>) -> DeckSlide {
    let background = slide.background.as_deref().and_then(Color::parse);
    let mut items: Vec<DeckItem> = slide
        .elements
        .iter()
        .map(|element| deck_item(element, media))
        .collect();
    let title = scene.title.trim();
    let wanted = normalized(title);
    if !wanted.is_empty() {
        let shown = items
            .iter_mut()
            .zip(&slide.elements)
            .find_map(|(item, element)| match (item, element) {
                (DeckItem::Shape(shape), SlideElement::Text(_)) => {
                    let text = shape.text.as_ref().map(body_text).unwrap_or_default();
                    normalized(&text).contains(&wanted).then_some(shape)
                }
                _ => None,
            });
        match shown {
            // The heading that already says it becomes the slide's title, for outlines and
            // screen readers.
            Some(shape) => shape.role = ShapeRole::Title,
            None => items.insert(0, title_box(title, &slide.elements, background)),
        }
    }
    DeckSlide {
        title: scene.title.clone(),
        background,
        items,
        notes: speaker_notes(scene),
    }
}

fn body_text(body: &TextBody) -> String {
    body.paragraphs
        .iter()
        .map(Paragraph::text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A box with the scene's title where the slide has room for it: above everything if there is a
/// band of space there, else below everything, else across the top on a band of the slide's
/// colour.
fn title_box(title: &str, elements: &[SlideElement], background: Option<Color>) -> DeckItem {
    let frames: Vec<Frame> = elements
        .iter()
        .map(SlideElement::frame)
        .filter(Frame::overlaps_canvas)
        .collect();
    let highest = frames
        .iter()
        .map(|f| f.top.max(0.0))
        .fold(CANVAS_HEIGHT, f64::min);
    let lowest = frames
        .iter()
        .map(|f| (f.top + f.height).min(CANVAS_HEIGHT))
        .fold(0.0, f64::max);
    let left = frames
        .iter()
        .map(|f| f.left)
        .filter(|l| (0.0..CANVAS_WIDTH / 3.0).contains(l))
        .fold(f64::MAX, f64::min);
    let left = if left == f64::MAX { 40.0 } else { left };
    let width = CANVAS_WIDTH - 2.0 * left;
    let below = CANVAS_HEIGHT - lowest;
    let (top, height, size, anchor, fill) = if frames.is_empty() {
        (20.0, 62.0, 28.0, Anchor::Top, None)
    } else if highest >= 14.0 {
        let size = (highest * 0.62).min(24.0);
        (0.0, highest, size, Anchor::Bottom, None)
    } else if below >= 14.0 {
        let size = (below * 0.5).min(24.0);
        (lowest, below, size, Anchor::Middle, None)
    } else {
        let band = Color {
            alpha: 235,
            ..background.unwrap_or(WHITE)
        };
        (0.0, 30.0, 16.0, Anchor::Middle, Some(band))
    };
    let mut style = RunStyle::sized(canvas_font_to_centipoints(size));
    style.color = Some(MUTED_TEXT);
    style.bold = true;
    let mut paragraphs = vec![Paragraph::plain(title, style, Align::Left)];
    let frame = EmuRect::from_canvas(left, top, width, height);
    fit(&mut paragraphs, frame, 0, false, 0.5);
    DeckItem::Shape(Shape {
        name: "Title".into(),
        description: String::new(),
        role: ShapeRole::Title,
        frame,
        geometry: Geometry::Rectangle,
        fill,
        outline: None,
        text: Some(TextBody {
            paragraphs,
            anchor,
            inset_emu: 0,
            wrap: false,
        }),
    })
}

fn points(emu: i64) -> f64 {
    emu as f64 / EMU_PER_POINT
}

/// Shrinks `paragraphs` to fit inside `frame` less `inset` on every side.
fn fit(paragraphs: &mut [Paragraph], frame: EmuRect, inset: i64, wrap: bool, floor: f64) {
    let width = points(frame.cx - 2 * inset).max(1.0);
    let height = points(frame.cy - 2 * inset).max(1.0);
    if wrap {
        shrink_to_fit(paragraphs, width, height, true, floor);
    } else {
        // One line that must fit across: shrink by width, then by height.
        shrink_to_fit(paragraphs, width, f64::MAX, true, floor);
        let one_line = paragraphs
            .iter()
            .all(|p| height_points(std::slice::from_ref(p), width, true) <= height);
        if !one_line {
            shrink_to_fit(paragraphs, width, height, true, floor);
        }
    }
}

fn deck_item(element: &SlideElement, media: &mut Vec<Media>) -> DeckItem {
    let frame = EmuRect::from_frame(element.frame());
    let name = |kind: &str| format!("{kind} {}", element.id());
    match element {
        SlideElement::Text(text) => text_item(text, frame, name("Text")),
        SlideElement::Shape(shape) => shape_item(shape, frame, name("Shape")),
        SlideElement::Line(line) => DeckItem::Line(Line {
            name: name("Line"),
            from: [canvas_to_emu(line.start[0]), canvas_to_emu(line.start[1])],
            to: [canvas_to_emu(line.end[0]), canvas_to_emu(line.end[1])],
            outline: Stroke {
                color: Color::parse(&line.color).unwrap_or(INK),
                width_emu: canvas_to_emu(line.width).max(3_175),
                dashed: line.style == LineStyle::Dashed,
            },
            arrows: [
                line.ends[0] == LineEnd::Arrow,
                line.ends[1] == LineEnd::Arrow,
            ],
        }),
        SlideElement::Image(image) => image_item(image, frame, name("Picture"), media),
        SlideElement::Video(video) => video_item(video, frame, name("Video")),
        SlideElement::Chart(chart) => DeckItem::Group(chart_group(chart, name("Chart"))),
        SlideElement::Table(table) => table_item(table, frame, name("Table")),
        SlideElement::Latex(latex) => latex_item(latex, frame, name("Formula")),
        SlideElement::Code(code) => code_item(code, frame, name("Code")),
    }
}

fn text_shape(
    name: String,
    role: ShapeRole,
    frame: EmuRect,
    fill: Option<Color>,
    outline: Option<Stroke>,
    body: TextBody,
) -> DeckItem {
    DeckItem::Shape(Shape {
        name,
        description: String::new(),
        role,
        frame,
        geometry: Geometry::Rectangle,
        fill,
        outline,
        text: Some(body),
    })
}

fn text_item(text: &TextElement, frame: EmuRect, name: String) -> DeckItem {
    let align = match text.align {
        TextAlign::Left => Align::Left,
        TextAlign::Center => Align::Center,
        TextAlign::Right => Align::Right,
    };
    let base = BaseStyle {
        size: canvas_font_to_centipoints(text.font_size.unwrap_or(TEXT_SIZE)),
        color: Some(
            text.color
                .as_deref()
                .and_then(Color::parse)
                .unwrap_or(SLIDE_TEXT),
        ),
        align,
        bold: false,
    };
    let mut paragraphs = markdown_paragraphs(&text.markdown, base);
    fit(&mut paragraphs, frame, 0, true, 0.55);
    let body = TextBody {
        paragraphs,
        anchor: Anchor::Top,
        inset_emu: 0,
        wrap: true,
    };
    text_shape(name, ShapeRole::TextBox, frame, None, None, body)
}

/// Dark text on light fills, white on dark ones.
fn text_on(fill: Option<Color>) -> Color {
    match fill {
        Some(fill) if fill.alpha > 128 && fill.luminance() < 0.4 => WHITE,
        _ => SLIDE_TEXT,
    }
}

fn shape_item(shape: &ShapeElement, frame: EmuRect, name: String) -> DeckItem {
    let fill = Color::parse(&shape.fill);
    let geometry = match shape.shape {
        ShapeKind::Rectangle => Geometry::Rectangle,
        ShapeKind::RoundedRectangle => Geometry::RoundedRectangle,
        ShapeKind::Ellipse => Geometry::Ellipse,
        ShapeKind::Triangle => Geometry::Triangle,
        ShapeKind::Arrow => Geometry::RightArrow,
    };
    let text = shape.text.as_deref().filter(|t| !t.trim().is_empty());
    let inset = canvas_to_emu(SHAPE_TEXT_SIZE * 0.4);
    let body = text.map(|text| {
        let mut style = RunStyle::sized(canvas_font_to_centipoints(SHAPE_TEXT_SIZE));
        style.bold = true;
        style.color = Some(text_on(fill));
        let mut paragraphs: Vec<Paragraph> = text
            .lines()
            .map(|line| Paragraph::plain(line, style, Align::Center))
            .collect();
        // Ellipses and triangles leave less room for text than their frame.
        let room = match shape.shape {
            ShapeKind::Ellipse | ShapeKind::Triangle => EmuRect {
                cx: frame.cx * 7 / 10,
                cy: frame.cy * 7 / 10,
                ..frame
            },
            _ => frame,
        };
        fit(&mut paragraphs, room, inset, true, 0.5);
        TextBody {
            paragraphs,
            anchor: Anchor::Middle,
            inset_emu: inset,
            wrap: true,
        }
    });
    DeckItem::Shape(Shape {
        name,
        description: text.unwrap_or_default().to_string(),
        role: ShapeRole::Drawing,
        frame,
        geometry,
        fill,
        outline: None,
        text: body,
    })
}

fn shown_url(url: &str) -> String {
    let url = url.trim();
    if url.chars().count() > MAX_SHOWN_URL_CHARS {
        url.chars()
            .take(MAX_SHOWN_URL_CHARS - 1)
            .collect::<String>()
            + "…"
    } else {
        url.to_string()
    }
}

/// A labelled box standing in for media the deck cannot hold.
fn placeholder(
    name: String,
    frame: EmuRect,
    lines: &[String],
    fill: Color,
    outline: Option<Stroke>,
) -> DeckItem {
    let color = text_on(Some(fill));
    let mut paragraphs: Vec<Paragraph> = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(index, line)| {
            let mut style = RunStyle::sized(canvas_font_to_centipoints(if index == 0 {
                16.0
            } else {
                12.0
            }));
            style.color = Some(color);
            style.bold = index == 0;
            Paragraph::plain(line, style, Align::Center)
        })
        .collect();
    let inset = canvas_to_emu(6.0);
    fit(&mut paragraphs, frame, inset, true, 0.4);
    let body = TextBody {
        paragraphs,
        anchor: Anchor::Middle,
        inset_emu: inset,
        wrap: true,
    };
    text_shape(name, ShapeRole::Drawing, frame, Some(fill), outline, body)
}

fn image_item(
    image: &ImageElement,
    frame: EmuRect,
    name: String,
    media: &mut Vec<Media>,
) -> DeckItem {
    if let Some((format, bytes)) = data_image(&image.src) {
        let frame = match image_size(format, &bytes) {
            Some(size) => contain(frame, size),
            None => frame,
        };
        let index = match media.iter().position(|m| m.bytes == bytes) {
            Some(index) => index,
            None => {
                media.push(Media { format, bytes });
                media.len() - 1
            }
        };
        return DeckItem::Picture(Picture {
            name,
            description: image.alt.clone(),
            frame,
            media: index,
        });
    }
    let title = if image.alt.trim().is_empty() {
        "Image".to_string()
    } else {
        image.alt.clone()
    };
    let outline = Stroke {
        color: PLACEHOLDER_BORDER,
        width_emu: 9_525,
        dashed: true,
    };
    placeholder(
        name,
        frame,
        &[title, shown_url(&image.src)],
        PLACEHOLDER_FILL,
        Some(outline),
    )
}

fn video_item(video: &VideoElement, frame: EmuRect, name: String) -> DeckItem {
    placeholder(
        name,
        frame,
        &["▶ Video".to_string(), shown_url(&video.src)],
        VIDEO_FILL,
        None,
    )
}

/// The largest rectangle of the picture's shape inside `frame`, centred (CSS `contain`).
fn contain(frame: EmuRect, (width, height): (u32, u32)) -> EmuRect {
    if width == 0 || height == 0 || frame.cx == 0 || frame.cy == 0 {
        return frame;
    }
    let picture = width as f64 / height as f64;
    let room = frame.cx as f64 / frame.cy as f64;
    if picture > room {
        let cy = (frame.cx as f64 / picture).round() as i64;
        EmuRect {
            y: frame.y + (frame.cy - cy) / 2,
            cy,
            ..frame
        }
    } else {
        let cx = (frame.cy as f64 * picture).round() as i64;
        EmuRect {
            x: frame.x + (frame.cx - cx) / 2,
            cx,
            ..frame
        }
    }
}

/// The picture in a `data:image/png|jpeg|gif;base64,` URI, when its bytes are one.
pub(crate) fn data_image(src: &str) -> Option<(ImageFormat, Vec<u8>)> {
    let src = src.trim();
    let scheme = src.get(..5)?;
    if !scheme.eq_ignore_ascii_case("data:") {
        return None;
    }
    let (header, payload) = src[5..].split_once(',')?;
    let header = header.to_ascii_lowercase();
    let mut parts = header.split(';').map(str::trim);
    let format = match parts.next()? {
        "image/png" => ImageFormat::Png,
        "image/jpeg" | "image/jpg" => ImageFormat::Jpeg,
        "image/gif" => ImageFormat::Gif,
        _ => return None,
    };
    if !parts.any(|p| p == "base64") {
        return None;
    }
    let bytes = crate::base64::decode(payload)?;
    let magic_ok = match format {
        ImageFormat::Png => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        ImageFormat::Jpeg => bytes.starts_with(&[0xff, 0xd8, 0xff]),
        ImageFormat::Gif => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
    };
    magic_ok.then_some((format, bytes))
}

/// Width and height in pixels, read from the image's header.
pub(crate) fn image_size(format: ImageFormat, bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |at: usize| Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]) as u32);
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    match format {
        ImageFormat::Png => Some((be32(16)?, be32(20)?)),
        ImageFormat::Gif => {
            let le16 =
                |at: usize| Some(u16::from_le_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]) as u32);
            Some((le16(6)?, le16(8)?))
        }
        ImageFormat::Jpeg => {
            let mut at = 2;
            while at + 9 < bytes.len() {
                if bytes[at] != 0xff {
                    return None;
                }
                let marker = bytes[at + 1];
                if marker == 0xff {
                    at += 1;
                    continue;
                }
                let is_frame =
                    matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
                if is_frame {
                    return Some((be16(at + 7)?, be16(at + 5)?));
                }
                at += 2 + be16(at + 2)? as usize;
            }
            None
        }
    }
}

fn table_item(table: &TableElement, frame: EmuRect, name: String) -> DeckItem {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return placeholder(name, frame, &[], WHITE, None);
    }
    let size = canvas_font_to_centipoints(TABLE_TEXT_SIZE);
    // Wider columns for longer text, but none starved.
    let weights: Vec<f64> = (0..columns)
        .map(|c| {
            let longest = table
                .rows
                .iter()
                .filter_map(|row| row.get(c))
                .map(|cell| width_em(cell, Typeface::Body, false))
                .fold(0.0, f64::max);
            longest.clamp(3.0, 24.0)
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let mut widths: Vec<i64> = weights
        .iter()
        .map(|w| (frame.cx as f64 * w / total).floor() as i64)
        .collect();
    let assigned: i64 = widths.iter().sum();
    if let Some(last) = widths.last_mut() {
        *last += frame.cx - assigned;
    }
    let cell_style = |header: bool| {
        let mut style = RunStyle::sized(size);
        style.bold = header;
        style.color = Some(SLIDE_TEXT);
        style
    };
    let mut rows: Vec<Vec<Vec<Paragraph>>> = table
        .rows
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let style = cell_style(table.header && r == 0);
            (0..columns)
                .map(|c| {
                    let text = row.get(c).map(String::as_str).unwrap_or("");
                    text.lines()
                        .map(|line| Paragraph::plain(line, style, Align::Left))
                        .collect()
                })
                .collect()
        })
        .collect();
    // Shrink the whole table until every row's tallest cell fits the table's height.
    let height = points(frame.cy);
    let margin_x = points(2 * TABLE_CELL_MARGIN_X_EMU);
    let margin_y = points(2 * TABLE_CELL_MARGIN_Y_EMU);
    let table_height = |rows: &[Vec<Vec<Paragraph>>]| -> f64 {
        rows.iter()
            .map(|row| {
                row.iter()
                    .zip(&widths)
                    .map(|(cell, width)| {
                        height_points(cell, (points(*width) - margin_x).max(1.0), true)
                            .max(size as f64 / 100.0 * 1.2)
                            + margin_y
                    })
                    .fold(0.0, f64::max)
            })
            .sum()
    };
    let mut scale = 1.0;
    while table_height(&rows) > height && scale > 0.5 {
        scale -= 0.05;
        let scaled = (size as f64 * scale).round() as u32;
        for cell in rows.iter_mut().flatten().flatten() {
            for run in &mut cell.runs {
                run.style.size = scaled;
            }
        }
    }
    DeckItem::Table(Table {
        name,
        frame,
        row_height: frame.cy / table.rows.len().max(1) as i64,
        columns: widths,
        rows,
        header: table.header,
        header_fill: TABLE_HEADER,
        border: TABLE_BORDER,
    })
}

fn latex_item(latex: &LatexElement, frame: EmuRect, name: String) -> DeckItem {
    let text = latex_to_text(&latex.latex);
    let width = latex.width.max(1.0);
    let em = width_em(&text, Typeface::Math, false).max(1.0) * 1.1;
    let size = (latex.height * 0.45)
        .min(LATEX_MAX_SIZE)
        .min(width / em)
        .max(10.0);
    let mut style = RunStyle::sized(canvas_font_to_centipoints(size));
    style.typeface = Typeface::Math;
    style.color = Some(
        latex
            .color
            .as_deref()
            .and_then(Color::parse)
            .unwrap_or(SLIDE_TEXT),
    );
    let mut paragraphs = vec![Paragraph::plain(&text, style, Align::Center)];
    fit(&mut paragraphs, frame, 0, true, 0.5);
    let body = TextBody {
        paragraphs,
        anchor: Anchor::Middle,
        inset_emu: 0,
        wrap: true,
    };
    let mut item = text_shape(name, ShapeRole::TextBox, frame, None, None, body);
    if let DeckItem::Shape(shape) = &mut item {
        shape.description = latex.latex.clone();
    }
    item
}

fn code_item(code: &CodeElement, frame: EmuRect, name: String) -> DeckItem {
    let size = canvas_font_to_centipoints(CODE_TEXT_SIZE);
    let mut paragraphs = Vec::new();
    if let Some(file) = code.file_name.as_deref().filter(|f| !f.trim().is_empty()) {
        let mut style = RunStyle::sized(size * 85 / 100);
        style.color = Some(CODE_FILE_NAME);
        style.typeface = Typeface::Monospace;
        paragraphs.push(Paragraph::plain(file, style, Align::Left));
    }
    paragraphs.extend(code_paragraphs(&code.language, &code.code, size));
    let inset = canvas_to_emu(CODE_TEXT_SIZE * 0.8);
    fit(&mut paragraphs, frame, inset, true, 0.5);
    let body = TextBody {
        paragraphs,
        anchor: Anchor::Top,
        inset_emu: inset,
        wrap: true,
    };
    text_shape(
        name,
        ShapeRole::TextBox,
        frame,
        Some(CODE_BACKGROUND),
        None,
        body,
    )
}
