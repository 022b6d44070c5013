//! The first stage: what the learner asked for ([`CourseRequest`]) becomes an [`Outline`], the
//! list of scenes the course will have. The prompt asks for one JSON object; the reply is read
//! strictly (then repaired, see [`crate::repair`]) and normalized by code: ids, counts, how many
//! interactive and project scenes there may be, and which scenes hold the course's discussions
//! are decided here, not by the model. [`OutlinePreview`] shows scenes while the reply streams.

use std::fmt::Write as _;

use aula_course::AgentProfile;
use aula_providers::budget::{Cut, TooLong};
use aula_providers::{ChatRequest, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::fit::{fit_request, plain, Stage, Target, DOCUMENT_RANK};
use crate::repair;
use crate::shape::{shape_for, Shape};
use crate::stages::Read;

pub use crate::shape::MAX_SCENES;
/// How much of a document the page reads from a PDF; what of it fits the model's context goes
/// into each prompt (see [`crate::fit`]).
pub const MAX_DOCUMENT_CHARS: usize = 30_000;
/// At most this many interactive pages and projects per course; extras become slides.
pub const MAX_INTERACTIVE: usize = 2;
pub const MAX_PROJECTS: usize = 1;

/// What the learner asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CourseRequest {
    /// The topic, in the learner's words (length, audience and style may be in it too).
    pub topic: String,
    /// The teaching language, as a tag such as `en` or `zh-CN`.
    pub language: String,
    /// Text taken from the learner's document (a PDF), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    /// Who the learner is, in their words (optional).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub learner: String,
    /// The teacher and classmates.
    pub agents: Vec<AgentProfile>,
}

impl CourseRequest {
    /// Gives the built-in cast the course language's names and personas where they are still
    /// the English ones (the page sends those; see [`aula_course::speak_course_language`]).
    pub fn cast_in_its_language(&mut self) {
        aula_course::speak_course_language(&mut self.agents, &self.language);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SceneKind {
    Slide,
    Quiz,
    Interactive,
    Pbl,
}

impl SceneKind {
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::Slide => "slide",
            SceneKind::Quiz => "quiz",
            SceneKind::Interactive => "interactive",
            SceneKind::Pbl => "pbl",
        }
    }
}

/// One planned scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SceneOutline {
    /// Stable across edits: the generation job names its tasks by it.
    #[serde(default)]
    pub id: String,
    pub kind: SceneKind,
    pub title: String,
    /// What the learner should take away.
    #[serde(default)]
    pub goal: String,
    #[serde(default)]
    pub key_points: Vec<String>,
    /// Whether this scene ends with a class discussion (chosen by code, see [`normalize`]).
    #[serde(default)]
    pub discussion: bool,
}

/// The course's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outline {
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// How to handle language in every later prompt (teaching language, terms).
    #[serde(default)]
    pub language_directive: String,
    pub scenes: Vec<SceneOutline>,
}

impl Outline {
    pub fn scene(&self, id: &str) -> Option<&SceneOutline> {
        self.scenes.iter().find(|s| s.id == id)
    }
}

