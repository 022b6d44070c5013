//! Checks a course beyond what its types already guarantee: unique ids, references that resolve,
//! quiz answers that exist, non-empty titles and size limits. Every problem found is reported
//! with the path of the field it is about, not just the first.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::action::{Action, CodeEditOperation};
use crate::agent::AgentRole;
use crate::scene::{
    QuizOption, QuizQuestion, Scene, SceneContent, Slide, SlideElement, CANVAS_HEIGHT, CANVAS_WIDTH,
};
use crate::{Course, FORMAT_VERSION};

/// Size limits of a course. Generous for real lessons, small enough that a broken or hostile file
/// cannot exhaust the browser.
pub mod limits {
    pub const MAX_ID_CHARS: usize = 64;
    pub const MAX_TITLE_CHARS: usize = 200;
    pub const MAX_DESCRIPTION_CHARS: usize = 5_000;
    pub const MAX_PERSONA_CHARS: usize = 2_000;
    pub const MAX_AGENTS: usize = 12;
    pub const MAX_SCENES: usize = 200;
    pub const MAX_ACTIONS_PER_SCENE: usize = 500;
    pub const MAX_ELEMENTS_PER_SLIDE: usize = 100;
    pub const MAX_SPEECH_CHARS: usize = 2_000;
    pub const MAX_QUESTIONS_PER_QUIZ: usize = 50;
    pub const MAX_OPTIONS_PER_QUESTION: usize = 10;
    pub const MAX_INTERACTIVE_HTML_BYTES: usize = 1024 * 1024;
    /// How far an element may stick out of the canvas, for rounding in generated layouts.
    pub const CANVAS_TOLERANCE: f64 = 0.5;
}

use limits::*;

/// One problem with a course: where it is, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationIssue {
    /// e.g. `scenes[2].actions[0].speaker`.
    pub path: String,
    pub problem: String,
}

impl fmt::Display for ValidationIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

#[derive(Default)]
struct Checker {
    issues: Vec<ValidationIssue>,
}

impl Checker {
    fn report(&mut self, path: impl Into<String>, problem: impl Into<String>) {
        self.issues.push(ValidationIssue {
            path: path.into(),
            problem: problem.into(),
        });
    }

    fn id(&mut self, path: &str, id: &str) {
        if id.trim().is_empty() {
            self.report(path, "the id is empty");
        } else if id.chars().count() > MAX_ID_CHARS {
            self.report(
                path,
                format!("the id is longer than {MAX_ID_CHARS} characters"),
            );
        }
    }

    fn text(&mut self, path: &str, what: &str, value: &str, max_chars: usize) {
        if value.trim().is_empty() {
            self.report(path, format!("the {what} is empty"));
        } else if value.chars().count() > max_chars {
            self.report(
                path,
                format!("the {what} is longer than {max_chars} characters"),
            );
        }
    }

    fn max_len(&mut self, path: &str, what: &str, len: usize, max: usize) {
        if len > max {
            self.report(path, format!("{len} {what}; at most {max} are allowed"));
        }
    }

    fn numbers(&mut self, path: &str, values: &[f64]) {
        if values.iter().any(|v| !v.is_finite()) {
            self.report(path, "a coordinate or size is not a finite number");
        }
    }
}

/// Reports ids that occur more than once, pointing at every repeat.
fn unique_ids<'a>(
    check: &mut Checker,
    ids: impl IntoIterator<Item = (String, &'a str)>,
    what: &str,
) {
    let mut first_seen: HashMap<&str, String> = HashMap::new();
    for (path, id) in ids {
        if id.is_empty() {
            continue;
        }
        match first_seen.get(id) {
            Some(first) => check.report(
                path,
                format!("the {what} id \"{id}\" is already used at {first}"),
            ),
            None => {
                first_seen.insert(id, path);
            }
        }
    }
}

fn is_hex_color(color: &str) -> bool {
    let digits = color.strip_prefix('#').unwrap_or("");
    digits.len() == 6 && digits.chars().all(|c| c.is_ascii_hexdigit())
}

fn is_language_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= 35
        && tag
            .split('-')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric()))
}

