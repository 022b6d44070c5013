//! Validation rules and load errors, each pinned by a small course that breaks exactly one rule.

use super::*;
use crate::action::{
    ChartData, ChartKind, Discussion, Laser, PlayVideo, Speech, Spotlight, WbDrawChart,
    WbDrawTable, WbEditCode,
};
use crate::scene::{
    Interactive, MultipleChoice, Quiz, QuizOption, QuizQuestion, SingleChoice, Slide, TextAlign,
    TextElement, VideoElement,
};

fn speech(id: &str, text: &str, speaker: Option<&str>) -> Action {
    Action::Speech(Speech {
        id: id.into(),
        text: text.into(),
        speaker: speaker.map(Into::into),
        audio_id: None,
    })
}

fn text_box(id: &str, left: f64, top: f64, width: f64, height: f64) -> SlideElement {
    SlideElement::Text(TextElement {
        id: id.into(),
        left,
        top,
        width,
        height,
        markdown: "Light is **energy**".into(),
        font_size: None,
        color: None,
        align: TextAlign::Left,
    })
}

fn slide_scene(id: &str, elements: Vec<SlideElement>, actions: Vec<Action>) -> Scene {
    Scene {
        id: id.into(),
        title: "Light".into(),
        content: SceneContent::Slide(Slide {
            background: None,
            elements,
        }),
        actions,
    }
}

fn option(id: &str, text: &str) -> QuizOption {
    QuizOption {
        id: id.into(),
        text: text.into(),
    }
}

fn single(answer: &str) -> QuizQuestion {
    QuizQuestion::Single(SingleChoice {
        id: "q1".into(),
        question: "Which gas do plants release?".into(),
        options: vec![option("a", "Oxygen"), option("b", "Nitrogen")],
        answer: answer.into(),
        explanation: None,
        points: 1,
    })
}

fn quiz_scene(questions: Vec<QuizQuestion>) -> Scene {
    Scene {
        id: "quiz".into(),
        title: "Check".into(),
        content: SceneContent::Quiz(Quiz { questions }),
        actions: vec![],
    }
}

/// A small valid course: the default cast and one slide with a title, a video and two actions.
fn course() -> Course {
    Course {
        format_version: FORMAT_VERSION,
        id: "c1".into(),
        title: "Photosynthesis".into(),
        language: "en".into(),
        description: String::new(),
        agents: default_agents(),
        scenes: vec![slide_scene(
            "s1",
            vec![
                text_box("title", 60.0, 40.0, 880.0, 70.0),
                SlideElement::Video(VideoElement {
                    id: "clip".into(),
                    left: 60.0,
                    top: 200.0,
                    width: 400.0,
                    height: 225.0,
                    src: "media/clip.mp4".into(),
                    poster: None,
                }),
            ],
            vec![
                speech("a1", "Plants make food from light.", Some("teacher")),
                Action::Spotlight(Spotlight {
                    id: "a2".into(),
                    element_id: "title".into(),
                    dim_opacity: 0.5,
                }),
            ],
        )],
        created_at: 1_764_633_600_000,
        updated_at: 1_764_633_600_000,
    }
}

fn issues(course: &Course) -> Vec<ValidationIssue> {
    match course.validate() {
        Ok(()) => vec![],
        Err(issues) => issues,
    }
}

fn paths(course: &Course) -> Vec<String> {
    issues(course).into_iter().map(|i| i.path).collect()
}

#[test]
fn sample_course_is_valid() {
    assert_eq!(issues(&course()), vec![]);
}

#[test]
fn speech_by_an_agent_not_in_the_course_is_reported_at_its_speaker() {
    let mut c = course();
    c.scenes[0].actions[0] = speech("a1", "Hello", Some("ghost"));
    let found = issues(&c);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, "scenes[0].actions[0].speaker");
    assert!(found[0].problem.contains("ghost"));
}

#[test]
fn discussion_started_by_an_unknown_agent_is_reported() {
    let mut c = course();
    c.scenes[0].actions.push(Action::Discussion(Discussion {
        id: "d1".into(),
        topic: "Do plants breathe at night?".into(),
        prompt: None,
        agent_id: Some("nobody".into()),
        recording: vec![],
    }));
    assert_eq!(paths(&c), ["scenes[0].actions[2].agent_id"]);
}

