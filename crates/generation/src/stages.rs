//! The per-scene stages: a scene's content (a slide's elements, a quiz, an interactive page, a
//! project briefing) and then its script (what the teacher says and does). Each stage has a
//! request builder and a reader. Readers are strict: the reply must become the course model and
//! pass the course's own validation; code fixes what code can decide (missing ids, effects that
//! point at nothing, a discussion where none was planned) and says so in the notes; anything else
//! is an error whose text goes back to the model in the retry ([`feedback_request`]).
//!
//! A usable reply can still fall short, and then it too goes back once with the problem (the
//! runner keeps the better of the two replies): texts in another script than the course's
//! language (`aula_course::writes_in_all`), a script that says less than two thirds of
//! [`min_speech_words`], a quiz without a short-answer question. A script line that reads out an
//! agent's persona is dropped by code with a note; the model is told only when nothing else was
//! said.
//!
//! For a server that enforces schemas (see [`crate::fit`]) the outline's lists and texts and a
//! script's lines carry bounds (`maxItems`, `maxLength`), so a model that repeats itself stops
//! by construction. A script's schema starts with an `opening_line` field before its items, so
//! the teacher speaks first (llama.cpp cannot require a list's first item to be speech), and a
//! quiz's is a tuple of two choice questions and a short answer (`schemas/quiz-enforced.json`),
//! so every quiz has an answer for the teacher to grade.

use std::collections::HashSet;
use std::fmt::Write as _;

use aula_course::{Action, ActionKind, AgentRole, Course, Scene, SceneContent, FORMAT_VERSION};
use aula_director::prompt::{action_reference, element_line};
use aula_providers::budget::{Cut, Sections, TooLong};
use aula_providers::{ChatMessage, ChatRequest, JsonSchema};
use serde_json::{json, Map, Value};

use crate::document::{scene_passages, SCENE_DOCUMENT_CHARS};
use crate::fit::{fit_request, plain, Stage, Target, PLAN_RANK};
use crate::outline::{language_name, CourseRequest, Outline, SceneKind, SceneOutline};
use crate::repair;
use aula_text::is_cjk_letter as is_cjk;

/// What a stage's reader made of a reply, with what code had to fix.
#[derive(Debug, Clone, PartialEq)]
pub struct Read<T> {
    pub value: T,
    pub notes: Vec<String>,
    /// Usable, but short of what was asked (a narration too short for its slide, the wrong
    /// language, a plan of the wrong length): worth asking the model once more with these.
    pub problems: Vec<String>,
    /// The reply was read only through the tolerant reading (fences, prose, a cut end).
    pub repaired: bool,
    /// What code makes of the value to meet its problems as far as code can, with a note saying
    /// what it did: used when the reply is kept with its problems (the model, asked again, did
    /// no better).
    pub fallback: Option<(T, String)>,
}

impl<T> Read<T> {
    fn clean(value: T, notes: Vec<String>) -> Read<T> {
        Read {
            value,
            notes,
            problems: Vec::new(),
            repaired: false,
            fallback: None,
        }
    }
}

/// A stage's checked result and the JSON text it is stored as. The text is the checked JSON
/// value itself, not a re-serialization of the typed model: the AI worker then carries no
/// serializer for the course model.
#[derive(Debug, Clone, PartialEq)]
pub struct Written<T> {
    pub value: T,
    pub json: String,
}

/// The scene a stage works on, in its course, and the model it is written for.
#[derive(Debug, Clone, Copy)]
pub struct SceneContext<'a> {
    pub request: &'a CourseRequest,
    pub outline: &'a Outline,
    pub scene: &'a SceneOutline,
    pub target: Target,
}

impl SceneContext<'_> {
    fn position(&self) -> usize {
        self.outline
            .scenes
            .iter()
            .position(|s| s.id == self.scene.id)
            .unwrap_or(0)
    }

    /// The course around this scene, shared by both stages' prompts: the course, its language
    /// and learner, every scene of the plan (the farthest from this one may be left out), this
    /// scene's own plan, and the passages of the learner's document about it (cut first).
    fn course_sections(&self, out: &mut Sections) {
        let outline = self.outline;
        let mut head = format!("The course: \"{}\".\n", outline.title);
        if !outline.description.is_empty() {
            let _ = writeln!(head, "{}", outline.description);
        }
        let directive = if outline.language_directive.is_empty() {
            format!("Teach in {}.", language_name(&self.request.language))
        } else {
            outline.language_directive.clone()
        };
        let _ = writeln!(head, "Language: {directive}");
        if !self.request.learner.trim().is_empty() {
            let _ = writeln!(
                head,
                "The learner: {}",
                clip(self.request.learner.trim(), 600)
            );
        }
        let _ = writeln!(head, "\nAll scenes, in order:");
        out.keep(head);
        // The same text for every scene of the course up to here (this scene is named after
        // the list, not marked in it), so a server that caches prompt prefixes reads it once.
        let here = self.position();
        for (i, scene) in outline.scenes.iter().enumerate() {
            let line = format!("{}. [{}] {}\n", i + 1, scene.kind.name(), scene.title);
            if i == here {
                out.keep(line);
            } else {
                let distance = i.abs_diff(here).min(10) as u8;
                out.push(
                    "the plan's other scenes",
                    Cut::Drop {
                        rank: PLAN_RANK + 10 - distance,
                    },
                    line,
                );
            }
        }
        let scene = self.scene;
        let mut this = format!(
            "\nThis scene: {}. \"{}\" ({}).\n",
            here + 1,
            scene.title,
            scene.kind.name()
        );
        if !scene.goal.is_empty() {
            let _ = writeln!(this, "Goal: {}", scene.goal);
        }
        for point in &scene.key_points {
            let _ = writeln!(this, "- {point}");
        }
        out.keep(this);
        if let Some(document) = self
            .request
            .document
            .as_deref()
            .filter(|d| !d.trim().is_empty())
        {
            out.keep(
                "\nTeach from the learner's document; these passages of it are about this scene:\n<document>\n",
            );
            out.append(scene_passages(document, scene, SCENE_DOCUMENT_CHARS));
            out.keep("</document>\n");
        }
    }
}

const JSON_ONLY: &str = "Reply with the JSON only: no prose, no code fence.";

/// The content stage's request for one scene, fitted to the model (see [`crate::fit`]).
pub fn content_request(ctx: &SceneContext) -> Result<(ChatRequest, Vec<String>), TooLong> {
    let mut system = Sections::new();
    ctx.course_sections(&mut system);
    system.keep("\n");
    let full = ctx.target.full_schemas;
    let (rules, schema) = match ctx.scene.kind {
        SceneKind::Slide => (SLIDE_RULES, full.then(slide_schema)),
        SceneKind::Quiz if full => (QUIZ_RULES, Some(enforced_quiz_schema())),
        SceneKind::Quiz => (QUIZ_RULES, Some(quiz_schema())),
        SceneKind::Interactive => (INTERACTIVE_RULES, None),
        SceneKind::Pbl => (PROJECT_RULES, full.then(project_schema)),
    };
    system.keep(rules);
    let ask = match ctx.scene.kind {
        SceneKind::Interactive => format!("Write the page for \"{}\".", ctx.scene.title),
        _ => format!(
            "Write the {} for \"{}\". {JSON_ONLY}",
            ctx.scene.kind.name(),
            ctx.scene.title
        ),
    };
    let schema = schema.map(|schema| JsonSchema {
        name: ctx.scene.kind.name().into(),
        schema,
    });
    let stage = Stage::Content(ctx.scene.kind);
    let (mut chat, cuts) = fit_request(system, plain(ask), schema, stage, ctx.target)?;
    chat.temperature = Some(0.5);
    Ok((chat, cuts))
}

const SLIDE_RULES: &str = "You design this scene's slide. The canvas is 1000 wide and 562.5 high \
(x to the right, y down, from the top left). Keep every element inside it with a margin of at \
least 30, and do not let elements overlap, except a shape placed behind text.\n\
Reply with one JSON object: {\"background\"?: colour, \"elements\": [element, ...]}. 3 to 7 \
elements; a title at the top; every element has a unique \"id\" of letters, digits and dashes. \
Element types:\n\
- {\"type\":\"text\",\"id\",\"left\",\"top\",\"width\",\"height\",\"markdown\":string,\"font_size\"?:number,\"color\"?:colour,\"align\"?:\"left\"|\"center\"|\"right\"} \
Markdown only (**bold**, lists), no HTML, no LaTeX. Body text 18-22, titles 28-34. Allow 1.5 × font_size of height per line.\n\
- {\"type\":\"shape\",\"id\",\"left\",\"top\",\"width\",\"height\",\"shape\":\"rectangle\"|\"rounded_rectangle\"|\"ellipse\"|\"triangle\"|\"arrow\",\"fill\":colour,\"text\"?:string}\n\
- {\"type\":\"line\",\"id\",\"start\":[x,y],\"end\":[x,y],\"color\"?:colour,\"width\"?:number,\"style\"?:\"solid\"|\"dashed\",\"ends\"?:[\"plain\"|\"arrow\",\"plain\"|\"arrow\"]}\n\
- {\"type\":\"chart\",\"id\",\"left\",\"top\",\"width\",\"height\",\"chart_type\":\"bar\"|\"column\"|\"line\"|\"pie\"|\"ring\"|\"area\"|\"radar\"|\"scatter\",\"data\":{\"labels\":[string],\"legends\":[string],\"series\":[[number]]}} (one series per legend, one number per label)\n\
- {\"type\":\"table\",\"id\",\"left\",\"top\",\"width\",\"height\",\"rows\":[[string]],\"header\":true} (plain text cells, every row the same length)\n\
- {\"type\":\"latex\",\"id\",\"left\",\"top\",\"width\",\"height\",\"latex\":string} (one formula)\n\
- {\"type\":\"code\",\"id\",\"left\",\"top\",\"width\",\"height\",\"language\":string,\"code\":string}\n\
Colours are #rrggbb. The slide shows key words and structure; the teacher says the rest.";

