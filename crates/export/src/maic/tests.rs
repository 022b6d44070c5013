use std::collections::HashMap;

use aula_course::scene::QuizQuestion;
use aula_course::{Action, ActionKind, AgentRole, Course, SceneContent, SlideElement, WidgetKind};
use serde_json::{json, Value};

use super::*;
use crate::zip::{ZipLimits, ZipWriter};

const FIXTURE: &str = include_str!("../../fixtures/maic/photosynthesis-classroom.json");
const NARRATION: &[u8] = b"ID3\x04\x00fake mp3 narration..";
const LEAF_PNG: &[u8] = b"\x89PNG\r\n\x1a\nleaf picture";
const STOMATA_MP4: &[u8] = b"\x00\x00\x00\x18ftypmp42 stomata";
const POSTER_JPG: &[u8] = b"\xff\xd8\xff\xe0 poster";

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = ZipWriter::new(1_772_442_927_000);
    for (path, bytes) in files {
        zip.add(path, bytes);
    }
    zip.finish()
}

fn fixture_archive(manifest: &str) -> Vec<u8> {
    zip_of(&[
        ("manifest.json", manifest.as_bytes()),
        ("audio/audio-1.mp3", NARRATION),
        ("media/gen_img_leaf.png", LEAF_PNG),
        ("media/gen_vid_stomata.mp4", STOMATA_MP4),
        ("media/gen_vid_stomata.poster.jpg", POSTER_JPG),
    ])
}

fn import(archive: &[u8]) -> Result<MaicImport, MaicError> {
    import_maic(archive, "imported-course", &ZipLimits::BUNDLE)
}

fn fixture_with(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut manifest: Value = serde_json::from_str(FIXTURE).unwrap();
    edit(&mut manifest);
    fixture_archive(&manifest.to_string())
}

