//! Each validation rule, pinned by course files: the fixture edited to break exactly that rule
//! (reported at the field, with a problem an author can act on), and where the edge matters, an
//! edit that looks close but is fine.
//!
//! Fixture map: scenes[0] leaf slide (text, image, shape, video; a recorded discussion at
//! actions[6]), scenes[1] evidence slide (text, chart, table, line, latex, code), scenes[2]
//! whiteboard walkthrough, scenes[3] interactive, scenes[4] quiz, scenes[5] project.

use aula_course::limits::*;
use aula_course::{Course, CourseLoadError, ValidationIssue};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("fixtures/photosynthesis.json");

/// The problems of the fixture after `edit`; a file that does not even parse fails the test.
fn problems(edit: impl FnOnce(&mut Value)) -> Vec<ValidationIssue> {
    let mut file: Value = serde_json::from_str(FIXTURE).unwrap();
    edit(&mut file);
    match Course::from_json(&file.to_string()) {
        Ok(_) => vec![],
        Err(CourseLoadError::Invalid(issues)) => issues,
        Err(other) => panic!("expected a readable course, got: {other}"),
    }
}

/// Why the fixture after `edit` cannot be read at all.
fn unreadable(edit: impl FnOnce(&mut Value)) -> String {
    let mut file: Value = serde_json::from_str(FIXTURE).unwrap();
    edit(&mut file);
    match Course::from_json(&serde_json::to_string_pretty(&file).unwrap()) {
        Err(CourseLoadError::Unreadable { detail, .. }) => detail,
        other => panic!("expected an unreadable file, got: {other:?}"),
    }
}

/// Exactly one problem, at `path`, whose text mentions `phrase`.
#[track_caller]
fn assert_one(found: Vec<ValidationIssue>, path: &str, phrase: &str) {
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].path, path, "{found:#?}");
    assert!(
        found[0].problem.contains(phrase),
        "{:?} does not mention {phrase:?}",
        found[0].problem
    );
}

fn push(list: &mut Value, item: Value) {
    list.as_array_mut().unwrap().push(item);
}

fn evidence_element(file: &mut Value, index: usize) -> &mut Value {
    &mut file["scenes"][1]["content"]["elements"][index]
}

#[test]
fn the_fixture_is_a_valid_course() {
    assert_eq!(problems(|_| {}), vec![]);
}

#[test]
fn element_ids_are_unique_within_a_slide() {
    assert_one(
        problems(|f| evidence_element(f, 4)["id"] = json!("rate-chart")),
        "scenes[1].content.elements[4].id",
        "already used at scenes[1].content.elements[1].id",
    );
}

#[test]
fn the_same_element_id_on_two_slides_is_fine() {
    assert_eq!(
        problems(|f| f["scenes"][2]["content"]["elements"][0]["id"] = json!("title")),
        vec![]
    );
}

#[test]
fn spotlight_outside_a_slide_scene_is_reported() {
    assert_one(
        problems(|f| {
            push(
                &mut f["scenes"][4]["actions"],
                json!({"type": "spotlight", "id": "d-02", "element_id": "q1", "dim_opacity": 0.5}),
            )
        }),
        "scenes[4].actions[1].element_id",
        "only works on slides; this scene is a quiz",
    );
}

#[test]
fn laser_at_an_element_not_on_its_slide_is_reported() {
    // `leaf-diagram` exists, but on another slide.
    assert_one(
        problems(|f| f["scenes"][1]["actions"][2]["element_id"] = json!("leaf-diagram")),
        "scenes[1].actions[2].element_id",
        "there is no element \"leaf-diagram\" on this slide",
    );
}

#[test]
fn play_video_in_an_interactive_scene_is_reported() {
    assert_one(
        problems(|f| {
            push(
                &mut f["scenes"][3]["actions"],
                json!({"type": "play_video", "id": "c-06", "element_id": "timelapse"}),
            )
        }),
        "scenes[3].actions[5].element_id",
        "only works on slides",
    );
}

#[test]
fn play_video_must_target_a_video_element() {
    assert_one(
        problems(|f| f["scenes"][0]["actions"][4]["element_id"] = json!("leaf-diagram")),
        "scenes[0].actions[4].element_id",
        "play_video plays only video elements, and \"leaf-diagram\" is of type `image`",
    );
}

