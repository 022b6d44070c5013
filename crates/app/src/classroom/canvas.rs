//! The 16:9 stage: a slide's elements, the whiteboard over it, and the teacher's effects.
//!
//! Everything is positioned in percentages of the 1000 × 562.5 canvas and sized in container
//! units (`cqw`), so the stage scales to any width with CSS alone: no measuring, no reflow
//! work in Rust. LLM-written text only reaches the page through aula-render's safe markup.

use aula_course::action::{LineEnd, LineStyle, WhiteboardShape};
use aula_course::scene::{ShapeKind, TextAlign};
use aula_course::{SlideElement, CANVAS_HEIGHT, CANVAS_WIDTH};
use aula_player::{BoardContent, BoardItem, Rect};
use aula_render::{approx_width_em, escape_html, markdown_to_html};
use leptos::prelude::*;

use super::lecture::Lecture;
use super::typeset::{chart_html, code_html, latex_html};

fn pct_x(x: f64) -> f64 {
    x / CANVAS_WIDTH * 100.0
}

fn pct_y(y: f64) -> f64 {
    y / CANVAS_HEIGHT * 100.0
}

/// `left/top/width/height` in percent of the canvas.
fn place(left: f64, top: f64, width: f64, height: f64) -> String {
    format!(
        "left:{:.3}%;top:{:.3}%;width:{:.3}%;height:{:.3}%;",
        pct_x(left),
        pct_y(top),
        pct_x(width),
        pct_y(height)
    )
}

/// A canvas font size (px at 1000 wide) in container-width units.
fn font(px: f64) -> String {
    format!("font-size:{:.3}cqw;", px / 10.0)
}

/// Only colours the course validator accepts reach a style attribute; anything else falls back.
fn colour(value: &str, fallback: &'static str) -> String {
    if aula_course::is_color(value) {
        value.to_owned()
    } else {
        fallback.to_owned()
    }
}

/// Media URLs a course may use: https, site-relative paths and inline images.
fn safe_src(src: &str) -> Option<String> {
    let lower = src.trim().to_ascii_lowercase();
    let allowed = lower.starts_with("https://")
        || lower.starts_with("http://")
        || (lower.starts_with('/') && !lower.starts_with("//"))
        || lower.starts_with("data:image/");
    allowed.then(|| src.trim().to_owned())
}

/// The font size (slide pixels) that fits `latex` in a `width` × `height` box: as tall as the
/// box allows, narrower when the formula is long.
fn latex_font(latex: &str, width: f64, height: f64, tallest: f64) -> String {
    let fits_width = width / approx_width_em(latex).max(1.0);
    font((height * 0.45).min(tallest).min(fits_width).max(10.0))
}

fn shape_svg(kind: ShapeKind, fill: &str) -> String {
    let fill = colour(fill, "#5b9bd5");
    let body = match kind {
        ShapeKind::Rectangle => "<rect x=\"0\" y=\"0\" width=\"100\" height=\"100\"/>".to_owned(),
        ShapeKind::RoundedRectangle => {
            "<rect x=\"0\" y=\"0\" width=\"100\" height=\"100\" rx=\"12\"/>".to_owned()
        }
        ShapeKind::Ellipse => "<ellipse cx=\"50\" cy=\"50\" rx=\"50\" ry=\"50\"/>".to_owned(),
        ShapeKind::Triangle => "<polygon points=\"50,0 100,100 0,100\"/>".to_owned(),
        ShapeKind::Arrow => {
            "<polygon points=\"0,30 65,30 65,0 100,50 65,100 65,70 0,70\"/>".to_owned()
        }
    };
    format!(
        "<svg viewBox=\"0 0 100 100\" preserveAspectRatio=\"none\" fill=\"{fill}\">{body}</svg>"
    )
}

/// A straight line or arrow in canvas coordinates, drawn `progress` (0–1) of the way.
struct LineSpec<'a> {
    id: &'a str,
    start: [f64; 2],
    end: [f64; 2],
    color: &'a str,
    width: f64,
    style: LineStyle,
    ends: [LineEnd; 2],
}