#[test]
fn an_openmaic_classroom_imports_every_scene_element_and_action() {
    let imported = import(&fixture_archive(FIXTURE)).unwrap();
    let course = &imported.course;
    assert_eq!(course.validate(), Ok(()));
    assert_eq!(course.id, "imported-course");
    assert_eq!(course.title, "Photosynthesis: how leaves make sugar");
    assert_eq!(course.language, "en");
    assert_eq!(
        (course.created_at, course.updated_at),
        (1_772_442_000_000, 1_772_442_927_000)
    );

    // Agents: new ids by role, OpenMAIC's role defaults for allowed actions, voices kept.
    let agents: Vec<(&str, &str, AgentRole)> = course
        .agents
        .iter()
        .map(|a| (a.id.as_str(), a.name.as_str(), a.role))
        .collect();
    assert_eq!(
        agents,
        [
            ("teacher", "Ms. Rivera", AgentRole::Teacher),
            ("student-1", "Kai", AgentRole::Student),
            ("assistant-1", "Ada", AgentRole::Assistant),
        ]
    );
    let teacher = &course.agents[0];
    assert_eq!(
        teacher
            .voice
            .as_ref()
            .map(|v| (v.provider.as_str(), v.voice.as_str())),
        Some(("openai-tts", "nova"))
    );
    assert_eq!(
        teacher.allowed_actions,
        AgentRole::Teacher.default_actions()
    );

    let kinds: Vec<&str> = course
        .scenes
        .iter()
        .map(|s| s.content.kind_name())
        .collect();
    assert_eq!(kinds, ["slide", "quiz", "interactive", "pbl"]);
    let ids: Vec<&str> = course.scenes.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["scene-1", "scene-2", "scene-3", "scene-4"]);

    // The slide: nine of OpenMAIC's ten element types (audio has no Aula form).
    let SceneContent::Slide(slide) = &course.scenes[0].content else {
        panic!("not a slide")
    };
    assert_eq!(slide.background.as_deref(), Some("#f8fafc"));
    let element_kinds: Vec<&str> = slide.elements.iter().map(SlideElement::kind_name).collect();
    assert_eq!(
        element_kinds,
        [
            "text", "text", "image", "image", "shape", "line", "chart", "table", "latex", "video",
            "code"
        ]
    );
    let element = |id: &str| slide.element(id).unwrap_or_else(|| panic!("no {id}"));
    let SlideElement::Text(title) = element("text_title01") else {
        panic!()
    };
    assert_eq!(
        (
            title.markdown.as_str(),
            title.font_size,
            title.color.as_deref()
        ),
        ("**Light into sugar**", Some(28.0), Some("#0f172a"))
    );
    let SlideElement::Text(body) = element("text_body002") else {
        panic!()
    };
    assert_eq!(
        body.markdown,
        "A leaf takes in three things:\n\n- **light** from the sun\n- water from the roots\n- CO2 from the air"
    );
    let SlideElement::Image(leaf) = element("image_leaf03") else {
        panic!()
    };
    assert_eq!(leaf.src, "media/gen_img_leaf.png");
    let SlideElement::Image(cell) = element("image_cell04") else {
        panic!()
    };
    assert_eq!(
        cell.src, "media/image_cell04.png",
        "a data: URL becomes a bundle file"
    );
    let SlideElement::Shape(shape) = element("shape_chloro05") else {
        panic!()
    };
    assert_eq!(
        (shape.shape, shape.fill.as_str(), shape.text.as_deref()),
        (
            aula_course::scene::ShapeKind::Rectangle,
            "#bbf7d0",
            Some("Chloroplast")
        )
    );
    let SlideElement::Line(line) = element("line_arrow06") else {
        panic!()
    };
    assert_eq!(
        (line.start, line.end, line.width),
        ([250.0, 340.0], [370.0, 340.0], 3.0)
    );
    assert_eq!(
        line.ends,
        [
            aula_course::action::LineEnd::Plain,
            aula_course::action::LineEnd::Arrow
        ]
    );
    let SlideElement::Chart(chart) = element("chart_rate07") else {
        panic!()
    };
    assert_eq!(
        (chart.data.series.clone(), chart.colors.clone()),
        (vec![vec![4.0, 11.0, 23.0]], vec!["#22c55e".to_string()])
    );
    let SlideElement::Table(table) = element("table_io08") else {
        panic!()
    };
    assert_eq!(table.rows, [["In", "Out"], ["CO2, water", "sugar, O2"]]);
    assert!(table.header);
    let SlideElement::Latex(latex) = element("latex_eq09") else {
        panic!()
    };
    assert_eq!(
        latex.latex,
        r"6CO_2 + 6H_2O \rightarrow C_6H_{12}O_6 + 6O_2"
    );
    let SlideElement::Video(video) = element("video_stoma10") else {
        panic!()
    };
    assert_eq!(
        (video.src.as_str(), video.poster.as_deref()),
        (
            "media/gen_vid_stomata.mp4",
            Some("media/gen_vid_stomata.poster.jpg")
        )
    );
    let SlideElement::Code(code) = element("code_model12") else {
        panic!()
    };
    assert_eq!(
        code.code,
        "def rate(light):\n    return min(light, 30) * 0.8"
    );
    assert_eq!(code.file_name.as_deref(), Some("rate.py"));

    // Every action type of OpenMAIC's DSL has its Aula form.
    let mut seen: Vec<ActionKind> = course
        .scenes
        .iter()
        .flat_map(|s| s.actions.iter().filter_map(Action::kind))
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ActionKind::ALL);
    let actions = &course.scenes[0].actions;
    let Action::Speech(first) = &actions[0] else {
        panic!()
    };
    assert_eq!(first.audio_id.as_deref(), Some("audio/audio-1.mp3"));
    assert_eq!(first.speaker, None, "OpenMAIC speeches are the teacher's");
    let Some(Action::Discussion(discussion)) = actions.last() else {
        panic!()
    };
    assert_eq!(
        discussion.agent_id.as_deref(),
        Some("student-1"),
        "agentIndex 1 is Kai"
    );
    let Action::WbDrawLine(wb_line) = &actions[11] else {
        panic!()
    };
    assert_eq!(
        (wb_line.start_x, wb_line.end_y, wb_line.style),
        (420.0, 80.0, aula_course::action::LineStyle::Dashed)
    );
    let Action::WidgetSetState(set_state) = &course.scenes[2].actions[3] else {
        panic!()
    };
    assert_eq!(Value::Object(set_state.state.clone()), json!({"light": 80}));

    // The quiz.
    let SceneContent::Quiz(quiz) = &course.scenes[1].content else {
        panic!()
    };
    let QuizQuestion::Single(single) = &quiz.questions[0] else {
        panic!()
    };
    assert_eq!(
        (
            single.answer.as_str(),
            single.points,
            single.options[1].text.as_str()
        ),
        ("B", 2, "Carbon dioxide")
    );
    assert_eq!(
        single.explanation.as_deref(),
        Some("CO2 enters through the stomata.")
    );
    let QuizQuestion::Multiple(multiple) = &quiz.questions[1] else {
        panic!()
    };
    assert_eq!(multiple.answers, ["A", "B"]);
    let QuizQuestion::Short(short) = &quiz.questions[2] else {
        panic!()
    };
    assert_eq!(
        short.reference_answer,
        "Chlorophyll absorbs red and blue light and reflects green."
    );

    let SceneContent::Interactive(page) = &course.scenes[2].content else {
        panic!()
    };
    assert_eq!(page.widget, Some(WidgetKind::Simulation));
    assert!(page.html.contains("light-slider"));

    // The project: two team members (OpenMAIC's question and judge helpers are its own).
    let SceneContent::Pbl(project) = &course.scenes[3].content else {
        panic!()
    };
    assert_eq!(
        project.briefing,
        "Plan an experiment that shows light changes how fast a plant makes oxygen."
    );
    let config = project.project.as_ref().unwrap();
    assert_eq!(config.title, "Windowsill experiment");
    let team: Vec<(&str, &str)> = config
        .agents
        .iter()
        .map(|a| (a.name.as_str(), a.role.as_str()))
        .collect();
    assert_eq!(team, [("Dr. Moss", "Botanist"), ("Lee", "Project manager")]);
    let owners: Vec<&str> = config.issues.iter().map(|i| i.owner.as_str()).collect();
    assert_eq!(owners, ["Dr. Moss", "Lee"]);

    let media: HashMap<&str, &[u8]> = imported
        .media
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    assert_eq!(media.len(), 5);
    assert_eq!(media["audio/audio-1.mp3"], NARRATION);
    assert_eq!(media["media/gen_img_leaf.png"], LEAF_PNG);
    assert_eq!(media["media/gen_vid_stomata.mp4"], STOMATA_MP4);
    assert_eq!(media["media/gen_vid_stomata.poster.jpg"], POSTER_JPG);
    assert_eq!(&media["media/image_cell04.png"][1..4], b"PNG");

    assert_eq!(
        imported.dropped,
        [
            "Scene 1 \"Light into sugar\": shape element \"shape_chloro05\" is shown unrotated (Aula does not rotate elements; it was turned 12°)",
            "Scene 1 \"Light into sugar\": audio element \"audio_birds11\": an audio player on the slide (Aula slides have no audio element; narration belongs in speech actions)",
            "Scene 1 \"Light into sugar\": the slide's element animations (Aula shows every element at once)",
            "Scene 3 \"Light and bubbles simulation\": its own choice of agents and director prompt (Aula uses the whole class in every scene)",
            "Scene 4 \"Design a windowsill experiment\": the project chat's opening messages (Aula's project starts its own chat)",
            "The classroom: its language directive \"Teach in English. Keep Latin plant names as they are and explain each once.\" (Aula keeps only the teaching language, en)",
        ]
    );
}

