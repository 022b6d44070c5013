//! The sample courses bundled under `public/courses/` open cleanly, match their index entries,
//! and each shows off what a lesson can do: a quiz, a recorded discussion, a whiteboard
//! derivation, a chart, slide effects and classmates who speak. Their layouts keep a margin and
//! never stack one element on another.

use std::path::{Path, PathBuf};

use aula_course::scene::{Frame, QuizQuestion};
use aula_course::{
    Action, AgentRole, Course, SceneContent, SlideElement, CANVAS_HEIGHT, CANVAS_WIDTH,
};
use serde_json::Value;

/// The empty band every element keeps from the canvas edges.
const MARGIN: f64 = 20.0;

fn courses_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/courses")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every entry of `index.json`, with the course file it names, loaded and validated.
fn bundled() -> Vec<(Value, Course)> {
    let index: Value = serde_json::from_str(&read(&courses_dir().join("index.json")))
        .expect("public/courses/index.json is valid JSON");
    let entries = index.as_array().expect("index.json is an array");
    assert!(!entries.is_empty(), "index.json lists no course");
    entries
        .iter()
        .map(|entry| {
            let file = entry["file"]
                .as_str()
                .expect("an index entry has a \"file\"");
            let course = Course::from_json(&read(&courses_dir().join(file)))
                .unwrap_or_else(|e| panic!("{file} does not open: {e}"));
            (entry.clone(), course)
        })
        .collect()
}

fn actions(course: &Course) -> impl Iterator<Item = &Action> {
    course.scenes.iter().flat_map(|s| s.actions.iter())
}

fn overlaps(a: &Frame, b: &Frame) -> bool {
    a.left < b.left + b.width
        && b.left < a.left + a.width
        && a.top < b.top + b.height
        && b.top < a.top + a.height
}

fn within_margin(f: &Frame) -> bool {
    f.left >= MARGIN
        && f.top >= MARGIN
        && f.left + f.width <= CANVAS_WIDTH - MARGIN
        && f.top + f.height <= CANVAS_HEIGHT - MARGIN
}

fn frame(left: f64, top: f64, width: f64, height: f64) -> Frame {
    Frame {
        left,
        top,
        width,
        height,
    }
}

/// Where a whiteboard drawing lands, for the drawing actions that add one element.
fn drawn_frame(action: &Action) -> Option<(String, Frame)> {
    let (id, f) = match action {
        Action::WbDrawText(a) => (&a.element_id, frame(a.x, a.y, a.width, a.height)),
        Action::WbDrawShape(a) => (&a.element_id, frame(a.x, a.y, a.width, a.height)),
        Action::WbDrawChart(a) => (&a.element_id, frame(a.x, a.y, a.width, a.height)),
        Action::WbDrawTable(a) => (&a.element_id, frame(a.x, a.y, a.width, a.height)),
        Action::WbDrawCode(a) => (&a.element_id, frame(a.x, a.y, a.width, a.height)),
        Action::WbDrawLatex(a) => (
            &a.element_id,
            frame(a.x, a.y, a.width, a.height.unwrap_or(0.0)),
        ),
        Action::WbDrawLine(a) => {
            let half = a.width / 2.0;
            (
                &a.element_id,
                frame(
                    a.start_x.min(a.end_x) - half,
                    a.start_y.min(a.end_y) - half,
                    (a.start_x - a.end_x).abs() + a.width,
                    (a.start_y - a.end_y).abs() + a.width,
                ),
            )
        }
        _ => return None,
    };
    Some((id.clone().unwrap_or_else(|| action.id().to_string()), f))
}

#[test]
fn every_bundled_course_opens_without_a_validation_issue() {
    for (entry, course) in bundled() {
        assert_eq!(course.validate(), Ok(()), "{}", entry["file"]);
    }
}

#[test]
fn index_entries_match_their_courses() {
    let mut ids = Vec::new();
    for (entry, course) in bundled() {
        let file = &entry["file"];
        assert_eq!(entry["id"].as_str(), Some(course.id.as_str()), "{file}: id");
        assert_eq!(
            entry["title"].as_str(),
            Some(course.title.as_str()),
            "{file}: title"
        );
        assert_eq!(
            entry["language"].as_str(),
            Some(course.language.as_str()),
            "{file}: language"
        );
        assert_eq!(
            entry["description"].as_str(),
            Some(course.description.as_str()),
            "{file}: description"
        );
        assert_eq!(
            entry["scenes"].as_u64(),
            Some(course.scenes.len() as u64),
            "{file}: scene count"
        );
        ids.push(course.id);
    }
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "two bundled courses share an id");
}