#[test]
fn duplicate_scene_ids_are_reported_at_the_repeat() {
    let mut c = course();
    let mut again = c.scenes[0].clone();
    for (i, a) in again.actions.iter_mut().enumerate() {
        if let Action::Speech(s) = a {
            s.id = format!("other-{i}");
        }
        if let Action::Spotlight(s) = a {
            s.id = format!("other-{i}");
        }
    }
    c.scenes.push(again);
    let found = issues(&c);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, "scenes[1].id");
    assert!(found[0].problem.contains("scenes[0].id"));
}

#[test]
fn action_ids_must_be_unique_across_the_course() {
    let mut c = course();
    let mut second = slide_scene("s2", vec![], vec![speech("a1", "Again", None)]);
    second.title = "More light".into();
    c.scenes.push(second);
    assert_eq!(paths(&c), ["scenes[1].actions[0].id"]);
}

#[test]
fn duplicate_agent_and_element_ids_are_reported() {
    let mut c = course();
    c.agents[2].id = c.agents[1].id.clone();
    if let SceneContent::Slide(slide) = &mut c.scenes[0].content {
        slide
            .elements
            .push(text_box("title", 60.0, 300.0, 100.0, 50.0));
    }
    assert_eq!(
        paths(&c),
        ["agents[2].id", "scenes[0].content.elements[2].id"]
    );
}

#[test]
fn empty_titles_are_reported() {
    let mut c = course();
    c.title = "   ".into();
    c.scenes[0].title = String::new();
    assert_eq!(paths(&c), ["title", "scenes[0].title"]);
}

#[test]
fn over_long_title_is_reported() {
    let mut c = course();
    c.title = "x".repeat(limits::MAX_TITLE_CHARS + 1);
    assert_eq!(paths(&c), ["title"]);
}

#[test]
fn too_many_scenes_is_reported() {
    let mut c = course();
    c.scenes = (0..=limits::MAX_SCENES)
        .map(|i| slide_scene(&format!("s{i}"), vec![], vec![]))
        .collect();
    assert_eq!(paths(&c), ["scenes"]);
}

#[test]
fn over_long_speech_is_reported() {
    let mut c = course();
    c.scenes[0].actions[0] = speech("a1", &"word ".repeat(500), None);
    assert_eq!(paths(&c), ["scenes[0].actions[0].text"]);
}

#[test]
fn a_course_needs_exactly_one_teacher() {
    let mut c = course();
    c.agents.retain(|a| a.role != AgentRole::Teacher);
    c.scenes[0].actions.remove(0);
    assert_eq!(paths(&c), ["agents"]);
    let mut c = course();
    c.agents[1].role = AgentRole::Teacher;
    assert_eq!(paths(&c), ["agents"]);
}

#[test]
fn agent_colour_must_be_hex() {
    let mut c = course();
    c.agents[0].color = "blue".into();
    assert_eq!(paths(&c), ["agents[0].color"]);
}

#[test]
fn single_choice_answer_must_be_one_of_the_options() {
    let mut c = course();
    c.scenes.push(quiz_scene(vec![single("a")]));
    assert_eq!(issues(&c), vec![]);
    c.scenes[1] = quiz_scene(vec![single("z")]);
    assert_eq!(paths(&c), ["scenes[1].content.questions[0].answer"]);
}

#[test]
fn multiple_choice_answers_must_exist_and_not_repeat() {
    let mut c = course();
    c.scenes
        .push(quiz_scene(vec![QuizQuestion::Multiple(MultipleChoice {
            id: "q1".into(),
            question: "Which does a leaf need?".into(),
            options: vec![
                option("a", "Light"),
                option("b", "Water"),
                option("c", "Soil"),
            ],
            answers: vec!["a".into(), "d".into(), "a".into()],
            explanation: None,
            points: 2,
        })]));
    assert_eq!(
        paths(&c),
        [
            "scenes[1].content.questions[0].answers[1]",
            "scenes[1].content.questions[0].answers[2]"
        ]
    );
}

