//! Slide elements: Aula's nine kinds and OpenMAIC's ten (PPTist's, plus chart and code).

use aula_course::action::{defaults, ChartData, ChartKind, LineEnd, LineStyle};
use aula_course::scene::{
    ChartElement, CodeElement, ImageElement, LatexElement, LineElement, ShapeElement, ShapeKind,
    TableElement, TextAlign, TextElement, VideoElement,
};
use aula_course::SlideElement;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::text::{html_to_markdown, html_to_plain, plain_to_html, style_value};
use super::{
    get_array, get_bool, get_f64, get_obj, get_str, same_json, split_aula, str_or_empty, Links,
    LinksOnly, Notes, Obj, Resolve, AULA_KEY, POSTER_SUFFIX,
};

/// OpenMAIC's default series colours; an Aula chart without colours gets them.
const THEME_COLORS: [&str; 5] = ["#5b9bd5", "#ed7d31", "#a5a5a5", "#ffc000", "#4472c4"];
const FONT_NAME: &str = "Microsoft YaHei";

/// Shape outlines Aula writes, in a 200 × 200 view box.
const SHAPES: [(ShapeKind, &str, Option<&str>); 5] = [
    (ShapeKind::Rectangle, "M 0 0 L 200 0 L 200 200 L 0 200 Z", None),
    (
        ShapeKind::RoundedRectangle,
        "M 20 0 L 180 0 Q 200 0 200 20 L 200 180 Q 200 200 180 200 L 20 200 Q 0 200 0 180 L 0 20 Q 0 0 20 0 Z",
        Some("roundRect"),
    ),
    (
        ShapeKind::Ellipse,
        "M 100 0 A 100 100 0 1 1 100 200 A 100 100 0 1 1 100 0 Z",
        None,
    ),
    (ShapeKind::Triangle, "M 100 0 L 200 200 L 0 200 Z", Some("triangle")),
    (
        ShapeKind::Arrow,
        "M 0 50 L 120 50 L 120 0 L 200 100 L 120 200 L 120 150 L 0 150 Z",
        None,
    ),
];

/// `native` as written, plus the Aula original when reading `native` back would not give it.
pub(super) fn with_original<T: Serialize + PartialEq>(
    mut native: Obj,
    original: &T,
    read_back: impl FnOnce(&Obj, &mut Vec<String>) -> Option<T>,
) -> (Obj, bool) {
    let mut scratch = Vec::new();
    let back = read_back(&native, &mut scratch);
    if back.as_ref() == Some(original) && scratch.is_empty() {
        return (native, false);
    }
    if let Ok(value) = serde_json::to_value(original) {
        native.insert(AULA_KEY.into(), value);
    }
    (native, true)
}

/// The Aula original an object carries, if the object's OpenMAIC fields are still exactly what
/// Aula writes for it.
pub(super) fn trusted_original<T: DeserializeOwned>(
    native: &Obj,
    write: impl FnOnce(&T) -> Obj,
) -> Option<T> {
    let (plain, original) = split_aula(native);
    let original: T = serde_json::from_value(original?.clone()).ok()?;
    same_json(&Value::Object(write(&original)), &plain).then_some(original)
}

pub(super) fn element_to_archive(element: &SlideElement, links: &Links) -> (Obj, bool) {
    with_original(to_native(element, links), element, |native, notes| {
        let mut notes = Notes {
            at: String::new(),
            out: notes,
        };
        from_native(native, &mut LinksOnly(links), &mut notes, 1.0)
    })
}

/// Reads one element of an OpenMAIC slide; `scale` maps its viewport onto Aula's 1000 wide.
pub(super) fn element_from_archive(
    native: &Obj,
    resolve: &mut dyn Resolve,
    notes: &mut Notes,
    scale: f64,
) -> Option<SlideElement> {
    // Converting also carries the element's media along, so it runs even for a trusted original.
    let mut scratch = Vec::new();
    let converted = {
        let mut quiet = Notes {
            at: notes.at.clone(),
            out: &mut scratch,
        };
        from_native(native, resolve, &mut quiet, scale)
    };
    let links = resolve.links();
    if let Some(original) = trusted_original(native, |e: &SlideElement| to_native(e, links)) {
        return Some(original);
    }
    notes.out.extend(scratch);
    converted
}