#[test]
fn what_aula_cannot_play_is_left_out_and_named() {
    let archive = fixture_with(|m| {
        let slide_actions = m["scenes"][0]["actions"].as_array_mut().unwrap();
        slide_actions.push(json!({"id": "act_x", "type": "wb_draw_arrow", "x": 1}));
        slide_actions
            .push(json!({"id": "act_ghost", "type": "spotlight", "elementId": "no_such_element"}));
        m["scenes"][1]["actions"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "act_q_spot", "type": "laser", "elementId": "x"}));
        m["scenes"][2]["content"]["html"] = json!("");
        m["scenes"][2]["content"]["url"] = json!("https://example.org/sim");
    });
    let imported = import(&archive).unwrap();
    assert_eq!(imported.course.validate(), Ok(()));
    assert_eq!(imported.course.scenes.len(), 3);
    let dropped = imported.dropped.join("\n");
    for expected in [
        "Scene 1 \"Light into sugar\": a `wb_draw_arrow` action (Aula has no equivalent)",
        "Scene 1 \"Light into sugar\": a `spotlight` action (there is no element \"no_such_element\" on this slide)",
        "Scene 2 \"Check your understanding\": a `laser` action (`laser` only works on slides; this scene is a quiz)",
        "Scene 3 \"Light and bubbles simulation\": an interactive page that lives at a web address (https://example.org/sim); Aula plays only self-contained pages",
        "Scene 3 \"Light and bubbles simulation\": the whole scene was left out",
    ] {
        assert!(dropped.contains(expected), "missing {expected:?} in\n{dropped}");
    }
}