#[test]
fn every_bundled_course_is_a_full_lesson() {
    for (entry, course) in bundled() {
        let file = &entry["file"];
        assert!(
            (6..=10).contains(&course.scenes.len()),
            "{file}: {} scenes; a sample has 6 to 10",
            course.scenes.len()
        );
        let teacher = course.teacher().expect("a course has a teacher");
        let classmates = course
            .agents
            .iter()
            .filter(|a| a.role != AgentRole::Teacher);
        assert!(
            (2..=3).contains(&classmates.count()),
            "{file}: a sample has two or three classmates"
        );

        let quiz = course.scenes.iter().find_map(|s| match &s.content {
            SceneContent::Quiz(q) => Some(q),
            _ => None,
        });
        let quiz = quiz.unwrap_or_else(|| panic!("{file}: no quiz scene"));
        assert!(quiz
            .questions
            .iter()
            .any(|q| matches!(q, QuizQuestion::Single(_))));
        assert!(quiz
            .questions
            .iter()
            .any(|q| matches!(q, QuizQuestion::Multiple(_))));
        assert!(quiz
            .questions
            .iter()
            .any(|q| matches!(q, QuizQuestion::Short(_))));

        assert!(
            actions(&course).any(|a| matches!(a, Action::Discussion(d) if !d.recording.is_empty())),
            "{file}: no discussion with a recorded exchange"
        );
        assert!(
            actions(&course).any(|a| matches!(a, Action::WbDrawLatex(_))),
            "{file}: no formula drawn on the whiteboard"
        );
        assert!(
            course
                .scenes
                .iter()
                .any(|s| matches!(&s.content, SceneContent::Slide(slide)
                if slide.elements.iter().any(|e| matches!(e, SlideElement::Chart(_))))),
            "{file}: no chart on any slide"
        );
        assert!(
            actions(&course).any(|a| matches!(a, Action::Spotlight(_))),
            "{file}: no spotlight"
        );
        assert!(
            actions(&course).any(|a| matches!(a, Action::Laser(_))),
            "{file}: no laser"
        );
        assert!(
            actions(&course).any(|a| matches!(a, Action::Speech(s)
                if s.speaker.as_deref().is_some_and(|id| id != teacher.id))),
            "{file}: no classmate speaks during the lecture"
        );
    }
}

#[test]
fn every_slide_scene_is_narrated() {
    for (entry, course) in bundled() {
        for scene in &course.scenes {
            if matches!(scene.content, SceneContent::Slide(_)) {
                assert!(
                    scene.actions.iter().any(|a| matches!(a, Action::Speech(_))),
                    "{}: scene {} has no narration",
                    entry["file"],
                    scene.id
                );
            }
        }
    }
}

#[test]
fn slides_and_whiteboards_keep_a_margin_and_never_overlap() {
    for (entry, course) in bundled() {
        let file = &entry["file"];
        for scene in &course.scenes {
            if let SceneContent::Slide(slide) = &scene.content {
                let frames: Vec<_> = slide.elements.iter().map(|e| (e.id(), e.frame())).collect();
                for (k, (id, f)) in frames.iter().enumerate() {
                    assert!(
                        within_margin(f),
                        "{file}: {}/{id} is in the margin: {f:?}",
                        scene.id
                    );
                    for (other, g) in &frames[k + 1..] {
                        assert!(
                            !overlaps(f, g),
                            "{file}: {}: {id} overlaps {other}",
                            scene.id
                        );
                    }
                }
            }
            let mut board: Vec<(String, Frame)> = Vec::new();
            for action in &scene.actions {
                if matches!(action, Action::WbClear(_)) {
                    board.clear();
                    continue;
                }
                let Some((id, f)) = drawn_frame(action) else {
                    continue;
                };
                assert!(
                    within_margin(&f),
                    "{file}: {}: board {id} is in the margin",
                    scene.id
                );
                for (other, g) in &board {
                    assert!(
                        !overlaps(&f, g),
                        "{file}: {}: board {id} overlaps {other}",
                        scene.id
                    );
                }
                board.push((id, f));
            }
        }
    }
}