fn base(id: &str, left: f64, top: f64, width: f64, height: f64) -> Obj {
    let mut o = Obj::new();
    o.insert("id".into(), json!(id));
    o.insert("left".into(), json!(left));
    o.insert("top".into(), json!(top));
    o.insert("width".into(), json!(width));
    o.insert("height".into(), json!(height));
    o.insert("rotate".into(), json!(0));
    o
}

fn put(o: &mut Obj, key: &str, value: Value) {
    o.insert(key.into(), value);
}

/// The HTML Aula writes for a text element.
fn text_html(markdown: &str, font_size: Option<f64>, align: TextAlign) -> String {
    let mut style = Vec::new();
    if let Some(size) = font_size {
        style.push(format!("font-size: {size}px"));
    }
    match align {
        TextAlign::Left => {}
        TextAlign::Center => style.push("text-align: center".into()),
        TextAlign::Right => style.push("text-align: right".into()),
    }
    let body = aula_render::markdown_to_html(markdown);
    if style.is_empty() {
        body
    } else {
        format!("<div style=\"{}\">{body}</div>", style.join("; "))
    }
}

fn to_native(element: &SlideElement, links: &Links) -> Obj {
    let mut o;
    match element {
        SlideElement::Text(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            put(
                &mut o,
                "content",
                json!(text_html(&e.markdown, e.font_size, e.align)),
            );
            put(&mut o, "defaultFontName", json!(FONT_NAME));
            put(
                &mut o,
                "defaultColor",
                json!(e.color.clone().unwrap_or_else(defaults::ink)),
            );
        }
        SlideElement::Image(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            put(&mut o, "fixedRatio", json!(true));
            put(&mut o, "src", json!(links.native_src(&e.src)));
        }
        SlideElement::Shape(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            let (_, path, formula) = SHAPES
                .iter()
                .find(|(kind, _, _)| *kind == e.shape)
                .copied()
                .unwrap_or(SHAPES[0]);
            put(&mut o, "viewBox", json!([200, 200]));
            put(&mut o, "path", json!(path));
            if let Some(formula) = formula {
                put(&mut o, "pathFormula", json!(formula));
            }
            put(&mut o, "fixedRatio", json!(false));
            put(&mut o, "fill", json!(e.fill));
            if let Some(text) = &e.text {
                put(
                    &mut o,
                    "text",
                    json!({
                        "content": plain_to_html(text),
                        "defaultFontName": FONT_NAME,
                        "defaultColor": defaults::ink(),
                        "align": "middle",
                    }),
                );
            }
        }
        SlideElement::Video(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            put(&mut o, "src", json!(links.native_src(&e.src)));
            put(&mut o, "autoplay", json!(false));
            if let Some(poster) = &e.poster {
                if !links.native_ref.contains_key(poster) {
                    put(&mut o, "poster", json!(poster));
                }
            }
        }
        SlideElement::Line(e) => {
            let left = e.start[0].min(e.end[0]);
            let top = e.start[1].min(e.end[1]);
            o = Obj::new();
            put(&mut o, "id", json!(e.id));
            put(&mut o, "left", json!(left));
            put(&mut o, "top", json!(top));
            put(&mut o, "width", json!(e.width));
            put(
                &mut o,
                "start",
                json!([e.start[0] - left, e.start[1] - top]),
            );
            put(&mut o, "end", json!([e.end[0] - left, e.end[1] - top]));
            put(&mut o, "style", json!(line_style_name(e.style)));
            put(&mut o, "color", json!(e.color));
            put(&mut o, "points", json!(e.ends.map(line_end_name)));
        }
        SlideElement::Chart(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            put(&mut o, "chartType", json!(e.chart_type));
            put(&mut o, "data", json!(e.data));
            let colors: Vec<String> = if e.colors.is_empty() {
                THEME_COLORS.iter().map(|c| c.to_string()).collect()
            } else {
                e.colors.clone()
            };
            put(&mut o, "themeColors", json!(colors));
        }
        SlideElement::Table(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            let columns = e.rows.first().map_or(0, Vec::len).max(1);
            put(
                &mut o,
                "colWidths",
                json!(vec![1.0 / columns as f64; columns]),
            );
            put(&mut o, "cellMinHeight", json!(36));
            put(
                &mut o,
                "outline",
                json!({"width": 2, "style": "solid", "color": "#eeece1"}),
            );
            put(
                &mut o,
                "theme",
                json!({"color": THEME_COLORS[0], "rowHeader": e.header, "rowFooter": false,
                       "colHeader": false, "colFooter": false}),
            );
            let data: Vec<Vec<Value>> = e
                .rows
                .iter()
                .enumerate()
                .map(|(r, row)| {
                    row.iter()
                        .enumerate()
                        .map(|(c, text)| {
                            json!({"id": format!("{}-r{r}c{c}", e.id), "colspan": 1, "rowspan": 1,
                                   "text": text})
                        })
                        .collect()
                })
                .collect();
            put(&mut o, "data", json!(data));
        }
        SlideElement::Latex(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            put(&mut o, "latex", json!(e.latex));
            // OpenMAIC shows `html`; MathML renders in every current browser.
            let html = aula_render::latex_to_mathml(&e.latex, true).unwrap_or_default();
            put(&mut o, "html", json!(html));
            if let Some(color) = &e.color {
                put(&mut o, "color", json!(color));
            }
            put(&mut o, "fixedRatio", json!(true));
            put(&mut o, "align", json!("center"));
        }
        SlideElement::Code(e) => {
            o = base(&e.id, e.left, e.top, e.width, e.height);
            put(&mut o, "language", json!(e.language));
            let lines: Vec<Value> = e
                .code
                .split('\n')
                .enumerate()
                .map(|(i, line)| json!({"id": format!("L{}", i + 1), "content": line}))
                .collect();
            put(&mut o, "lines", json!(lines));
            if let Some(name) = &e.file_name {
                put(&mut o, "fileName", json!(name));
            }
            put(&mut o, "showLineNumbers", json!(true));
            put(&mut o, "fontSize", json!(14));
        }
    }
    let mut tagged = Obj::new();
    tagged.insert("type".into(), json!(element.kind_name()));
    tagged.extend(o);
    tagged
}