#[test]
fn a_classroom_without_a_teacher_gets_its_highest_priority_agent_as_teacher() {
    let archive = fixture_with(|m| {
        m["agents"][0]["role"] = json!("student");
        m["agents"][0]["color"] = json!("blue");
    });
    let imported = import(&archive).unwrap();
    assert_eq!(imported.course.agents[0].role, AgentRole::Teacher);
    assert_eq!(imported.course.agents[0].color, "#2563eb");
    assert!(imported
        .dropped
        .iter()
        .any(|d| d.contains("no agent was the teacher, so Ms. Rivera leads")));
}

/// `original` with the ids the import gave its course, scenes and agents.
fn with_ids_of(original: &Course, imported: &Course) -> Course {
    let mut expected = original.clone();
    expected.id = imported.id.clone();
    let renamed: HashMap<String, String> = original
        .agents
        .iter()
        .zip(&imported.agents)
        .map(|(a, b)| (a.id.clone(), b.id.clone()))
        .collect();
    let rename = |id: &mut String| {
        if let Some(new) = renamed.get(id) {
            *id = new.clone();
        }
    };
    for agent in &mut expected.agents {
        rename(&mut agent.id);
    }
    for (scene, new) in expected.scenes.iter_mut().zip(&imported.scenes) {
        scene.id = new.id.clone();
        for action in &mut scene.actions {
            match action {
                Action::Speech(s) => s.speaker.iter_mut().for_each(rename),
                Action::Discussion(d) => {
                    d.agent_id.iter_mut().for_each(rename);
                    d.recording.iter_mut().for_each(|t| rename(&mut t.speaker));
                }
                _ => {}
            }
        }
    }
    expected
}

fn assert_round_trip(course: &Course, media: &[(String, Vec<u8>)]) -> MaicExport {
    assert_eq!(course.validate(), Ok(()));
    let export = export_maic(course, media, 1_772_442_927_481, "0.1.0").unwrap();
    assert_eq!(export.dropped, Vec::<String>::new());
    let imported = import(&export.archive).unwrap();
    assert_eq!(imported.dropped, Vec::<String>::new());
    let expected = with_ids_of(course, &imported.course);
    // Scene by scene, so a difference is readable.
    for (want, got) in expected.scenes.iter().zip(&imported.course.scenes) {
        assert_eq!(
            serde_json::to_string_pretty(got).unwrap(),
            serde_json::to_string_pretty(want).unwrap()
        );
    }
    assert_eq!(imported.course, expected);
    let mut sent = media.to_vec();
    sent.sort();
    assert_eq!(imported.media, sent);
    export
}

