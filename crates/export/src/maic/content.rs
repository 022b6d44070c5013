//! Scenes and their contents: slide canvases, quizzes, interactive pages and projects.

use aula_course::limits::MAX_QUESTION_POINTS;
use aula_course::scene::{
    Interactive, MultipleChoice, ProjectAgent, ProjectBriefing, ProjectConfig, ProjectIssue, Quiz,
    QuizOption, QuizQuestion, ShortAnswer, SingleChoice, Slide,
};
use aula_course::{Action, Scene, SceneContent, WidgetKind};
use serde_json::{json, Value};

use super::action::{action_from_archive, action_to_archive};
use super::element::{element_from_archive, element_to_archive, trusted_original, with_original};
use super::{
    get_array, get_bool, get_f64, get_obj, get_str, str_or_empty, Links, Notes, Obj, Resolve,
};

const THEME_COLORS: [&str; 5] = ["#5b9bd5", "#ed7d31", "#a5a5a5", "#ffc000", "#4472c4"];

/// One scene as the manifest holds it; `aula_only` names what only Aula will read back.
pub(super) fn scene_to_archive(
    scene: &Scene,
    order: usize,
    links: &Links,
    aula_only: &mut Vec<String>,
    at: &str,
) -> Value {
    let mut note = |what: String| aula_only.push(format!("{at}: {what}"));
    let content = match &scene.content {
        SceneContent::Slide(slide) => {
            let elements: Vec<Value> = slide
                .elements
                .iter()
                .map(|e| {
                    let (native, kept) = element_to_archive(e, links);
                    if kept {
                        note(format!("{} element \"{}\"", e.kind_name(), e.id()));
                    }
                    Value::Object(native)
                })
                .collect();
            let mut canvas = json!({
                "id": scene.id,
                "viewportSize": 1000,
                "viewportRatio": 0.5625,
                "theme": {
                    "backgroundColor": "#ffffff",
                    "themeColors": THEME_COLORS,
                    "fontColor": "#333333",
                    "fontName": "Microsoft YaHei",
                },
                "elements": elements,
            });
            if let Some(color) = &slide.background {
                canvas["background"] = json!({"type": "solid", "color": color});
            }
            json!({"type": "slide", "canvas": canvas})
        }
        SceneContent::Quiz(quiz) => {
            let questions: Vec<Value> = quiz
                .questions
                .iter()
                .map(|q| {
                    let (native, kept) =
                        with_original(question_to_native(q), q, |native, notes| {
                            question_from_native(
                                native,
                                &mut Notes {
                                    at: String::new(),
                                    out: notes,
                                },
                            )
                        });
                    if kept {
                        note(format!("question \"{}\"", q.id()));
                    }
                    Value::Object(native)
                })
                .collect();
            json!({"type": "quiz", "questions": questions})
        }
        SceneContent::Interactive(page) => {
            let mut content = json!({"type": "interactive", "url": "", "html": page.html});
            if let Some(kind) = page.widget {
                content["widgetType"] = json!(kind);
            }
            content
        }
        SceneContent::Pbl(project) => {
            let (native, kept) = with_original(
                project_to_native(project, &scene.title),
                project,
                |native, notes| {
                    project_from_native(
                        native,
                        &scene.title,
                        &mut Notes {
                            at: String::new(),
                            out: notes,
                        },
                    )
                },
            );
            if kept {
                note("the project's objectives or background".into());
            }
            Value::Object(native)
        }
    };
    let actions: Vec<Value> = scene
        .actions
        .iter()
        .map(|a| {
            let (native, kept) = action_to_archive(a, links);
            if kept {
                note(format!("{} action \"{}\"", a.type_name(), a.id()));
            }
            Value::Object(native)
        })
        .collect();
    json!({
        "type": scene.content.kind_name(),
        "title": scene.title,
        "order": order,
        "content": content,
        "actions": actions,
        "whiteboards": [],
    })
}

