//! A real-looking course with every scene kind and every action survives a load and a save.

use aula_course::{Action, ActionKind, Course, SceneContent};
use serde_json::Value;

const FIXTURE: &str = include_str!("fixtures/photosynthesis.json");

/// Integers and floats compare equal once both are floats (`60` in the file, `60.0` written).
fn numbers_as_floats(value: Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.into_iter().map(numbers_as_floats).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, numbers_as_floats(v)))
                .collect(),
        ),
        other => other,
    }
}

#[test]
fn fixture_course_loads_and_validates() {
    let course = Course::from_json(FIXTURE).unwrap();
    assert_eq!(course.scenes.len(), 5);
    assert_eq!(course.teacher().map(|t| t.id.as_str()), Some("teacher"));
}

#[test]
fn fixture_covers_every_scene_kind_and_every_action_kind() {
    let course = Course::from_json(FIXTURE).unwrap();
    let mut scene_kinds: Vec<_> = course
        .scenes
        .iter()
        .map(|s| s.content.kind_name())
        .collect();
    scene_kinds.sort_unstable();
    scene_kinds.dedup();
    assert_eq!(scene_kinds, ["interactive", "pbl", "quiz", "slide"]);

    let used: Vec<ActionKind> = course
        .scenes
        .iter()
        .flat_map(|s| s.actions.iter().filter_map(Action::kind))
        .collect();
    for kind in ActionKind::ALL {
        assert!(
            used.contains(kind),
            "the fixture has no `{}`",
            kind.as_str()
        );
    }
    assert!(matches!(course.scenes[3].content, SceneContent::Quiz(_)));
}

#[test]
fn saving_a_loaded_course_writes_back_the_same_document() {
    let course = Course::from_json(FIXTURE).unwrap();
    let original: Value = serde_json::from_str(FIXTURE).unwrap();
    let written: Value = serde_json::from_str(&course.to_json()).unwrap();
    assert_eq!(numbers_as_floats(written), numbers_as_floats(original));
}

#[test]
fn a_saved_course_loads_back_equal() {
    let course = Course::from_json(FIXTURE).unwrap();
    let again = Course::from_json(&course.to_json()).unwrap();
    assert_eq!(again, course);
}

#[test]
fn unknown_action_in_a_file_is_kept_and_written_back_unchanged() {
    let course = Course::from_json(FIXTURE).unwrap();
    let unknown = &course.scenes[0].actions[7];
    let Action::Unknown { type_name, raw } = unknown else {
        panic!("expected the mind map to stay unknown, got {unknown:?}");
    };
    assert_eq!(type_name, "wb_draw_mindmap");
    assert_eq!(unknown.id(), "a-08");
    let original: Value = serde_json::from_str(FIXTURE).unwrap();
    assert_eq!(raw, &original["scenes"][0]["actions"][7]);
    let written: Value = serde_json::from_str(&course.to_json()).unwrap();
    assert_eq!(
        written["scenes"][0]["actions"][7],
        original["scenes"][0]["actions"][7]
    );
}