fn line_style_name(style: LineStyle) -> &'static str {
    match style {
        LineStyle::Solid => "solid",
        LineStyle::Dashed => "dashed",
    }
}

fn line_end_name(end: LineEnd) -> &'static str {
    match end {
        LineEnd::Plain => "",
        LineEnd::Arrow => "arrow",
    }
}

/// A colour Aula can draw, or `None`.
fn color(o: &Obj, key: &str) -> Option<String> {
    get_str(o, key)
        .map(str::trim)
        .filter(|c| aula_course::is_color(c))
        .map(str::to_string)
}

fn from_native(
    o: &Obj,
    resolve: &mut dyn Resolve,
    notes: &mut Notes,
    scale: f64,
) -> Option<SlideElement> {
    let kind = get_str(o, "type").unwrap_or("");
    let id = str_or_empty(o, "id");
    let what = format!("{kind} element \"{id}\"");
    let n = |key: &str| get_f64(o, key).unwrap_or(0.0) * scale;
    let (left, top, width, height) = (n("left"), n("top"), n("width"), n("height"));
    if let Some(rotate) = get_f64(o, "rotate").filter(|r| *r % 360.0 != 0.0) {
        notes.add(format!(
            "{what} is shown unrotated (Aula does not rotate elements; it was turned {rotate}°)"
        ));
    }
    if get_obj(o, "link").is_some() {
        notes.add(format!("{what}: its link (Aula elements do not link)"));
    }
    let element = match kind {
        "text" => {
            let content = str_or_empty(o, "content");
            let markdown = html_to_markdown(&content);
            let font_size = style_value(&content, "font-size")
                .and_then(|v| v.strip_suffix("px"))
                .and_then(|v| v.trim().parse::<f64>().ok())
                .map(|v| v * scale);
            let align = match style_value(&content, "text-align") {
                Some("center") => TextAlign::Center,
                Some("right") => TextAlign::Right,
                _ => TextAlign::Left,
            };
            if get_str(o, "fill").is_some_and(|f| !f.is_empty()) {
                notes.add(format!("{what}: its background fill"));
            }
            SlideElement::Text(TextElement {
                id,
                left,
                top,
                width,
                height,
                markdown,
                font_size,
                color: color(o, "defaultColor"),
                align,
            })
        }
        "image" => {
            let src = str_or_empty(o, "src");
            let src = match resolve.media(&src, &id) {
                Ok(src) => src,
                Err(why) => {
                    notes.add(format!("{what} ({why})"));
                    return None;
                }
            };
            if o.contains_key("clip")
                || o.contains_key("filters")
                || get_bool(o, "flipH")
                || get_bool(o, "flipV")
            {
                notes.add(format!(
                    "{what}: its crop, filters or flip (shown as the plain picture)"
                ));
            }
            SlideElement::Image(ImageElement {
                id,
                left,
                top,
                width,
                height,
                src,
                alt: String::new(),
            })
        }
        "shape" => {
            let mut fill = color(o, "fill");
            if let Some(gradient) = get_obj(o, "gradient") {
                let first = get_array(gradient, "colors")
                    .first()
                    .and_then(Value::as_object)
                    .and_then(|c| color(c, "color"));
                if first.is_some() {
                    fill = first;
                }
                notes.add(format!(
                    "{what}: its gradient fill (filled with its first colour)"
                ));
            }
            let text = get_obj(o, "text")
                .map(|t| html_to_plain(get_str(t, "content").unwrap_or_default()))
                .filter(|t| !t.is_empty());
            SlideElement::Shape(ShapeElement {
                shape: shape_kind(o, &what, notes),
                id,
                left,
                top,
                width,
                height,
                fill: fill.unwrap_or_else(defaults::shape_fill),
                text,
            })
        }
        "video" => {
            let native_src = str_or_empty(o, "src");
            let src = match resolve.media(&native_src, &id) {
                Ok(src) => src,
                Err(why) => {
                    notes.add(format!("{what} ({why})"));
                    return None;
                }
            };
            let poster = match get_str(o, "poster").filter(|p| !p.is_empty()) {
                Some(poster) => resolve.media(poster, &format!("{id}-poster")).ok(),
                None => resolve.poster(&native_src),
            };
            SlideElement::Video(VideoElement {
                id,
                left,
                top,
                width,
                height,
                src,
                poster,
            })
        }
        "line" => {
            let point = |key: &str| -> [f64; 2] {
                let xy = get_array(o, key);
                let at = |i: usize| xy.get(i).and_then(Value::as_f64).unwrap_or(0.0);
                [
                    (get_f64(o, "left").unwrap_or(0.0) + at(0)) * scale,
                    (get_f64(o, "top").unwrap_or(0.0) + at(1)) * scale,
                ]
            };
            let style = match get_str(o, "style") {
                Some("dashed") => LineStyle::Dashed,
                Some("dotted") => {
                    notes.add(format!("{what}: dotted, drawn dashed"));
                    LineStyle::Dashed
                }
                _ => LineStyle::Solid,
            };
            let points = get_array(o, "points");
            let ends = [0, 1].map(|i| match points.get(i).and_then(Value::as_str) {
                Some("arrow") => LineEnd::Arrow,
                Some("dot") => {
                    notes.add(format!("{what}: a dot at its end, drawn plain"));
                    LineEnd::Plain
                }
                _ => LineEnd::Plain,
            });
            if ["broken", "broken2", "curve", "cubic"]
                .iter()
                .any(|k| o.contains_key(*k))
            {
                notes.add(format!("{what}: its bend, drawn straight"));
            }
            SlideElement::Line(LineElement {
                id,
                start: point("start"),
                end: point("end"),
                color: color(o, "color").unwrap_or_else(defaults::ink),
                width: get_f64(o, "width").unwrap_or(2.0),
                style,
                ends,
            })
        }
        "chart" => {
            let Some(chart_type) = o
                .get("chartType")
                .and_then(|t| serde_json::from_value::<ChartKind>(t.clone()).ok())
            else {
                notes.add(format!("{what}: a chart of a type Aula does not draw"));
                return None;
            };
            let data = get_obj(o, "data");
            let strings = |key: &str| -> Vec<String> {
                data.map(|d| get_array(d, key))
                    .unwrap_or_default()
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .collect()
            };
            let series = data
                .map(|d| get_array(d, "series"))
                .unwrap_or_default()
                .iter()
                .map(|s| {
                    s.as_array()
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .map(|v| v.as_f64().unwrap_or(0.0))
                        .collect()
                })
                .collect();
            let mut colors: Vec<String> = get_array(o, "themeColors")
                .iter()
                .filter_map(Value::as_str)
                .filter(|c| aula_course::is_color(c))
                .map(str::to_string)
                .collect();
            if colors == THEME_COLORS {
                colors.clear();
            }
            if let Some(options) = get_obj(o, "options") {
                if get_bool(options, "lineSmooth") || get_bool(options, "stack") {
                    notes.add(format!("{what}: smoothed or stacked series (drawn plain)"));
                }
            }
            SlideElement::Chart(ChartElement {
                id,
                left,
                top,
                width,
                height,
                chart_type,
                data: ChartData {
                    labels: strings("labels"),
                    legends: strings("legends"),
                    series,
                },
                colors,
            })
        }
        "table" => {
            let mut merged = false;
            let mut rows: Vec<Vec<String>> = get_array(o, "data")
                .iter()
                .map(|row| {
                    let mut cells = Vec::new();
                    for cell in row.as_array().map_or(&[][..], Vec::as_slice) {
                        let cell = cell.as_object();
                        let text = cell
                            .and_then(|c| get_str(c, "text"))
                            .map(html_to_plain)
                            .unwrap_or_default();
                        let span = |key| {
                            cell.and_then(|c| get_f64(c, key))
                                .unwrap_or(1.0)
                                .clamp(1.0, 20.0) as usize
                        };
                        merged |= span("colspan") > 1 || span("rowspan") > 1;
                        cells.push(text);
                        cells.extend(std::iter::repeat_n(String::new(), span("colspan") - 1));
                    }
                    cells
                })
                .collect();
            if merged {
                notes.add(format!("{what}: merged cells, shown split"));
            }
            let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
            for row in &mut rows {
                row.resize(columns, String::new());
            }
            SlideElement::Table(TableElement {
                id,
                left,
                top,
                width,
                height,
                rows,
                header: get_obj(o, "theme").is_some_and(|t| get_bool(t, "rowHeader")),
            })
        }
        "latex" => SlideElement::Latex(LatexElement {
            id,
            left,
            top,
            width,
            height,
            latex: str_or_empty(o, "latex"),
            color: color(o, "color"),
        }),
        "code" => {
            let lines = get_array(o, "lines");
            let code = if lines.is_empty() {
                str_or_empty(o, "code")
            } else {
                lines
                    .iter()
                    .map(|l| {
                        l.as_object()
                            .and_then(|l| get_str(l, "content"))
                            .unwrap_or_default()
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            SlideElement::Code(CodeElement {
                id,
                left,
                top,
                width,
                height,
                language: str_or_empty(o, "language"),
                code,
                file_name: get_str(o, "fileName").map(str::to_string),
            })
        }
        "audio" => {
            notes.add(format!("{what}: an audio player on the slide (Aula slides have no audio element; narration belongs in speech actions)"));
            return None;
        }
        other => {
            notes.add(format!(
                "a slide element of type `{other}` (Aula has no such element)"
            ));
            return None;
        }
    };
    Some(element)
}

/// Which of Aula's shapes an OpenMAIC outline is; anything else is drawn as a rectangle.
fn shape_kind(o: &Obj, what: &str, notes: &mut Notes) -> ShapeKind {
    let path = get_str(o, "path").unwrap_or_default();
    let squeeze = |p: &str| p.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((kind, _, _)) = SHAPES.iter().find(|(_, p, _)| squeeze(p) == squeeze(path)) {
        return *kind;
    }
    match get_str(o, "pathFormula") {
        Some(f) if f.starts_with("roundRect") => return ShapeKind::RoundedRectangle,
        Some("triangle") => return ShapeKind::Triangle,
        _ => {}
    }
    let commands: Vec<char> = path.chars().filter(char::is_ascii_alphabetic).collect();
    let arcs = commands.iter().filter(|c| matches!(c, 'A' | 'a')).count();
    let corners = commands
        .iter()
        .filter(|c| matches!(c, 'M' | 'L' | 'm' | 'l'))
        .count();
    if arcs >= 2 && corners <= 1 {
        ShapeKind::Ellipse
    } else if arcs == 0 && corners == 3 && commands.len() <= 4 {
        ShapeKind::Triangle
    } else if arcs == 0 && corners == 4 && commands.len() <= 5 {
        ShapeKind::Rectangle
    } else {
        notes.add(format!("{what}: its custom outline, drawn as a rectangle"));
        ShapeKind::Rectangle
    }
}

/// The key under which a generated video's poster is linked.
pub(super) fn poster_key(placeholder: &str) -> String {
    format!("{placeholder}{POSTER_SUFFIX}")
}
