//! Scene actions. OpenMAIC writes the same DSL in camelCase (`elementId`, `widget_setState`);
//! a speech's `audioId` travels as `audioRef`, the zip path of its narration, and a discussion's
//! agent as `agentIndex`, its place in the manifest's agents.

use aula_course::action::{
    defaults, CodeEditOperation, Discussion, Laser, LineEnd, LineStyle, PlayVideo, Speech,
    Spotlight, WbClear, WbClose, WbDelete, WbDrawChart, WbDrawCode, WbDrawLatex, WbDrawLine,
    WbDrawShape, WbDrawTable, WbDrawText, WbEditCode, WbOpen, WhiteboardShape, WidgetAnnotation,
    WidgetHighlight, WidgetReveal, WidgetSetState,
};
use aula_course::{Action, ActionKind};
use serde_json::{json, Value};

use super::element::{trusted_original, with_original};
use super::{get_array, get_f64, get_obj, get_str, Links, LinksOnly, Notes, Obj, Resolve};

/// OpenMAIC's name for an action type.
pub(super) fn openmaic_name(kind: ActionKind) -> &'static str {
    match kind {
        ActionKind::WidgetSetState => "widget_setState",
        other => other.as_str(),
    }
}

/// The Aula kind an OpenMAIC action type names.
pub(super) fn kind_of_openmaic_name(name: &str) -> Option<ActionKind> {
    match name {
        "widget_setState" => Some(ActionKind::WidgetSetState),
        "widget_set_state" => None,
        other => ActionKind::from_name(other),
    }
}

pub(super) fn action_to_archive(action: &Action, links: &Links) -> (Obj, bool) {
    with_original(to_native(action, links), action, |native, notes| {
        let mut notes = Notes {
            at: String::new(),
            out: notes,
        };
        from_native(native, &mut LinksOnly(links), &mut notes)
    })
}

pub(super) fn action_from_archive(
    native: &Obj,
    resolve: &mut dyn Resolve,
    notes: &mut Notes,
) -> Option<Action> {
    let links = resolve.links();
    if let Some(mut original) = trusted_original(native, |a: &Action| to_native(a, links)) {
        if rename_agents(&mut original, links) {
            // The narration file still has to come along.
            if let Some(audio) = get_str(native, "audioRef") {
                resolve.audio(audio);
            }
            return Some(original);
        }
    }
    from_native(native, resolve, notes)
}

/// Points the agent references of an Aula original at the imported agents; `false` when one
/// names an agent the archive does not have.
fn rename_agents(action: &mut Action, links: &Links) -> bool {
    let rename = |id: &mut String| match links.agent_renamed.get(id.as_str()) {
        Some(new) => {
            *id = new.clone();
            true
        }
        None => false,
    };
    match action {
        Action::Speech(s) => s.speaker.as_mut().is_none_or(rename),
        Action::Discussion(d) => {
            d.agent_id.as_mut().is_none_or(rename)
                && d.recording.iter_mut().all(|turn| rename(&mut turn.speaker))
        }
        _ => true,
    }
}