/// The kinds of scene Aula plays, by their OpenMAIC names.
const SCENE_KINDS: [&str; 4] = ["slide", "quiz", "interactive", "pbl"];

/// A scene read from the manifest, without its id; `None` (with a note) when Aula cannot
/// hold it.
pub(super) fn scene_from_archive(
    o: &Obj,
    title: &str,
    resolve: &mut dyn Resolve,
    notes: &mut Notes,
) -> Option<(SceneContent, Vec<Action>)> {
    let Some(content) = get_obj(o, "content") else {
        notes.add("the scene has no content");
        return None;
    };
    // The scene's own `type` says what it is (OpenMAIC plays a scene by it); its content's
    // `type` only stands in when the scene has none. A content shaped like a slide under a
    // scene of another kind is not a slide.
    let kind = get_str(o, "type")
        .or_else(|| get_str(content, "type"))
        .unwrap_or("");
    if let Some(inner) =
        get_str(content, "type").filter(|inner| *inner != kind && SCENE_KINDS.contains(&kind))
    {
        notes.add(format!(
            "a {kind} scene whose content says it is a `{inner}` (Aula cannot tell which it is)"
        ));
        return None;
    }
    let content = match kind {
        "slide" => SceneContent::Slide(slide_from_native(content, resolve, notes)?),
        "quiz" => {
            let questions = get_array(content, "questions")
                .iter()
                .filter_map(Value::as_object)
                .filter_map(|q| {
                    trusted_original(q, question_to_native)
                        .or_else(|| question_from_native(q, notes))
                })
                .collect();
            SceneContent::Quiz(Quiz { questions })
        }
        "interactive" => {
            let html = str_or_empty(content, "html");
            if html.trim().is_empty() {
                let url = str_or_empty(content, "url");
                notes.add(format!(
                    "an interactive page that lives at a web address ({url}); Aula plays only self-contained pages"
                ));
                return None;
            }
            let widget = content
                .get("widgetType")
                .and_then(|w| serde_json::from_value::<WidgetKind>(w.clone()).ok());
            if widget.is_none() && content.get("widgetType").is_some_and(|w| !w.is_null()) {
                notes.add("the widget's type, which Aula does not know (the page itself is kept)");
            }
            SceneContent::Interactive(Interactive { html, widget })
        }
        "pbl" => {
            let project =
                trusted_original(content, |p: &ProjectBriefing| project_to_native(p, title))
                    .or_else(|| project_from_native(content, title, notes))?;
            SceneContent::Pbl(project)
        }
        other => {
            notes.add(format!(
                "a scene of type `{other}` (Aula has slide, quiz, interactive and pbl scenes)"
            ));
            return None;
        }
    };
    if get_array(o, "whiteboards").iter().any(|w| {
        w.as_object()
            .is_some_and(|w| !get_array(w, "elements").is_empty())
    }) {
        notes.add(
            "the whiteboard pages saved with the scene (Aula's whiteboard is drawn by actions)",
        );
    }
    if get_obj(o, "multiAgent").is_some_and(|m| get_bool(m, "enabled")) {
        notes.add("its own choice of agents and director prompt (Aula uses the whole class in every scene)");
    }
    let actions = get_array(o, "actions")
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|a| action_from_archive(a, resolve, notes))
        .collect();
    Some((content, actions))
}