pub(crate) fn validate_course(course: &Course) -> Result<(), Vec<ValidationIssue>> {
    let mut check = Checker::default();

    if course.format_version == 0 || course.format_version > FORMAT_VERSION {
        check.report(
            "format_version",
            format!(
                "format {} is not one this version reads (1 to {FORMAT_VERSION})",
                course.format_version
            ),
        );
    }
    check.id("id", &course.id);
    check.text("title", "course title", &course.title, MAX_TITLE_CHARS);
    if !is_language_tag(&course.language) {
        check.report(
            "language",
            format!(
                "\"{}\" is not a language tag such as \"en\" or \"zh-CN\"",
                course.language
            ),
        );
    }
    if course.description.chars().count() > MAX_DESCRIPTION_CHARS {
        check.report(
            "description",
            format!("the description is longer than {MAX_DESCRIPTION_CHARS} characters"),
        );
    }
    if course.updated_at < course.created_at {
        check.report("updated_at", "the course was updated before it was created");
    }

    check_agents(&mut check, course);
    let agent_ids: HashSet<&str> = course.agents.iter().map(|a| a.id.as_str()).collect();

    check.max_len("scenes", "scenes", course.scenes.len(), MAX_SCENES);
    unique_ids(
        &mut check,
        course
            .scenes
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("scenes[{i}].id"), s.id.as_str())),
        "scene",
    );
    unique_ids(
        &mut check,
        course.scenes.iter().enumerate().flat_map(|(i, s)| {
            s.actions
                .iter()
                .enumerate()
                .map(move |(j, a)| (format!("scenes[{i}].actions[{j}].id"), a.id()))
        }),
        "action",
    );
    for (i, scene) in course.scenes.iter().enumerate() {
        check_scene(&mut check, &format!("scenes[{i}]"), scene, &agent_ids);
    }

    if check.issues.is_empty() {
        Ok(())
    } else {
        Err(check.issues)
    }
}

fn check_agents(check: &mut Checker, course: &Course) {
    if course.agents.is_empty() {
        check.report("agents", "a course needs at least its teacher");
    }
    check.max_len("agents", "agents", course.agents.len(), MAX_AGENTS);
    let teachers = course
        .agents
        .iter()
        .filter(|a| a.role == AgentRole::Teacher)
        .count();
    if !course.agents.is_empty() && teachers != 1 {
        check.report(
            "agents",
            format!("a course has exactly one teacher; this one has {teachers}"),
        );
    }
    unique_ids(
        check,
        course
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("agents[{i}].id"), a.id.as_str())),
        "agent",
    );
    for (i, agent) in course.agents.iter().enumerate() {
        let at = format!("agents[{i}]");
        check.id(&format!("{at}.id"), &agent.id);
        check.text(&format!("{at}.name"), "name", &agent.name, MAX_TITLE_CHARS);
        if agent.persona.chars().count() > MAX_PERSONA_CHARS {
            check.report(
                format!("{at}.persona"),
                format!("the persona is longer than {MAX_PERSONA_CHARS} characters"),
            );
        }
        if !is_hex_color(&agent.color) {
            check.report(
                format!("{at}.color"),
                format!("\"{}\" is not a colour like #2563eb", agent.color),
            );
        }
    }
}

fn check_scene(check: &mut Checker, at: &str, scene: &Scene, agent_ids: &HashSet<&str>) {
    check.id(&format!("{at}.id"), &scene.id);
    check.text(
        &format!("{at}.title"),
        "scene title",
        &scene.title,
        MAX_TITLE_CHARS,
    );
    match &scene.content {
        SceneContent::Slide(slide) => check_slide(check, &format!("{at}.content"), slide),
        SceneContent::Quiz(quiz) => {
            let qs = format!("{at}.content.questions");
            if quiz.questions.is_empty() {
                check.report(&qs, "a quiz needs at least one question");
            }
            check.max_len(
                &qs,
                "questions",
                quiz.questions.len(),
                MAX_QUESTIONS_PER_QUIZ,
            );
            unique_ids(
                check,
                quiz.questions
                    .iter()
                    .enumerate()
                    .map(|(k, q)| (format!("{qs}[{k}].id"), q.id())),
                "question",
            );
            for (k, question) in quiz.questions.iter().enumerate() {
                check_question(check, &format!("{qs}[{k}]"), question);
            }
        }
        SceneContent::Interactive(page) => {
            let path = format!("{at}.content.html");
            if page.html.trim().is_empty() {
                check.report(&path, "the interactive page is empty");
            } else if page.html.len() > MAX_INTERACTIVE_HTML_BYTES {
                check.report(
                    &path,
                    format!(
                        "the page is {} bytes; at most {MAX_INTERACTIVE_HTML_BYTES} are allowed",
                        page.html.len()
                    ),
                );
            }
        }
        SceneContent::Pbl(project) => check.text(
            &format!("{at}.content.briefing"),
            "project briefing",
            &project.briefing,
            MAX_DESCRIPTION_CHARS,
        ),
    }

    check.max_len(
        &format!("{at}.actions"),
        "actions",
        scene.actions.len(),
        MAX_ACTIONS_PER_SCENE,
    );
    for (j, action) in scene.actions.iter().enumerate() {
        check_action(
            check,
            &format!("{at}.actions[{j}]"),
            action,
            &scene.content,
            agent_ids,
        );
    }
}