fn to_native(action: &Action, links: &Links) -> Obj {
    let mut o = Obj::new();
    let Some(kind) = action.kind() else {
        if let Action::Unknown { raw, .. } = action {
            if let Some(raw) = raw.as_object() {
                return raw.clone();
            }
        }
        return o;
    };
    o.insert("type".into(), json!(openmaic_name(kind)));
    o.insert("id".into(), json!(action.id()));
    let mut put = |key: &str, value: Value| {
        o.insert(key.into(), value);
    };
    match action {
        Action::Speech(s) => {
            put("text", json!(s.text));
            if let Some(path) = s.audio_id.as_ref().and_then(|a| links.native_ref.get(a)) {
                put("audioRef", json!(path));
            }
        }
        Action::Spotlight(a) => {
            put("elementId", json!(a.element_id));
            put("dimOpacity", json!(a.dim_opacity));
        }
        Action::Laser(a) => {
            put("elementId", json!(a.element_id));
            put("color", json!(a.color));
        }
        Action::PlayVideo(a) => put("elementId", json!(a.element_id)),
        Action::WbOpen(_) | Action::WbClose(_) | Action::WbClear(_) => {}
        Action::WbDelete(a) => put("elementId", json!(a.element_id)),
        Action::WbDrawText(a) => {
            opt_into(&mut put, "elementId", &a.element_id);
            put("content", json!(a.content));
            put("x", json!(a.x));
            put("y", json!(a.y));
            put("width", json!(a.width));
            put("height", json!(a.height));
            put("fontSize", json!(a.font_size));
            put("color", json!(a.color));
        }
        Action::WbDrawShape(a) => {
            opt_into(&mut put, "elementId", &a.element_id);
            put("shape", json!(a.shape));
            put("x", json!(a.x));
            put("y", json!(a.y));
            put("width", json!(a.width));
            put("height", json!(a.height));
            put("fillColor", json!(a.fill_color));
        }
        Action::WbDrawChart(a) => {
            opt_into(&mut put, "elementId", &a.element_id);
            put("chartType", json!(a.chart_type));
            put("x", json!(a.x));
            put("y", json!(a.y));
            put("width", json!(a.width));
            put("height", json!(a.height));
            put("data", json!(a.data));
            if !a.theme_colors.is_empty() {
                put("themeColors", json!(a.theme_colors));
            }
        }
        Action::WbDrawLatex(a) => {
            opt_into(&mut put, "elementId", &a.element_id);
            put("latex", json!(a.latex));
            put("x", json!(a.x));
            put("y", json!(a.y));
            put("width", json!(a.width));
            opt_into(&mut put, "height", &a.height);
            put("color", json!(a.color));
        }
        Action::WbDrawTable(a) => {
            opt_into(&mut put, "elementId", &a.element_id);
            put("x", json!(a.x));
            put("y", json!(a.y));
            put("width", json!(a.width));
            put("height", json!(a.height));
            put("data", json!(a.data));
        }
        Action::WbDrawLine(a) => {
            opt_into(&mut put, "elementId", &a.element_id);
            put("startX", json!(a.start_x));
            put("startY", json!(a.start_y));
            put("endX", json!(a.end_x));
            put("endY", json!(a.end_y));
            put("color", json!(a.color));
            put("width", json!(a.width));
            put("style", json!(a.style));
            put(
                "points",
                json!(a.ends.map(|e| match e {
                    LineEnd::Plain => "",
                    LineEnd::Arrow => "arrow",
                })),
            );
        }
        Action::WbDrawCode(a) => {
            opt_into(&mut put, "elementId", &a.element_id);
            put("language", json!(a.language));
            put("code", json!(a.code));
            put("x", json!(a.x));
            put("y", json!(a.y));
            put("width", json!(a.width));
            put("height", json!(a.height));
            opt_into(&mut put, "fileName", &a.file_name);
        }
        Action::WbEditCode(a) => {
            put("elementId", json!(a.element_id));
            put("operation", json!(a.operation));
            opt_into(&mut put, "lineId", &a.line_id);
            if !a.line_ids.is_empty() {
                put("lineIds", json!(a.line_ids));
            }
            opt_into(&mut put, "content", &a.content);
        }
        Action::Discussion(a) => {
            put("topic", json!(a.topic));
            opt_into(&mut put, "prompt", &a.prompt);
            if let Some(index) = a.agent_id.as_ref().and_then(|id| links.agent_index.get(id)) {
                put("agentIndex", json!(index));
            }
        }
        Action::WidgetHighlight(a) => widget_target(&mut put, &a.target, &a.content),
        Action::WidgetAnnotation(a) => widget_target(&mut put, &a.target, &a.content),
        Action::WidgetReveal(a) => widget_target(&mut put, &a.target, &a.content),
        Action::WidgetSetState(a) => {
            put("state", json!(a.state));
            opt_into(&mut put, "content", &a.content);
        }
        Action::Unknown { .. } => {}
    }
    o
}

fn opt_into<T: serde::Serialize>(put: &mut impl FnMut(&str, Value), key: &str, value: &Option<T>) {
    if let Some(value) = value {
        put(key, json!(value));
    }
}

fn widget_target(put: &mut impl FnMut(&str, Value), target: &str, content: &Option<String>) {
    put("target", json!(target));
    opt_into(put, "content", content);
}