const QUIZ_RULES: &str = "You write this scene's quiz: 2 to 4 questions on what the course has \
taught so far, from easy to harder, the last one a short answer in the learner's own words. Reply with one JSON object: {\"questions\": [question, ...]}, \
each question one of:\n\
- {\"type\":\"single\",\"id\",\"question\",\"options\":[{\"id\":\"a\",\"text\"},...],\"answer\":option id,\"explanation\",\"points\":1}\n\
- {\"type\":\"multiple\",\"id\",\"question\",\"options\":[...],\"answers\":[option ids],\"explanation\",\"points\":2}\n\
- {\"type\":\"short\",\"id\",\"question\",\"reference_answer\":what a full answer says,\"explanation\",\"points\":2}\n\
Three or four options per choice question, exactly one right for single. No LaTeX.";

const INTERACTIVE_RULES: &str = "You write this scene's interactive page: one self-contained \
HTML document (inline CSS and JavaScript, no external files, no network, no alerts) that lets \
the learner explore the idea by doing: sliders that change a simulation, a diagram to click \
through, a small game. It runs in a sandboxed frame about 1000×560. Label everything in the \
course's language. Reply with the HTML document only, from <!DOCTYPE html> to </html>.";

const PROJECT_RULES: &str = "You write this scene's small project (project-based learning). \
Reply with one JSON object: {\"briefing\": the task as the learner first reads it, \
\"objectives\": [2 to 4 strings], \"project\": {\"title\", \"description\", \"agents\": \
[{\"name\", \"role\", \"persona\"}] (2 or 3 project roles), \"issues\": [{\"id\", \"title\", \
\"description\", \"owner\": an agent's name}] (2 to 5 steps in working order)}}.";

/// Spoken units a scene's narration should reach: words, or for CJK languages characters
/// (a spoken word is about two of them). A slide needs more the more it shows: about two words
/// per word on it, with a floor and a ceiling; other scenes a short introduction.
pub fn min_speech_words(content: &SceneContent, language: &str) -> usize {
    let shown = match content {
        SceneContent::Slide(slide) => slide
            .elements
            .iter()
            .map(|e| spoken_units(&element_text(e), language))
            .sum::<usize>(),
        _ => 0,
    };
    let words = match content {
        SceneContent::Slide(_) => (shown * 2 + 30).clamp(60, 180),
        _ => 40,
    };
    if is_cjk_language(language) {
        words * 2
    } else {
        words
    }
}

/// A problem when the texts the learner will see are not in the course's language (as far as
/// its script tells: English and French both pass a Latin-script check).
pub fn language_problem<'a>(
    texts: impl IntoIterator<Item = &'a str>,
    language: &str,
) -> Option<String> {
    aula_course::writes_in_all(texts, language)
        .note()
        .map(|note| {
            format!(
                "{note} Write every text the learner sees in {}",
                language_name(language)
            )
        })
}

/// The texts of a scene's content that the learner reads.
fn shown_texts(content: &SceneContent) -> Vec<String> {
    use aula_course::scene::QuizQuestion as Q;
    match content {
        SceneContent::Slide(slide) => slide.elements.iter().map(element_text).collect(),
        SceneContent::Quiz(quiz) => quiz
            .questions
            .iter()
            .flat_map(|q| match q {
                Q::Single(q) => std::iter::once(q.question.clone())
                    .chain(q.options.iter().map(|o| o.text.clone()))
                    .collect::<Vec<_>>(),
                Q::Multiple(q) => std::iter::once(q.question.clone())
                    .chain(q.options.iter().map(|o| o.text.clone()))
                    .collect(),
                Q::Short(q) => vec![q.question.clone(), q.reference_answer.clone()],
            })
            .collect(),
        SceneContent::Interactive(page) => vec![visible_text(&page.html)],
        SceneContent::Pbl(project) => {
            let mut texts = vec![project.briefing.clone()];
            texts.extend(project.objectives.iter().cloned());
            if let Some(team) = &project.project {
                texts.push(team.title.clone());
                texts.push(team.description.clone());
                for agent in &team.agents {
                    texts.push(agent.persona.clone());
                }
                for issue in &team.issues {
                    texts.push(issue.title.clone());
                    texts.push(issue.description.clone());
                }
            }
            texts
        }
    }
}

/// The text of an HTML page a reader sees: no tags, scripts or styles.
fn visible_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let mut at = 0;
    while at < html.len() {
        let Some(open) = html[at..].find('<').map(|i| at + i) else {
            out.push_str(&html[at..]);
            break;
        };
        out.push_str(&html[at..open]);
        out.push(' ');
        let skip_to = ["script", "style"].iter().find_map(|tag| {
            lower[open + 1..]
                .starts_with(tag)
                .then(|| {
                    lower[open..]
                        .find(&format!("</{tag}"))
                        .map(|i| open + i + 2)
                })
                .flatten()
        });
        let from = skip_to.unwrap_or(open);
        at = match html[from..].find('>') {
            Some(close) => from + close + 1,
            None => html.len(),
        };
    }
    out
}

fn is_cjk_language(language: &str) -> bool {
    matches!(
        language.split(['-', '_']).next().unwrap_or(""),
        "zh" | "ja" | "ko"
    )
}

/// Words of `text`, or for CJK languages its CJK characters plus its other words.
fn spoken_units(text: &str, language: &str) -> usize {
    if is_cjk_language(language) {
        let cjk = text.chars().filter(|c| is_cjk(*c)).count();
        let latin = text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .count();
        cjk + latin
    } else {
        text.split_whitespace().count()
    }
}

/// The words an element shows.
fn element_text(element: &aula_course::SlideElement) -> String {
    use aula_course::SlideElement as E;
    match element {
        E::Text(t) => t.markdown.clone(),
        E::Shape(s) => s.text.clone().unwrap_or_default(),
        E::Table(t) => t
            .rows
            .iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
        E::Chart(c) => c.data.labels.join(" "),
        E::Code(c) => c.code.lines().take(6).collect::<Vec<_>>().join(" "),
        _ => String::new(),
    }
}

/// A slide as a JSON schema that a server enforcing schemas samples by: 3 to 7 elements, each
/// one of the element kinds the rules name, with its fields. Kept as JSON text: built with
/// `json!` it cost the AI worker several KB of code.
fn slide_schema() -> Value {
    serde_json::from_str(include_str!("../schemas/slide.json")).unwrap_or_default()
}

/// A project briefing as a JSON schema.
fn project_schema() -> Value {
    serde_json::from_str(include_str!("../schemas/project.json")).unwrap_or_default()
}

/// The longest spoken line a script's schema takes, in characters.
const SCRIPT_LINE_CHARS: usize = 700;

/// The field before the script in which a server that enforces schemas makes the teacher speak
/// first: a small model held to the item list alone has written scripts of actions only.
const OPENING_LINE: &str = "opening_line";

/// A script as a JSON schema: the teacher's opening words, then spoken text and the actions this
/// scene allows, spotlight and laser only at the slide's own elements, a discussion only where
/// one is planned and opened by a classmate. (A list cannot require its first item to be text on
/// llama.cpp, which reads `prefixItems` as a fixed tuple, so the first words are a field of their
/// own, ordered before the list.)
fn script_schema(
    content: &SceneContent,
    kinds: &[ActionKind],
    discussion: bool,
    students: &[&aula_course::AgentProfile],
) -> Value {
    let element_ids: Vec<&str> = match content {
        SceneContent::Slide(slide) => slide.elements.iter().map(|e| e.id()).collect(),
        _ => Vec::new(),
    };
    let mut items = vec![json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["text"]},
            // A line is a few sentences; the bound ends a line that repeats itself.
            "content": {"type": "string", "minLength": 1, "maxLength": SCRIPT_LINE_CHARS},
        },
        "required": ["type", "content"],
        "additionalProperties": false,
    })];
    let action = |name: &str, params: Value| {
        json!({
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["action"]},
                "name": {"type": "string", "enum": [name]},
                "params": params,
            },
            "required": ["type", "name", "params"],
            "additionalProperties": false,
        })
    };
    for kind in kinds {
        let params = if kind.is_slide_effect() {
            if element_ids.is_empty() {
                continue;
            }
            json!({
                "type": "object",
                "properties": {"element_id": {"type": "string", "enum": element_ids}},
                "required": ["element_id"],
                "additionalProperties": false,
            })
        } else {
            json!({"type": "object"})
        };
        items.push(action(kind.as_str(), params));
    }
    if discussion && !students.is_empty() {
        let ids: Vec<&str> = students.iter().map(|a| a.id.as_str()).collect();
        items.push(action(
            "discussion",
            json!({
                "type": "object",
                "properties": {
                    "topic": {"type": "string"},
                    "prompt": {"type": "string"},
                    "agent_id": {"type": "string", "enum": ids},
                },
                "required": ["topic", "prompt", "agent_id"],
                "additionalProperties": false,
            }),
        ));
    }
    json!({
        "type": "object",
        "properties": {
            OPENING_LINE: {"type": "string", "minLength": 10, "maxLength": SCRIPT_LINE_CHARS},
            "script": {"type": "array", "minItems": 1, "maxItems": 13, "items": {"anyOf": items}},
        },
        "required": [OPENING_LINE, "script"],
        "additionalProperties": false,
    })
}

/// One flat object per question: strict structured outputs take no unions of objects; the
/// reader drops the fields a question's type does not use. Kept as JSON text (see
/// [`slide_schema`]).
fn quiz_schema() -> Value {
    serde_json::from_str(include_str!("../schemas/quiz.json")).unwrap_or_default()
}

/// The quiz for a server that enforces schemas: three questions as a tuple (llama.cpp and Ollama
/// read an `items` list so), two with choices and the last a short answer, so every quiz has one
/// to grade by construction. The same question object as [`quiz_schema`]'s otherwise. Kept as
/// JSON text (see [`slide_schema`]).
fn enforced_quiz_schema() -> Value {
    serde_json::from_str(include_str!("../schemas/quiz-enforced.json")).unwrap_or_default()
}

/// Reads the content stage's reply into the scene's content.
pub fn parse_content(
    reply: &str,
    ctx: &SceneContext,
) -> Result<Read<Written<SceneContent>>, String> {
    if ctx.scene.kind == SceneKind::Interactive {
        return interactive_page(reply, ctx);
    }
    read_json(reply, |value| content_from_value(value, ctx))
}