#[test]
fn quiz_questions_need_two_distinct_options_but_may_be_worth_no_points() {
    let mut c = course();
    let mut q = single("a");
    if let QuizQuestion::Single(s) = &mut q {
        s.options = vec![option("a", "Oxygen"), option("a", "Nitrogen")];
        s.points = 0;
    }
    c.scenes.push(quiz_scene(vec![q]));
    assert_eq!(paths(&c), ["scenes[1].content.questions[0].options[1].id"]);
    c.scenes[1] = quiz_scene(vec![]);
    assert_eq!(paths(&c), ["scenes[1].content.questions"]);
}

#[test]
fn spotlight_must_target_an_element_of_its_slide() {
    let mut c = course();
    c.scenes[0].actions[1] = Action::Spotlight(Spotlight {
        id: "a2".into(),
        element_id: "missing".into(),
        dim_opacity: 0.5,
    });
    assert_eq!(paths(&c), ["scenes[0].actions[1].element_id"]);
}

#[test]
fn laser_outside_a_slide_scene_is_reported() {
    let mut c = course();
    let mut quiz = quiz_scene(vec![single("a")]);
    quiz.actions.push(Action::Laser(Laser {
        id: "l1".into(),
        element_id: "title".into(),
        color: "#ff0000".into(),
    }));
    c.scenes.push(quiz);
    let found = issues(&c);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].problem.contains("only works on slides"),
        "{found:?}"
    );
}

#[test]
fn play_video_must_target_a_video() {
    let mut c = course();
    c.scenes[0].actions.push(Action::PlayVideo(PlayVideo {
        id: "v1".into(),
        element_id: "clip".into(),
    }));
    assert_eq!(issues(&c), vec![]);
    c.scenes[0].actions[2] = Action::PlayVideo(PlayVideo {
        id: "v1".into(),
        element_id: "title".into(),
    });
    assert_eq!(paths(&c), ["scenes[0].actions[2].element_id"]);
}

#[test]
fn slide_element_entirely_off_the_canvas_is_reported_but_one_sticking_out_is_not() {
    let mut c = course();
    if let SceneContent::Slide(slide) = &mut c.scenes[0].content {
        slide
            .elements
            .push(text_box("bleeds", 600.0, 40.0, 500.0, 50.0));
        slide
            .elements
            .push(text_box("gone", 1200.0, 40.0, 100.0, 50.0));
        slide
            .elements
            .push(text_box("nan", f64::NAN, 40.0, 5.0, 5.0));
    }
    assert_eq!(
        paths(&c),
        [
            "scenes[0].content.elements[3]",
            "scenes[0].content.elements[4]"
        ]
    );
}

#[test]
fn ragged_whiteboard_table_is_reported() {
    let mut c = course();
    c.scenes[0].actions.push(Action::WbDrawTable(WbDrawTable {
        id: "t1".into(),
        element_id: None,
        x: 0.0,
        y: 0.0,
        width: 300.0,
        height: 100.0,
        data: vec![vec!["In".into(), "Out".into()], vec!["CO2".into()]],
    }));
    assert_eq!(paths(&c), ["scenes[0].actions[2].data[1]"]);
}

#[test]
fn non_finite_chart_value_is_reported() {
    // JSON cannot hold NaN, but a course built in memory (by generation) can.
    let mut c = course();
    c.scenes[0].actions.push(Action::WbDrawChart(WbDrawChart {
        id: "ch".into(),
        element_id: None,
        chart_type: ChartKind::Bar,
        x: 100.0,
        y: 100.0,
        width: 300.0,
        height: 200.0,
        data: ChartData {
            labels: vec!["Day".into(), "Night".into()],
            legends: vec![],
            series: vec![vec![10.0, f64::NAN]],
        },
        theme_colors: vec![],
    }));
    assert_eq!(paths(&c), ["scenes[0].actions[2].data.series[0]"]);
}