#[test]
fn the_english_sample_course_survives_a_round_trip() {
    let course = Course::from_json(include_str!(
        "../../../../public/courses/transformer-en.json"
    ))
    .unwrap();
    assert_round_trip(&course, &[]);
}

#[test]
fn the_chinese_sample_course_survives_a_round_trip() {
    let course = Course::from_json(include_str!(
        "../../../../public/courses/photosynthesis-zh.json"
    ))
    .unwrap();
    let export = assert_round_trip(&course, &[]);
    let manifest = manifest_of(&export.archive);
    assert_eq!(
        manifest["stage"]["language"],
        "Teach in Simplified Chinese (zh-CN)."
    );
}

fn manifest_of(archive: &[u8]) -> Value {
    let entries = crate::zip::read_zip(archive, &ZipLimits::BUNDLE).unwrap();
    let manifest = entries.iter().find(|e| e.path == "manifest.json").unwrap();
    serde_json::from_slice(&manifest.bytes).unwrap()
}

/// A course with every scene kind, every action kind and every slide element kind, and the
/// Aula-only details OpenMAIC has no field for.
fn every_kind_course() -> Course {
    Course::from_json(include_str!("../../fixtures/maic/every-kind-course.json")).unwrap()
}

fn every_kind_media() -> Vec<(String, Vec<u8>)> {
    vec![
        ("audio/s1-a1.mp3".into(), NARRATION.to_vec()),
        ("media/leaf cross-section.png".into(), LEAF_PNG.to_vec()),
        ("media/stomata.mp4".into(), STOMATA_MP4.to_vec()),
        ("media/stomata-poster.png".into(), POSTER_JPG.to_vec()),
    ]
}

#[test]
fn a_course_with_every_kind_of_scene_action_and_element_survives_a_round_trip() {
    let course = every_kind_course();
    let kinds: Vec<ActionKind> = course
        .scenes
        .iter()
        .flat_map(|s| s.actions.iter().filter_map(Action::kind))
        .collect();
    assert!(ActionKind::ALL.iter().all(|k| kinds.contains(k)));
    let export = assert_round_trip(&course, &every_kind_media());

    // OpenMAIC reads its own fields: placeholders with their files, camelCase actions, agents
    // by index, narration by zip path.
    let manifest = manifest_of(&export.archive);
    assert_eq!(manifest["formatVersion"], 1);
    assert_eq!(manifest["exportedAt"], "2026-03-02T09:15:27.481Z");
    let canvas = &manifest["scenes"][0]["content"]["canvas"];
    assert_eq!(canvas["elements"][2]["src"], "gen_img_leaf_cross-section");
    assert_eq!(canvas["elements"][9]["src"], "gen_vid_stomata");
    assert!(canvas["elements"][0]["content"]
        .as_str()
        .unwrap()
        .contains("<strong>sugar</strong>"));
    assert!(canvas["elements"][13]["html"]
        .as_str()
        .unwrap()
        .starts_with("<math"));
    let actions = &manifest["scenes"][0]["actions"];
    assert_eq!(actions[0]["audioRef"], "audio/s1-a1.mp3");
    assert_eq!(actions[2]["elementId"], "t1");
    assert_eq!(actions[17]["agentIndex"], 1);
    assert_eq!(
        manifest["scenes"][2]["actions"][3]["type"],
        "widget_setState"
    );
    let index = manifest["mediaIndex"].as_object().unwrap();
    let mut paths: Vec<&str> = index.keys().map(String::as_str).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "audio/s1-a1.mp3",
            "media/gen_img_leaf_cross-section.png",
            "media/gen_vid_stomata.mp4",
            "media/gen_vid_stomata.poster.png"
        ]
    );
    // What only Aula reads back is named.
    let aula_only = export.aula_only.join("\n");
    for detail in [
        "image element \"i1\"",
        "speech action \"a2\"",
        "discussion action \"a18\"",
        "the project's objectives",
    ] {
        assert!(aula_only.contains(detail), "{detail} not in\n{aula_only}");
    }
    assert!(!aula_only.contains("speech action \"a1\""), "{aula_only}");
}