/// The outline stage's request: the instructions and the course's shape (decided by code, see
/// [`crate::shape`]) in the system prompt, the learner's words in the user message, then the
/// document's text, which is cut first when the prompt does not fit the model.
pub fn outline_request(
    request: &CourseRequest,
    target: Target,
) -> Result<(ChatRequest, Vec<String>), TooLong> {
    let shape = shape_for(request);
    let mut system = String::with_capacity(4 * 1024);
    let _ = write!(
        system,
        "You plan a course for an online classroom where an AI teacher teaches one learner with AI \
         classmates. Write the plan in {language}.\n\n\
         Reply with one JSON object and nothing else:\n\
         {{\"title\": string, \"description\": one or two sentences, \"language_directive\": two to \
         four sentences on the teaching language and how to handle technical terms, \"scenes\": \
         [{{\"kind\": \"slide\"|\"quiz\"|\"interactive\"|\"pbl\", \"title\": string, \"goal\": \
         one sentence, \"key_points\": [three to five short strings]}}]}}\n\n\
         The shape: {shape}\n\n\
         Rules:\n\
         - Each scene takes one to three minutes.\n\
         - Build ideas in order: each scene may rely only on earlier ones.\n\
         - A key point that needs a chart or a table says so: \"[Chart] ...\" or \"[Table] ...\".\n\
         - Titles name the idea, never the teacher.",
        language = language_name(&request.language),
        shape = shape.describe(),
    );
    let mut user = String::with_capacity(request.topic.len() + 256);
    let _ = writeln!(
        user,
        "What I want to learn: {}",
        clip(request.topic.trim(), 2_000)
    );
    if !request.learner.trim().is_empty() {
        let _ = writeln!(user, "About me: {}", clip(request.learner.trim(), 600));
    }
    let mut ask = plain(user);
    if let Some(document) = request.document.as_deref().filter(|d| !d.trim().is_empty()) {
        let excerpt: String = document.chars().take(MAX_DOCUMENT_CHARS).collect();
        ask.keep(
            "\nBase the course on this document (its text, extracted from a PDF):\n<document>\n",
        )
        .push(
            "the document",
            Cut::Tail {
                rank: DOCUMENT_RANK,
                keep_chars: 0,
            },
            excerpt.trim().to_string(),
        )
        .keep("\n</document>");
    }
    let schema = JsonSchema {
        name: "course_outline".into(),
        schema: outline_schema(target.full_schemas.then_some(&shape)),
    };
    let (mut chat, cuts) = fit_request(plain(system), ask, Some(schema), Stage::Outline, target)?;
    chat.temperature = Some(0.4);
    Ok((chat, cuts))
}

/// The outline as a JSON schema. For a server that enforces it while sampling (`bounds`), every
/// list and text has a bound from the course's shape, so a small model cannot run on past its
/// length limit repeating a key point; hosted strict modes take no such bounds and get none.
fn outline_schema(bounds: Option<&Shape>) -> Value {
    let text = |max: usize| match bounds {
        Some(_) => json!({"type": "string", "minLength": 1, "maxLength": max}),
        None => json!({"type": "string"}),
    };
    let mut key_points = json!({"type": "array", "items": text(OUTLINE_POINT_CHARS)});
    let mut scenes = json!({"type": "array"});
    if let Some(shape) = bounds {
        key_points["minItems"] = json!(1);
        key_points["maxItems"] = json!(5);
        scenes["minItems"] = json!(shape.min.max(1));
        scenes["maxItems"] = json!(shape.max.max(1));
    }
    scenes["items"] = json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["slide", "quiz", "interactive", "pbl"]},
            "title": text(80),
            "goal": text(200),
            "key_points": key_points,
        },
        "required": ["kind", "title", "goal", "key_points"],
        "additionalProperties": false,
    });
    json!({
        "type": "object",
        "properties": {
            "title": text(80),
            "description": text(300),
            "language_directive": text(400),
            "scenes": scenes,
        },
        "required": ["title", "description", "language_directive", "scenes"],
        "additionalProperties": false,
    })
}

/// The longest key point a bounded outline takes, in characters.
const OUTLINE_POINT_CHARS: usize = 120;

/// The English name of a language tag, for prompts ("zh-CN" → "Chinese (Simplified)").
pub fn language_name(tag: &str) -> String {
    aula_director::prompt::language_name(tag).to_string()
}

