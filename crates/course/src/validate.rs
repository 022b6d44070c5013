//! Checks a course beyond what its types already guarantee: unique ids, references that resolve,
//! actions used where they can work, quiz answers that exist, geometry that can be drawn, colours
//! the renderer understands, well-formed tables and charts, and size limits. Every problem found
//! is reported with the path of the field it is about, not just the first.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::action::{Action, ChartData, CodeEditOperation, RecordedTurn};
use crate::agent::AgentRole;
use crate::scene::{
    line_frame, Frame, ProjectBriefing, ProjectConfig, QuizOption, QuizQuestion, Scene,
    SceneContent, Slide, SlideElement, CANVAS_HEIGHT, CANVAS_WIDTH,
};
use crate::widget::state_bytes;
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
    /// How far onto the canvas an element must reach to count as on it, so rounding in a
    /// generated layout cannot leave an invisible sliver.
    pub const CANVAS_TOLERANCE: f64 = 0.5;
    /// Text on a slide or the whiteboard, and text inside a shape.
    pub const MAX_TEXT_CHARS: usize = 10_000;
    /// Font sizes, in canvas units.
    pub const MAX_FONT_SIZE: f64 = 200.0;
    /// Line widths, in canvas units.
    pub const MAX_LINE_WIDTH: f64 = 50.0;
    /// Media sources, posters and audio ids.
    pub const MAX_URL_CHARS: usize = 2_048;
    pub const MAX_TABLE_ROWS: usize = 50;
    pub const MAX_TABLE_COLUMNS: usize = 20;
    pub const MAX_TABLE_CELL_CHARS: usize = 500;
    pub const MAX_CHART_LABELS: usize = 100;
    pub const MAX_CHART_SERIES: usize = 20;
    pub const MAX_LATEX_CHARS: usize = 2_000;
    pub const MAX_CODE_CHARS: usize = 20_000;
    pub const MAX_RECORDED_TURNS: usize = 40;
    /// The CSS selector a widget action targets.
    pub const MAX_WIDGET_TARGET_CHARS: usize = 200;
    /// A widget state, as JSON text: set by a `widget_set_state` or sent by the page.
    pub const MAX_WIDGET_STATE_BYTES: usize = 64 * 1024;
    pub const MAX_QUESTION_POINTS: u32 = 100;
    pub const MAX_OBJECTIVES: usize = 20;
    pub const MAX_PROJECT_ISSUES: usize = 50;
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

/// The CSS named colours a course may use besides `#rgb`, `#rrggbb` and `#rrggbbaa`. Short on
/// purpose: every renderer (the page, the offline export, .pptx) must know each one.
pub const NAMED_COLORS: &[&str] = &[
    "black",
    "white",
    "gray",
    "grey",
    "silver",
    "red",
    "maroon",
    "orange",
    "gold",
    "yellow",
    "olive",
    "lime",
    "green",
    "teal",
    "cyan",
    "blue",
    "navy",
    "purple",
    "magenta",
    "pink",
    "brown",
    "transparent",
];