/// Strictly first; if that fails, each value the tolerant reading finds, the first that reads.
/// The strict error is the one reported: it is what the model has to fix.
fn read_json<T>(
    reply: &str,
    convert: impl Fn(Value) -> Result<Read<T>, String>,
) -> Result<Read<T>, String> {
    let strict = repair::strict(reply).and_then(&convert);
    match strict {
        Ok(read) => Ok(read),
        Err(error) => repair::tolerant_values(reply)
            .find_map(|value| convert(value).ok())
            .map(|mut read| {
                read.notes.push(format!("the reply needed repair: {error}"));
                read.repaired = true;
                read
            })
            .ok_or(error),
    }
}

fn content_from_value(
    value: Value,
    ctx: &SceneContext,
) -> Result<Read<Written<SceneContent>>, String> {
    let mut notes = Vec::new();
    let kind = ctx.scene.kind;
    let mut fields = match (kind, value) {
        (SceneKind::Quiz, Value::Array(questions)) => {
            let mut map = Map::new();
            map.insert("questions".into(), Value::Array(questions));
            map
        }
        (_, Value::Object(map)) => map,
        _ => return Err(format!("the {} must be one JSON object", kind.name())),
    };
    match kind {
        SceneKind::Slide => {
            if let Some(Value::Array(elements)) = fields.get_mut("elements") {
                name_elements(elements, &mut notes);
                keep_images_offline(elements, &mut notes);
                notes.extend(crate::layout::fit_text_boxes(elements));
            }
        }
        SceneKind::Quiz => {
            if let Some(Value::Array(questions)) = fields.get_mut("questions") {
                tidy_questions(questions, &mut notes);
            }
        }
        _ => {}
    }
    fields.insert("type".into(), Value::String(kind.name().into()));
    let value = Value::Object(fields);
    let json = value.to_string();
    let content: SceneContent = serde_json::from_value(value)
        .map_err(|e| format!("the {} does not fit the course format: {e}", kind.name()))?;
    check_scene(ctx, content.clone(), Vec::new())?;
    let mut problems = Vec::new();
    let mut fallback = None;
    let shown = shown_texts(&content);
    problems.extend(language_problem(
        shown.iter().map(String::as_str),
        &ctx.request.language,
    ));
    if let SceneContent::Quiz(quiz) = &content {
        let short = quiz
            .questions
            .iter()
            .any(|q| matches!(q, aula_course::scene::QuizQuestion::Short(_)));
        if !short {
            problems.push(
                "the quiz has no short-answer question; make the last question one (type \"short\", with a reference_answer)"
                    .to_string(),
            );
        }
        let repeated = repeated_options(&quiz.questions);
        if !repeated.is_empty() {
            fallback = without_repeated_options(&json, ctx);
        }
        problems.extend(repeated);
    }
    Ok(Read {
        problems,
        fallback,
        ..Read::clean(
            Written {
                value: content,
                json,
            },
            notes,
        )
    })
}

/// An option's words as compared for repeats: without case or surrounding blanks.
fn same_words(text: &str) -> String {
    text.trim().to_lowercase()
}

/// [`same_words`] of an option given as JSON.
fn option_words(option: &Value) -> String {
    same_words(option["text"].as_str().unwrap_or_default())
}

/// A quiz whose questions offer the same option twice, mended by code: each repeated option is
/// left out (the one kept counts as right where either was), and a question left with fewer
/// than two options is left out. None when no question would be left, or the result does not
/// check. Run 6's Chinese quiz offered one sentence four times, twice, after being asked again.
fn without_repeated_options(
    json: &str,
    ctx: &SceneContext,
) -> Option<(Written<SceneContent>, String)> {
    let mut value: Value = serde_json::from_str(json).ok()?;
    let questions = value.get_mut("questions")?.as_array_mut()?;
    let (mut mended, before) = (0, questions.len());
    questions.retain_mut(|question| {
        let Some(options) = question.get("options").and_then(Value::as_array) else {
            return true;
        };
        // Each option's id, and the id of the kept option with the same words.
        let mut first_with: Vec<(String, String)> = Vec::new();
        let mut kept: Vec<Value> = Vec::new();
        for option in options {
            let id = option["id"].as_str().unwrap_or_default().to_string();
            let same = |other: &&Value| option_words(other) == option_words(option);
            let first = match kept.iter().find(same) {
                Some(first) => first["id"].as_str().unwrap_or_default().to_string(),
                None => {
                    kept.push(option.clone());
                    id.clone()
                }
            };
            first_with.push((id, first));
        }
        if kept.len() == options.len() {
            return true;
        }
        mended += 1;
        if kept.len() < 2 {
            return false;
        }
        let first = |id: &str| {
            first_with
                .iter()
                .find(|(of, _)| of == id)
                .map_or(id.to_string(), |(_, first)| first.clone())
        };
        if let Some(answer) = question.get("answer").and_then(Value::as_str) {
            question["answer"] = json!(first(answer));
        }
        if let Some(answers) = question.get("answers").and_then(Value::as_array) {
            let mut ids: Vec<String> = Vec::new();
            for id in answers.iter().filter_map(Value::as_str).map(first) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            question["answers"] = json!(ids);
        }
        question["options"] = Value::Array(kept);
        true
    });
    let dropped = before - questions.len();
    if questions.is_empty() || mended == 0 {
        return None;
    }
    let content: SceneContent = serde_json::from_value(value.clone()).ok()?;
    check_scene(ctx, content.clone(), Vec::new()).ok()?;
    let note = if dropped == 0 {
        format!("{mended} question(s) offered an option twice: the repeats were left out")
    } else {
        format!(
            "{mended} question(s) offered an option twice: the repeats were left out, and \
             {dropped} question(s) left with one option were dropped"
        )
    };
    Some((
        Written {
            value: content,
            json: value.to_string(),
        },
        note,
    ))
}

/// A problem for each choice question that offers the same option twice (compared without case
/// or surrounding blanks): a learner cannot choose between two identical answers.
fn repeated_options(questions: &[aula_course::scene::QuizQuestion]) -> Vec<String> {
    use aula_course::scene::QuizQuestion as Q;
    questions
        .iter()
        .enumerate()
        .filter_map(|(i, q)| {
            let options = match q {
                Q::Single(q) => &q.options,
                Q::Multiple(q) => &q.options,
                Q::Short(_) => return None,
            };
            let mut seen = HashSet::new();
            let repeated = options
                .iter()
                .find(|o| !seen.insert(same_words(&o.text)))?;
            Some(format!(
                "question {} offers the option \"{}\" more than once; give every option different words",
                i + 1,
                repeated.text.trim()
            ))
        })
        .collect()
}

/// Gives every slide element an id, unique in the slide (code decides ids, not the model).
fn name_elements(elements: &mut [Value], notes: &mut Vec<String>) {
    let mut seen = HashSet::new();
    for (i, element) in elements.iter_mut().enumerate() {
        let Value::Object(fields) = element else {
            continue;
        };
        let id = fields.get("id").and_then(Value::as_str).unwrap_or("");
        let usable = !id.is_empty()
            && id.len() <= 40
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !usable || seen.contains(id) {
            let fresh = format!("e{}", i + 1);
            notes.push(format!("element {} was given the id \"{fresh}\"", i + 1));
            fields.insert("id".into(), Value::String(fresh));
        }
        if let Some(id) = fields.get("id").and_then(Value::as_str) {
            seen.insert(id.to_string());
        }
    }
}

/// A generated slide's text has no images of its own, so a markdown image with a web address
/// (`![alt](https://…)`) is one the model made up: it would show as a broken image, and fetch
/// from a stranger's host, in a course meant to play offline. It becomes its alt text.
fn keep_images_offline(elements: &mut [Value], notes: &mut Vec<String>) {
    for (i, element) in elements.iter_mut().enumerate() {
        let Some(Value::String(markdown)) = element.get_mut("markdown") else {
            continue;
        };
        let (kept, removed) = without_web_images(markdown);
        if removed > 0 {
            *markdown = kept;
            notes.push(format!(
                "element {}: {removed} image(s) from the web left out, their alt text kept",
                i + 1
            ));
        }
    }
}

/// The markdown with each `![alt](http…)` image replaced by its alt text, and how many.
fn without_web_images(markdown: &str) -> (String, usize) {
    let mut out = String::with_capacity(markdown.len());
    let mut removed = 0;
    let mut rest = markdown;
    while let Some(start) = rest.find("![") {
        let after_bang = &rest[start + 2..];
        let image = after_bang.find("](").and_then(|close| {
            let target = &after_bang[close + 2..];
            let end = target.find(')')?;
            let url = target[..end].trim_start().to_ascii_lowercase();
            let web = ["http://", "https://", "//"]
                .iter()
                .any(|p| url.starts_with(p));
            let alt = &after_bang[..close];
            (web && !alt.contains(['\n', ']'])).then_some((alt, start + 2 + close + 2 + end + 1))
        });
        match image {
            Some((alt, consumed)) => {
                out.push_str(&rest[..start]);
                out.push_str(alt);
                rest = &rest[consumed..];
                removed += 1;
            }
            None => {
                out.push_str(&rest[..start + 2]);
                rest = &rest[start + 2..];
            }
        }
    }
    out.push_str(rest);
    (out, removed)
}

/// Drops what a question's type does not use (the flat structured-output shape carries every
/// field) and gives missing ids.
fn tidy_questions(questions: &mut [Value], notes: &mut Vec<String>) {
    for (i, question) in questions.iter_mut().enumerate() {
        let Value::Object(fields) = question else {
            continue;
        };
        let unused: &[&str] = match fields.get("type").and_then(Value::as_str) {
            Some("single") => &["answers", "reference_answer"],
            Some("multiple") => &["answer", "reference_answer"],
            Some("short") => &["options", "answer", "answers"],
            _ => &[],
        };
        for key in unused {
            fields.remove(*key);
        }
        if fields.get("explanation").and_then(Value::as_str) == Some("") {
            fields.remove("explanation");
        }
        let has_id = fields
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
        if !has_id {
            notes.push(format!("question {} was given an id", i + 1));
            fields.insert("id".into(), Value::String(format!("q{}", i + 1)));
        }
    }
}