#[test]
fn widget_actions_outside_an_interactive_scene_are_reported() {
    assert_one(
        problems(|f| {
            push(
                &mut f["scenes"][1]["actions"],
                json!({"type": "widget_highlight", "id": "e-06", "target": "#rate"}),
            )
        }),
        "scenes[1].actions[5]",
        "needs an interactive scene; this one is a slide",
    );
}

#[test]
fn a_ragged_slide_table_is_reported_at_the_short_row() {
    assert_one(
        problems(|f| evidence_element(f, 2)["rows"][2] = json!(["20"])),
        "scenes[1].content.elements[2].rows[2]",
        "this row has 1 cell(s); every row needs 2",
    );
}

#[test]
fn an_empty_slide_table_is_reported() {
    assert_one(
        problems(|f| evidence_element(f, 2)["rows"] = json!([])),
        "scenes[1].content.elements[2].rows",
        "the table is empty",
    );
}

#[test]
fn an_empty_whiteboard_table_is_reported() {
    assert_one(
        problems(|f| f["scenes"][2]["actions"][6]["data"] = json!([[]])),
        "scenes[2].actions[6].data",
        "the table is empty",
    );
}

#[test]
fn chart_legends_must_match_the_series() {
    assert_one(
        problems(|f| evidence_element(f, 1)["data"]["legends"] = json!(["Bubbles per minute"])),
        "scenes[1].content.elements[1].data.legends",
        "1 legend(s) for 2 series",
    );
}

#[test]
fn a_chart_without_legends_is_fine() {
    assert_eq!(
        problems(|f| {
            evidence_element(f, 1)["data"]
                .as_object_mut()
                .unwrap()
                .remove("legends");
        }),
        vec![]
    );
}

#[test]
fn every_chart_series_needs_one_value_per_label() {
    assert_one(
        problems(|f| f["scenes"][2]["actions"][5]["data"]["series"][0] = json!([0, 12])),
        "scenes[2].actions[5].data.series[0]",
        "this series has 2 value(s) for 5 label(s)",
    );
}

#[test]
fn a_chart_without_series_is_reported() {
    assert_one(
        problems(|f| {
            let data = &mut evidence_element(f, 1)["data"];
            data["series"] = json!([]);
            data["legends"] = json!([]);
        }),
        "scenes[1].content.elements[1].data.series",
        "no series",
    );
}

#[test]
fn an_element_without_a_size_is_reported() {
    assert_one(
        problems(|f| evidence_element(f, 0)["height"] = json!(0)),
        "scenes[1].content.elements[0]",
        "width and height must be above 0",
    );
    assert_one(
        problems(|f| f["scenes"][2]["actions"][3]["width"] = json!(-100)),
        "scenes[2].actions[3]",
        "width and height must be above 0",
    );
}

#[test]
fn an_element_entirely_off_the_canvas_is_reported() {
    assert_one(
        problems(|f| evidence_element(f, 5)["top"] = json!(600)),
        "scenes[1].content.elements[5]",
        "entirely outside the 1000 × 562.5 canvas",
    );
    assert_one(
        problems(|f| f["scenes"][2]["actions"][3]["x"] = json!(1200)),
        "scenes[2].actions[3]",
        "entirely outside",
    );
}

#[test]
fn an_element_partly_off_the_canvas_is_fine() {
    assert_eq!(
        problems(|f| evidence_element(f, 5)["top"] = json!(500)),
        vec![]
    );
}

#[test]
fn a_line_needs_two_different_points_and_a_width() {
    assert_one(
        problems(|f| evidence_element(f, 3)["end"] = json!([500, 330])),
        "scenes[1].content.elements[3]",
        "starts and ends at the same point",
    );
    assert_one(
        problems(|f| evidence_element(f, 3)["width"] = json!(0)),
        "scenes[1].content.elements[3].width",
        "must be above 0",
    );
    assert_one(
        problems(|f| {
            let line = &mut f["scenes"][2]["actions"][4];
            line["start_x"] = json!(-300);
            line["end_x"] = json!(-100);
        }),
        "scenes[2].actions[4]",
        "entirely outside",
    );
}

#[test]
fn a_font_size_must_be_positive_and_sane() {
    assert_one(
        problems(|f| f["scenes"][0]["content"]["elements"][0]["font_size"] = json!(0)),
        "scenes[0].content.elements[0].font_size",
        "must be above 0",
    );
    assert_one(
        problems(|f| f["scenes"][2]["actions"][2]["font_size"] = json!(500)),
        "scenes[2].actions[2].font_size",
        "at most 200",
    );
}