/// Whether `color` is a colour a course may use: `#rgb`, `#rrggbb`, `#rrggbbaa`, or one of
/// [`NAMED_COLORS`] (in any letter case).
pub fn is_color(color: &str) -> bool {
    match color.strip_prefix('#') {
        Some(digits) => {
            matches!(digits.len(), 3 | 6 | 8) && digits.chars().all(|c| c.is_ascii_hexdigit())
        }
        None => NAMED_COLORS.iter().any(|n| n.eq_ignore_ascii_case(color)),
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

    /// Text that must be there and must not be too long.
    fn text(&mut self, path: &str, what: &str, value: &str, max_chars: usize) {
        if value.trim().is_empty() {
            self.report(path, format!("the {what} is empty"));
        } else {
            self.at_most(path, what, value, max_chars);
        }
    }

    /// Text that may be empty but not too long.
    fn at_most(&mut self, path: &str, what: &str, value: &str, max_chars: usize) {
        if value.chars().count() > max_chars {
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

    fn color(&mut self, path: &str, color: &str) {
        if !is_color(color) {
            self.report(
                path,
                format!(
                    "\"{color}\" is not a colour Aula can draw; use #rgb, #rrggbb, #rrggbbaa or \
                     one of: {}",
                    NAMED_COLORS.join(", ")
                ),
            );
        }
    }

    fn colors(&mut self, path: &str, colors: &[String]) {
        for (i, color) in colors.iter().enumerate() {
            self.color(&format!("{path}[{i}]"), color);
        }
    }

    /// Where a box is drawn: finite numbers, a real size, and at least partly on the canvas.
    fn frame(&mut self, path: &str, frame: Frame) {
        let Frame {
            left,
            top,
            width,
            height,
        } = frame;
        if [left, top, width, height].iter().any(|v| !v.is_finite()) {
            self.report(path, "a coordinate or size is not a finite number");
            return;
        }
        if width <= 0.0 || height <= 0.0 {
            self.report(
                path,
                format!("the size is {width} × {height}; width and height must be above 0"),
            );
            return;
        }
        self.on_canvas(path, frame);
    }

    fn on_canvas(&mut self, path: &str, frame: Frame) {
        let t = CANVAS_TOLERANCE;
        let on = frame.left < CANVAS_WIDTH - t
            && frame.left + frame.width > t
            && frame.top < CANVAS_HEIGHT - t
            && frame.top + frame.height > t;
        if !on {
            self.report(
                path,
                format!(
                    "the element lies entirely outside the {CANVAS_WIDTH} × {CANVAS_HEIGHT} \
                     canvas, so it would never be seen; move it onto the canvas"
                ),
            );
        }
    }

    /// A straight line: finite end points that differ, a drawable width, partly on the canvas.
    fn line(&mut self, path: &str, start: [f64; 2], end: [f64; 2], width: f64) {
        if start.iter().chain(&end).any(|v| !v.is_finite()) {
            self.report(path, "a coordinate is not a finite number");
            return;
        }
        if !(width.is_finite() && width > 0.0 && width <= MAX_LINE_WIDTH) {
            self.report(
                format!("{path}.width"),
                format!(
                    "the line width is {width}; it must be above 0 and at most {MAX_LINE_WIDTH}"
                ),
            );
            return;
        }
        if start == end {
            self.report(path, "the line starts and ends at the same point");
            return;
        }
        self.on_canvas(path, line_frame(start, end, width));
    }

    fn font_size(&mut self, path: &str, size: f64) {
        if !(size.is_finite() && size > 0.0 && size <= MAX_FONT_SIZE) {
            self.report(
                path,
                format!("the font size is {size}; it must be above 0 and at most {MAX_FONT_SIZE}"),
            );
        }
    }

    /// A table: at least one cell, every row as long as the first, within the size limits.
    fn table(&mut self, path: &str, rows: &[Vec<String>]) {
        let columns = rows.first().map_or(0, Vec::len);
        if columns == 0 {
            self.report(
                path,
                "the table is empty; give at least one row with one cell",
            );
            return;
        }
        self.max_len(path, "rows", rows.len(), MAX_TABLE_ROWS);
        self.max_len(&format!("{path}[0]"), "columns", columns, MAX_TABLE_COLUMNS);
        for (r, row) in rows.iter().enumerate() {
            if row.len() != columns {
                self.report(
                    format!("{path}[{r}]"),
                    format!(
                        "this row has {} cell(s); every row needs {columns}, like the first",
                        row.len()
                    ),
                );
            }
            for (c, cell) in row.iter().enumerate() {
                self.at_most(
                    &format!("{path}[{r}][{c}]"),
                    "cell",
                    cell,
                    MAX_TABLE_CELL_CHARS,
                );
            }
        }
    }

    /// Chart data: labels and series, one legend per series when legends are given, one value
    /// per label in every series.
    fn chart(&mut self, path: &str, data: &ChartData) {
        let labels = data.labels.len();
        if labels == 0 {
            self.report(
                format!("{path}.labels"),
                "the chart has no labels; give one per value",
            );
        }
        self.max_len(
            &format!("{path}.labels"),
            "labels",
            labels,
            MAX_CHART_LABELS,
        );
        for (i, label) in data.labels.iter().enumerate() {
            self.at_most(
                &format!("{path}.labels[{i}]"),
                "label",
                label,
                MAX_TITLE_CHARS,
            );
        }
        if data.series.is_empty() {
            self.report(
                format!("{path}.series"),
                "the chart has no series of values",
            );
        }
        self.max_len(
            &format!("{path}.series"),
            "series",
            data.series.len(),
            MAX_CHART_SERIES,
        );
        if !data.legends.is_empty() && data.legends.len() != data.series.len() {
            self.report(
                format!("{path}.legends"),
                format!(
                    "{} legend(s) for {} series; give one legend per series, or none",
                    data.legends.len(),
                    data.series.len()
                ),
            );
        }
        for (i, legend) in data.legends.iter().enumerate() {
            self.at_most(
                &format!("{path}.legends[{i}]"),
                "legend",
                legend,
                MAX_TITLE_CHARS,
            );
        }
        for (i, series) in data.series.iter().enumerate() {
            let at = format!("{path}.series[{i}]");
            if series.len() != labels {
                self.report(
                    &at,
                    format!(
                        "this series has {} value(s) for {labels} label(s); give one value per \
                         label",
                        series.len()
                    ),
                );
            } else if series.iter().any(|v| !v.is_finite()) {
                self.report(&at, "a value is not a finite number");
            }
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
    check.at_most(
        "description",
        "description",
        &course.description,
        MAX_DESCRIPTION_CHARS,
    );
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
        check.at_most(
            &format!("{at}.persona"),
            "persona",
            &agent.persona,
            MAX_PERSONA_CHARS,
        );
        // Stricter than slide colours: the app derives tints from it.
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
    let content = format!("{at}.content");
    match &scene.content {
        SceneContent::Slide(slide) => check_slide(check, &content, slide),
        SceneContent::Quiz(quiz) => {
            let qs = format!("{content}.questions");
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
            let path = format!("{content}.html");
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
        SceneContent::Pbl(project) => check_project(check, &content, project),
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
    if let Some(background) = &slide.background {
        check.color(&format!("{at}.background"), background);
    }
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
        check_element(check, &format!("{elements}[{k}]"), element);
    }
}

fn check_element(check: &mut Checker, at: &str, element: &SlideElement) {
    check.id(&format!("{at}.id"), element.id());
    let field = |name: &str| format!("{at}.{name}");
    match element {
        SlideElement::Line(line) => check.line(at, line.start, line.end, line.width),
        _ => check.frame(at, element.frame()),
    }
    match element {
        SlideElement::Text(e) => {
            check.at_most(&field("markdown"), "text", &e.markdown, MAX_TEXT_CHARS);
            if let Some(size) = e.font_size {
                check.font_size(&field("font_size"), size);
            }
            if let Some(color) = &e.color {
                check.color(&field("color"), color);
            }
        }
        SlideElement::Image(e) => {
            check.text(&field("src"), "image source", &e.src, MAX_URL_CHARS);
            check.at_most(&field("alt"), "alt text", &e.alt, MAX_DESCRIPTION_CHARS);
        }
        SlideElement::Shape(e) => {
            check.color(&field("fill"), &e.fill);
            if let Some(text) = &e.text {
                check.at_most(&field("text"), "text", text, MAX_TEXT_CHARS);
            }
        }
        SlideElement::Video(e) => {
            check.text(&field("src"), "video source", &e.src, MAX_URL_CHARS);
            if let Some(poster) = &e.poster {
                check.at_most(&field("poster"), "poster source", poster, MAX_URL_CHARS);
            }
        }
        SlideElement::Line(e) => check.color(&field("color"), &e.color),
        SlideElement::Chart(e) => {
            check.chart(&field("data"), &e.data);
            check.colors(&field("colors"), &e.colors);
        }
        SlideElement::Table(e) => check.table(&field("rows"), &e.rows),
        SlideElement::Latex(e) => {
            check.text(&field("latex"), "formula", &e.latex, MAX_LATEX_CHARS);
            if let Some(color) = &e.color {
                check.color(&field("color"), color);
            }
        }
        SlideElement::Code(e) => {
            check.text(&field("code"), "code", &e.code, MAX_CODE_CHARS);
            check.at_most(&field("language"), "language", &e.language, MAX_ID_CHARS);
            if let Some(name) = &e.file_name {
                check.at_most(&field("file_name"), "file name", name, MAX_TITLE_CHARS);
            }
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
    if question.points() > MAX_QUESTION_POINTS {
        check.report(
            format!("{at}.points"),
            format!(
                "a question is worth at most {MAX_QUESTION_POINTS} points; this one {}",
                question.points()
            ),
        );
    }
    let has_option = |options: &[QuizOption], id: &str| options.iter().any(|o| o.id == id);
    let (prompt, explanation) = match question {
        QuizQuestion::Single(q) => (&q.question, &q.explanation),
        QuizQuestion::Multiple(q) => (&q.question, &q.explanation),
        QuizQuestion::Short(q) => (&q.question, &q.explanation),
    };
    check.text(
        &format!("{at}.question"),
        "question",
        prompt,
        MAX_DESCRIPTION_CHARS,
    );
    if let Some(explanation) = explanation {
        check.at_most(
            &format!("{at}.explanation"),
            "explanation",
            explanation,
            MAX_DESCRIPTION_CHARS,
        );
    }
    match question {
        QuizQuestion::Single(q) => {
            check_options(check, at, &q.options);
            if !has_option(&q.options, &q.answer) {
                check.report(
                    format!("{at}.answer"),
                    format!("the answer \"{}\" is not one of the options", q.answer),
                );
            }
        }
        QuizQuestion::Multiple(q) => {
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
                &format!("{at}.reference_answer"),
                "reference answer",
                &q.reference_answer,
                MAX_DESCRIPTION_CHARS,
            );
        }
    }
}

fn check_project(check: &mut Checker, at: &str, project: &ProjectBriefing) {
    check.text(
        &format!("{at}.briefing"),
        "project briefing",
        &project.briefing,
        MAX_DESCRIPTION_CHARS,
    );
    let objectives = format!("{at}.objectives");
    check.max_len(
        &objectives,
        "objectives",
        project.objectives.len(),
        MAX_OBJECTIVES,
    );
    for (i, objective) in project.objectives.iter().enumerate() {
        check.text(
            &format!("{objectives}[{i}]"),
            "objective",
            objective,
            MAX_TITLE_CHARS,
        );
    }
    if let Some(config) = &project.project {
        check_project_config(check, &format!("{at}.project"), config);
    }
}

fn check_project_config(check: &mut Checker, at: &str, config: &ProjectConfig) {
    check.text(
        &format!("{at}.title"),
        "project title",
        &config.title,
        MAX_TITLE_CHARS,
    );
    check.at_most(
        &format!("{at}.description"),
        "project description",
        &config.description,
        MAX_DESCRIPTION_CHARS,
    );

    let agents = format!("{at}.agents");
    if config.agents.is_empty() {
        check.report(&agents, "a project team needs at least one agent");
    }
    check.max_len(&agents, "agents", config.agents.len(), MAX_AGENTS);
    let mut names: HashMap<&str, String> = HashMap::new();
    for (i, agent) in config.agents.iter().enumerate() {
        let path = format!("{agents}[{i}]");
        check.text(
            &format!("{path}.name"),
            "name",
            &agent.name,
            MAX_TITLE_CHARS,
        );
        if let Some(first) = names.get(agent.name.as_str()) {
            check.report(
                format!("{path}.name"),
                format!(
                    "the name \"{}\" is already used at {first}; issues name their owner by it",
                    agent.name
                ),
            );
        } else {
            names.insert(&agent.name, format!("{path}.name"));
        }
        check.text(
            &format!("{path}.role"),
            "role",
            &agent.role,
            MAX_TITLE_CHARS,
        );
        check.at_most(
            &format!("{path}.persona"),
            "persona",
            &agent.persona,
            MAX_PERSONA_CHARS,
        );
    }

    let issues = format!("{at}.issues");
    check.max_len(&issues, "issues", config.issues.len(), MAX_PROJECT_ISSUES);
    unique_ids(
        check,
        config
            .issues
            .iter()
            .enumerate()
            .map(|(i, issue)| (format!("{issues}[{i}].id"), issue.id.as_str())),
        "issue",
    );
    for (i, issue) in config.issues.iter().enumerate() {
        let path = format!("{issues}[{i}]");
        check.id(&format!("{path}.id"), &issue.id);
        check.text(
            &format!("{path}.title"),
            "issue title",
            &issue.title,
            MAX_TITLE_CHARS,
        );
        check.at_most(
            &format!("{path}.description"),
            "issue description",
            &issue.description,
            MAX_DESCRIPTION_CHARS,
        );
        if !names.contains_key(issue.owner.as_str()) {
            check.report(
                format!("{path}.owner"),
                format!(
                    "\"{}\" is not the name of an agent of this project",
                    issue.owner
                ),
            );
        }
    }
}

fn check_recording(
    check: &mut Checker,
    at: &str,
    recording: &[RecordedTurn],
    agent_ids: &HashSet<&str>,
) {
    check.max_len(at, "turns", recording.len(), MAX_RECORDED_TURNS);
    for (t, turn) in recording.iter().enumerate() {
        let path = format!("{at}[{t}]");
        if !agent_ids.contains(turn.speaker.as_str()) {
            check.report(
                format!("{path}.speaker"),
                format!("there is no agent \"{}\" in this course", turn.speaker),
            );
        }
        check.text(
            &format!("{path}.text"),
            "turn",
            &turn.text,
            MAX_SPEECH_CHARS,
        );
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
    let field = |name: &str| format!("{at}.{name}");
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
    let agent = |check: &mut Checker, name: &str, id: &Option<String>| {
        if let Some(id) = id {
            if !agent_ids.contains(id.as_str()) {
                check.report(
                    field(name),
                    format!("there is no agent \"{id}\" in this course"),
                );
            }
        }
    };
    let drawn_id = |check: &mut Checker, id: &Option<String>| {
        if let Some(id) = id {
            check.id(&field("element_id"), id);
        }
    };
    let widget = |check: &mut Checker, target: Option<&String>, note: &Option<String>| {
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
        if let Some(target) = target {
            check.text(
                &field("target"),
                "widget target",
                target,
                MAX_WIDGET_TARGET_CHARS,
            );
        }
        if let Some(note) = note {
            check.at_most(&field("content"), "note", note, MAX_SPEECH_CHARS);
        }
    };
    let frame = |left, top, width, height| Frame {
        left,
        top,
        width,
        height,
    };

    match action {
        Action::Speech(s) => {
            check.text(&field("text"), "speech", &s.text, MAX_SPEECH_CHARS);
            agent(check, "speaker", &s.speaker);
            if let Some(audio) = &s.audio_id {
                check.at_most(&field("audio_id"), "audio id", audio, MAX_URL_CHARS);
            }
        }
        Action::Spotlight(a) => {
            slide_target(check, &a.element_id);
            if !(0.0..=1.0).contains(&a.dim_opacity) {
                check.report(field("dim_opacity"), "the dimming is between 0 and 1");
            }
        }
        Action::Laser(a) => {
            slide_target(check, &a.element_id);
            check.color(&field("color"), &a.color);
        }
        Action::PlayVideo(a) => {
            if let Some(element) = slide_target(check, &a.element_id) {
                if !matches!(element, SlideElement::Video(_)) {
                    check.report(
                        field("element_id"),
                        format!(
                            "play_video plays only video elements, and \"{}\" is of type `{}`",
                            a.element_id,
                            element.kind_name()
                        ),
                    );
                }
            }
        }
        Action::Discussion(d) => {
            check.text(
                &field("topic"),
                "discussion topic",
                &d.topic,
                MAX_TITLE_CHARS,
            );
            if let Some(prompt) = &d.prompt {
                check.at_most(&field("prompt"), "prompt", prompt, MAX_DESCRIPTION_CHARS);
            }
            agent(check, "agent_id", &d.agent_id);
            check_recording(check, &field("recording"), &d.recording, agent_ids);
        }
        Action::WbDrawText(t) => {
            drawn_id(check, &t.element_id);
            check.frame(at, frame(t.x, t.y, t.width, t.height));
            check.at_most(&field("content"), "text", &t.content, MAX_TEXT_CHARS);
            check.font_size(&field("font_size"), t.font_size);
            check.color(&field("color"), &t.color);
        }
        Action::WbDrawShape(s) => {
            drawn_id(check, &s.element_id);
            check.frame(at, frame(s.x, s.y, s.width, s.height));
            check.color(&field("fill_color"), &s.fill_color);
        }
        Action::WbDrawLatex(l) => {
            drawn_id(check, &l.element_id);
            // Without a height the formula is sized to fit; any positive stand-in places it.
            check.frame(at, frame(l.x, l.y, l.width, l.height.unwrap_or(1.0)));
            check.text(&field("latex"), "formula", &l.latex, MAX_LATEX_CHARS);
            check.color(&field("color"), &l.color);
        }
        Action::WbDrawLine(l) => {
            drawn_id(check, &l.element_id);
            check.line(at, [l.start_x, l.start_y], [l.end_x, l.end_y], l.width);
            check.color(&field("color"), &l.color);
        }
        Action::WbDrawCode(c) => {
            drawn_id(check, &c.element_id);
            check.frame(at, frame(c.x, c.y, c.width, c.height));
            check.text(&field("code"), "code", &c.code, MAX_CODE_CHARS);
            check.at_most(&field("language"), "language", &c.language, MAX_ID_CHARS);
            if let Some(name) = &c.file_name {
                check.at_most(&field("file_name"), "file name", name, MAX_TITLE_CHARS);
            }
        }
        Action::WbDrawChart(c) => {
            drawn_id(check, &c.element_id);
            check.frame(at, frame(c.x, c.y, c.width, c.height));
            check.chart(&field("data"), &c.data);
            check.colors(&field("theme_colors"), &c.theme_colors);
        }
        Action::WbDrawTable(t) => {
            drawn_id(check, &t.element_id);
            check.frame(at, frame(t.x, t.y, t.width, t.height));
            check.table(&field("data"), &t.data);
        }
        Action::WbEditCode(e) => {
            check.id(&field("element_id"), &e.element_id);
            let inserts = matches!(
                e.operation,
                CodeEditOperation::InsertAfter | CodeEditOperation::InsertBefore
            );
            if inserts && e.line_id.is_none() {
                check.report(field("line_id"), "an insert needs the line to insert at");
            }
            if !inserts && e.line_ids.is_empty() {
                check.report(field("line_ids"), "name the lines to change");
            }
            match &e.content {
                None if e.operation != CodeEditOperation::DeleteLines => {
                    check.report(field("content"), "this edit needs the new content");
                }
                Some(code) => check.at_most(&field("content"), "code", code, MAX_CODE_CHARS),
                None => {}
            }
        }
        Action::WbDelete(d) => check.id(&field("element_id"), &d.element_id),
        Action::WidgetHighlight(w) => widget(check, Some(&w.target), &w.content),
        Action::WidgetAnnotation(w) => widget(check, Some(&w.target), &w.content),
        Action::WidgetReveal(w) => widget(check, Some(&w.target), &w.content),
        Action::WidgetSetState(w) => {
            widget(check, None, &w.content);
            let bytes = state_bytes(&w.state);
            if bytes > MAX_WIDGET_STATE_BYTES {
                check.report(
                    field("state"),
                    format!(
                        "the state is {bytes} bytes as JSON; at most {MAX_WIDGET_STATE_BYTES} \
                         are allowed"
                    ),
                );
            }
        }
        Action::WbOpen(_) | Action::WbClose(_) | Action::WbClear(_) => {}
        Action::Unknown { .. } => {}
    }
}