/// Reads an outline reply: strictly, or else through the tolerant reading. Accepts a bare array
/// of scenes too. The outline is then held to the request's shape by code ([`fit_shape`], its
/// changes in the notes) and normalized. A scene count outside the shape's range is a
/// `problem`: worth asking the model once more, but usable.
pub fn parse_outline(reply: &str, request: &CourseRequest) -> Result<Read<Outline>, String> {
    let strict = repair::strict(reply).and_then(|v| outline_from_value(v, request));
    let (mut outline, repaired) = match strict {
        Ok(outline) => (outline, false),
        Err(strict_error) => (
            repair::tolerant_values(reply)
                .find_map(|v| outline_from_value(v, request).ok())
                .ok_or(strict_error)?,
            true,
        ),
    };
    let shape = shape_for(request);
    let count = outline.scenes.len();
    let mut problems = Vec::new();
    if count < shape.min || count > shape.max {
        problems.push(if shape.min == shape.max {
            format!(
                "the plan has {count} scenes; the learner asked for exactly {}",
                shape.min
            )
        } else {
            format!(
                "the plan has {count} scenes; this course needs {} to {}",
                shape.min, shape.max
            )
        });
    }
    let texts = outline.scenes.iter().flat_map(|scene| {
        std::iter::once(scene.title.as_str())
            .chain(std::iter::once(scene.goal.as_str()))
            .chain(scene.key_points.iter().map(String::as_str))
    });
    problems.extend(crate::stages::language_problem(
        std::iter::once(outline.title.as_str()).chain(texts),
        &request.language,
    ));
    let mut notes = fit_shape(&mut outline, request, &shape);
    if repaired {
        notes.push("the reply needed repair".into());
    }
    normalize(&mut outline, request);
    Ok(Read {
        value: outline,
        notes,
        problems,
        repaired,
        fallback: None,
    })
}