fn interactive_page(
    reply: &str,
    ctx: &SceneContext,
) -> Result<Read<Written<SceneContent>>, String> {
    let lower = reply.to_ascii_lowercase();
    let start = lower.find("<!doctype html").or_else(|| lower.find("<html"));
    let html = match (start, lower.rfind("</html>")) {
        (Some(start), Some(end)) if end > start => &reply[start..end + "</html>".len()],
        (Some(start), None) => &reply[start..],
        _ => return Err("the reply holds no HTML document (<!DOCTYPE html> … </html>)".into()),
    };
    if !html.to_ascii_lowercase().contains("<body") {
        return Err("the HTML document has no <body>".into());
    }
    let content = SceneContent::Interactive(aula_course::scene::Interactive {
        html: html.to_string(),
        widget: None,
    });
    let json = json!({"type": "interactive", "html": html}).to_string();
    check_scene(ctx, content.clone(), Vec::new())?;
    let mut notes = Vec::new();
    if !lower.contains("</html>") {
        notes.push("the page was cut off before </html>".into());
    }
    let problems = language_problem([visible_text(html).as_str()], &ctx.request.language)
        .into_iter()
        .collect();
    Ok(Read {
        problems,
        ..Read::clean(
            Written {
                value: content,
                json,
            },
            notes,
        )
    })
}

/// The script stage's request for one scene, given its content, fitted to the model.
pub fn actions_request(
    ctx: &SceneContext,
    content: &SceneContent,
) -> Result<(ChatRequest, Vec<String>), TooLong> {
    let mut system = Sections::new();
    ctx.course_sections(&mut system);
    let mut out = String::with_capacity(4 * 1024);
    out.push_str(
        "\nYou write what the teacher says and does in this scene of the online class, as a script.\n",
    );
    if let Some(teacher) = ctx
        .request
        .agents
        .iter()
        .find(|a| a.role == AgentRole::Teacher)
    {
        // Not as a "name — description" line: run 7's small model spoke that line as the
        // teacher's first words in three scripts of four.
        let _ = writeln!(
            out,
            "\nThe teacher is {}. How they teach, for you to follow and never to say: {}",
            teacher.name, teacher.persona
        );
    }
    let _ = writeln!(out, "\nWhat the learner sees:");
    match content {
        SceneContent::Slide(slide) => {
            for element in &slide.elements {
                let _ = writeln!(out, "{}", element_line(element));
            }
        }
        SceneContent::Quiz(quiz) => {
            let _ = writeln!(
                out,
                "A quiz of {} questions, which the learner answers after your introduction.",
                quiz.questions.len()
            );
        }
        SceneContent::Interactive(_) => {
            let _ = writeln!(
                out,
                "An interactive page the learner explores after your introduction."
            );
        }
        SceneContent::Pbl(project) => {
            let _ = writeln!(out, "A project: {}", clip(&project.briefing, 400));
        }
    }
    let position = ctx.position();
    let last = ctx.outline.scenes.len().saturating_sub(1);
    let _ = writeln!(
        out,
        "\n{}",
        match position {
            0 => "This is the first scene: greet the learner and the class briefly, say what the course is about, then teach.",
            p if p == last => "This is the last scene: teach it, then sum up the course in two or three sentences.",
            _ => "The class is under way: go straight on from the previous scene, without greeting.",
        }
    );
    let opening = if ctx.target.full_schemas {
        format!("\"{OPENING_LINE}\": the teacher's first words, ")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\nReply with one JSON object {{{opening}\"script\": [item, ...]}}, the items in the order things \
         happen. Items:\n\
         - {{\"type\":\"text\",\"content\":string}}: what the teacher says, one to three sentences, \
         plain spoken words (no Markdown, no lists, no formulas written as code).\n\
         - {{\"type\":\"action\",\"name\":string,\"params\":object}}: something the teacher does."
    );
    let kinds = script_actions(ctx, content);
    if kinds.is_empty() {
        let _ = writeln!(out, "Only text items in this scene.");
    } else {
        let _ = writeln!(out, "Actions here:");
        for kind in &kinds {
            if let Some(reference) = action_reference(*kind) {
                let _ = writeln!(out, "- {}: {reference}", kind.as_str());
            }
        }
    }
    let words = min_speech_words(content, &ctx.request.language);
    let speaking = match content {
        SceneContent::Slide(_) => format!(
            "6 to 12 items; explain every point on the slide in the teacher's own words, {words} \
             words or more in all; a spotlight or laser on an element comes just before the \
             words about it; the whiteboard only for a worked example or a derivation, closed \
             again after."
        ),
        _ => format!(
            "2 to 4 items, {words} words or more in all: introduce what the learner is about to do \
             and why, then let them do it."
        ),
    };
    let _ = writeln!(out, "{speaking}");
    let students: Vec<&aula_course::AgentProfile> = ctx
        .request
        .agents
        .iter()
        .filter(|a| a.role != AgentRole::Teacher)
        .collect();
    if ctx.scene.discussion {
        let named: Vec<String> = students
            .iter()
            .map(|a| format!("\"{}\" ({})", a.id, a.name))
            .collect();
        let _ = writeln!(
            out,
            "End the scene with one class discussion, as the last item: \
             {{\"type\":\"action\",\"name\":\"discussion\",\"params\":{{\"topic\": a question worth \
             debating, \"prompt\": what to weigh, \"agent_id\": the classmate who opens it, one of \
             {}}}}}.",
            named.join(", ")
        );
    } else {
        let _ = writeln!(out, "No discussion in this scene.");
    }
    system.keep(out);
    let schema = ctx.target.full_schemas.then(|| JsonSchema {
        name: "script".into(),
        schema: script_schema(content, &kinds, ctx.scene.discussion, &students),
    });
    let ask = format!("Write the script for \"{}\". {JSON_ONLY}", ctx.scene.title);
    let (mut chat, cuts) = fit_request(system, plain(ask), schema, Stage::Script, ctx.target)?;
    chat.temperature = Some(0.6);
    Ok((chat, cuts))
}

/// The actions a generated script may use in this scene, besides speech and the planned
/// discussion: slide effects on slides, and the whiteboard on slides.
fn script_actions(ctx: &SceneContext, content: &SceneContent) -> Vec<ActionKind> {
    let SceneContent::Slide(_) = content else {
        return Vec::new();
    };
    let teacher = ctx
        .request
        .agents
        .iter()
        .find(|a| a.role == AgentRole::Teacher);
    ActionKind::ALL
        .iter()
        .copied()
        .filter(|k| action_reference(*k).is_some())
        .filter(|k| *k != ActionKind::PlayVideo && *k != ActionKind::WbEditCode)
        .filter(|k| teacher.is_none_or(|t| t.allowed_actions.contains(k)))
        .collect()
}

/// Reads the script stage's reply into the scene's actions.
pub fn parse_actions(
    reply: &str,
    ctx: &SceneContext,
    content: &SceneContent,
) -> Result<Read<Written<Vec<Action>>>, String> {
    read_json(reply, |value| actions_from_value(value, ctx, content))
}

fn actions_from_value(
    value: Value,
    ctx: &SceneContext,
    content: &SceneContent,
) -> Result<Read<Written<Vec<Action>>>, String> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(mut map) => {
            let mut items = match map.remove("actions").or_else(|| map.remove("script")) {
                Some(Value::Array(items)) => items,
                _ => return Err("the script must be a JSON array of items".into()),
            };
            let opening = map.remove(OPENING_LINE);
            let opening = opening.as_ref().and_then(Value::as_str).map(str::trim);
            // The opening words lead the script, unless the list repeats them as its first line.
            let repeated = |first: &Value| {
                let said = first.get("content").or_else(|| first.get("text"));
                said.and_then(Value::as_str).map(str::trim) == opening
            };
            if let Some(opening) = opening.filter(|o| !o.is_empty()) {
                if !items.first().is_some_and(repeated) {
                    items.insert(0, json!({"type": "text", "content": opening}));
                }
            }
            items
        }
        _ => return Err("the script must be a JSON array of items".into()),
    };
    let allowed = script_actions(ctx, content);
    let element_ids: HashSet<&str> = match content {
        SceneContent::Slide(slide) => slide.elements.iter().map(|e| e.id()).collect(),
        _ => HashSet::new(),
    };
    let students: Vec<&str> = ctx
        .request
        .agents
        .iter()
        .filter(|a| a.role != AgentRole::Teacher)
        .map(|a| a.id.as_str())
        .collect();
    let personas = Personas::of(&ctx.request.agents);
    // The first line dropped for reading out a persona, to tell the model if nothing is left.
    let mut echoed = None;
    let mut notes = Vec::new();
    let mut actions = Vec::new();
    let mut written = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let id = format!("{}-a{}", ctx.scene.id, actions.len() + 1);
        let Value::Object(mut item) = item else {
            notes.push(format!("item {} is not an object; dropped", i + 1));
            continue;
        };
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if kind == "text" || kind == "speech" {
            let text = item
                .remove("content")
                .or_else(|| item.remove("text"))
                .and_then(|t| t.as_str().map(|s| s.trim().to_string()))
                .unwrap_or_default();
            let text = without_speaker_label(&text, &ctx.request.agents);
            if text.is_empty() {
                notes.push(format!("item {} has no words; dropped", i + 1));
                continue;
            }
            if let Some(problem) = personas.read_out_in(text) {
                notes.push(format!("item {}: {problem}; dropped", i + 1));
                echoed.get_or_insert(problem);
                continue;
            }
            for piece in split_speech(text, aula_course::limits::MAX_SPEECH_CHARS) {
                let id = format!("{}-a{}", ctx.scene.id, actions.len() + 1);
                written.push(json!({"type": "speech", "id": id, "text": piece}));
                actions.push(Action::Speech(aula_course::action::Speech {
                    id,
                    text: piece,
                    speaker: None,
                    audio_id: None,
                }));
            }
            continue;
        }
        let (name, params) = if kind == "action" {
            let name = item
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let params = match item.remove("params") {
                Some(Value::Object(params)) => params,
                None | Some(Value::Null) => Map::new(),
                Some(_) => {
                    notes.push(format!(
                        "item {} ({name}) has params that are not an object; dropped",
                        i + 1
                    ));
                    continue;
                }
            };
            (name, params)
        } else {
            // `{"type": "spotlight", "element_id": …}`: already an action object.
            item.remove("type");
            (kind, item)
        };
        let Some(action_kind) = ActionKind::from_name(&name) else {
            notes.push(format!(
                "item {}: \"{name}\" is not an action; dropped",
                i + 1
            ));
            continue;
        };
        let mut object = params;
        object.insert("type".into(), Value::String(name.clone()));
        object.insert("id".into(), Value::String(id));
        if action_kind == ActionKind::Discussion {
            if !ctx.scene.discussion {
                notes.push("a discussion was not planned for this scene; dropped".into());
                continue;
            }
            let opener = object.get("agent_id").and_then(Value::as_str);
            if !opener.is_some_and(|o| students.contains(&o)) {
                match students.first() {
                    Some(first) => {
                        object.insert("agent_id".into(), Value::String(first.to_string()));
                    }
                    None => {
                        object.remove("agent_id");
                    }
                }
            }
        } else if !allowed.contains(&action_kind) {
            notes.push(format!(
                "item {}: \"{name}\" cannot be used in this scene; dropped",
                i + 1
            ));
            continue;
        }
        if action_kind.is_slide_effect() {
            let target = object
                .get("element_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !element_ids.contains(target) {
                notes.push(format!("item {}: {name} points at \"{target}\", which the slide does not have; dropped", i + 1));
                continue;
            }
        }
        let object = Value::Object(object);
        match serde_json::from_value::<Action>(object.clone()) {
            Ok(action) => {
                let is_discussion = action_kind == ActionKind::Discussion;
                actions.push(action);
                written.push(object);
                if is_discussion {
                    // A discussion ends the scene: whatever follows would never be heard.
                    break;
                }
            }
            Err(e) => notes.push(format!("item {} ({name}) was dropped: {e}", i + 1)),
        }
    }
    if !actions.iter().any(|a| matches!(a, Action::Speech(_))) {
        return Err(match echoed {
            Some(problem) => format!("the script's only words are {problem}"),
            None => "the script has no spoken text".into(),
        });
    }
    check_scene(ctx, content.clone(), actions.clone())?;
    let language = &ctx.request.language;
    let said: usize = actions
        .iter()
        .filter_map(|a| match a {
            Action::Speech(speech) => Some(spoken_units(&speech.text, language)),
            _ => None,
        })
        .sum();
    let wanted = min_speech_words(content, language);
    let mut problems = Vec::new();
    let mut fallback = None;
    // Asked for `wanted`; below two thirds of it the scene is plainly too thin to teach.
    if said * 3 < wanted * 2 {
        fallback = with_unsaid_points(ctx, content, &actions, &written, &allowed);
        let unit = if is_cjk_language(language) {
            "characters"
        } else {
            "words"
        };
        problems.push(format!(
            "the teacher says only {said} {unit} in all; this scene needs at least {wanted}, \
             explaining every point it shows in full sentences"
        ));
    }
    let spoken: Vec<&str> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Speech(speech) => Some(speech.text.as_str()),
            _ => None,
        })
        .collect();
    problems.extend(language_problem(spoken, language));
    Ok(Read {
        value: Written {
            value: actions,
            json: Value::Array(written).to_string(),
        },
        notes,
        problems,
        repaired: false,
        fallback,
    })
}