#[test]
fn colours_must_be_hex_or_a_known_name() {
    assert_one(
        problems(|f| f["scenes"][0]["content"]["elements"][0]["color"] = json!("blu")),
        "scenes[0].content.elements[0].color",
        "\"blu\" is not a colour Aula can draw",
    );
    assert_one(
        problems(|f| f["scenes"][2]["actions"][3]["fill_color"] = json!("rgb(250, 204, 21)")),
        "scenes[2].actions[3].fill_color",
        "use #rgb, #rrggbb, #rrggbbaa",
    );
    assert_one(
        problems(|f| evidence_element(f, 1)["colors"][1] = json!("#ff00")),
        "scenes[1].content.elements[1].colors[1]",
        "not a colour",
    );
    assert_one(
        problems(|f| f["scenes"][0]["content"]["background"] = json!("sunny")),
        "scenes[0].content.background",
        "not a colour",
    );
}

#[test]
fn short_long_and_alpha_hex_colours_and_named_colours_are_fine() {
    assert_eq!(
        problems(|f| {
            f["scenes"][0]["content"]["elements"][0]["color"] = json!("#abc");
            f["scenes"][0]["content"]["elements"][2]["fill"] = json!("#dcfce780");
            f["scenes"][1]["actions"][2]["color"] = json!("Teal");
            f["scenes"][2]["actions"][4]["color"] = json!("transparent");
        }),
        vec![]
    );
}

#[test]
fn an_empty_formula_is_reported() {
    assert_one(
        problems(|f| evidence_element(f, 4)["latex"] = json!("  ")),
        "scenes[1].content.elements[4].latex",
        "the formula is empty",
    );
    assert_one(
        problems(|f| f["scenes"][2]["actions"][1]["latex"] = json!("")),
        "scenes[2].actions[1].latex",
        "the formula is empty",
    );
}

#[test]
fn an_empty_code_block_is_reported() {
    assert_one(
        problems(|f| evidence_element(f, 5)["code"] = json!("")),
        "scenes[1].content.elements[5].code",
        "the code is empty",
    );
    assert_one(
        problems(|f| f["scenes"][2]["actions"][9]["code"] = json!("\n")),
        "scenes[2].actions[9].code",
        "the code is empty",
    );
}

#[test]
fn recorded_turns_must_be_spoken_by_course_agents() {
    // Leo is in the default cast, but not in this course.
    assert_one(
        problems(|f| f["scenes"][0]["actions"][6]["recording"][1]["speaker"] = json!("leo")),
        "scenes[0].actions[6].recording[1].speaker",
        "there is no agent \"leo\" in this course",
    );
}

#[test]
fn an_empty_recorded_turn_is_reported() {
    assert_one(
        problems(|f| f["scenes"][0]["actions"][6]["recording"][2]["text"] = json!(" ")),
        "scenes[0].actions[6].recording[2].text",
        "the turn is empty",
    );
}

#[test]
fn quiz_question_ids_are_unique() {
    assert_one(
        problems(|f| f["scenes"][4]["content"]["questions"][2]["id"] = json!("q1")),
        "scenes[4].content.questions[2].id",
        "the question id \"q1\" is already used at scenes[4].content.questions[0].id",
    );
}

#[test]
fn a_question_worth_no_points_is_fine() {
    assert_eq!(
        problems(|f| f["scenes"][4]["content"]["questions"][0]["points"] = json!(0)),
        vec![]
    );
}

#[test]
fn negative_or_fractional_points_do_not_load() {
    for points in [json!(-1), json!(1.5), json!("2")] {
        let detail =
            unreadable(|f| f["scenes"][4]["content"]["questions"][1]["points"] = points.clone());
        assert!(
            detail.contains("`points` must be a whole number, 0 or more"),
            "{points}: {detail}"
        );
    }
}

#[test]
fn points_above_the_limit_are_reported() {
    assert_one(
        problems(|f| f["scenes"][4]["content"]["questions"][1]["points"] = json!(1000)),
        "scenes[4].content.questions[1].points",
        "at most 100 points",
    );
}

#[test]
fn over_long_slide_text_is_reported() {
    assert_one(
        problems(|f| evidence_element(f, 0)["markdown"] = json!("a".repeat(MAX_TEXT_CHARS + 1))),
        "scenes[1].content.elements[0].markdown",
        "longer than 10000 characters",
    );
}