fn slide_from_native(content: &Obj, resolve: &mut dyn Resolve, notes: &mut Notes) -> Option<Slide> {
    let Some(canvas) = get_obj(content, "canvas") else {
        notes.add("a slide without its canvas");
        return None;
    };
    let size = get_f64(canvas, "viewportSize")
        .filter(|s| *s > 0.0)
        .unwrap_or(1000.0);
    let ratio = get_f64(canvas, "viewportRatio").unwrap_or(0.5625);
    if (ratio - 0.5625).abs() > 0.001 {
        notes.add(format!(
            "the slide's shape (height {ratio} of its width; Aula's slides are 16:9, so elements below the fold are cut)"
        ));
    }
    let background = match get_obj(canvas, "background") {
        Some(bg) => match get_str(bg, "type") {
            Some("gradient") => {
                notes.add("the slide's gradient background (filled with its first colour)");
                get_obj(bg, "gradient")
                    .map(|g| get_array(g, "colors"))
                    .and_then(|c| c.first())
                    .and_then(Value::as_object)
                    .and_then(|c| get_str(c, "color"))
                    .map(str::to_string)
            }
            Some("image") => {
                notes.add("the slide's background picture");
                None
            }
            _ => get_str(bg, "color").map(str::to_string),
        },
        None => get_obj(canvas, "theme")
            .and_then(|t| get_str(t, "backgroundColor"))
            .filter(|c| {
                !matches!(
                    c.to_ascii_lowercase().as_str(),
                    "#ffffff" | "#fff" | "white"
                )
            })
            .map(str::to_string),
    }
    .filter(|c| aula_course::is_color(c));
    let elements = get_array(canvas, "elements")
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|e| element_from_archive(e, resolve, notes, 1000.0 / size))
        .collect();
    if !get_array(canvas, "animations").is_empty() {
        notes.add("the slide's element animations (Aula shows every element at once)");
    }
    Some(Slide {
        background,
        elements,
    })
}

fn question_to_native(question: &QuizQuestion) -> Obj {
    let options = |options: &[QuizOption]| -> Value {
        options
            .iter()
            .map(|o| json!({"label": o.text, "value": o.id}))
            .collect()
    };
    let mut o = match question {
        QuizQuestion::Single(q) => json!({
            "id": q.id, "type": "single", "question": q.question,
            "options": options(&q.options), "answer": [q.answer],
        }),
        QuizQuestion::Multiple(q) => json!({
            "id": q.id, "type": "multiple", "question": q.question,
            "options": options(&q.options), "answer": q.answers,
        }),
        QuizQuestion::Short(q) => json!({
            "id": q.id, "type": "short_answer", "question": q.question,
            "commentPrompt": q.reference_answer, "hasAnswer": false,
        }),
    };
    let explanation = match question {
        QuizQuestion::Single(q) => &q.explanation,
        QuizQuestion::Multiple(q) => &q.explanation,
        QuizQuestion::Short(q) => &q.explanation,
    };
    if let Some(explanation) = explanation {
        o["analysis"] = json!(explanation);
    }
    o["points"] = json!(question.points());
    match o {
        Value::Object(o) => o,
        _ => Obj::new(),
    }
}