/// A script that stays too short for its slide, completed by code: the teacher reads out each of
/// the slide's texts that no line speaks about (after a spotlight on it, where the scene allows
/// one), after the first line. None when every text is spoken about. Run 6's slide narrations
/// lasted 6 to 13 s: the model, asked again for more words, wrote no more.
fn with_unsaid_points(
    ctx: &SceneContext,
    content: &SceneContent,
    actions: &[Action],
    written: &[Value],
    allowed: &[ActionKind],
) -> Option<(Written<Vec<Action>>, String)> {
    let SceneContent::Slide(slide) = content else {
        return None;
    };
    let mut said = HashSet::new();
    for action in actions {
        if let Action::Speech(speech) = action {
            said.extend(meaning_units(&speech.text));
        }
    }
    let cjk = is_cjk_language(&ctx.request.language);
    let spotlight = allowed.contains(&ActionKind::Spotlight);
    let (mut added, mut added_json, mut points) = (Vec::new(), Vec::new(), 0);
    for element in &slide.elements {
        let shown = match element {
            aula_course::SlideElement::Text(t) => t.markdown.as_str(),
            aula_course::SlideElement::Shape(s) => s.text.as_deref().unwrap_or(""),
            _ => continue,
        };
        let units = meaning_units(shown);
        let spoken = units.iter().filter(|u| said.contains(*u)).count();
        if units.is_empty() || spoken * 2 >= units.len() {
            continue;
        }
        let line = spoken_line(shown, cjk);
        if line.is_empty() {
            continue;
        }
        points += 1;
        // Ids of their own (`-p`), so none meets the model's `-a` ids.
        let mut push = |mut object: Value| {
            object["id"] = json!(format!("{}-p{}", ctx.scene.id, added.len() + 1));
            if let Ok(action) = serde_json::from_value::<Action>(object.clone()) {
                added.push(action);
                added_json.push(object);
            }
        };
        if spotlight {
            push(json!({"type": "spotlight", "element_id": element.id()}));
        }
        for piece in split_speech(&line, aula_course::limits::MAX_SPEECH_CHARS) {
            push(json!({"type": "speech", "text": piece}));
        }
    }
    if points == 0 {
        return None;
    }
    let at = actions
        .iter()
        .position(|a| matches!(a, Action::Speech(_)))
        .map_or(0, |i| i + 1);
    let value = spliced(actions, at, added);
    let json = Value::Array(spliced(written, at, added_json)).to_string();
    Some((
        Written { value, json },
        format!(
            "the script stayed short of its slide: the teacher reads out {points} of the slide's \
             texts that no line spoke about"
        ),
    ))
}

/// A spoken line without a leading speaker label ("Ms. Lin: …", "林老师：…"): the caption
/// already names who speaks, and a label is not said aloud.
fn without_speaker_label<'t>(text: &'t str, agents: &[aula_course::AgentProfile]) -> &'t str {
    agents
        .iter()
        .filter(|a| !a.name.trim().is_empty())
        .find_map(|a| {
            let rest = text.strip_prefix(a.name.trim())?.trim_start();
            rest.strip_prefix([':', '：']).map(str::trim)
        })
        .unwrap_or(text)
}

/// `all` with `new` put in at `at`.
fn spliced<T: Clone>(all: &[T], at: usize, new: Vec<T>) -> Vec<T> {
    let mut out = all[..at].to_vec();
    out.extend(new);
    out.extend_from_slice(&all[at..]);
    out
}

/// What a text is about, to tell whether a line speaks about it: its words of four letters or
/// more, lowercased, and in CJK text its pairs of characters.
fn meaning_units(text: &str) -> HashSet<String> {
    let mut units = HashSet::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = word.chars().collect();
        if chars.iter().any(|c| is_cjk(*c)) {
            units.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
        } else if chars.len() >= 4 {
            units.insert(word.to_lowercase());
        }
    }
    units
}

/// A slide text as the teacher would say it: its lines without Markdown marks, each ended as a
/// sentence.
fn spoken_line(markdown: &str, cjk: bool) -> String {
    let mut out = String::new();
    for line in markdown.lines() {
        let line = line
            .trim()
            .trim_start_matches(|c: char| "#>*+-•".contains(c))
            .trim();
        let line = line
            .strip_prefix(|c: char| c.is_ascii_digit())
            .map_or(line, |rest| {
                rest.trim_start_matches(|c: char| c.is_ascii_digit())
                    .strip_prefix(['.', ')'])
                    .map_or(line, str::trim)
            });
        let line: String = line.chars().filter(|c| !"*_`$".contains(*c)).collect();
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !out.is_empty() && !cjk {
            out.push(' ');
        }
        out.push_str(line);
        if !line.ends_with(['.', '!', '?', '。', '！', '？', ':', '：']) {
            out.push(if cjk { '。' } else { '.' });
        }
    }
    out
}

/// The agents' personas as word runs, to catch a line that reads one out (the model copied
/// its prompt) instead of teaching. Read once per script.
struct Personas<'a> {
    agents: &'a [aula_course::AgentProfile],
    runs: Vec<HashSet<String>>,
}

impl<'a> Personas<'a> {
    fn of(agents: &'a [aula_course::AgentProfile]) -> Personas<'a> {
        Personas {
            agents,
            runs: agents.iter().map(|a| word_runs(&a.persona)).collect(),
        }
    }

    /// Why the line is not teaching, when most of its word runs (character runs in CJK) are
    /// one agent's persona.
    fn read_out_in(&self, line: &str) -> Option<String> {
        let runs = word_runs(line);
        if runs.len() < 4 {
            return None;
        }
        let (agent, _) = self.agents.iter().zip(&self.runs).find(|(_, persona)| {
            runs.iter().filter(|r| persona.contains(*r)).count() * 2 >= runs.len()
        })?;
        Some(format!(
            "a line that reads out how {} is described (\"{}\") instead of teaching: \
             every line is what is said to the class about this scene",
            agent.name,
            clip(line, 80)
        ))
    }
}

/// Runs of three words of `text`, lowercased; in CJK text runs of three characters.
fn word_runs(text: &str) -> HashSet<String> {
    let mut units: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.chars().any(is_cjk) {
            units.extend(word.chars().map(String::from));
        } else if !word.is_empty() {
            units.push(word.to_lowercase());
        }
    }
    units.windows(3).map(|w| w.join(" ")).collect()
}