fn line_svg(line: LineSpec<'_>, progress: f64) -> String {
    let LineSpec {
        id,
        start,
        end,
        color,
        width,
        style,
        ends,
    } = line;
    let color = colour(color, "#333333");
    let (x1, y1, x2, y2) = (start[0], start[1], end[0], end[1]);
    let length = ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt().max(1.0);
    let dash = match style {
        LineStyle::Solid => String::new(),
        LineStyle::Dashed => format!("stroke-dasharray=\"{:.1} {:.1}\"", width * 4.0, width * 3.0),
    };
    // Drawing: reveal the stroke from the start (dashed lines fade in instead).
    let reveal = match style {
        LineStyle::Solid => format!(
            "stroke-dasharray=\"{length:.1}\" stroke-dashoffset=\"{:.1}\"",
            length * (1.0 - progress)
        ),
        LineStyle::Dashed => format!("opacity=\"{progress:.2}\""),
    };
    let marker = |which: &str| format!("url(#arrow-{which}-{id})");
    let start_marker = if ends[0] == LineEnd::Arrow {
        format!("marker-start=\"{}\"", marker("s"))
    } else {
        String::new()
    };
    let end_marker = if ends[1] == LineEnd::Arrow && progress > 0.95 {
        format!("marker-end=\"{}\"", marker("e"))
    } else {
        String::new()
    };
    let id = escape_html(id);
    format!(
        "<svg class=\"line-svg\" viewBox=\"0 0 {CANVAS_WIDTH} {CANVAS_HEIGHT}\" preserveAspectRatio=\"none\">\
         <defs>\
         <marker id=\"arrow-e-{id}\" viewBox=\"0 0 10 10\" refX=\"8\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{color}\"/></marker>\
         <marker id=\"arrow-s-{id}\" viewBox=\"0 0 10 10\" refX=\"2\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{color}\"/></marker>\
         </defs>\
         <line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{color}\" stroke-width=\"{width:.1}\" stroke-linecap=\"round\" {dash} {reveal} {start_marker} {end_marker}/>\
         </svg>"
    )
}