fn question_from_native(o: &Obj, notes: &mut Notes) -> Option<QuizQuestion> {
    let id = str_or_empty(o, "id");
    let question = str_or_empty(o, "question");
    let what = format!("question \"{id}\"");
    let letters = "ABCDEFGHIJ";
    let options: Vec<QuizOption> = get_array(o, "options")
        .iter()
        .enumerate()
        .map(|(i, option)| {
            let letter = letters.get(i..=i).unwrap_or("X").to_string();
            match option {
                Value::String(text) => QuizOption {
                    id: letter,
                    text: text.clone(),
                },
                Value::Object(op) => QuizOption {
                    id: get_str(op, "value")
                        .filter(|v| !v.is_empty())
                        .map_or(letter, str::to_string),
                    text: str_or_empty(op, "label"),
                },
                other => QuizOption {
                    id: letter,
                    text: other.to_string(),
                },
            }
        })
        .collect();
    let answer_field = ["answer", "correctAnswer", "correct_answer"]
        .iter()
        .find_map(|k| o.get(*k));
    let answers: Vec<String> = match answer_field {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(one)) if !one.is_empty() => vec![one.clone()],
        _ => Vec::new(),
    };
    let explanation = get_str(o, "analysis")
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let raw_points = get_f64(o, "points").unwrap_or(1.0).max(0.0);
    let points = raw_points.round().min(f64::from(MAX_QUESTION_POINTS)) as u32;
    if f64::from(points) != raw_points {
        notes.add(format!("{what}: worth {raw_points} points, counted as {points} (Aula scores whole points, at most {MAX_QUESTION_POINTS})"));
    }
    let kind = get_str(o, "type").unwrap_or("single");
    let quiz_question = match kind {
        "single" | "multiple" if answers.is_empty() => {
            notes.add(format!(
                "{what}: it has no right answer, so Aula cannot grade it"
            ));
            return None;
        }
        "single" if answers.len() == 1 => QuizQuestion::Single(SingleChoice {
            id,
            question,
            options,
            answer: answers[0].clone(),
            explanation,
            points,
        }),
        "single" | "multiple" => QuizQuestion::Multiple(MultipleChoice {
            id,
            question,
            options,
            answers,
            explanation,
            points,
        }),
        "short_answer" | "short" => {
            let rubric = get_str(o, "commentPrompt").filter(|c| !c.trim().is_empty());
            let reference = if answers.is_empty() {
                rubric.map(str::to_string).or_else(|| explanation.clone())
            } else {
                if rubric.is_some() {
                    notes.add(format!(
                        "{what}: its grading rubric (Aula grades against the model answer)"
                    ));
                }
                Some(answers.join("; "))
            };
            let Some(reference_answer) = reference else {
                notes.add(format!(
                    "{what}: a written answer with no model answer or rubric to grade it against"
                ));
                return None;
            };
            QuizQuestion::Short(ShortAnswer {
                id,
                question,
                reference_answer,
                explanation,
                points,
            })
        }
        other => {
            notes.add(format!(
                "{what}: a `{other}` question (Aula has single, multiple and short answers)"
            ));
            return None;
        }
    };
    Some(quiz_question)
}

fn project_to_native(project: &ProjectBriefing, scene_title: &str) -> Obj {
    let config = project.project.as_ref();
    let mut agents: Vec<Value> = config
        .map(|c| c.agents.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|a| {
            json!({
                "name": a.name, "actor_role": a.role, "role_division": "development",
                "system_prompt": a.persona, "default_mode": "chat", "delay_time": 0,
                "env": {}, "is_user_role": false, "is_active": true, "is_system_agent": false,
            })
        })
        .collect();
    let issues = config.map(|c| c.issues.as_slice()).unwrap_or_default();
    // OpenMAIC routes `@question` and `@judge` to two helpers per issue, which its generator
    // creates; Aula's project runs its own, so these are written only for OpenMAIC.
    for issue in issues {
        for (helper, prompt) in [
            ("Question Agent", format!("Ask the learner one to three guiding questions that help them start on \"{}\".", issue.title)),
            ("Judge Agent", format!("Decide whether the learner's work completes \"{}\". Answer COMPLETE or NEEDS_REVISION, then one line of feedback.", issue.title)),
        ] {
            agents.push(json!({
                "name": format!("{helper} - {}", issue.id), "actor_role": helper,
                "role_division": "management", "system_prompt": prompt, "default_mode": "chat",
                "delay_time": 0, "env": {}, "is_user_role": false, "is_active": true,
                "is_system_agent": true,
            }));
        }
    }
    let native_issues: Vec<Value> = issues
        .iter()
        .enumerate()
        .map(|(i, issue)| {
            json!({
                "id": issue.id, "title": issue.title, "description": issue.description,
                "person_in_charge": issue.owner, "participants": [], "notes": "",
                "parent_issue": null, "index": i, "is_done": issue.done,
                "is_active": issues.iter().position(|x| !x.done) == Some(i),
                "generated_questions": "",
                "question_agent_name": format!("Question Agent - {}", issue.id),
                "judge_agent_name": format!("Judge Agent - {}", issue.id),
            })
        })
        .collect();
    let team: Vec<&str> = config
        .map(|c| c.agents.iter().map(|a| a.name.as_str()).collect())
        .unwrap_or_default();
    let config_json = json!({
        "projectInfo": {
            "title": config.map_or(scene_title, |c| c.title.as_str()),
            "description": project.briefing,
        },
        "agents": agents,
        "issueboard": {
            "agent_ids": team,
            "issues": native_issues,
            "current_issue_id": issues.iter().find(|i| !i.done).map(|i| i.id.clone()),
        },
        "chat": {"messages": []},
    });
    let mut o = Obj::new();
    o.insert("type".into(), json!("pbl"));
    o.insert("projectConfig".into(), config_json);
    o
}