fn check_slide(check: &mut Checker, at: &str, slide: &Slide) {
    let elements = format!("{at}.elements");
    check.max_len(
        &elements,
        "elements",
        slide.elements.len(),
        MAX_ELEMENTS_PER_SLIDE,
    );
    unique_ids(
        check,
        slide
            .elements
            .iter()
            .enumerate()
            .map(|(k, e)| (format!("{elements}[{k}].id"), e.id())),
        "element",
    );
    for (k, element) in slide.elements.iter().enumerate() {
        let path = format!("{elements}[{k}]");
        check.id(&format!("{path}.id"), element.id());
        let f = element.frame();
        let numbers = [f.left, f.top, f.width, f.height];
        if numbers.iter().any(|v| !v.is_finite()) {
            check.numbers(&path, &numbers);
            continue;
        }
        if f.width <= 0.0 || f.height <= 0.0 {
            check.report(&path, "the element has no width or height");
        }
        let t = CANVAS_TOLERANCE;
        if f.left < -t
            || f.top < -t
            || f.left + f.width > CANVAS_WIDTH + t
            || f.top + f.height > CANVAS_HEIGHT + t
        {
            check.report(
                &path,
                format!("the element sticks out of the {CANVAS_WIDTH} × {CANVAS_HEIGHT} canvas"),
            );
        }
    }
}

fn check_options(check: &mut Checker, at: &str, options: &[QuizOption]) {
    let path = format!("{at}.options");
    if options.len() < 2 {
        check.report(&path, "a choice question needs at least two options");
    }
    check.max_len(&path, "options", options.len(), MAX_OPTIONS_PER_QUESTION);
    unique_ids(
        check,
        options
            .iter()
            .enumerate()
            .map(|(o, opt)| (format!("{path}[{o}].id"), opt.id.as_str())),
        "option",
    );
    for (o, option) in options.iter().enumerate() {
        check.id(&format!("{path}[{o}].id"), &option.id);
        check.text(
            &format!("{path}[{o}].text"),
            "option text",
            &option.text,
            MAX_TITLE_CHARS,
        );
    }
}

fn check_question(check: &mut Checker, at: &str, question: &QuizQuestion) {
    check.id(&format!("{at}.id"), question.id());
    if question.points() == 0 {
        check.report(
            format!("{at}.points"),
            "a question is worth at least 1 point",
        );
    }
    let has_option = |options: &[QuizOption], id: &str| options.iter().any(|o| o.id == id);
    match question {
        QuizQuestion::Single(q) => {
            check.text(
                &format!("{at}.question"),
                "question",
                &q.question,
                MAX_DESCRIPTION_CHARS,
            );
            check_options(check, at, &q.options);
            if !has_option(&q.options, &q.answer) {
                check.report(
                    format!("{at}.answer"),
                    format!("the answer \"{}\" is not one of the options", q.answer),
                );
            }
        }
        QuizQuestion::Multiple(q) => {
            check.text(
                &format!("{at}.question"),
                "question",
                &q.question,
                MAX_DESCRIPTION_CHARS,
            );
            check_options(check, at, &q.options);
            if q.answers.is_empty() {
                check.report(format!("{at}.answers"), "at least one option must be right");
            }
            let mut seen = HashSet::new();
            for (a, answer) in q.answers.iter().enumerate() {
                if !has_option(&q.options, answer) {
                    check.report(
                        format!("{at}.answers[{a}]"),
                        format!("the answer \"{answer}\" is not one of the options"),
                    );
                } else if !seen.insert(answer) {
                    check.report(
                        format!("{at}.answers[{a}]"),
                        format!("the answer \"{answer}\" is listed twice"),
                    );
                }
            }
        }
        QuizQuestion::Short(q) => {
            check.text(
                &format!("{at}.question"),
                "question",
                &q.question,
                MAX_DESCRIPTION_CHARS,
            );
            check.text(
                &format!("{at}.reference_answer"),
                "reference answer",
                &q.reference_answer,
                MAX_DESCRIPTION_CHARS,
            );
        }
    }
}