#[test]
fn an_edit_made_in_openmaic_wins_over_the_aula_copy() {
    let course = every_kind_course();
    let export = export_maic(&course, &every_kind_media(), 0, "0.1.0").unwrap();
    let mut manifest = manifest_of(&export.archive);
    // Mia's question, reworded in OpenMAIC: its stored original is now stale.
    manifest["scenes"][0]["actions"][1]["text"] = json!("But why at night?");
    let entries = crate::zip::read_zip(&export.archive, &ZipLimits::BUNDLE).unwrap();
    let mut files: Vec<(&str, &[u8])> = vec![];
    let text = manifest.to_string();
    files.push(("manifest.json", text.as_bytes()));
    for e in entries.iter().filter(|e| e.path != "manifest.json") {
        files.push((&e.path, &e.bytes));
    }
    let imported = import(&zip_of(&files)).unwrap();
    let Action::Speech(speech) = &imported.course.scenes[0].actions[1] else {
        panic!()
    };
    assert_eq!(
        (speech.text.as_str(), speech.speaker.as_deref()),
        ("But why at night?", None)
    );
}

#[test]
fn media_the_course_names_but_nobody_supplied_is_reported_on_export() {
    let export = export_maic(&every_kind_course(), &[], 0, "0.1.0").unwrap();
    assert!(
        export.dropped.iter().any(|d| d.contains(
            "image element \"i1\": its file \"media/leaf cross-section.png\" was not supplied"
        )),
        "{:#?}",
        export.dropped
    );
    assert!(export
        .dropped
        .iter()
        .any(|d| d.contains("the narration of speech \"a1\"")));
    assert!(
        !export.dropped.iter().any(|d| d.contains("\"i2\"")),
        "a web address needs no file"
    );
}