fn project_from_native(o: &Obj, scene_title: &str, notes: &mut Notes) -> Option<ProjectBriefing> {
    let Some(config) = get_obj(o, "projectConfig") else {
        notes.add("a project without its configuration");
        return None;
    };
    let info = get_obj(config, "projectInfo");
    let title = info.map(|i| str_or_empty(i, "title")).unwrap_or_default();
    let description = info
        .map(|i| str_or_empty(i, "description"))
        .unwrap_or_default();
    let briefing = if description.trim().is_empty() {
        title.clone()
    } else {
        description
    };
    let agents: Vec<ProjectAgent> = get_array(config, "agents")
        .iter()
        .filter_map(Value::as_object)
        // OpenMAIC's per-issue question and judge helpers; Aula's project runs its own.
        .filter(|a| !get_bool(a, "is_system_agent"))
        .map(|a| ProjectAgent {
            name: str_or_empty(a, "name"),
            role: get_str(a, "actor_role")
                .filter(|r| !r.trim().is_empty())
                .unwrap_or("Team member")
                .to_string(),
            persona: str_or_empty(a, "system_prompt"),
        })
        .collect();
    let board = get_obj(config, "issueboard");
    let mut issues: Vec<ProjectIssue> = board
        .map(|b| get_array(b, "issues"))
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_object)
        .map(|i| ProjectIssue {
            id: str_or_empty(i, "id"),
            title: str_or_empty(i, "title"),
            description: str_or_empty(i, "description"),
            owner: str_or_empty(i, "person_in_charge"),
            done: get_bool(i, "is_done"),
        })
        .collect();
    let native_issues = board.map(|b| get_array(b, "issues")).unwrap_or_default();
    if native_issues.iter().filter_map(Value::as_object).any(|i| {
        !get_str(i, "notes").unwrap_or_default().is_empty()
            || !get_str(i, "generated_questions")
                .unwrap_or_default()
                .is_empty()
    }) {
        notes
            .add("the issues' notes and generated guiding questions (Aula's project asks its own)");
    }
    if get_obj(config, "chat").is_some_and(|c| !get_array(c, "messages").is_empty()) {
        notes.add("the project chat's opening messages (Aula's project starts its own chat)");
    }
    let project = if agents.is_empty() {
        if !issues.is_empty() {
            notes
                .add("the project's issue board, which has no team to own it (kept as a briefing)");
        }
        if !title.is_empty() && title != scene_title && title != briefing {
            notes.add(format!("the project's title \"{title}\""));
        }
        None
    } else {
        let names: Vec<String> = agents.iter().map(|a| a.name.clone()).collect();
        for issue in &mut issues {
            if !names.contains(&issue.owner) {
                notes.add(format!(
                    "issue \"{}\" was owned by \"{}\", who is not on the team; {} owns it now",
                    issue.title, issue.owner, names[0]
                ));
                issue.owner = names[0].clone();
            }
        }
        Some(ProjectConfig {
            title: if title.is_empty() {
                scene_title.to_string()
            } else {
                title
            },
            description: String::new(),
            agents,
            issues,
        })
    };
    Some(ProjectBriefing {
        briefing,
        objectives: Vec::new(),
        project,
    })
}