fn check_action(
    check: &mut Checker,
    at: &str,
    action: &Action,
    content: &SceneContent,
    agent_ids: &HashSet<&str>,
) {
    check.id(&format!("{at}.id"), action.id());
    let slide = match content {
        SceneContent::Slide(slide) => Some(slide),
        _ => None,
    };
    let slide_target = |check: &mut Checker, element_id: &str| -> Option<&SlideElement> {
        let path = format!("{at}.element_id");
        let Some(slide) = slide else {
            check.report(
                path,
                format!(
                    "`{}` only works on slides; this scene is a {}",
                    action.type_name(),
                    content.kind_name()
                ),
            );
            return None;
        };
        let found = slide.element(element_id);
        if found.is_none() {
            check.report(
                path,
                format!("there is no element \"{element_id}\" on this slide"),
            );
        }
        found
    };
    let agent = |check: &mut Checker, field: &str, id: &Option<String>| {
        if let Some(id) = id {
            if !agent_ids.contains(id.as_str()) {
                check.report(
                    format!("{at}.{field}"),
                    format!("there is no agent \"{id}\" in this course"),
                );
            }
        }
    };

    match action {
        Action::Speech(s) => {
            check.text(&format!("{at}.text"), "speech", &s.text, MAX_SPEECH_CHARS);
            agent(check, "speaker", &s.speaker);
        }
        Action::Spotlight(a) => {
            slide_target(check, &a.element_id);
            if !(0.0..=1.0).contains(&a.dim_opacity) {
                check.report(
                    format!("{at}.dim_opacity"),
                    "the dimming is between 0 and 1",
                );
            }
        }
        Action::Laser(a) => {
            slide_target(check, &a.element_id);
        }
        Action::PlayVideo(a) => {
            if let Some(element) = slide_target(check, &a.element_id) {
                if !matches!(element, SlideElement::Video(_)) {
                    check.report(
                        format!("{at}.element_id"),
                        format!("\"{}\" is not a video", a.element_id),
                    );
                }
            }
        }
        Action::Discussion(d) => {
            check.text(
                &format!("{at}.topic"),
                "discussion topic",
                &d.topic,
                MAX_TITLE_CHARS,
            );
            agent(check, "agent_id", &d.agent_id);
        }
        Action::WbDrawText(t) => check.numbers(at, &[t.x, t.y, t.width, t.height, t.font_size]),
        Action::WbDrawShape(s) => check.numbers(at, &[s.x, s.y, s.width, s.height]),
        Action::WbDrawLatex(l) => {
            check.numbers(at, &[l.x, l.y, l.width, l.height.unwrap_or(0.0)]);
            if l.latex.trim().is_empty() {
                check.report(format!("{at}.latex"), "the formula is empty");
            }
        }
        Action::WbDrawLine(l) => check.numbers(at, &[l.start_x, l.start_y, l.end_x, l.end_y]),
        Action::WbDrawCode(c) => check.numbers(at, &[c.x, c.y, c.width, c.height]),
        Action::WbDrawChart(c) => {
            check.numbers(at, &[c.x, c.y, c.width, c.height]);
            let labels = c.data.labels.len();
            if c.data.series.iter().any(|row| row.len() != labels) {
                check.report(
                    format!("{at}.data.series"),
                    format!("every series needs one value per label ({labels})"),
                );
            }
        }
        Action::WbDrawTable(t) => {
            check.numbers(at, &[t.x, t.y, t.width, t.height]);
            let width = t.data.first().map_or(0, Vec::len);
            if width == 0 {
                check.report(format!("{at}.data"), "the table has no header row");
            } else if t.data.iter().any(|row| row.len() != width) {
                check.report(
                    format!("{at}.data"),
                    format!("every row needs {width} cells, like the header"),
                );
            }
        }
        Action::WbEditCode(e) => {
            let inserts = matches!(
                e.operation,
                CodeEditOperation::InsertAfter | CodeEditOperation::InsertBefore
            );
            if inserts && e.line_id.is_none() {
                check.report(
                    format!("{at}.line_id"),
                    "an insert needs the line to insert at",
                );
            }
            if !inserts && e.line_ids.is_empty() {
                check.report(format!("{at}.line_ids"), "name the lines to change");
            }
            if e.operation != CodeEditOperation::DeleteLines && e.content.is_none() {
                check.report(format!("{at}.content"), "this edit needs the new content");
            }
        }
        Action::WidgetHighlight(_)
        | Action::WidgetAnnotation(_)
        | Action::WidgetReveal(_)
        | Action::WidgetSetState(_) => {
            if !matches!(content, SceneContent::Interactive(_)) {
                check.report(
                    at,
                    format!(
                        "`{}` needs an interactive scene; this one is a {}",
                        action.type_name(),
                        content.kind_name()
                    ),
                );
            }
        }
        Action::WbOpen(_) | Action::WbClose(_) | Action::WbClear(_) | Action::WbDelete(_) => {}
        Action::Unknown { .. } => {}
    }
}