/// Reads one OpenMAIC action; `None` (with a note) when Aula cannot hold it.
fn from_native(o: &Obj, resolve: &mut dyn Resolve, notes: &mut Notes) -> Option<Action> {
    let type_name = get_str(o, "type").unwrap_or_default();
    let Some(kind) = kind_of_openmaic_name(type_name) else {
        notes.add(format!("a `{type_name}` action (Aula has no equivalent)"));
        return None;
    };
    let id = get_str(o, "id").unwrap_or_default().to_string();
    let text = |key: &str| get_str(o, key).map(str::to_string);
    let num = |key: &str| get_f64(o, key);
    macro_rules! need {
        ($value:expr, $what:expr) => {
            match $value {
                Some(v) => v,
                None => {
                    notes.add(format!("a `{type_name}` action without its {}", $what));
                    return None;
                }
            }
        };
    }
    let element_id = || text("elementId");
    let drawn_id = || text("elementId").filter(|id| !id.is_empty());
    let action = match kind {
        ActionKind::Speech => {
            let audio_id = match get_str(o, "audioRef") {
                Some(path) => {
                    let found = resolve.audio(path);
                    if found.is_none() {
                        notes.add("a speech's narration audio, missing from the archive (Aula reads the text aloud instead)");
                    }
                    found
                }
                None => None,
            };
            if o.contains_key("audioUrl") && audio_id.is_none() {
                notes.add("narration given only as a web address (audioUrl; Aula reads the text aloud instead)");
            }
            if o.contains_key("voice") || o.contains_key("speed") {
                notes.add("a speech's own voice or speed (Aula speaks with the agent's voice)");
            }
            Action::Speech(Speech {
                id,
                text: need!(text("text"), "text"),
                speaker: None,
                audio_id,
            })
        }
        ActionKind::Spotlight => Action::Spotlight(Spotlight {
            id,
            element_id: need!(element_id(), "element"),
            dim_opacity: num("dimOpacity").unwrap_or_else(defaults::dim_opacity),
        }),
        ActionKind::Laser => Action::Laser(Laser {
            id,
            element_id: need!(element_id(), "element"),
            color: text("color").unwrap_or_else(defaults::laser_color),
        }),
        ActionKind::PlayVideo => Action::PlayVideo(PlayVideo {
            id,
            element_id: need!(element_id(), "element"),
        }),
        ActionKind::WbOpen => Action::WbOpen(WbOpen { id }),
        ActionKind::WbClose => Action::WbClose(WbClose { id }),
        ActionKind::WbClear => Action::WbClear(WbClear { id }),
        ActionKind::WbDelete => Action::WbDelete(WbDelete {
            id,
            element_id: need!(element_id(), "element"),
        }),
        ActionKind::WbDrawText => Action::WbDrawText(WbDrawText {
            id,
            element_id: drawn_id(),
            content: need!(text("content"), "text"),
            x: num("x").unwrap_or(0.0),
            y: num("y").unwrap_or(0.0),
            width: num("width").unwrap_or_else(defaults::text_width),
            height: num("height").unwrap_or_else(defaults::text_height),
            font_size: num("fontSize").unwrap_or_else(defaults::font_size),
            color: text("color").unwrap_or_else(defaults::ink),
        }),
        ActionKind::WbDrawShape => Action::WbDrawShape(WbDrawShape {
            id,
            element_id: drawn_id(),
            shape: need!(
                o.get("shape")
                    .and_then(|s| serde_json::from_value::<WhiteboardShape>(s.clone()).ok()),
                "shape (rectangle, circle or triangle)"
            ),
            x: num("x").unwrap_or(0.0),
            y: num("y").unwrap_or(0.0),
            width: need!(num("width"), "width"),
            height: need!(num("height"), "height"),
            fill_color: text("fillColor").unwrap_or_else(defaults::shape_fill),
        }),
        ActionKind::WbDrawChart => Action::WbDrawChart(WbDrawChart {
            id,
            element_id: drawn_id(),
            chart_type: need!(
                o.get("chartType")
                    .and_then(|t| serde_json::from_value(t.clone()).ok()),
                "chart type"
            ),
            x: num("x").unwrap_or(0.0),
            y: num("y").unwrap_or(0.0),
            width: need!(num("width"), "width"),
            height: need!(num("height"), "height"),
            data: need!(
                o.get("data")
                    .and_then(|d| serde_json::from_value(d.clone()).ok()),
                "data (labels and series)"
            ),
            theme_colors: get_array(o, "themeColors")
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        }),
        ActionKind::WbDrawLatex => Action::WbDrawLatex(WbDrawLatex {
            id,
            element_id: drawn_id(),
            latex: need!(text("latex"), "formula"),
            x: num("x").unwrap_or(0.0),
            y: num("y").unwrap_or(0.0),
            width: num("width").unwrap_or_else(defaults::latex_width),
            height: num("height"),
            color: text("color").unwrap_or_else(defaults::latex_color),
        }),
        ActionKind::WbDrawTable => {
            if o.contains_key("outline") || o.contains_key("theme") {
                notes.add("a whiteboard table's border and colours (Aula draws its own)");
            }
            let data: Vec<Vec<String>> = get_array(o, "data")
                .iter()
                .map(|row| {
                    row.as_array()
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
                        .collect()
                })
                .collect();
            Action::WbDrawTable(WbDrawTable {
                id,
                element_id: drawn_id(),
                x: num("x").unwrap_or(0.0),
                y: num("y").unwrap_or(0.0),
                width: need!(num("width"), "width"),
                height: need!(num("height"), "height"),
                data,
            })
        }
        ActionKind::WbDrawLine => {
            let points = get_array(o, "points");
            let ends = [0, 1].map(|i| match points.get(i).and_then(Value::as_str) {
                Some("arrow") => LineEnd::Arrow,
                _ => LineEnd::Plain,
            });
            Action::WbDrawLine(WbDrawLine {
                id,
                element_id: drawn_id(),
                start_x: need!(num("startX"), "start"),
                start_y: need!(num("startY"), "start"),
                end_x: need!(num("endX"), "end"),
                end_y: need!(num("endY"), "end"),
                color: text("color").unwrap_or_else(defaults::ink),
                width: num("width").unwrap_or_else(defaults::line_width),
                style: match get_str(o, "style") {
                    Some("dashed" | "dotted") => LineStyle::Dashed,
                    _ => LineStyle::Solid,
                },
                ends,
            })
        }
        ActionKind::WbDrawCode => Action::WbDrawCode(WbDrawCode {
            id,
            element_id: drawn_id(),
            language: text("language").unwrap_or_default(),
            code: need!(text("code"), "code"),
            x: num("x").unwrap_or(0.0),
            y: num("y").unwrap_or(0.0),
            width: num("width").unwrap_or_else(defaults::code_width),
            height: num("height").unwrap_or_else(defaults::code_height),
            file_name: text("fileName"),
        }),
        ActionKind::WbEditCode => Action::WbEditCode(WbEditCode {
            id,
            element_id: need!(element_id(), "code block"),
            operation: need!(
                o.get("operation")
                    .and_then(|op| serde_json::from_value::<CodeEditOperation>(op.clone()).ok()),
                "operation"
            ),
            line_id: text("lineId"),
            line_ids: get_array(o, "lineIds")
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            content: text("content"),
        }),
        ActionKind::Discussion => {
            let links = resolve.links();
            let by_index = get_f64(o, "agentIndex")
                .filter(|i| *i >= 0.0 && i.fract() == 0.0)
                .and_then(|i| links.agent_by_index(i as usize));
            let legacy = text("agentId");
            let agent_id = by_index.or_else(|| {
                legacy
                    .as_ref()
                    .and_then(|id| links.agent_renamed.get(id).cloned())
            });
            if agent_id.is_none() && (legacy.is_some() || o.contains_key("agentIndex")) {
                notes.add("a discussion's opening agent, who is not in the archive (a classmate opens it)");
            }
            Action::Discussion(Discussion {
                id,
                topic: need!(text("topic"), "topic"),
                prompt: text("prompt"),
                agent_id,
                recording: Vec::new(),
            })
        }
        ActionKind::WidgetHighlight => Action::WidgetHighlight(WidgetHighlight {
            id,
            target: need!(text("target"), "target"),
            content: text("content"),
        }),
        ActionKind::WidgetAnnotation => Action::WidgetAnnotation(WidgetAnnotation {
            id,
            target: need!(text("target"), "target"),
            content: text("content"),
        }),
        ActionKind::WidgetReveal => Action::WidgetReveal(WidgetReveal {
            id,
            target: need!(text("target"), "target"),
            content: text("content"),
        }),
        ActionKind::WidgetSetState => Action::WidgetSetState(WidgetSetState {
            id,
            state: need!(get_obj(o, "state").cloned(), "state"),
            content: text("content"),
        }),
    };
    Some(action)
}