fn outline_from_value(value: Value, request: &CourseRequest) -> Result<Outline, String> {
    let value = match value {
        Value::Array(scenes) => json!({"title": "", "scenes": scenes}),
        other => other,
    };
    let Value::Object(mut fields) = value else {
        return Err("the reply is not a JSON object with \"scenes\"".into());
    };
    let scenes = match fields.remove("scenes") {
        Some(Value::Array(scenes)) => scenes,
        Some(_) => return Err("\"scenes\" must be an array".into()),
        None => return Err("the reply has no \"scenes\"".into()),
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").trim().to_string();
    let mut outline = Outline {
        title: text(fields.get("title")),
        description: text(fields.get("description")),
        language_directive: text(fields.get("language_directive")),
        scenes: Vec::with_capacity(scenes.len()),
    };
    for (i, scene) in scenes.into_iter().enumerate() {
        outline
            .scenes
            .push(scene_from_value(scene).map_err(|e| format!("scenes[{i}]: {e}"))?);
    }
    if outline.scenes.is_empty() {
        return Err("the outline has no scenes".into());
    }
    if outline.title.trim().is_empty() {
        outline.title = clip(request.topic.trim(), 80);
    }
    Ok(outline)
}

fn scene_from_value(value: Value) -> Result<SceneOutline, String> {
    let Value::Object(fields) = value else {
        return Err("a scene must be an object".into());
    };
    let kind = match fields.get("kind").or_else(|| fields.get("type")) {
        Some(Value::String(k)) => match k.as_str() {
            "slide" => SceneKind::Slide,
            "quiz" => SceneKind::Quiz,
            "interactive" => SceneKind::Interactive,
            "pbl" | "project" => SceneKind::Pbl,
            other => return Err(format!("unknown kind \"{other}\"")),
        },
        _ => SceneKind::Slide,
    };
    let title = fields
        .get("title")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or("a scene needs a \"title\"")?;
    let goal = fields
        .get("goal")
        .or_else(|| fields.get("description"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let key_points = match fields.get("key_points").or_else(|| fields.get("keyPoints")) {
        Some(Value::Array(points)) => points
            .iter()
            .filter_map(Value::as_str)
            .map(|p| clip(p.trim(), 200))
            .filter(|p| !p.is_empty())
            .take(6)
            .collect(),
        _ => Vec::new(),
    };
    Ok(SceneOutline {
        id: fields
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        kind,
        title: clip(title, 120),
        goal: clip(goal.trim(), 400),
        key_points,
        discussion: false,
    })
}

fn clip(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// What code decides about a model's outline: no more scenes than the shape allows (a final
/// quiz is kept last), a slide first, no more interactive pages or projects than the shape
/// allows (extras become slides), and a quiz at the end when the shape has quizzes and the
/// model wrote none (made by code from the course's own titles). Returns what it changed.
/// The learner's own edits are never held to it (only [`normalize`]).
pub fn fit_shape(outline: &mut Outline, request: &CourseRequest, shape: &Shape) -> Vec<String> {
    let mut notes = Vec::new();
    if outline.scenes.len() > shape.max {
        let last_quiz = outline
            .scenes
            .last()
            .filter(|s| s.kind == SceneKind::Quiz)
            .cloned();
        let dropped = outline.scenes.len() - shape.max;
        outline
            .scenes
            .truncate(shape.max - usize::from(last_quiz.is_some()));
        outline.scenes.extend(last_quiz);
        notes.push(format!(
            "{dropped} scenes beyond the course's length were left out"
        ));
    }
    let several = outline.scenes.len() > 1;
    if let Some(first) = outline.scenes.first_mut() {
        if first.kind != SceneKind::Slide && several {
            notes.push(format!(
                "the first scene ({}) became a slide",
                first.kind.name()
            ));
            first.kind = SceneKind::Slide;
        }
    }
    let (mut interactive, mut projects) = (0, 0);
    for scene in &mut outline.scenes {
        let allowed = match scene.kind {
            SceneKind::Interactive => {
                interactive += 1;
                interactive <= shape.interactive
            }
            SceneKind::Pbl => {
                projects += 1;
                projects <= shape.projects
            }
            _ => true,
        };
        if !allowed {
            notes.push(format!(
                "\"{}\" became a slide: the course has room for no more {} scenes",
                scene.title,
                scene.kind.name()
            ));
            scene.kind = SceneKind::Slide;
        }
    }
    let has_quiz = outline.scenes.iter().any(|s| s.kind == SceneKind::Quiz);
    if shape.quizzes > 0 && !has_quiz && outline.scenes.len() >= 2 {
        let key_points = outline
            .scenes
            .iter()
            .rev()
            .take(4)
            .rev()
            .map(|s| s.title.clone())
            .collect();
        let quiz = SceneOutline {
            id: String::new(),
            kind: SceneKind::Quiz,
            title: quiz_title(&request.language).to_string(),
            goal: String::new(),
            key_points,
            discussion: false,
        };
        if outline.scenes.len() < shape.max.max(2) {
            outline.scenes.push(quiz);
        } else if let Some(last) = outline.scenes.last_mut() {
            *last = SceneOutline {
                id: std::mem::take(&mut last.id),
                ..quiz
            };
        }
        notes.push("the plan had no quiz; one was added at the end".into());
    }
    notes
}

/// The title of a quiz code adds, in the course's language.
fn quiz_title(language: &str) -> &'static str {
    match language.split(['-', '_']).next().unwrap_or("") {
        "zh" => "小测验",
        "ja" => "理解度チェック",
        "es" => "Comprueba lo que has aprendido",
        "fr" => "Vérifiez vos acquis",
        "de" => "Teste dein Wissen",
        _ => "Check your understanding",
    }
}

/// What code decides about an outline, whoever wrote it (the model, or the learner editing it):
/// at most [`MAX_SCENES`]; every scene has a unique id of letters, digits and dashes (kept where
/// it already has one, so a job record keeps matching); too many interactive or project scenes
/// become slides; a title; and which slides end with a discussion: one for a short course, two
/// from six scenes on, never the first scene, spread out.
pub fn normalize(outline: &mut Outline, request: &CourseRequest) {
    outline.scenes.truncate(MAX_SCENES);
    if outline.title.trim().is_empty() {
        outline.title = clip(request.topic.trim(), 80);
    }
    outline.title = clip(outline.title.trim(), 120);
    for scene in &mut outline.scenes {
        if !scene.title.chars().any(char::is_alphanumeric) {
            // A title with no word in it ("],": a fragment of the model's JSON) names nothing.
            scene.title = match scene.kind {
                SceneKind::Quiz => quiz_title(&request.language).to_string(),
                _ => [scene.key_points.first(), Some(&scene.goal)]
                    .into_iter()
                    .flatten()
                    .find(|t| t.chars().any(char::is_alphanumeric))
                    .map(|t| clip(t.trim(), 60))
                    .unwrap_or_else(|| clip(request.topic.trim(), 60)),
            };
        }
    }
    let valid = |id: &str| {
        !id.is_empty()
            && id.len() <= 32
            && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    let mut taken = std::collections::HashSet::new();
    let mut fresh = Vec::new();
    for (i, scene) in outline.scenes.iter().enumerate() {
        if !valid(&scene.id) || !taken.insert(scene.id.clone()) {
            fresh.push(i);
        }
    }
    let mut n = 1;
    for i in fresh {
        while taken.contains(&format!("s{n}")) {
            n += 1;
        }
        outline.scenes[i].id = format!("s{n}");
        taken.insert(format!("s{n}"));
    }
    let (mut interactive, mut projects) = (0, 0);
    for scene in &mut outline.scenes {
        match scene.kind {
            SceneKind::Interactive if interactive < MAX_INTERACTIVE => interactive += 1,
            SceneKind::Pbl if projects < MAX_PROJECTS => projects += 1,
            SceneKind::Interactive | SceneKind::Pbl => scene.kind = SceneKind::Slide,
            _ => {}
        }
        scene.discussion = false;
    }
    let count = outline.scenes.len();
    // Never in the first scene, so a one-scene course has none.
    let wanted: &[f64] = match count {
        0 | 1 => &[],
        2..=5 => &[0.6],
        _ => &[0.45, 0.8],
    };
    for share in wanted {
        let target = ((count as f64 * share).round() as usize).clamp(1, count.saturating_sub(1));
        // The nearest slide at or after the target that has no discussion yet, else before it.
        let pick = (target..count)
            .chain((1..target).rev())
            .find(|&i| outline.scenes[i].kind == SceneKind::Slide && !outline.scenes[i].discussion);
        if let Some(i) = pick {
            outline.scenes[i].discussion = true;
        }
    }
}

/// Shows the outline's scenes while its reply streams in: each scene object is reported once,
/// as soon as its closing brace arrives. Linear in the reply's length.
#[derive(Debug, Default)]
pub struct OutlinePreview {
    text: String,
    scanned: usize,
    /// Open brackets, innermost last, with where each `{` started.
    stack: Vec<(char, usize)>,
    in_string: bool,
    escaped: bool,
    found: usize,
}

/// A scene seen in the streaming outline.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewScene {
    pub index: usize,
    pub kind: SceneKind,
    pub title: String,
    /// The scene as far as the outline says it (its id is not decided yet).
    pub scene: SceneOutline,
}

impl OutlinePreview {
    pub fn push(&mut self, chunk: &str) -> Vec<PreviewScene> {
        self.text.push_str(chunk);
        let mut out = Vec::new();
        let start = self.scanned;
        for (offset, c) in self.text[start..].char_indices() {
            let at = start + offset;
            if self.in_string {
                match (self.escaped, c) {
                    (true, _) => self.escaped = false,
                    (false, '\\') => self.escaped = true,
                    (false, '"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '{' | '[' => self.stack.push((c, at)),
                '}' | ']' => {
                    let Some((open, from)) = self.stack.pop() else {
                        continue;
                    };
                    let in_array = matches!(self.stack.last(), Some(('[', _)));
                    if open == '{' && c == '}' && in_array {
                        if let Ok(Value::Object(_)) =
                            serde_json::from_str::<Value>(&self.text[from..=at])
                        {
                            let value = serde_json::from_str(&self.text[from..=at]).ok();
                            if let Some(scene) = value.and_then(|v| scene_from_value(v).ok()) {
                                out.push(PreviewScene {
                                    index: self.found,
                                    kind: scene.kind,
                                    title: scene.title.clone(),
                                    scene,
                                });
                                self.found += 1;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        self.scanned = self.text.len();
        out
    }
}

#[cfg(test)]
mod tests {
    use aula_course::default_agents;

    use super::*;

    pub(crate) fn request() -> CourseRequest {
        CourseRequest {
            topic: "How vaccines train the immune system".into(),
            language: "en".into(),
            document: None,
            learner: "A nurse who wants the biology behind it".into(),
            agents: default_agents(),
        }
    }

    fn reply(kinds: &[&str]) -> String {
        let scenes: Vec<Value> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| json!({"kind": k, "title": format!("Scene {}", i + 1), "goal": "g", "key_points": ["a", "b", "c"]}))
            .collect();
        json!({"title": "Vaccines", "description": "d", "language_directive": "Teach in English.", "scenes": scenes}).to_string()
    }

    fn roomy() -> Target {
        Target::default()
    }

    #[test]
    fn the_request_carries_the_topic_the_learner_the_document_and_the_shape() {
        let mut req = request();
        req.document = Some("Antigens are molecules that...".into());
        let (chat, cuts) = outline_request(&req, roomy()).unwrap();
        assert!(chat.system.contains("English"));
        assert!(chat.system.contains("between 5 and 8"), "{}", chat.system);
        let user = &chat.messages[0].content;
        assert!(user.contains("How vaccines train"));
        assert!(user.contains("A nurse"));
        assert!(user.contains("<document>\nAntigens are molecules"));
        assert!(chat.json_schema.is_some());
        assert!(chat.max_tokens.is_some());
        assert!(cuts.is_empty());
        assert!(!chat.system.contains("{{") || chat.system.contains("{\"title\""));
    }

    #[test]
    fn a_long_document_is_cut_to_what_the_model_can_take_and_the_cut_is_told() {
        let mut req = request();
        req.document = Some("x".repeat(MAX_DOCUMENT_CHARS + 500));
        let (chat, _) = outline_request(&req, roomy()).unwrap();
        let xs = chat.messages[0].content.matches('x').count();
        assert!(xs <= MAX_DOCUMENT_CHARS + 2, "{xs}");
        req.document = Some("Antibodies bind antigens. ".repeat(2_000));
        let small = Target {
            context_tokens: 4_096,
            full_schemas: true,
        };
        let (chat, cuts) = outline_request(&req, small).unwrap();
        assert!(aula_providers::budget::prompt_tokens(&chat) + chat.max_tokens.unwrap() <= 4_096);
        assert!(chat.messages[0]
            .content
            .contains("Antibodies bind antigens"));
        assert!(chat.messages[0].content.ends_with("</document>"));
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        assert!(cuts[0].contains("the document"), "{cuts:?}");
    }

    #[test]
    fn a_local_servers_outline_schema_bounds_every_list_and_text_and_a_hosted_one_none() {
        /// Every string without an enum and every array, with whether each has its bound.
        fn bounds(schema: &Value, out: &mut Vec<(String, bool)>, at: &str) {
            match schema["type"].as_str() {
                Some("string") if schema.get("enum").is_none() => {
                    out.push((at.to_owned(), schema["maxLength"].is_u64()));
                }
                Some("array") => {
                    out.push((at.to_owned(), schema["maxItems"].is_u64()));
                    bounds(&schema["items"], out, &format!("{at}[]"));
                }
                _ => {}
            }
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    bounds(prop, out, &format!("{at}.{name}"));
                }
            }
        }
        let req = request();
        let shape = shape_for(&req);
        for (full_schemas, bounded) in [(true, true), (false, false)] {
            let target = Target {
                context_tokens: 4_096,
                full_schemas,
            };
            let (chat, _) = outline_request(&req, target).unwrap();
            let schema = &chat
                .json_schema
                .expect("the outline asks for its schema")
                .schema;
            let mut found = Vec::new();
            bounds(schema, &mut found, "");
            assert_eq!(found.len(), 8, "{found:?}");
            assert!(
                found.iter().all(|(_, b)| *b == bounded),
                "bounded {bounded}: {found:?}"
            );
            if bounded {
                assert_eq!(schema["properties"]["scenes"]["maxItems"], json!(shape.max));
                assert_eq!(schema["properties"]["scenes"]["minItems"], json!(shape.min));
            }
        }
    }

    #[test]
    fn a_scene_title_without_a_word_is_named_by_code() {
        let mut req = request();
        req.language = "zh-CN".into();
        let scene = |kind: SceneKind, title: &str, point: &str| SceneOutline {
            id: String::new(),
            kind,
            title: title.into(),
            goal: String::new(),
            key_points: vec![point.into()],
            discussion: false,
        };
        let mut outline = Outline {
            title: "光合作用".into(),
            description: String::new(),
            language_directive: String::new(),
            scenes: vec![
                scene(SceneKind::Slide, "叶绿体", "叶绿体吸收光"),
                scene(SceneKind::Slide, " \"\" ", "光反应产生氧气"),
                scene(SceneKind::Quiz, "],", ""),
            ],
        };
        normalize(&mut outline, &req);
        let titles: Vec<&str> = outline.scenes.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(titles, ["叶绿体", "光反应产生氧气", "小测验"]);
    }

    #[test]
    fn an_outline_is_held_to_the_course_shape_and_normalized_by_code() {
        let kinds = [
            "interactive",
            "slide",
            "interactive",
            "slide",
            "interactive",
            "pbl",
            "slide",
            "slide",
            "quiz",
        ];
        let read = parse_outline(&reply(&kinds), &request()).unwrap();
        let outline = read.value;
        assert_eq!(outline.title, "Vaccines");
        // The shape for this request: 6 scenes (5 to 8), one interactive page, no project.
        assert_eq!(read.problems.len(), 1, "{:?}", read.problems);
        assert!(read.problems[0].contains("9 scenes"), "{:?}", read.problems);
        let got: Vec<_> = outline.scenes.iter().map(|s| s.kind.name()).collect();
        assert_eq!(
            got,
            [
                "slide",
                "slide",
                "interactive",
                "slide",
                "slide",
                "slide",
                "slide",
                "quiz"
            ],
            "{:?}",
            read.notes
        );
        let ids: Vec<_> = outline.scenes.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]);
        let discussions: Vec<_> = outline
            .scenes
            .iter()
            .filter(|s| s.discussion)
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(discussions.len(), 2, "{discussions:?}");
        assert!(discussions
            .iter()
            .all(|id| outline.scene(id).unwrap().kind == SceneKind::Slide));
        assert!(!outline.scenes[0].discussion);
    }

    #[test]
    fn a_plan_without_a_quiz_gets_one_at_the_end_in_the_courses_language() {
        let mut req = request();
        req.topic = "光合作用，4个场景".into();
        req.language = "zh-CN".into();
        let chinese = |kinds: &[&str]| {
            let scenes: Vec<Value> = kinds
                .iter()
                .enumerate()
                .map(|(i, k)| json!({"kind": k, "title": format!("光合作用的第{}部分", i + 1), "goal": "理解植物怎样把光能变成化学能", "key_points": ["叶绿素吸收光", "二氧化碳和水", "产生葡萄糖和氧气"]}))
                .collect();
            json!({"title": "光合作用", "scenes": scenes}).to_string()
        };
        let read = parse_outline(&chinese(&["slide", "slide", "slide"]), &req).unwrap();
        assert_eq!(
            read.problems.len(),
            1,
            "3 of the 4 scenes asked for: {:?}",
            read.problems
        );
        let last = read.value.scenes.last().unwrap();
        assert_eq!(
            (last.kind, last.title.as_str()),
            (SceneKind::Quiz, "小测验")
        );
        assert_eq!(read.value.scenes.len(), 4);
        let exact = parse_outline(&chinese(&["slide", "slide", "slide", "quiz"]), &req).unwrap();
        assert!(exact.problems.is_empty(), "{:?}", exact.problems);
        // A plan written in English for a Chinese course is sent back with why.
        let english = parse_outline(&reply(&["slide", "slide", "slide", "quiz"]), &req).unwrap();
        assert_eq!(english.problems.len(), 1, "{:?}", english.problems);
        assert!(
            english.problems[0].contains("Chinese"),
            "{:?}",
            english.problems
        );
    }

    #[test]
    fn a_bare_array_and_a_fenced_reply_are_accepted() {
        let bare = r#"[{"kind": "slide", "title": "One"}, {"kind": "quiz", "title": "Two"}]"#;
        let outline = parse_outline(bare, &request()).unwrap().value;
        assert_eq!(outline.scenes.len(), 2);
        assert_eq!(outline.title, "How vaccines train the immune system");
        let fenced = format!(
            "Here is the plan:\n```json\n{}\n```",
            reply(&["slide", "quiz"])
        );
        let read = parse_outline(&fenced, &request()).unwrap();
        assert_eq!(read.value.scenes.len(), 2);
        assert!(read.repaired);
    }

    #[test]
    fn a_cut_off_outline_keeps_its_complete_scenes() {
        let full = reply(&["slide", "slide", "quiz"]);
        let cut = &full[..full.rfind("{\"goal\"").unwrap() + 12];
        let outline = parse_outline(cut, &request()).unwrap().value;
        let titles: Vec<_> = outline.scenes.iter().map(|s| s.title.as_str()).collect();
        // The two complete scenes, and the quiz code adds since the cut lost the model's.
        assert_eq!(titles, ["Scene 1", "Scene 2", "Check your understanding"]);
    }

    #[test]
    fn bad_outlines_are_refused_with_a_reason() {
        assert!(parse_outline("I can't do that", &request()).is_err());
        let err = parse_outline(r#"{"title": "T", "scenes": []}"#, &request()).unwrap_err();
        assert!(err.contains("no scenes"), "{err}");
        let err = parse_outline(
            r#"{"scenes": [{"kind": "movie", "title": "x"}]}"#,
            &request(),
        )
        .unwrap_err();
        assert!(err.contains("movie"), "{err}");
    }

    #[test]
    fn edited_outlines_keep_their_ids_and_new_scenes_get_fresh_ones() {
        let mut outline = parse_outline(&reply(&["slide", "slide", "slide"]), &request())
            .unwrap()
            .value;
        outline.scenes.truncate(3);
        outline.scenes.swap(0, 2);
        outline.scenes.push(SceneOutline {
            id: String::new(),
            kind: SceneKind::Quiz,
            title: "Check".into(),
            goal: String::new(),
            key_points: vec![],
            discussion: false,
        });
        normalize(&mut outline, &request());
        let ids: Vec<_> = outline.scenes.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s3", "s2", "s1", "s4"]);
    }

    #[test]
    fn any_number_of_scenes_normalizes_without_a_panic() {
        for n in 0..=MAX_SCENES + 3 {
            let kinds: Vec<&str> = (0..n).map(|i| ["slide", "quiz", "pbl"][i % 3]).collect();
            let mut outline = Outline {
                title: String::new(),
                description: String::new(),
                language_directive: String::new(),
                scenes: kinds
                    .iter()
                    .map(|k| scene_from_value(json!({"kind": k, "title": "t"})).unwrap())
                    .collect(),
            };
            normalize(&mut outline, &request());
            assert_eq!(outline.scenes.len(), n.min(MAX_SCENES));
            let discussions = outline.scenes.iter().filter(|s| s.discussion).count();
            assert!(discussions <= 2 && !outline.scenes.first().is_some_and(|s| s.discussion));
        }
    }

    #[test]
    fn the_preview_reports_each_scene_once_at_every_split() {
        let full = reply(&["slide", "quiz", "slide"]);
        for split in 1..full.len() {
            let mut preview = OutlinePreview::default();
            let mut seen = preview.push(&full[..split]);
            seen.extend(preview.push(&full[split..]));
            let titles: Vec<_> = seen.iter().map(|s| s.title.as_str()).collect();
            assert_eq!(
                titles,
                ["Scene 1", "Scene 2", "Scene 3"],
                "split at {split}"
            );
        }
    }
}