#[test]
fn malformed_archives_get_errors_a_learner_can_act_on() {
    assert_eq!(
        import(b"PK not really a zip").unwrap_err(),
        MaicError::NotZip
    );
    let no_manifest = zip_of(&[("course.json", b"{}")]);
    let err = import(&no_manifest).unwrap_err();
    assert_eq!(err, MaicError::NoManifest { aula_bundle: true });
    assert!(err.to_string().contains("Import course"), "{err}");
    let bad_json = zip_of(&[("manifest.json", b"{\"formatVersion\": 1,\n \"stage\": {")]);
    let err = import(&bad_json).unwrap_err();
    assert!(matches!(err, MaicError::BadJson { line: 2, .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("manifest.json is not valid JSON"),
        "{err}"
    );
    let newer = fixture_with(|m| m["formatVersion"] = json!(2));
    assert_eq!(
        import(&newer).unwrap_err(),
        MaicError::NewerFormat {
            found: 2,
            supported: 1
        }
    );
    let no_version = fixture_with(|m| {
        m.as_object_mut().unwrap().remove("formatVersion");
    });
    assert!(import(&no_version)
        .unwrap_err()
        .to_string()
        .contains("`formatVersion` is missing"));
    let no_scenes = fixture_with(|m| m["scenes"] = json!("none"));
    assert!(
        matches!(import(&no_scenes).unwrap_err(), MaicError::BadManifest { path, .. } if path == "scenes")
    );
    let empty = fixture_with(|m| m["scenes"] = json!([]));
    assert!(matches!(
        import(&empty).unwrap_err(),
        MaicError::NothingImportable(_)
    ));
}

#[test]
fn traversal_paths_in_the_manifest_are_refused() {
    let media_index = fixture_with(|m| {
        m["mediaIndex"]["../../evil.png"] = json!({"type": "generated"});
    });
    let err = import(&media_index).unwrap_err();
    assert!(
        matches!(&err, MaicError::UnsafePath { path, source: crate::EntryPathError::ParentSegment(_) } if path == "mediaIndex[\"../../evil.png\"]"),
        "{err:?}"
    );
    let audio_ref = fixture_with(|m| {
        m["scenes"][0]["actions"][0]["audioRef"] = json!("/etc/passwd");
    });
    let err = import(&audio_ref).unwrap_err();
    assert!(
        matches!(&err, MaicError::UnsafePath { path, .. } if path == "scenes[0].actions[0].audioRef"),
        "{err:?}"
    );
    assert!(err.to_string().contains("unsafe file path"), "{err}");
    let aula_path = fixture_with(|m| {
        m["mediaIndex"]["media/gen_img_leaf.png"]["aula"] = json!({"path": "media/../course.json"});
    });
    assert!(matches!(
        import(&aula_path).unwrap_err(),
        MaicError::UnsafePath { .. }
    ));
}

#[test]
fn a_scene_of_a_type_aula_does_not_know_is_listed_as_dropped_not_read_as_a_slide() {
    // A newer OpenMAIC's scene type (its lesson-plan card deck), once with the kind only on the
    // scene, once with a content that still looks like a slide under it.
    let lesson_plan = json!({
        "type": "lesson_plan",
        "title": "Words for the garden",
        "order": 5,
        "content": {
            "type": "lesson_plan",
            "microGoal": {"grammarPoint": "plural nouns", "topic": "plants", "cefrLevel": "A1"},
            "groundingIds": ["g1"],
            "cards": [{"kind": "shadow", "instruction": "Say it after me.", "target": {"lithuanian": "lapas", "pronunciation": "LAH-pahs", "english": "leaf"}, "groundingId": "g1"}]
        },
        "actions": [{"id": "act_lp1", "type": "speech", "text": "Repeat after me."}]
    });
    for content_kind in [None, Some("slide")] {
        let archive = fixture_with(|m| {
            let mut scene = lesson_plan.clone();
            match content_kind {
                None => {
                    scene["content"].as_object_mut().unwrap().remove("type");
                }
                Some(kind) => {
                    scene["content"]["type"] = json!(kind);
                    scene["content"]["canvas"] = m["scenes"][0]["content"]["canvas"].clone();
                }
            }
            m["scenes"].as_array_mut().unwrap().push(scene);
        });
        let imported = import(&archive).unwrap();
        let titles: Vec<&str> = imported
            .course
            .scenes
            .iter()
            .map(|s| s.title.as_str())
            .collect();
        assert_eq!(
            titles,
            [
                "Light into sugar",
                "Check your understanding",
                "Light and bubbles simulation",
                "Design a windowsill experiment"
            ],
            "{content_kind:?}"
        );
        let dropped = imported.dropped.join("\n");
        for expected in [
            "Scene 5 \"Words for the garden\": a scene of type `lesson_plan` (Aula has slide, quiz, interactive and pbl scenes)",
            "Scene 5 \"Words for the garden\": the whole scene was left out",
        ] {
            assert!(
                dropped.contains(expected),
                "{content_kind:?}: missing {expected:?} in\n{dropped}"
            );
        }
    }
    // A known kind over a content of another kind is neither.
    let mismatched = fixture_with(|m| {
        m["scenes"][1]["content"] = m["scenes"][0]["content"].clone();
    });
    let imported = import(&mismatched).unwrap();
    assert_eq!(imported.course.scenes.len(), 3);
    assert!(
        !imported
            .course
            .scenes
            .iter()
            .any(|s| s.title == "Check your understanding"),
        "{:?}",
        imported.course.scenes
    );
    assert!(imported.dropped.iter().any(|d| d
        == "Scene 2 \"Check your understanding\": a quiz scene whose content says it is a `slide` (Aula cannot tell which it is)"));
}