/// Cuts a long speech at sentence ends so every piece fits.
fn split_speech(text: &str, max_chars: usize) -> Vec<String> {
    if text.chars().count() <= max_chars {
        return vec![text.to_string()];
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    for sentence in text.split_inclusive(['.', '!', '?', '。', '！', '？']) {
        if current.chars().count() + sentence.chars().count() > max_chars && !current.is_empty() {
            pieces.push(std::mem::take(&mut current).trim().to_string());
        }
        if sentence.chars().count() > max_chars {
            pieces.push(clip(sentence.trim(), max_chars));
        } else {
            current.push_str(sentence);
        }
    }
    if !current.trim().is_empty() {
        pieces.push(current.trim().to_string());
    }
    pieces
}

fn clip(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// The course's own validation of one scene, in a course with the request's agents.
fn check_scene(
    ctx: &SceneContext,
    content: SceneContent,
    actions: Vec<Action>,
) -> Result<(), String> {
    let course = Course {
        format_version: FORMAT_VERSION,
        id: "check".into(),
        title: "check".into(),
        language: ctx.request.language.clone(),
        description: String::new(),
        agents: ctx.request.agents.clone(),
        scenes: vec![Scene {
            id: ctx.scene.id.clone(),
            title: ctx.scene.title.clone(),
            content,
            actions,
        }],
        created_at: 0,
        updated_at: 0,
    };
    course.validate().map_err(|issues| {
        let listed: Vec<String> = issues
            .iter()
            .take(8)
            .map(|issue| {
                let path = issue.path.strip_prefix("scenes[0].").unwrap_or(&issue.path);
                format!("{path}: {}", issue.problem)
            })
            .collect();
        format!(
            "it does not pass the course's checks: {}",
            listed.join("; ")
        )
    })
}

/// The second try of a stage: the same request, the reply that failed (as much of it as the
/// model's context leaves room for), and why it could not be used. The answer keeps the room
/// the first had: what is added gives way instead, the echoed reply first, then the reason
/// (shortened); with no room even for a short reason the request goes again as it was.
pub fn feedback_request(
    original: &ChatRequest,
    reply: &str,
    error: &str,
    target: Target,
) -> ChatRequest {
    use aula_providers::budget::text_tokens;
    let context_tokens = target.context_tokens;
    let prompt_tokens = |request: &ChatRequest| crate::fit::fitted_prompt_tokens(request, target);
    /// A reason shorter than this tells the model nothing.
    const LEAST_NOTE: u32 = 24;
    let error = clip(error, 1_500);
    let ask = format!(
        "That reply could not be used as it is: {error}. Reply again with the whole corrected \
         answer, in the same format, and nothing else."
    );
    let reply_room = original.max_tokens.unwrap_or(1_024);
    // What the prompt may grow by while the answer keeps its room (two messages' framing: 16).
    let spare = context_tokens
        .saturating_sub(prompt_tokens(original))
        .saturating_sub(reply_room)
        .saturating_sub(32);
    let mut chat = original.clone();
    let echo_room = spare.saturating_sub(text_tokens(&ask) + 16);
    let mut echo = clip(reply, 6_000);
    while text_tokens(&echo) > echo_room && !echo.is_empty() {
        let keep = echo.chars().count() * 3 / 4;
        echo = echo.chars().take(keep).collect();
    }
    if !echo.trim().is_empty() {
        chat.messages.push(ChatMessage::assistant(echo));
        chat.messages.push(ChatMessage::user(ask));
    } else if let Some(last) = chat.messages.last_mut() {
        // No room to show the reply: say why in the ask itself, as briefly as the room needs.
        let mut note = format!("\n\n(An earlier answer to this could not be used: {error}.)");
        while text_tokens(&note) > spare && note.chars().count() > 40 {
            let keep = note.chars().count() * 3 / 4;
            note = format!("{}…)", note.chars().take(keep).collect::<String>());
        }
        if spare >= LEAST_NOTE && text_tokens(&note) <= spare {
            last.content.push_str(&note);
        }
    }
    let left = context_tokens
        .saturating_sub(prompt_tokens(&chat))
        .saturating_sub(32);
    chat.max_tokens = Some(reply_room.min(left).max(1));
    chat
}

#[cfg(test)]
mod tests {
    use aula_course::default_agents;
    use serde_json::json;

    use super::*;
    use crate::outline::normalize;

    fn request() -> CourseRequest {
        CourseRequest {
            topic: "Tides".into(),
            language: "en".into(),
            document: None,
            learner: String::new(),
            agents: default_agents(),
        }
    }

    fn outline(kinds: &[SceneKind]) -> Outline {
        let mut outline = Outline {
            title: "Tides".into(),
            description: String::new(),
            language_directive: String::new(),
            scenes: kinds
                .iter()
                .enumerate()
                .map(|(i, k)| SceneOutline {
                    id: String::new(),
                    kind: *k,
                    title: format!("Scene {}", i + 1),
                    goal: String::new(),
                    key_points: vec![],
                    discussion: false,
                })
                .collect(),
        };
        normalize(&mut outline, &request());
        outline
    }

    /// The words of a script's speech actions, in order.
    fn spoken(actions: &[Action]) -> Vec<&str> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Speech(s) => Some(s.text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// A request and an outline of `kinds`, from which a scene's context is made.
    struct Setup {
        req: CourseRequest,
        outline: Outline,
    }

    impl Setup {
        fn new(kinds: &[SceneKind]) -> Setup {
            Setup {
                req: request(),
                outline: outline(kinds),
            }
        }

        /// In `language`, its cast speaking it.
        fn in_language(kinds: &[SceneKind], language: &str) -> Setup {
            let mut setup = Setup::new(kinds);
            setup.req.language = language.into();
            aula_course::speak_course_language(&mut setup.req.agents, language);
            setup
        }

        fn ctx(&self, scene: usize) -> SceneContext<'_> {
            SceneContext {
                request: &self.req,
                outline: &self.outline,
                scene: &self.outline.scenes[scene],
                target: Target::default(),
            }
        }
    }

    fn slide() -> SceneContent {
        serde_json::from_value(json!({"type": "slide", "elements": [
            {"type": "text", "id": "title", "left": 40, "top": 20, "width": 900, "height": 60, "markdown": "Tides"}
        ]}))
        .unwrap()
    }

    #[test]
    fn the_full_schemas_parse_and_name_the_fields_the_course_model_reads() {
        let slide = slide_schema();
        let kinds = slide["properties"]["elements"]["items"]["anyOf"]
            .as_array()
            .expect("element kinds");
        assert_eq!(kinds.len(), 7);
        let fixture: Value =
            serde_json::from_str(include_str!("../fixtures/photosynthesis.json")).unwrap();
        for content in fixture["content"].as_object().unwrap().values() {
            for element in content["elements"].as_array().into_iter().flatten() {
                let kind = element["type"].as_str().unwrap();
                let schema = kinds
                    .iter()
                    .find(|k| k["properties"]["type"]["enum"][0] == kind)
                    .unwrap_or_else(|| panic!("no schema for {kind}"));
                for key in element.as_object().unwrap().keys() {
                    assert!(
                        schema["properties"].get(key).is_some(),
                        "{kind}.{key} is not in the slide schema"
                    );
                }
            }
        }
        assert_eq!(quiz_schema()["required"], json!(["questions"]));
        let project = project_schema();
        assert_eq!(
            project["required"],
            json!(["briefing", "objectives", "project"])
        );
    }

    #[test]
    fn an_enforcing_servers_script_opens_with_the_teachers_words_even_when_its_list_is_all_actions()
    {
        let req = request();
        let outline = outline(&[SceneKind::Slide]);
        let scene = &outline.scenes[0];
        let kinds = [ActionKind::Spotlight];
        let schema = script_schema(&slide(), &kinds, false, &[]);
        assert_eq!(schema["required"], json!([OPENING_LINE, "script"]));
        assert_eq!(schema["properties"][OPENING_LINE]["type"], "string");
        // serde_json keeps keys sorted, and llama.cpp writes them in the order it gets them: the
        // opening words come before the list.
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, [OPENING_LINE, "script"]);
        let ctx = SceneContext {
            request: &req,
            outline: &outline,
            scene,
            target: Target {
                full_schemas: true,
                ..Target::default()
            },
        };
        // Long enough for the slide on its own (two thirds of 60 words).
        let opening = "Look at the sea: twice a day it climbs the beach and falls back again. \
            That rise and fall is the tide, and today we find out why it happens. The moon pulls \
            on the water of the whole planet, a little more on the near side than on the far \
            side, and that small difference in pull is what we see as the tide.";
        let reply = json!({OPENING_LINE: opening, "script": [
            {"type": "action", "name": "spotlight", "params": {"element_id": "title"}},
        ]});
        let actions = actions_from_value(reply, &ctx, &slide()).map(|r| r.value.value);
        let actions = actions.expect("the opening words make it a script");
        assert!(matches!(&actions[0], Action::Speech(s) if s.text == opening));
        assert_eq!(actions.len(), 2);
        // Repeated as the list's first line, the words are said once.
        let reply = json!({OPENING_LINE: opening, "script": [
            {"type": "text", "content": format!(" {opening}")},
            {"type": "action", "name": "spotlight", "params": {"element_id": "title"}},
        ]});
        let actions = actions_from_value(reply, &ctx, &slide())
            .unwrap()
            .value
            .value;
        assert_eq!(actions.len(), 2, "{actions:?}");
        // The prompt names the field only where the schema asks for it.
        let asked = |full_schemas| {
            let ctx = SceneContext {
                target: Target {
                    full_schemas,
                    ..Target::default()
                },
                ..ctx
            };
            let (chat, _) = actions_request(&ctx, &slide()).unwrap();
            chat.system.contains(OPENING_LINE)
        };
        assert!(asked(true) && !asked(false));
    }

    #[test]
    fn the_script_prompt_gives_the_teachers_manner_as_guidance_not_as_a_line_to_copy() {
        let setup = Setup::new(&[SceneKind::Slide]);
        let (req, ctx) = (&setup.req, setup.ctx(0));
        let teacher = &req.agents[0];
        let (chat, _) = actions_request(&ctx, &slide()).unwrap();
        assert!(chat.system.contains(&format!(
            "The teacher is {}. How they teach, for you to follow and never to say: {}",
            teacher.name, teacher.persona
        )));
        assert!(!chat.system.contains(&format!("{} — ", teacher.name)));
    }

    #[test]
    fn an_enforcing_servers_quiz_is_two_choice_questions_then_a_short_answer() {
        let schema = enforced_quiz_schema();
        let questions = &schema["properties"]["questions"];
        let tuple = questions["items"].as_array().expect("a tuple of questions");
        assert_eq!(tuple.len(), 3);
        assert_eq!(
            (
                questions["minItems"].as_u64(),
                questions["maxItems"].as_u64()
            ),
            (Some(3), Some(3))
        );
        let kinds: Vec<&Value> = tuple
            .iter()
            .map(|q| &q["properties"]["type"]["enum"])
            .collect();
        assert_eq!(kinds[0], &json!(["single", "multiple"]));
        assert_eq!(kinds[1], &json!(["single", "multiple"]));
        assert_eq!(kinds[2], &json!(["short"]));
        assert_eq!(tuple[2]["properties"]["options"]["maxItems"], 0);
        // Otherwise each is the plain schema's question object, field for field, so the two
        // files cannot drift apart.
        let plain = &quiz_schema()["properties"]["questions"]["items"];
        for q in tuple {
            let mut q = q.clone();
            q["properties"]["type"]["enum"] = plain["properties"]["type"]["enum"].clone();
            if let Some(options) = q["properties"]["options"].as_object_mut() {
                options.remove("maxItems");
            }
            assert_eq!(&q, plain);
        }
        // A hosted strict mode gets the plain one; the content request picks by the target.
        let req = request();
        let outline = outline(&[SceneKind::Slide, SceneKind::Quiz]);
        let asked = |full_schemas| {
            let ctx = SceneContext {
                request: &req,
                outline: &outline,
                scene: &outline.scenes[1],
                target: Target {
                    full_schemas,
                    ..Target::default()
                },
            };
            content_request(&ctx).unwrap().0.json_schema.unwrap().schema
        };
        assert_eq!(asked(true), schema);
        assert_eq!(asked(false), quiz_schema());
    }

    #[test]
    fn an_interactive_page_is_cut_out_of_fences_and_prose() {
        let setup = Setup::new(&[SceneKind::Slide, SceneKind::Interactive]);
        let ctx = setup.ctx(1);
        let reply = "Here it is:\n```html\n<!DOCTYPE html><html><body><input id=\"moon-slider\" type=\"range\"></body></html>\n```";
        let read = parse_content(reply, &ctx).unwrap();
        let SceneContent::Interactive(page) = read.value.value else {
            panic!()
        };
        assert!(page.html.starts_with("<!DOCTYPE html>") && page.html.ends_with("</html>"));
        assert!(parse_content("I made a page for you!", &ctx).is_err());
    }

    #[test]
    fn effects_at_missing_elements_and_unplanned_discussions_are_dropped_with_a_note() {
        let req = request();
        let outline = outline(&[SceneKind::Slide, SceneKind::Slide, SceneKind::Slide]);
        let plain = outline.scenes.iter().find(|s| !s.discussion).unwrap();
        let ctx = SceneContext {
            request: &req,
            outline: &outline,
            scene: plain,
            target: Target::default(),
        };
        let reply = json!([
            {"type": "action", "name": "spotlight", "params": {"element_id": "nowhere"}},
            {"type": "text", "content": "The moon pulls the sea."},
            {"type": "action", "name": "discussion", "params": {"topic": "Why two tides?"}},
            {"type": "action", "name": "teleport", "params": {}},
        ])
        .to_string();
        let read = parse_actions(&reply, &ctx, &slide()).unwrap();
        assert_eq!(read.value.value.len(), 1);
        assert_eq!(read.notes.len(), 3, "{:?}", read.notes);
    }

    #[test]
    fn a_planned_discussion_ends_the_script_and_gets_a_real_classmate() {
        let req = request();
        let outline = outline(&[SceneKind::Slide, SceneKind::Slide, SceneKind::Slide]);
        let planned = outline.scenes.iter().find(|s| s.discussion).unwrap();
        let ctx = SceneContext {
            request: &req,
            outline: &outline,
            scene: planned,
            target: Target::default(),
        };
        let reply = json!([
            {"type": "text", "content": "Spring tides come with full and new moons."},
            {"type": "action", "name": "discussion", "params": {"topic": "Why two tides a day?", "agent_id": "teacher"}},
            {"type": "text", "content": "This is never heard."},
        ])
        .to_string();
        let actions = parse_actions(&reply, &ctx, &slide()).unwrap().value.value;
        assert_eq!(actions.len(), 2);
        let Action::Discussion(d) = &actions[1] else {
            panic!()
        };
        assert_eq!(
            d.agent_id.as_deref(),
            Some("mia"),
            "the teacher does not open a class discussion"
        );
    }

    #[test]
    fn a_slide_image_with_a_web_address_becomes_its_alt_text_and_a_note() {
        assert_eq!(
            without_web_images(
                "Stages:\n![三个阶段](https://example.com/a.png \"t\") and ![b](//cdn.x/b.png)"
            ),
            ("Stages:\n三个阶段 and b".to_string(), 2)
        );
        for kept in [
            "![local](media/a.png)",
            "![broken](https://x",
            "a ! [b](c) ![",
            "![x]",
            "![a] then [b](https://e.org)",
        ] {
            assert_eq!(without_web_images(kept), (kept.to_string(), 0));
        }
        let setup = Setup::new(&[SceneKind::Slide]);
        let ctx = setup.ctx(0);
        let reply = json!({"elements": [
            {"type": "text", "id": "body", "left": 40, "top": 20, "width": 900, "height": 300,
             "markdown": "The sea rises. ![tide chart](https://example.com/tides.png)"}
        ]})
        .to_string();
        let read = parse_content(&reply, &ctx).unwrap();
        let SceneContent::Slide(slide) = &read.value.value else {
            panic!("{:?}", read.value.value)
        };
        let aula_course::scene::SlideElement::Text(text) = &slide.elements[0] else {
            panic!("{:?}", slide.elements[0])
        };
        assert_eq!(text.markdown, "The sea rises. tide chart");
        assert!(
            read.notes
                .iter()
                .any(|n| n.contains("1 image(s) from the web")),
            "{:?}",
            read.notes
        );
        assert!(
            !read.value.json.contains("example.com"),
            "{}",
            read.value.json
        );
    }

    #[test]
    fn a_quiz_that_offers_the_same_option_twice_goes_back_and_naming_it() {
        let setup = Setup::new(&[SceneKind::Slide, SceneKind::Quiz]);
        let ctx = setup.ctx(1);
        let quiz = |options: [&str; 3]| {
            json!([
                {"type": "single", "id": "q1", "question": "What pulls the sea?",
                 "options": [{"id": "a", "text": options[0]}, {"id": "b", "text": options[1]}, {"id": "c", "text": options[2]}],
                 "answer": "a", "points": 1},
                {"type": "short", "id": "q2", "question": "Why two tides a day?", "reference_answer": "The moon pulls both sides.", "points": 2}
            ])
            .to_string()
        };
        let problems = |options| parse_content(&quiz(options), &ctx).unwrap().problems;
        let repeated = problems(["The moon", "the moon ", "The sun"]);
        assert_eq!(repeated.len(), 1, "{repeated:?}");
        assert!(
            repeated[0].starts_with("question 1 offers the option \"the moon\" more than once"),
            "{repeated:?}"
        );
        assert_eq!(
            problems(["The moon", "The sun", "The wind"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_quiz_kept_with_repeated_options_is_mended_by_code() {
        let setup = Setup::new(&[SceneKind::Slide, SceneKind::Quiz]);
        let ctx = setup.ctx(1);
        let reply = json!([
            {"type": "single", "id": "q1", "question": "What pulls the sea?",
             "options": [{"id": "a", "text": "The sun"}, {"id": "b", "text": "The moon"}, {"id": "c", "text": "the moon "}],
             "answer": "c", "points": 1},
            {"type": "multiple", "id": "q2", "question": "Which are tides?",
             "options": [{"id": "a", "text": "Spring"}, {"id": "b", "text": "Neap"}, {"id": "c", "text": "Neap"}, {"id": "d", "text": "Winter"}],
             "answers": ["a", "b", "c"], "points": 1},
            {"type": "single", "id": "q3", "question": "What rises?",
             "options": [{"id": "a", "text": "The sea"}, {"id": "b", "text": "The sea"}],
             "answer": "a", "points": 1},
            {"type": "short", "id": "q4", "question": "Why two tides a day?", "reference_answer": "The moon pulls both sides.", "points": 2}
        ]);
        let read = parse_content(&reply.to_string(), &ctx).unwrap();
        assert_eq!(read.problems.len(), 3, "{:?}", read.problems);
        let (mended, note) = read.fallback.expect("mended by code");
        assert_eq!(
            note,
            "3 question(s) offered an option twice: the repeats were left out, and 1 question(s) \
             left with one option were dropped"
        );
        let SceneContent::Quiz(quiz) = &mended.value else {
            panic!("a quiz");
        };
        use aula_course::scene::QuizQuestion as Q;
        let [Q::Single(q1), Q::Multiple(q2), Q::Short(_)] = quiz.questions.as_slice() else {
            panic!("q3 is dropped: {:?}", quiz.questions);
        };
        let texts = |o: &[aula_course::scene::QuizOption]| {
            o.iter()
                .map(|o| o.id.clone() + "=" + &o.text)
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&q1.options), ["a=The sun", "b=The moon"]);
        assert_eq!(q1.answer, "b", "the kept repeat counts as right");
        assert_eq!(texts(&q2.options), ["a=Spring", "b=Neap", "d=Winter"]);
        assert_eq!(q2.answers, ["a", "b"]);
        let stored: SceneContent =
            serde_json::from_value(serde_json::from_str::<Value>(&mended.json).unwrap()).unwrap();
        assert_eq!(stored, mended.value);

        // Nothing to mend when only a question with one option would be left.
        let lone = json!([{"type": "single", "id": "q1", "question": "What rises?",
             "options": [{"id": "a", "text": "The sea"}, {"id": "b", "text": "The sea"}],
             "answer": "a", "points": 1}]);
        assert_eq!(
            parse_content(&lone.to_string(), &ctx).unwrap().fallback,
            None
        );
    }

    #[test]
    fn a_line_that_starts_with_its_speakers_name_as_a_label_is_said_without_it() {
        for language in ["en", "zh-CN"] {
            let setup = Setup::in_language(&[SceneKind::Slide], language);
            let name = setup.req.agents[0].name.clone();
            let ctx = setup.ctx(0);
            let lines = [
                format!("{name}: Welcome to the class on tides."),
                format!("{name}：今天我们来看潮汐。"),
                format!("{name} smiles and begins with the moon."),
            ];
            let items: Vec<Value> = lines
                .iter()
                .map(|l| json!({"type": "text", "content": l}))
                .collect();
            let read = parse_actions(&Value::Array(items).to_string(), &ctx, &slide()).unwrap();
            let said = spoken(&read.value.value);
            assert_eq!(
                said,
                [
                    "Welcome to the class on tides.",
                    "今天我们来看潮汐。",
                    lines[2].as_str()
                ],
                "{language}"
            );
            assert!(read
                .value
                .json
                .contains("\"Welcome to the class on tides.\""));
        }
    }

    #[test]
    fn a_thin_script_is_completed_with_the_slide_texts_it_does_not_speak_about() {
        for language in ["en", "zh-CN"] {
            let setup = Setup::in_language(&[SceneKind::Slide], language);
            let ctx = setup.ctx(0);
            let (title, point, other, opening) = if language == "en" {
                (
                    "# Tides",
                    "- The **moon** pulls the sea toward it\n- 2. Two tides come each day",
                    "The sun's pull adds spring tides",
                    "Welcome: today we look at tides.",
                )
            } else {
                (
                    "# 潮汐",
                    "- 月球把海水拉向它\n- 每天有两次潮汐",
                    "太阳的引力带来大潮",
                    "欢迎：今天我们来看潮汐。",
                )
            };
            let slide: SceneContent = serde_json::from_value(json!({"type": "slide", "elements": [
                {"type": "text", "id": "t", "left": 40, "top": 20, "width": 900, "height": 60, "markdown": title},
                {"type": "text", "id": "p", "left": 40, "top": 100, "width": 900, "height": 120, "markdown": point},
                {"type": "shape", "id": "s", "left": 40, "top": 300, "width": 400, "height": 80, "shape": "rectangle", "fill": "#eef", "text": other}
            ]}))
            .unwrap();
            let reply = json!([{"type": "text", "content": opening}, {"type": "text", "content": "Let us begin."}]);
            let read = parse_actions(&reply.to_string(), &ctx, &slide).unwrap();
            assert!(!read.problems.is_empty(), "{language}: thin");
            let (completed, note) = read.fallback.expect("completed by code");
            assert!(
                note.contains("reads out 2 of the slide's texts"),
                "{language}: {note}"
            );
            let steps: Vec<String> = completed
                .value
                .iter()
                .map(|a| match a {
                    Action::Speech(s) => s.text.clone(),
                    Action::Spotlight(s) => format!("spotlight {}", s.element_id),
                    other => format!("{other:?}"),
                })
                .collect();
            let expected: Vec<String> = if language == "en" {
                vec![
                    opening.into(),
                    "spotlight p".into(),
                    "The moon pulls the sea toward it. Two tides come each day.".into(),
                    "spotlight s".into(),
                    "The sun's pull adds spring tides.".into(),
                    "Let us begin.".into(),
                ]
            } else {
                vec![
                    opening.into(),
                    "spotlight p".into(),
                    "月球把海水拉向它。每天有两次潮汐。".into(),
                    "spotlight s".into(),
                    "太阳的引力带来大潮。".into(),
                    "Let us begin.".into(),
                ]
            };
            assert_eq!(steps, expected, "{language}");
            // The stored JSON is the same script.
            let stored: Vec<Action> = serde_json::from_str(&completed.json).unwrap();
            assert_eq!(stored, completed.value, "{language}");
            check_scene(&ctx, slide.clone(), completed.value).unwrap();

            // A script that speaks about every text needs nothing from code, even when short.
            let covering =
                json!([{"type": "text", "content": format!("{opening} {point} {other}")}]);
            let read = parse_actions(&covering.to_string(), &ctx, &slide).unwrap();
            assert_eq!(read.fallback, None, "{language}");
        }
    }

    #[test]
    fn a_line_that_reads_out_a_persona_is_dropped_and_a_line_about_the_slide_is_kept() {
        for language in ["en", "zh-CN"] {
            let setup = Setup::in_language(&[SceneKind::Slide], language);
            let teacher = setup.req.agents[0].clone();
            let ctx = setup.ctx(0);
            let lesson = if language == "en" {
                "The moon pulls the sea toward it, so the water rises on the side facing it, \
                 and one step at a time we will see why there are two tides a day."
            } else {
                "月球的引力把海水拉向它，所以面向月球的一侧水面升高，我们一步一步来看为什么一天有两次潮汐。"
            };
            let script = |lines: &[&str]| {
                let items: Vec<Value> = lines
                    .iter()
                    .map(|line| json!({"type": "text", "content": line}))
                    .collect();
                parse_actions(&Value::Array(items).to_string(), &ctx, &slide())
            };
            let read = script(&[&teacher.persona, lesson]).unwrap();
            let said = spoken(&read.value.value);
            assert_eq!(said, [lesson], "{language}");
            assert!(
                read.notes
                    .iter()
                    .any(|n| n.starts_with("item 1: a line that reads out how")
                        && n.contains(&teacher.name)),
                "{language}: {:?}",
                read.notes
            );
            let only_persona = script(&[&teacher.persona]).unwrap_err();
            assert!(
                only_persona.starts_with("the script's only words are a line that reads out how")
                    && only_persona.contains(&teacher.name),
                "{language}: {only_persona}"
            );
            let kept = script(&[lesson]).unwrap();
            assert!(
                !kept.notes.iter().any(|n| n.contains("is described")),
                "{language}: {:?}",
                kept.notes
            );
        }
    }

    #[test]
    fn a_script_without_words_is_refused_and_long_speech_is_split() {
        let setup = Setup::new(&[SceneKind::Slide]);
        let ctx = setup.ctx(0);
        let err = parse_actions(
            "[{\"type\":\"action\",\"name\":\"spotlight\",\"params\":{\"element_id\":\"title\"}}]",
            &ctx,
            &slide(),
        )
        .unwrap_err();
        assert!(err.contains("no spoken text"), "{err}");
        let long = "The sea rises. ".repeat(300);
        let reply = json!([{"type": "text", "content": long}]).to_string();
        let actions = parse_actions(&reply, &ctx, &slide()).unwrap().value.value;
        assert!(actions.len() >= 3);
        assert!(actions.iter().all(|a| matches!(a, Action::Speech(s) if s.text.chars().count() <= aula_course::limits::MAX_SPEECH_CHARS)));
    }

    #[test]
    fn prompts_name_the_scene_its_place_and_no_placeholder_survives() {
        let req = request();
        let outline = outline(&[SceneKind::Slide, SceneKind::Quiz]);
        for scene in &outline.scenes {
            let ctx = SceneContext {
                request: &req,
                outline: &outline,
                scene,
                target: Target::default(),
            };
            let (content, _) = content_request(&ctx).unwrap();
            let here = outline
                .scenes
                .iter()
                .position(|s| s.id == scene.id)
                .unwrap()
                + 1;
            assert!(content.system.contains(&format!("This scene: {here}.")));
            assert!(content.messages[0].content.contains(&scene.title));
            let (script, _) = actions_request(&ctx, &slide()).unwrap();
            // Both stages of every scene open with the same course text, for prefix caches.
            let shared = "All scenes, in order:\n1. [slide] Scene 1\n2. [quiz] Scene 2\n";
            assert!(content.system.contains(shared), "{}", content.system);
            assert_eq!(
                content.system.split("\nThis scene:").next(),
                script.system.split("\nThis scene:").next()
            );
            for text in [&content.system, &script.system] {
                assert!(!text.contains("{{"), "{text}");
            }
        }
        let quiz_ctx = SceneContext {
            request: &req,
            outline: &outline,
            scene: &outline.scenes[1],
            target: Target::default(),
        };
        assert!(
            content_request(&quiz_ctx).unwrap().0.json_schema.is_some(),
            "a quiz asks for structured output"
        );
    }

    #[test]
    fn a_corrected_retry_keeps_the_answers_room_and_the_reason_gives_way() {
        use crate::fit::fitted_prompt_tokens;
        let context: u32 = 4_096;
        let reason = "the script has no spoken text; every scene needs the teacher to speak \
                      about each point it shows, in full sentences. "
            .repeat(12);
        let failed_reply = "{\"actions\": [{\"type\": \"spotlight\"}]} ".repeat(40);
        // A schema as long as a script's: in the prompt for a server that only reads it, a
        // sampling grammar (not counted) for one that enforces it.
        let schema = JsonSchema {
            name: "scene_script".to_owned(),
            schema: json!({ "description": "an action of the script ".repeat(100) }),
        };
        for full_schemas in [false, true] {
            let target = Target {
                context_tokens: context,
                full_schemas,
            };
            let mut seen = [0; 3];
            for prompt_words in (100..4_000).step_by(50) {
                let mut original = ChatRequest::new(
                    "You write the script of one scene.".to_owned(),
                    vec![ChatMessage::user("word ".repeat(prompt_words))],
                );
                original.json_schema = Some(schema.clone());
                let prompt = fitted_prompt_tokens(&original, target);
                let Some(left) = context.checked_sub(prompt + 32).filter(|l| *l > 0) else {
                    continue;
                };
                let room = 1_600.min(left);
                original.max_tokens = Some(room);
                let again = feedback_request(&original, &failed_reply, &reason, target);
                assert_eq!(
                    again.max_tokens,
                    Some(room),
                    "the answer keeps its room with a prompt of {prompt} tokens \
                     (schemas enforced: {full_schemas})"
                );
                let again_prompt = fitted_prompt_tokens(&again, target);
                assert!(again_prompt + room <= context, "{prompt} tokens");
                let added = again_prompt - prompt;
                let spare = context - prompt - room - 32;
                if spare >= 1_500 {
                    assert_eq!(again.messages.len(), 3, "with room the reply is shown back");
                    seen[0] += 1;
                } else if spare >= 24 {
                    assert!(added > 0, "a short reason is said ({spare} spare)");
                    seen[1] += 1;
                } else {
                    assert_eq!(again, original, "no room: the request goes again as it was");
                    seen[2] += 1;
                }
            }
            assert!(
                seen.iter().all(|n| *n > 0),
                "every case was met (schemas enforced: {full_schemas}): {seen:?}"
            );
        }
    }
}
