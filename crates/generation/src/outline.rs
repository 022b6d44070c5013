//! The first stage: what the learner asked for ([`CourseRequest`]) becomes an [`Outline`], the
//! list of scenes the course will have. The prompt asks for one JSON object; the reply is read
//! strictly (then repaired, see [`crate::repair`]) and normalized by code: ids, counts, how many
//! interactive and project scenes there may be, and which scenes hold the course's discussions
//! are decided here, not by the model. [`OutlinePreview`] shows scenes while the reply streams.

use std::fmt::Write as _;

use aula_course::AgentProfile;
use aula_providers::{ChatMessage, ChatRequest, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::repair;

/// The most scenes a course may have; a longer outline is cut.
pub const MAX_SCENES: usize = 20;
/// How much of a document goes into the outline prompt.
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

/// The outline stage's request: the instructions in the system prompt, the learner's words in
/// the user message.
pub fn outline_request(request: &CourseRequest) -> ChatRequest {
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
         Rules:\n\
         - Each scene takes one to three minutes; a course has 6 to 12 scenes unless the learner \
         asks for another length.\n\
         - Mostly slides. Put a quiz after every three or four slides and one at the end.\n\
         - At most {MAX_INTERACTIVE} interactive scenes (a hands-on page: a simulation, a diagram \
         to explore, a small game) and at most {MAX_PROJECTS} pbl scene (a small project), only \
         when they truly help.\n\
         - Build ideas in order: each scene may rely only on earlier ones.\n\
         - A key point that needs a chart or a table says so: \"[Chart] ...\" or \"[Table] ...\".\n\
         - Titles name the idea, never the teacher.",
        language = language_name(&request.language),
    );
    let mut user = String::with_capacity(request.topic.len() + 256);
    let _ = writeln!(user, "What I want to learn: {}", request.topic.trim());
    if !request.learner.trim().is_empty() {
        let _ = writeln!(user, "About me: {}", request.learner.trim());
    }
    if let Some(document) = request.document.as_deref().filter(|d| !d.trim().is_empty()) {
        let excerpt: String = document.chars().take(MAX_DOCUMENT_CHARS).collect();
        let _ = writeln!(
            user,
            "\nBase the course on this document (its text, extracted from a PDF):\n<document>\n{}\n</document>",
            excerpt.trim()
        );
    }
    let mut chat = ChatRequest::new(system, vec![ChatMessage::user(user)]);
    chat.temperature = Some(0.4);
    chat.json_schema = Some(JsonSchema {
        name: "course_outline".into(),
        schema: outline_schema(),
    });
    chat
}

fn outline_schema() -> Value {
    let scene = json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["slide", "quiz", "interactive", "pbl"]},
            "title": {"type": "string"},
            "goal": {"type": "string"},
            "key_points": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["kind", "title", "goal", "key_points"],
        "additionalProperties": false,
    });
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "description": {"type": "string"},
            "language_directive": {"type": "string"},
            "scenes": {"type": "array", "items": scene},
        },
        "required": ["title", "description", "language_directive", "scenes"],
        "additionalProperties": false,
    })
}

/// The English name of a language tag, for prompts ("zh-CN" → "Chinese (Simplified)").
pub fn language_name(tag: &str) -> String {
    aula_director::prompt::language_name(tag).to_string()
}

/// Reads an outline reply: strictly, or else through the tolerant reading. Accepts a bare array
/// of scenes too. The result is normalized.
pub fn parse_outline(reply: &str, request: &CourseRequest) -> Result<Outline, String> {
    match repair::strict(reply).and_then(|v| outline_from_value(v, request)) {
        Ok(outline) => Ok(outline),
        Err(strict_error) => repair::tolerant_values(reply)
            .find_map(|v| outline_from_value(v, request).ok())
            .ok_or(strict_error),
    }
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
    normalize(&mut outline, request);
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

    #[test]
    fn the_request_carries_the_topic_the_learner_and_the_document() {
        let mut req = request();
        req.document = Some("Antigens are molecules that...".into());
        let chat = outline_request(&req);
        assert!(chat.system.contains("English"));
        let user = &chat.messages[0].content;
        assert!(user.contains("How vaccines train"));
        assert!(user.contains("A nurse"));
        assert!(user.contains("<document>\nAntigens are molecules"));
        assert!(chat.json_schema.is_some());
        assert!(!chat.system.contains("{{") || chat.system.contains("{\"title\""));
    }

    #[test]
    fn a_long_document_is_cut() {
        let mut req = request();
        req.document = Some("x".repeat(MAX_DOCUMENT_CHARS + 500));
        let chat = outline_request(&req);
        let xs = chat.messages[0].content.matches('x').count();
        assert!(xs <= MAX_DOCUMENT_CHARS + 2, "{xs}");
    }

    #[test]
    fn an_outline_is_read_and_normalized_by_code() {
        let kinds = [
            "slide",
            "slide",
            "interactive",
            "slide",
            "interactive",
            "interactive",
            "pbl",
            "pbl",
            "quiz",
        ];
        let outline = parse_outline(&reply(&kinds), &request()).unwrap();
        assert_eq!(outline.title, "Vaccines");
        let ids: Vec<_> = outline.scenes.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"]);
        let got: Vec<_> = outline.scenes.iter().map(|s| s.kind.name()).collect();
        assert_eq!(
            got,
            [
                "slide",
                "slide",
                "interactive",
                "slide",
                "interactive",
                "slide",
                "pbl",
                "slide",
                "quiz"
            ]
        );
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
    fn a_bare_array_and_a_fenced_reply_are_accepted() {
        let bare = r#"[{"kind": "slide", "title": "One"}, {"kind": "quiz", "title": "Two"}]"#;
        let outline = parse_outline(bare, &request()).unwrap();
        assert_eq!(outline.scenes.len(), 2);
        assert_eq!(outline.title, "How vaccines train the immune system");
        let fenced = format!(
            "Here is the plan:\n```json\n{}\n```",
            reply(&["slide", "quiz"])
        );
        assert_eq!(parse_outline(&fenced, &request()).unwrap().scenes.len(), 2);
    }

    #[test]
    fn a_cut_off_outline_keeps_its_complete_scenes() {
        let full = reply(&["slide", "slide", "quiz"]);
        let cut = &full[..full.rfind("{\"goal\"").unwrap() + 12];
        let outline = parse_outline(cut, &request()).unwrap();
        assert_eq!(outline.scenes.len(), 2);
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
        let mut outline = parse_outline(&reply(&["slide", "slide", "slide"]), &request()).unwrap();
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