#[test]
fn over_long_table_cell_is_reported() {
    assert_one(
        problems(|f| {
            evidence_element(f, 2)["rows"][1][1] = json!("9".repeat(MAX_TABLE_CELL_CHARS + 1))
        }),
        "scenes[1].content.elements[2].rows[1][1]",
        "the cell is longer than",
    );
}

#[test]
fn too_many_table_rows_are_reported() {
    assert_one(
        problems(|f| {
            f["scenes"][2]["actions"][6]["data"] = json!(vec![["a", "b"]; MAX_TABLE_ROWS + 1])
        }),
        "scenes[2].actions[6].data",
        "51 rows; at most 50",
    );
}

#[test]
fn over_long_recorded_turn_is_reported() {
    assert_one(
        problems(|f| {
            f["scenes"][0]["actions"][6]["recording"][0]["text"] =
                json!("why ".repeat(MAX_SPEECH_CHARS))
        }),
        "scenes[0].actions[6].recording[0].text",
        "longer than 2000 characters",
    );
}

#[test]
fn over_long_widget_target_is_reported() {
    assert_one(
        problems(|f| {
            f["scenes"][3]["actions"][0]["target"] = json!("#".repeat(MAX_WIDGET_TARGET_CHARS + 1))
        }),
        "scenes[3].actions[0].target",
        "the widget target is longer than",
    );
}

#[test]
fn an_oversized_widget_state_is_reported() {
    assert_one(
        problems(|f| {
            f["scenes"][3]["actions"][1]["state"] =
                json!({"log": "x".repeat(MAX_WIDGET_STATE_BYTES)})
        }),
        "scenes[3].actions[1].state",
        "at most 65536 are allowed",
    );
}

#[test]
fn project_issues_must_be_owned_by_a_project_agent() {
    // Professor Lin teaches the course but is not on the project team.
    assert_one(
        problems(|f| {
            f["scenes"][5]["content"]["project"]["issues"][1]["owner"] = json!("Professor Lin")
        }),
        "scenes[5].content.project.issues[1].owner",
        "\"Professor Lin\" is not the name of an agent of this project",
    );
}

#[test]
fn project_agent_names_and_issue_ids_are_unique() {
    let found = problems(|f| {
        let project = &mut f["scenes"][5]["content"]["project"];
        project["agents"][2]["name"] = json!("Sam");
        project["issues"][2]["id"] = json!("shortlist");
    });
    let paths: Vec<_> = found.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "scenes[5].content.project.agents[2].name",
            "scenes[5].content.project.issues[2].id",
            // Ria, renamed away, owned the first issue.
            "scenes[5].content.project.issues[0].owner",
        ],
        "{found:#?}"
    );
}

#[test]
fn a_project_needs_a_team() {
    assert_one(
        problems(|f| {
            let project = &mut f["scenes"][5]["content"]["project"];
            project["agents"] = json!([]);
            project["issues"] = json!([]);
        }),
        "scenes[5].content.project.agents",
        "at least one agent",
    );
}

#[test]
fn a_briefing_without_a_project_team_is_fine() {
    assert_eq!(
        problems(|f| {
            f["scenes"][5]["content"]
                .as_object_mut()
                .unwrap()
                .remove("project");
        }),
        vec![]
    );
}

#[test]
fn an_unknown_slide_element_type_does_not_load_and_is_named() {
    let detail = unreadable(|f| {
        push(
            &mut f["scenes"][1]["content"]["elements"],
            json!({"type": "audio", "id": "birdsong", "src": "media/birds.mp3"}),
        )
    });
    assert!(
        detail.contains("no slide element of type `audio`"),
        "{detail}"
    );
    assert!(
        detail.contains("text, image, shape, video, line, chart, table, latex, code"),
        "{detail}"
    );
}

#[test]
fn a_misspelt_element_field_does_not_load_and_names_the_element_type() {
    let detail = unreadable(|f| {
        let text = evidence_element(f, 0).as_object_mut().unwrap();
        let markdown = text.remove("markdown").unwrap();
        text.insert("html".into(), markdown);
    });
    assert!(detail.contains("in a `text` element"), "{detail}");
    assert!(detail.contains("html"), "{detail}");
}

#[test]
fn unknown_action_types_still_load() {
    assert_eq!(
        problems(|f| {
            push(
                &mut f["scenes"][1]["actions"],
                json!({"type": "wb_draw_hologram", "id": "e-06", "depth": 3}),
            )
        }),
        vec![]
    );
}