#[test]
fn code_insert_without_a_line_is_reported() {
    let mut c = course();
    c.scenes[0].actions.push(Action::WbEditCode(WbEditCode {
        id: "e1".into(),
        element_id: "code".into(),
        operation: action::CodeEditOperation::InsertAfter,
        line_id: None,
        line_ids: vec![],
        content: Some("print(2)".into()),
    }));
    assert_eq!(paths(&c), ["scenes[0].actions[2].line_id"]);
}

#[test]
fn widget_action_outside_an_interactive_scene_is_reported() {
    let mut c = course();
    let widget: Action =
        serde_json::from_str(r##"{"type": "widget_reveal", "id": "w1", "target": "#answer"}"##)
            .unwrap();
    c.scenes[0].actions.push(widget.clone());
    assert_eq!(paths(&c), ["scenes[0].actions[2]"]);
    c.scenes[0].actions.pop();
    c.scenes.push(Scene {
        id: "lab".into(),
        title: "Try it".into(),
        content: SceneContent::Interactive(Interactive {
            html: "<p>lab</p>".into(),
            widget: None,
        }),
        actions: vec![widget],
    });
    assert_eq!(issues(&c), vec![]);
}

#[test]
fn unknown_action_without_an_id_is_reported() {
    let mut c = course();
    c.scenes[0]
        .actions
        .push(serde_json::from_str(r#"{"type": "wb_draw_mindmap", "root": "light"}"#).unwrap());
    assert_eq!(paths(&c), ["scenes[0].actions[2].id"]);
}

#[test]
fn language_must_be_a_language_tag() {
    let mut c = course();
    c.language = "zh-CN".into();
    assert_eq!(issues(&c), vec![]);
    c.language = "Simplified Chinese".into();
    assert_eq!(paths(&c), ["language"]);
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let mut c = course();
    c.title = String::new();
    c.language = String::new();
    c.scenes[0].actions[0] = speech("a1", "", Some("ghost"));
    assert_eq!(issues(&c).len(), 4);
}

#[test]
fn from_json_loads_a_valid_course() {
    let c = course();
    assert_eq!(Course::from_json(&c.to_json()), Ok(c));
}

#[test]
fn from_json_rejects_an_unknown_field_naming_it_and_its_line() {
    let text = course().to_json().replacen(
        "\"title\": \"Photosynthesis\"",
        "\"titel\": \"Photosynthesis\"",
        1,
    );
    match Course::from_json(&text) {
        Err(CourseLoadError::Unreadable { detail, line, .. }) => {
            assert!(detail.contains("titel"), "{detail}");
            assert!(line > 1);
        }
        other => panic!("expected Unreadable, got {other:?}"),
    }
}

#[test]
fn from_json_rejects_broken_json_with_a_position() {
    let err = Course::from_json("{\"format_version\": 1,\n \"id\": ").unwrap_err();
    assert!(
        matches!(err, CourseLoadError::Unreadable { line: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("line 2"), "{err}");
}

#[test]
fn from_json_asks_to_update_for_a_newer_format() {
    let text = r#"{"format_version": 7, "id": "x", "holograms": []}"#;
    let err = Course::from_json(text).unwrap_err();
    assert_eq!(
        err,
        CourseLoadError::NewerFormat {
            found: 7,
            supported: FORMAT_VERSION
        }
    );
    assert!(err.to_string().contains("Update Aula"));
}

#[test]
fn from_json_rejects_a_file_without_format_version() {
    assert_eq!(
        Course::from_json(r#"{"id": "x"}"#),
        Err(CourseLoadError::MissingFormatVersion)
    );
}

#[test]
fn from_json_reports_validation_problems_with_their_paths() {
    let mut c = course();
    c.scenes[0].actions[0] = speech("a1", "Hi", Some("ghost"));
    let err = Course::from_json(&c.to_json()).unwrap_err();
    assert!(matches!(&err, CourseLoadError::Invalid(issues) if issues.len() == 1));
    assert!(
        err.to_string().contains("scenes[0].actions[0].speaker"),
        "{err}"
    );
}

#[test]
fn from_json_refuses_an_oversized_file_before_parsing() {
    let text = " ".repeat(MAX_COURSE_JSON_BYTES + 1);
    assert!(matches!(
        Course::from_json(&text),
        Err(CourseLoadError::TooLarge { .. })
    ));
}