fn table_html(rows: &[Vec<String>], header: bool) -> String {
    let mut html = String::from("<table>");
    for (index, row) in rows.iter().enumerate() {
        let cell = if header && index == 0 { "th" } else { "td" };
        html.push_str("<tr>");
        for text in row {
            html.push_str(&format!("<{cell}>{}</{cell}>", escape_html(text)));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>");
    html
}

/// One slide element as markup, positioned on the canvas. A slide's elements never change while
/// it shows, so they are written once as a string: one view type instead of one per kind.
fn slide_element_html(element: &SlideElement) -> String {
    let frame = element.frame();
    let style = place(frame.left, frame.top, frame.width, frame.height);
    let id = escape_html(element.id());
    let div = |kind: &str, style: &str, body: &str| {
        format!(
            "<div class=\"el el-{kind}\" data-el=\"{id}\" style=\"{}\">{body}</div>",
            escape_html(style)
        )
    };
    match element {
        SlideElement::Text(text) => {
            let align = match text.align {
                TextAlign::Left => "left",
                TextAlign::Center => "center",
                TextAlign::Right => "right",
            };
            let style = format!(
                "{style}{}text-align:{align};color:{};",
                font(text.font_size.unwrap_or(20.0)),
                colour(text.color.as_deref().unwrap_or("inherit"), "inherit")
            );
            div("text", &style, &markdown_to_html(&text.markdown))
        }
        SlideElement::Image(image) => match safe_src(&image.src) {
            Some(src) => format!(
                "<img class=\"el el-image\" data-el=\"{id}\" style=\"{style}\" src=\"{}\" alt=\"{}\">",
                escape_html(&src),
                escape_html(&image.alt)
            ),
            None => format!(
                "<div class=\"el el-image missing\" data-el=\"{id}\" style=\"{style}\" role=\"img\">{}</div>",
                escape_html(&image.alt)
            ),
        },
        SlideElement::Shape(shape) => {
            let label = shape.text.as_deref().map(escape_html).unwrap_or_default();
            let body = format!(
                "<div class=\"shape-art\">{}</div><span class=\"shape-text\" style=\"{}\">{label}</span>",
                shape_svg(shape.shape, &shape.fill),
                font(18.0)
            );
            div("shape", &style, &body)
        }
        SlideElement::Video(video) => format!(
            "<video class=\"el el-video\" data-el=\"{id}\" style=\"{style}\" src=\"{}\" poster=\"{}\" controls preload=\"metadata\"></video>",
            escape_html(&safe_src(&video.src).unwrap_or_default()),
            escape_html(&video.poster.as_deref().and_then(safe_src).unwrap_or_default())
        ),
        SlideElement::Line(line) => {
            let spec = LineSpec {
                id: &line.id,
                start: line.start,
                end: line.end,
                color: &line.color,
                width: line.width,
                style: line.style,
                ends: line.ends,
            };
            format!("<div class=\"el el-line\" data-el=\"{id}\">{}</div>", line_svg(spec, 1.0))
        }
        SlideElement::Chart(chart) => div(
            "chart",
            &style,
            &chart_html(chart.chart_type, &chart.data, &chart.colors, chart.width, chart.height),
        ),
        SlideElement::Table(table) => div("table", &format!("{style}{}", font(16.0)), &table_html(&table.rows, table.header)),
        SlideElement::Latex(latex) => {
            let style = format!(
                "{style}{}color:{};",
                latex_font(&latex.latex, frame.width, frame.height, 44.0),
                colour(latex.color.as_deref().unwrap_or("inherit"), "inherit")
            );
            div("latex", &style, &latex_html(&latex.latex, true))
        }
        SlideElement::Code(code) => {
            let name = code
                .file_name
                .as_deref()
                .map(|n| format!("<div class=\"code-file\">{}</div>", escape_html(n)))
                .unwrap_or_default();
            let body = format!("{name}<pre>{}</pre>", code_html(&code.language, &code.code));
            div("code", &format!("{style}{}", font(14.0)), &body)
        }
    }
}

/// The slide of the current scene: its elements, the whiteboard and the effects on top.
#[component]
pub fn SlideCanvas(session: Lecture, scene_index: usize) -> impl IntoView {
    let (background, elements) =
        session.course(|c| match c.scenes.get(scene_index).map(|s| &s.content) {
            Some(aula_course::SceneContent::Slide(slide)) => {
                (slide.background.clone(), slide.elements.clone())
            }
            _ => (None, Vec::new()),
        });
    let background = background
        .map(|b| format!("background:{};", colour(&b, "var(--slide-bg)")))
        .unwrap_or_default();
    let frames: Vec<(String, aula_course::scene::Frame)> = elements
        .iter()
        .map(|e| (e.id().to_owned(), e.frame()))
        .collect();
    let frames = StoredValue::new(frames);
    let frame_of =
        move |id: &str| frames.with_value(|f| f.iter().find(|(i, _)| i == id).map(|(_, f)| *f));

    // Written again only if a formula, chart or code waited for the typesetter (`typeset`).
    let elements = StoredValue::new(elements);
    let elements_html =
        move || elements.with_value(|e| e.iter().map(slide_element_html).collect::<String>());
    let stage = session.stage;
    let spotlight = Memo::new(move |_| stage.with(|s| s.spotlight.clone()));
    let laser = Memo::new(move |_| stage.with(|s| s.laser.clone()));

    view! {
        <div class="canvas" style=background data-testid="slide-canvas">
            <div class="slide-elements" inner_html=elements_html></div>
            <Whiteboard session=session/>
            {move || spotlight.get().and_then(|(id, dim)| {
                let f = frame_of(&id)?;
                let style = format!("{}--dim:{dim:.2};", place(f.left - 6.0, f.top - 6.0, f.width + 12.0, f.height + 12.0));
                Some(view! { <div class="spotlight" data-testid="spotlight" data-target=id style=style></div> })
            })}
            {move || laser.get().and_then(|(id, color)| {
                let f = frame_of(&id)?;
                let style = format!(
                    "left:{:.3}%;top:{:.3}%;--laser:{};",
                    pct_x(f.left + f.width / 2.0),
                    pct_y(f.top + f.height / 2.0),
                    colour(&color, "#ff0000")
                );
                Some(view! { <div class="laser" data-testid="laser" data-target=id style=style></div> })
            })}
        </div>
    }
}

fn board_item_html(item: &BoardItem) -> (String, String) {
    let Rect {
        x,
        y,
        width,
        height,
    } = item.frame;
    let p = item.progress.clamp(0.0, 1.0);
    let mut style = place(x, y, width, height);
    style.push_str(&format!("--p:{p:.3};"));
    let html = match &item.content {
        BoardContent::Text(text) => {
            style.push_str(&format!(
                "{}color:{};",
                font(text.font_size),
                colour(&text.color, "#333333")
            ));
            markdown_to_html(&text.content)
        }
        BoardContent::Shape(shape) => {
            let kind = match shape.shape {
                WhiteboardShape::Rectangle => ShapeKind::Rectangle,
                WhiteboardShape::Circle => ShapeKind::Ellipse,
                WhiteboardShape::Triangle => ShapeKind::Triangle,
            };
            shape_svg(kind, &shape.fill_color)
        }
        BoardContent::Chart(chart) => chart_html(
            chart.chart_type,
            &chart.data,
            &chart.theme_colors,
            chart.width,
            chart.height,
        ),
        BoardContent::Latex(latex) => {
            style.push_str(&format!(
                "{}color:{};",
                latex_font(&latex.latex, width, f64::INFINITY, 30.0),
                colour(&latex.color, "#111111")
            ));
            latex_html(&latex.latex, true)
        }
        BoardContent::Table(table) => {
            style.push_str(&font(16.0));
            table_html(&table.data, true)
        }
        BoardContent::Line(line) => {
            // A line draws in canvas coordinates over the whole board.
            style = "left:0;top:0;width:100%;height:100%;".to_owned();
            line_svg(
                LineSpec {
                    id: &item.element_id,
                    start: [line.start_x, line.start_y],
                    end: [line.end_x, line.end_y],
                    color: &line.color,
                    width: line.width,
                    style: line.style,
                    ends: line.ends,
                },
                p,
            )
        }
        BoardContent::Code {
            language,
            file_name,
            lines,
        } => {
            style.push_str(&font(14.0));
            let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
            let shown = ((lines.len() as f64) * p).ceil() as usize;
            let body = code_html(language, &text[..shown.min(text.len())].join("\n"));
            let name = file_name
                .as_deref()
                .map(|n| format!("<div class=\"code-file\">{}</div>", escape_html(n)))
                .unwrap_or_default();
            format!("{name}<pre>{body}</pre>")
        }
    };
    (style, html)
}

fn board_kind(content: &BoardContent) -> &'static str {
    match content {
        BoardContent::Text(_) => "text",
        BoardContent::Shape(_) => "shape",
        BoardContent::Chart(_) => "chart",
        BoardContent::Latex(_) => "latex",
        BoardContent::Table(_) => "table",
        BoardContent::Line(_) => "line",
        BoardContent::Code { .. } => "code",
    }
}

/// The whiteboard over the slide; items draw themselves as their progress goes 0 → 1.
#[component]
fn Whiteboard(session: Lecture) -> impl IntoView {
    let stage = session.stage;
    let open = Memo::new(move |_| stage.with(|s| s.board_open));
    let items = Memo::new(move |_| stage.with(|s| s.board.clone()));
    view! {
        <div class="board" class:open=open data-testid="whiteboard" aria-hidden=move || (!open.get()).to_string()>
            <For each=move || items.get() key=|item| item.element_id.clone() let:item>
                {
                    let id = item.element_id.clone();
                    let kind = board_kind(&item.content);
                    // Memos: while an item draws only its style changes, so its markup is not
                    // rewritten every frame.
                    let rendered = Memo::new(move |_| {
                        items.with(|all| all.iter().find(|i| i.element_id == id).map(board_item_html)).unwrap_or_default()
                    });
                    let style = Memo::new(move |_| rendered.with(|(s, _)| s.clone()));
                    let html = Memo::new(move |_| rendered.with(|(_, h)| h.clone()));
                    view! { <div class=format!("board-item board-{kind}") data-testid="board-item" style=style inner_html=html></div> }
                }
            </For>
        </div>
    }
}
