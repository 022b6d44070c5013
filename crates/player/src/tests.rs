//! The course player's rules, each pinned by a small course. Times are easy to read because
//! speeches get exact audio lengths through `with_media_lengths`.

use std::collections::HashMap;

use aula_course::action::{
    CodeEditOperation, Discussion, Laser, PlayVideo, RecordedTurn, Spotlight, WbClear, WbClose,
    WbDelete, WbDrawCode, WbDrawShape, WbDrawText, WbEditCode, WbOpen, WhiteboardShape,
};
use aula_course::durations::{
    clear_cascade_ms, code_typing_ms, DISCUSSION_TRIGGER_DELAY_MS, EFFECT_AUTO_CLEAR_MS,
    WB_DRAW_MS, WB_OPEN_MS,
};
use aula_course::scene::{Quiz, QuizOption, QuizQuestion, Scene, SingleChoice, Slide};
use aula_course::{default_agents, Course, FORMAT_VERSION};
use proptest::prelude::*;

use super::*;

// ---- building courses ----

fn speech(id: &str, text: &str) -> Action {
    Action::Speech(SpeechAction {
        id: id.into(),
        text: text.into(),
        speaker: None,
        audio_id: None,
    })
}

fn said_by(id: &str, text: &str, speaker: &str) -> Action {
    Action::Speech(SpeechAction {
        id: id.into(),
        text: text.into(),
        speaker: Some(speaker.into()),
        audio_id: None,
    })
}

fn spotlight(id: &str, element: &str) -> Action {
    Action::Spotlight(Spotlight {
        id: id.into(),
        element_id: element.into(),
        dim_opacity: 0.6,
    })
}

fn laser(id: &str, element: &str) -> Action {
    Action::Laser(Laser {
        id: id.into(),
        element_id: element.into(),
        color: "#ff0000".into(),
    })
}

fn text(id: &str, element: &str, x: f64, y: f64) -> Action {
    Action::WbDrawText(WbDrawText {
        id: id.into(),
        element_id: Some(element.into()),
        content: "Oxygen is the by-product we breathe.".into(),
        x,
        y,
        width: 300.0,
        height: 100.0,
        font_size: 18.0,
        color: "#333333".into(),
    })
}

fn shape(id: &str) -> Action {
    Action::WbDrawShape(WbDrawShape {
        id: id.into(),
        element_id: None,
        shape: WhiteboardShape::Circle,
        x: 700.0,
        y: 300.0,
        width: 100.0,
        height: 100.0,
        fill_color: "#facc15".into(),
    })
}

fn code(id: &str, element: &str, source: &str) -> Action {
    Action::WbDrawCode(WbDrawCode {
        id: id.into(),
        element_id: Some(element.into()),
        language: "python".into(),
        code: source.into(),
        x: 100.0,
        y: 300.0,
        width: 400.0,
        height: 200.0,
        file_name: Some("rate.py".into()),
    })
}

fn replace_line(id: &str, element: &str, line: &str, content: &str) -> Action {
    Action::WbEditCode(WbEditCode {
        id: id.into(),
        element_id: element.into(),
        operation: CodeEditOperation::ReplaceLines,
        line_id: None,
        line_ids: vec![line.into()],
        content: Some(content.into()),
    })
}

fn delete(id: &str, element: &str) -> Action {
    Action::WbDelete(WbDelete {
        id: id.into(),
        element_id: element.into(),
    })
}

fn clear(id: &str) -> Action {
    Action::WbClear(WbClear { id: id.into() })
}

fn wb_open(id: &str) -> Action {
    Action::WbOpen(WbOpen { id: id.into() })
}

fn wb_close(id: &str) -> Action {
    Action::WbClose(WbClose { id: id.into() })
}

fn discussion(id: &str, turns: &[(&str, &str)]) -> Action {
    Action::Discussion(Discussion {
        id: id.into(),
        topic: "Do plants breathe at night?".into(),
        prompt: None,
        agent_id: Some("mia".into()),
        recording: turns
            .iter()
            .map(|(speaker, text)| RecordedTurn {
                speaker: speaker.to_string(),
                text: text.to_string(),
            })
            .collect(),
    })
}

fn unknown(id: &str) -> Action {
    Action::Unknown {
        type_name: "wb_draw_hologram".into(),
        raw: serde_json::json!({"type": "wb_draw_hologram", "id": id}),
    }
}

fn slide(id: &str, actions: Vec<Action>) -> Scene {
    Scene {
        id: id.into(),
        title: "Light".into(),
        content: SceneContent::Slide(Slide {
            background: None,
            elements: vec![],
        }),
        actions,
    }
}

fn quiz(id: &str, actions: Vec<Action>) -> Scene {
    let option = |id: &str, text: &str| QuizOption {
        id: id.into(),
        text: text.into(),
    };
    Scene {
        id: id.into(),
        title: "Check yourself".into(),
        content: SceneContent::Quiz(Quiz {
            questions: vec![QuizQuestion::Single(SingleChoice {
                id: "q1".into(),
                question: "Which gas do plants release?".into(),
                options: vec![option("a", "Oxygen"), option("b", "Nitrogen")],
                answer: "a".into(),
                explanation: None,
                points: 1,
            })],
        }),
        actions,
    }
}

fn course(scenes: Vec<Scene>) -> Course {
    Course {
        format_version: FORMAT_VERSION,
        id: "photosynthesis".into(),
        title: "How plants make food".into(),
        language: "en-GB".into(),
        description: String::new(),
        agents: default_agents(),
        scenes,
        created_at: 0,
        updated_at: 0,
    }
}

/// Every speech gets an audio length of 1000 ms per sentence, so sentence windows are whole
/// seconds.
fn lengths(course: &Course) -> HashMap<String, u64> {
    course
        .scenes
        .iter()
        .flat_map(|s| &s.actions)
        .filter_map(|a| match a {
            Action::Speech(s) => Some((s.id.clone(), 1000 * sentences(&s.text).len() as u64)),
            _ => None,
        })
        .collect()
}

fn voice() -> PlayerOptions {
    PlayerOptions::default()
}

fn captions() -> PlayerOptions {
    PlayerOptions {
        captions_only: true,
        ..PlayerOptions::default()
    }
}

/// A player with a clock and a log of everything it said.
struct Run {
    player: CoursePlayer,
    now: f64,
    log: Vec<Output>,
}

impl Run {
    fn new(scenes: Vec<Scene>, options: PlayerOptions) -> Run {
        let course = course(scenes);
        let known = lengths(&course);
        Run {
            player: CoursePlayer::with_media_lengths(course, options, known),
            now: 0.0,
            log: Vec::new(),
        }
    }

    fn send(&mut self, command: Command) -> Vec<Output> {
        let out = self.player.handle(command, self.now);
        self.log.extend(out.clone());
        out
    }

    /// Lets `ms` of wall time pass in 10 ms frames.
    fn wait(&mut self, ms: f64) -> Vec<Output> {
        let mut out = Vec::new();
        let end = self.now + ms;
        while self.now < end {
            self.now = (self.now + 10.0).min(end);
            out.extend(self.player.tick(self.now));
        }
        self.log.extend(out.clone());
        out
    }

    fn ended(&mut self, utterance: u64) -> Vec<Output> {
        let out = self.player.speech_ended(utterance, self.now);
        self.log.extend(out.clone());
        out
    }

    fn stage(&self) -> &Stage {
        self.player.stage()
    }

    fn caption(&self) -> Option<String> {
        self.stage().caption.as_ref().map(|c| c.text.clone())
    }

    fn state(&self) -> PlayState {
        self.stage().state
    }
}

fn spoken(out: &[Output]) -> Vec<(u64, String)> {
    out.iter()
        .filter_map(|o| match o {
            Output::Speak(u) => Some((u.id, u.text.clone())),
            _ => None,
        })
        .collect()
}

fn notices(out: &[Output]) -> Vec<String> {
    out.iter()
        .filter_map(|o| match o {
            Output::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// Three sentences of 17 characters: with 1000 ms each, each gets exactly 1000 ms.
const THREE: &str = "Plants make food. Light feeds them. Do they ever eat?";

// ---- speech and captions ----

#[test]
fn play_speaks_the_first_sentence_in_the_course_language_as_the_teacher() {
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    let out = run.send(Command::Play);
    assert_eq!(out[0], Output::StateChanged(PlayState::Playing));
    let Output::Speak(utterance) = &out[1] else {
        panic!("expected speech, got {out:?}");
    };
    assert_eq!(utterance.text, "Plants make food.");
    assert_eq!(utterance.lang, "en-GB");
    assert_eq!(utterance.speaker, "teacher");
    assert_eq!(utterance.rate, 1.0);
    assert_eq!(
        run.stage().caption,
        Some(Caption {
            speaker: "teacher".into(),
            text: "Plants make food.".into()
        })
    );
}

#[test]
fn each_sentence_is_spoken_in_turn_and_the_script_waits_for_the_voice() {
    let mut run = Run::new(
        vec![slide(
            "s1",
            vec![speech("a1", THREE), speech("a2", "Next.")],
        )],
        voice(),
    );
    let first = spoken(&run.send(Command::Play))[0].0;
    // The voice is slow: the cursor holds at the end of the first sentence's share.
    run.wait(5000.0);
    assert_eq!(run.stage().scene_ms, 1000.0);
    assert_eq!(run.caption().as_deref(), Some("Plants make food."));
    let second = spoken(&run.ended(first));
    assert_eq!(second[0].1, "Light feeds them.");
    let third = spoken(&run.ended(second[0].0));
    assert_eq!(third[0].1, "Do they ever eat?");
    run.wait(5000.0);
    assert_eq!(run.stage().scene_ms, 3000.0, "held at the speech's end");
    assert_eq!(run.player.current_segment(), Some(0));
    let next = spoken(&run.ended(third[0].0));
    assert_eq!(next, [(third[0].0 + 1, "Next.".to_string())]);
    assert_eq!(run.player.current_segment(), Some(1));
}

#[test]
fn a_speech_the_voice_finishes_early_jumps_to_its_end() {
    let mut run = Run::new(
        vec![slide(
            "s1",
            vec![speech("a1", "Short."), speech("a2", "Then more.")],
        )],
        voice(),
    );
    let first = spoken(&run.send(Command::Play))[0].0;
    run.wait(200.0);
    let out = run.ended(first);
    assert_eq!(spoken(&out)[0].1, "Then more.");
    assert_eq!(run.stage().scene_ms, 1000.0);
}

#[test]
fn a_stale_or_unknown_utterance_id_is_ignored() {
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    let first = spoken(&run.send(Command::Play))[0].0;
    assert!(run.ended(first + 40).is_empty());
    run.send(Command::Pause);
    assert!(
        run.ended(first).is_empty(),
        "cancelled utterances need no report"
    );
    assert_eq!(run.state(), PlayState::Paused);
}

#[test]
fn a_voice_that_never_reports_back_does_not_stall_the_course() {
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    run.send(Command::Play);
    run.wait(1000.0 + VOICE_TIMEOUT_MS - 20.0);
    assert_eq!(run.stage().scene_ms, 1000.0);
    let out = run.wait(40.0);
    assert_eq!(
        out[..2],
        [
            Output::CancelSpeech,
            Output::Notice(NOTICE_VOICE_TIMED_OUT.into())
        ]
    );
    assert_eq!(spoken(&out)[0].1, "Light feeds them.");
}

#[test]
fn captions_only_shows_each_sentence_for_its_share_of_the_time_by_length() {
    // 10 + 10 characters over 4000 ms: 2000 ms each.
    let mut run = Run::new(
        vec![slide("s1", vec![speech("a1", "Aaaa bbbb. Cccc dddd.")])],
        captions(),
    );
    run.player = CoursePlayer::with_media_lengths(
        run.player.course().clone(),
        captions(),
        [("a1".to_string(), 4000)].into(),
    );
    let out = run.send(Command::Play);
    assert!(spoken(&out).is_empty(), "no voice in captions-only mode");
    assert_eq!(run.caption().as_deref(), Some("Aaaa bbbb."));
    run.wait(1990.0);
    assert_eq!(run.caption().as_deref(), Some("Aaaa bbbb."));
    run.wait(20.0);
    assert_eq!(run.caption().as_deref(), Some("Cccc dddd."));
    run.wait(2000.0);
    assert_eq!(run.caption(), None);
}

#[test]
fn the_speaker_of_a_speech_speaks_it() {
    let mut run = Run::new(
        vec![slide("s1", vec![said_by("a1", "Why?", "mia")])],
        voice(),
    );
    let out = run.send(Command::Play);
    let Output::Speak(u) = &out[1] else { panic!() };
    assert_eq!(u.speaker, "mia");
    assert_eq!(run.stage().caption.as_ref().unwrap().speaker, "mia");
}

#[test]
fn pause_goes_back_to_the_sentence_start_and_play_says_it_again() {
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    let first = spoken(&run.send(Command::Play))[0].0;
    run.wait(300.0);
    let second = spoken(&run.ended(first))[0].0;
    run.wait(400.0);
    assert_eq!(run.stage().scene_ms, 1400.0);
    let out = run.send(Command::Pause);
    assert_eq!(
        out,
        [
            Output::CancelSpeech,
            Output::StateChanged(PlayState::Paused)
        ]
    );
    assert_eq!(run.stage().scene_ms, 1000.0);
    assert_eq!(run.caption().as_deref(), Some("Light feeds them."));
    assert!(run.ended(second).is_empty());
    run.wait(3000.0);
    assert_eq!(run.stage().scene_ms, 1000.0, "paused means paused");
    let out = run.send(Command::Play);
    assert_eq!(
        spoken(&out),
        [(second + 1, "Light feeds them.".to_string())]
    );
}

#[test]
fn interrupt_stops_cleanly_and_resume_replays_the_interrupted_sentence() {
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    let first = spoken(&run.send(Command::Play))[0].0;
    run.wait(700.0);
    let out = run.send(Command::Interrupt);
    assert_eq!(
        out,
        [
            Output::CancelSpeech,
            Output::StateChanged(PlayState::Interrupted)
        ]
    );
    assert_eq!(run.stage().scene_ms, 0.0);
    assert_eq!(run.player.position().scene_ms, 0.0);
    let out = run.send(Command::Resume);
    assert_eq!(out[0], Output::StateChanged(PlayState::Playing));
    assert_eq!(spoken(&out), [(first + 1, "Plants make food.".to_string())]);
}

#[test]
fn speed_scales_time_and_the_voice_rate_and_is_kept_in_range() {
    let mut run = Run::new(
        vec![slide("s1", vec![speech("a1", "One. Two.")])],
        captions(),
    );
    run.send(Command::SetSpeed(2.0));
    run.send(Command::Play);
    run.wait(500.0);
    assert_eq!(run.stage().scene_ms, 1000.0);
    let out = run.send(Command::SetSpeed(3.0));
    assert_eq!(notices(&out).len(), 1);
    assert!(notices(&out)[0].contains("using 2×"), "{out:?}");
    let out = run.send(Command::SetSpeed(0.1));
    assert!(notices(&out)[0].contains("using 0.5×"));
    assert_eq!(run.player.options().speed, 0.5);
    let out = run.send(Command::SetSpeed(f64::NAN));
    assert_eq!(notices(&out).len(), 1);
    assert_eq!(run.player.options().speed, 0.5);
    run.wait(1000.0);
    assert_eq!(run.stage().scene_ms, 1500.0);

    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    run.send(Command::SetSpeed(1.5));
    let out = run.send(Command::Play);
    let Output::Speak(u) = &out[1] else { panic!() };
    assert_eq!(u.rate, 1.5);
}

#[test]
fn switching_captions_on_silences_the_voice_and_off_speaks_the_sentence_shown() {
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    run.send(Command::Play);
    run.wait(500.0);
    let out = run.send(Command::SetCaptionsOnly(true));
    assert_eq!(out, [Output::CancelSpeech]);
    run.wait(1000.0);
    assert_eq!(run.stage().scene_ms, 1500.0, "captions run on the timeline");
    let out = run.send(Command::SetCaptionsOnly(false));
    assert_eq!(spoken(&out)[0].1, "Light feeds them.");
    assert_eq!(run.stage().scene_ms, 1000.0);
}

// ---- the whiteboard and effects ----

fn board_ids(stage: &Stage) -> Vec<&str> {
    stage.board.iter().map(|i| i.element_id.as_str()).collect()
}

#[test]
fn drawing_opens_the_board_and_ramps_its_progress_over_the_draw() {
    let mut run = Run::new(
        vec![slide("s1", vec![text("d1", "note", 100.0, 100.0)])],
        captions(),
    );
    run.send(Command::Play);
    assert!(run.stage().board_open, "the implicit open starts at once");
    assert!(run.stage().board.is_empty());
    run.wait(WB_OPEN_MS as f64 + WB_DRAW_MS as f64 / 2.0);
    let item = &run.stage().board[0];
    assert_eq!(item.element_id, "note");
    assert!((item.progress - 0.5).abs() < 1e-9, "{}", item.progress);
    assert_eq!(
        item.frame,
        Rect {
            x: 100.0,
            y: 100.0,
            width: 300.0,
            height: 100.0
        }
    );
    run.wait(WB_DRAW_MS as f64);
    assert_eq!(run.stage().board[0].progress, 1.0);
}

#[test]
fn a_new_element_drawn_over_another_is_moved_clear_of_it() {
    let mut run = Run::new(
        vec![slide(
            "s1",
            vec![
                text("d1", "first", 100.0, 100.0),
                text("d2", "second", 120.0, 110.0),
            ],
        )],
        captions(),
    );
    run.send(Command::SeekScene { scene: 0, ms: 1e9 });
    let board = &run.stage().board;
    assert_eq!(board.len(), 2);
    assert!(board[1].frame.overlap_share(&board[0].frame) <= layout::BAD_OVERLAP);
}

#[test]
fn clearing_removes_everything_once_its_cascade_is_over() {
    let mut run = Run::new(
        vec![slide(
            "s1",
            vec![
                wb_open("o"),
                text("d1", "a", 50.0, 50.0),
                shape("d2"),
                clear("c"),
            ],
        )],
        captions(),
    );
    let clear_at = (WB_OPEN_MS + 2 * WB_DRAW_MS) as f64;
    run.send(Command::SeekScene {
        scene: 0,
        ms: clear_at + clear_cascade_ms(2) as f64 - 1.0,
    });
    assert_eq!(board_ids(run.stage()), ["a", "d2"]);
    run.send(Command::SeekScene {
        scene: 0,
        ms: clear_at + clear_cascade_ms(2) as f64,
    });
    assert!(run.stage().board.is_empty());
    assert!(run.stage().board_open);
}

#[test]
fn code_is_typed_edited_and_deleted_on_the_board() {
    let source = "light = 50\nrate = min(light * 0.5, 27)\nprint(rate)";
    let mut run = Run::new(
        vec![slide(
            "s1",
            vec![
                code("k", "sim", source),
                replace_line("e", "sim", "L1", "light = 80"),
                delete("x", "sim"),
                wb_close("c"),
            ],
        )],
        captions(),
    );
    let typed = (WB_OPEN_MS + code_typing_ms(source)) as f64;
    run.send(Command::SeekScene {
        scene: 0,
        ms: typed - 1.0,
    });
    let BoardContent::Code {
        language,
        file_name,
        lines,
    } = &run.stage().board[0].content
    else {
        panic!("expected code");
    };
    assert_eq!(language, "python");
    assert_eq!(file_name.as_deref(), Some("rate.py"));
    assert_eq!(
        lines.iter().map(|l| l.id.as_str()).collect::<Vec<_>>(),
        ["L1", "L2", "L3"]
    );
    assert_eq!(lines[0].text, "light = 50");
    // The edit applies as it starts; its 600 ms are the view's animation.
    run.send(Command::SeekScene {
        scene: 0,
        ms: typed,
    });
    let BoardContent::Code { lines, .. } = &run.stage().board[0].content else {
        panic!()
    };
    assert_eq!(lines[0].id, "L1");
    assert_eq!(lines[0].text, "light = 80");
    run.send(Command::SeekScene { scene: 0, ms: 1e9 });
    assert!(run.stage().board.is_empty());
    assert!(!run.stage().board_open);
}

#[test]
fn seeking_into_a_later_scene_rebuilds_the_board_the_earlier_scenes_left() {
    let scenes = vec![
        slide(
            "s1",
            vec![speech("a1", "Look."), text("d1", "eq", 100.0, 60.0)],
        ),
        slide("s2", vec![speech("a2", "Still there."), shape("d2")]),
        slide("s3", vec![clear("c"), speech("a3", "Gone.")]),
    ];
    let mut run = Run::new(scenes, captions());
    let out = run.send(Command::SeekScene { scene: 1, ms: 10.0 });
    assert_eq!(
        out,
        [
            Output::SceneChanged(1),
            Output::StateChanged(PlayState::Paused)
        ]
    );
    assert!(run.stage().board_open, "the board stays open across scenes");
    assert_eq!(board_ids(run.stage()), ["eq"]);
    run.send(Command::SeekScene { scene: 1, ms: 1e9 });
    assert_eq!(board_ids(run.stage()), ["eq", "d2"]);
    run.send(Command::SeekScene { scene: 2, ms: 0.0 });
    assert_eq!(
        board_ids(run.stage()),
        ["eq", "d2"],
        "the clear has not run"
    );
    run.send(Command::SeekScene {
        scene: 2,
        ms: clear_cascade_ms(2) as f64,
    });
    assert!(run.stage().board.is_empty());
    // And back: nothing of the later scene lingers.
    run.send(Command::SeekScene { scene: 0, ms: 0.0 });
    assert!(!run.stage().board_open);
    assert!(run.stage().board.is_empty());
}

#[test]
fn effects_show_for_their_lifetime_and_never_cross_into_the_next_scene() {
    let long = "One. Two. Three. Four. Five. Six. Seven.";
    let scenes = vec![
        slide(
            "s1",
            vec![
                spotlight("fx1", "title"),
                speech("a1", long),
                laser("fx2", "chart"),
            ],
        ),
        slide("s2", vec![speech("a2", "Next.")]),
    ];
    let mut run = Run::new(scenes, captions());
    run.send(Command::Play);
    assert_eq!(run.stage().spotlight, Some(("title".into(), 0.6)));
    run.wait(EFFECT_AUTO_CLEAR_MS as f64 - 10.0);
    assert!(run.stage().spotlight.is_some());
    run.wait(20.0);
    assert_eq!(run.stage().spotlight, None, "the shared timer cleared it");
    // The laser starts at the scene's very end, so it never shows.
    run.wait(2000.0 + SCENE_BEAT_MS + 100.0);
    assert_eq!(run.stage().scene_index, 1);
    assert_eq!(run.stage().laser, None);
    assert_eq!(run.stage().spotlight, None);

    // Seeking into the middle of an effect shows it.
    run.send(Command::SeekScene {
        scene: 0,
        ms: 3000.0,
    });
    assert_eq!(run.stage().spotlight, Some(("title".into(), 0.6)));
}

#[test]
fn play_video_tells_the_view_which_video_to_play() {
    let video = Action::PlayVideo(PlayVideo {
        id: "v".into(),
        element_id: "timelapse".into(),
    });
    let mut run = Run::new(
        vec![slide("s1", vec![speech("a1", "Watch."), video])],
        captions(),
    );
    run.send(Command::Play);
    assert_eq!(run.stage().video, None);
    run.wait(1100.0);
    assert_eq!(run.stage().video.as_deref(), Some("timelapse"));
}

// ---- scenes ----

#[test]
fn a_slide_scene_moves_on_after_a_beat_and_the_last_one_ends_the_course() {
    let scenes = vec![
        slide("s1", vec![speech("a1", "One.")]),
        slide("s2", vec![speech("a2", "Two.")]),
    ];
    let mut run = Run::new(scenes, captions());
    run.send(Command::Play);
    run.wait(1000.0);
    assert_eq!(run.stage().scene_ms, 1000.0);
    assert_eq!(run.state(), PlayState::Playing);
    run.wait(SCENE_BEAT_MS - 20.0);
    assert_eq!(run.stage().scene_index, 0, "still in the beat");
    let out = run.wait(40.0);
    assert!(out.contains(&Output::SceneChanged(1)), "{out:?}");
    // The beat ended at the 1500 ms frame; two 10 ms frames followed.
    assert_eq!(run.stage().scene_ms, 20.0);
    let out = run.wait(1000.0);
    assert_eq!(
        &out[out.len() - 2..],
        [Output::StateChanged(PlayState::Ended), Output::CourseEnded]
    );
    assert_eq!(run.state(), PlayState::Ended);
    // Play from the end starts over.
    let out = run.send(Command::Play);
    assert_eq!(out[0], Output::SceneChanged(0));
    assert_eq!(run.state(), PlayState::Playing);
}

#[test]
fn without_auto_advance_a_scene_pauses_at_its_end_and_play_moves_on() {
    let scenes = vec![
        slide("s1", vec![speech("a1", "One.")]),
        slide("s2", vec![speech("a2", "Two.")]),
    ];
    let options = PlayerOptions {
        auto_advance: false,
        ..captions()
    };
    let mut run = Run::new(scenes, options);
    run.send(Command::Play);
    run.wait(1100.0 + SCENE_BEAT_MS);
    assert_eq!(run.state(), PlayState::Paused);
    assert_eq!(run.stage().scene_index, 0);
    let out = run.send(Command::Play);
    assert_eq!(
        out[..2],
        [
            Output::SceneChanged(1),
            Output::StateChanged(PlayState::Playing)
        ]
    );
}

#[test]
fn a_quiz_waits_for_the_learner_and_finishing_it_moves_on() {
    let scenes = vec![
        quiz("q", vec![speech("a1", "Try these.")]),
        slide("s2", vec![speech("a2", "Well done.")]),
    ];
    let mut run = Run::new(scenes, captions());
    run.send(Command::Play);
    let out = run.wait(1000.0 + SCENE_BEAT_MS * 3.0);
    assert_eq!(out, [Output::StateChanged(PlayState::WaitingForLearner)]);
    assert!(run.send(Command::Play).is_empty());
    let out = run.send(Command::FinishScene);
    assert_eq!(
        out[..2],
        [
            Output::SceneChanged(1),
            Output::StateChanged(PlayState::Playing)
        ]
    );
    // FinishScene means nothing on a slide.
    assert!(run.send(Command::FinishScene).is_empty());
}

#[test]
fn finishing_a_last_quiz_ends_the_course() {
    let mut run = Run::new(vec![quiz("q", vec![])], captions());
    let out = run.send(Command::Play);
    assert_eq!(
        out,
        [
            Output::StateChanged(PlayState::Playing),
            Output::StateChanged(PlayState::WaitingForLearner)
        ]
    );
    let out = run.send(Command::NextScene);
    assert_eq!(
        out,
        [Output::StateChanged(PlayState::Ended), Output::CourseEnded]
    );
}

#[test]
fn next_and_previous_scene_keep_playing_and_clamp_at_the_ends() {
    let scenes = vec![
        slide("s1", vec![speech("a1", THREE)]),
        slide("s2", vec![speech("a2", THREE)]),
    ];
    let mut run = Run::new(scenes, voice());
    run.send(Command::Play);
    run.wait(500.0);
    let out = run.send(Command::NextScene);
    assert_eq!(out[..2], [Output::CancelSpeech, Output::SceneChanged(1)]);
    assert_eq!(spoken(&out)[0].1, "Plants make food.");
    assert_eq!(run.state(), PlayState::Playing);
    run.send(Command::PreviousScene);
    let out = run.send(Command::PreviousScene);
    assert_eq!(run.stage().scene_index, 0);
    assert!(!out.contains(&Output::SceneChanged(0)));
    assert_eq!(run.stage().scene_ms, 0.0);
}

#[test]
fn seek_positions_and_scene_indexes_out_of_range_are_clamped() {
    let scenes = vec![slide("s1", vec![speech("a1", THREE)])];
    let mut run = Run::new(scenes, captions());
    run.send(Command::SeekScene {
        scene: 99,
        ms: 1e12,
    });
    assert_eq!(run.stage().scene_index, 0);
    assert_eq!(run.stage().scene_ms, 3000.0);
    run.send(Command::SeekScene {
        scene: 0,
        ms: -50.0,
    });
    assert_eq!(run.stage().scene_ms, 0.0);
    run.send(Command::SeekScene {
        scene: 0,
        ms: f64::NAN,
    });
    assert_eq!(run.stage().scene_ms, 0.0);
    assert_eq!(run.player.scene_timeline(7).total_ms, 3000);
}

#[test]
fn seeking_while_playing_with_a_voice_speaks_the_sentence_sought_into() {
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    run.send(Command::Play);
    let out = run.send(Command::SeekScene {
        scene: 0,
        ms: 2500.0,
    });
    assert_eq!(out[0], Output::CancelSpeech);
    assert_eq!(spoken(&out)[0].1, "Do they ever eat?");
    assert_eq!(run.state(), PlayState::Playing);
}

#[test]
fn the_resume_point_round_trips_and_a_missing_scene_is_ignored() {
    let scenes = vec![
        slide("s1", vec![speech("a1", THREE)]),
        slide("s2", vec![speech("a2", THREE)]),
    ];
    let mut run = Run::new(scenes.clone(), captions());
    run.send(Command::SeekScene {
        scene: 1,
        ms: 1500.0,
    });
    let saved = run.player.position();
    assert_eq!(
        saved,
        Position {
            scene_id: "s2".into(),
            scene_ms: 1000.0
        },
        "saved at the start of the sentence"
    );
    let json = serde_json::to_string(&saved).unwrap();
    let mut fresh = Run::new(scenes, captions());
    let out = fresh
        .player
        .restore(&serde_json::from_str(&json).unwrap(), 0.0);
    assert_eq!(
        out,
        [
            Output::SceneChanged(1),
            Output::StateChanged(PlayState::Paused)
        ]
    );
    assert_eq!(fresh.stage().scene_ms, 1000.0);
    assert_eq!(fresh.caption().as_deref(), Some("Light feeds them."));
    let out = fresh.player.restore(
        &Position {
            scene_id: "gone".into(),
            scene_ms: 5.0,
        },
        0.0,
    );
    assert_eq!(notices(&out).len(), 1);
    assert_eq!(fresh.stage().scene_index, 1);
}

// ---- discussions and skipped actions ----

#[test]
fn a_recorded_discussion_is_offered_and_accepting_plays_its_turns_then_goes_on() {
    let scenes = vec![slide(
        "s1",
        vec![
            discussion(
                "d",
                &[("mia", "I think they stop."), ("teacher", "Not quite.")],
            ),
            speech("a1", "Back to the leaf."),
        ],
    )];
    let mut run = Run::new(scenes, captions());
    run.send(Command::Play);
    let out = run.wait(DISCUSSION_TRIGGER_DELAY_MS as f64);
    assert_eq!(out, [Output::StateChanged(PlayState::DiscussionOffered)]);
    assert_eq!(
        run.stage().discussion,
        Some(DiscussionCue {
            topic: "Do plants breathe at night?".into(),
            prompt: None,
            agent_id: Some("mia".into()),
            has_recording: true
        })
    );
    run.wait(10_000.0);
    assert_eq!(
        run.state(),
        PlayState::DiscussionOffered,
        "waits for the learner"
    );
    run.send(Command::AcceptDiscussion);
    assert_eq!(run.state(), PlayState::Playing);
    assert_eq!(run.stage().discussion, None);
    let caption = run.stage().caption.clone().unwrap();
    assert_eq!(
        (caption.speaker.as_str(), caption.text.as_str()),
        ("mia", "I think they stop.")
    );
    run.wait(2000.0);
    let caption = run.stage().caption.clone().unwrap();
    assert_eq!(caption.speaker, "teacher");
    run.wait(2000.0);
    assert_eq!(run.caption().as_deref(), Some("Back to the leaf."));
    // The turns are part of the scene now, for the seek bar.
    assert!(run.player.scene_timeline(0).total_ms > 3000 + 4000);
}

#[test]
fn a_recorded_discussion_is_spoken_by_each_speaker_with_a_voice() {
    let scenes = vec![slide(
        "s1",
        vec![discussion("d", &[("mia", "Really?"), ("leo", "Yes.")])],
    )];
    let mut run = Run::new(scenes, voice());
    run.send(Command::Play);
    run.wait(DISCUSSION_TRIGGER_DELAY_MS as f64);
    let out = run.send(Command::AcceptDiscussion);
    let Some(Output::Speak(first)) = out.iter().find(|o| matches!(o, Output::Speak(_))) else {
        panic!("{out:?}")
    };
    assert_eq!(
        (first.speaker.as_str(), first.text.as_str()),
        ("mia", "Really?")
    );
    let out = run.ended(first.id);
    let Some(Output::Speak(second)) = out.iter().find(|o| matches!(o, Output::Speak(_))) else {
        panic!("{out:?}")
    };
    assert_eq!(second.speaker, "leo");
}

#[test]
fn skipping_an_offered_discussion_goes_on_with_the_script() {
    let scenes = vec![slide(
        "s1",
        vec![
            discussion("d", &[("mia", "Hm.")]),
            speech("a1", "Moving on."),
        ],
    )];
    let mut run = Run::new(scenes, captions());
    run.send(Command::Play);
    run.wait(DISCUSSION_TRIGGER_DELAY_MS as f64);
    let out = run.send(Command::SkipDiscussion);
    assert_eq!(out, [Output::StateChanged(PlayState::Playing)]);
    assert_eq!(run.caption().as_deref(), Some("Moving on."));
    assert_eq!(run.player.scene_timeline(0).total_ms, 3000 + 1000);
}

#[test]
fn a_discussion_without_recording_or_provider_is_skipped_with_a_notice() {
    let scenes = vec![slide(
        "s1",
        vec![
            speech("a1", "First."),
            discussion("d", &[]),
            speech("a2", "Then."),
        ],
    )];
    let mut run = Run::new(scenes, captions());
    run.send(Command::Play);
    let out = run.wait(1100.0);
    assert_eq!(notices(&out), [NOTICE_DISCUSSION_NEEDS_PROVIDER]);
    assert_eq!(run.stage().notices, [NOTICE_DISCUSSION_NEEDS_PROVIDER]);
    assert_eq!(run.state(), PlayState::Playing);
    assert_eq!(run.caption().as_deref(), Some("Then."));
    assert_eq!(
        run.player.scene_timeline(0).total_ms,
        2000,
        "no wait for nothing"
    );
}

#[test]
fn with_a_provider_a_discussion_is_offered_and_accepting_hands_over_to_the_live_classroom() {
    let scenes = vec![slide(
        "s1",
        vec![discussion("d", &[]), speech("a1", "After.")],
    )];
    let options = PlayerOptions {
        live_discussion: true,
        ..captions()
    };
    let mut run = Run::new(scenes, options);
    run.send(Command::Play);
    run.wait(DISCUSSION_TRIGGER_DELAY_MS as f64);
    assert_eq!(run.state(), PlayState::DiscussionOffered);
    assert!(!run.stage().discussion.as_ref().unwrap().has_recording);
    let out = run.send(Command::AcceptDiscussion);
    assert_eq!(out, [Output::StateChanged(PlayState::Interrupted)]);
    run.send(Command::Resume);
    assert_eq!(run.caption().as_deref(), Some("After."));
}

#[test]
fn a_provider_found_after_the_player_was_made_turns_skipped_discussions_into_offers() {
    let scenes = vec![slide(
        "s1",
        vec![
            speech("a0", "Before."),
            discussion("d", &[]),
            speech("a1", "After."),
        ],
    )];
    let mut run = Run::new(scenes, captions());
    let skipped_total = run.player.scene_timeline(0).total_ms;
    run.send(Command::SetLiveDiscussion(true));
    assert!(
        run.player.scene_timeline(0).total_ms > skipped_total,
        "the discussion takes its time again"
    );
    assert!(
        run.stage().notices.is_empty(),
        "no 'needs a provider' notice"
    );
    run.send(Command::Play);
    run.wait(1100.0 + DISCUSSION_TRIGGER_DELAY_MS as f64);
    assert_eq!(run.state(), PlayState::DiscussionOffered);
    let cue = run.stage().discussion.clone().unwrap();
    assert!(!cue.has_recording);
    assert_eq!(cue.topic, "Do plants breathe at night?");
    assert_eq!(cue.agent_id.as_deref(), Some("mia"));
    // Saying it again changes nothing; the offer stands.
    assert!(run.send(Command::SetLiveDiscussion(true)).is_empty());
    assert_eq!(run.state(), PlayState::DiscussionOffered);
    assert_eq!(
        run.send(Command::AcceptDiscussion),
        [Output::StateChanged(PlayState::Interrupted)]
    );
    run.send(Command::Resume);
    assert_eq!(run.caption().as_deref(), Some("After."));
}

#[test]
fn an_unknown_action_is_skipped_with_a_notice_and_the_script_goes_on() {
    let scenes = vec![slide(
        "s1",
        vec![speech("a1", "One."), unknown("h"), speech("a2", "Two.")],
    )];
    let mut run = Run::new(scenes, captions());
    run.send(Command::Play);
    let out = run.wait(1100.0);
    let skipped = notices(&out);
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].contains("wb_draw_hologram"), "{skipped:?}");
    assert_eq!(run.caption().as_deref(), Some("Two."));
    assert_eq!(run.stage().notices, skipped);
    run.send(Command::SeekScene { scene: 0, ms: 0.0 });
    assert!(run.stage().notices.is_empty());
}

#[test]
fn an_empty_course_ends_when_played() {
    let mut run = Run::new(vec![], captions());
    assert_eq!(run.player.scene_timeline(0).total_ms, 0);
    let out = run.send(Command::Play);
    assert_eq!(
        out,
        [Output::StateChanged(PlayState::Ended), Output::CourseEnded]
    );
    run.send(Command::SeekScene { scene: 3, ms: 9.0 });
    run.send(Command::NextScene);
    assert_eq!(run.player.position().scene_id, "");
}

#[test]
fn speech_outputs_are_handed_to_the_speech_port_in_order() {
    #[derive(Default)]
    struct Recorder(Vec<String>);
    impl Narrator for Recorder {
        fn speak(&mut self, utterance: &SpokenLine) {
            self.0.push(format!("speak {}", utterance.text));
        }
        fn cancel(&mut self) {
            self.0.push("cancel".into());
        }
    }
    let mut run = Run::new(vec![slide("s1", vec![speech("a1", THREE)])], voice());
    let mut recorder = Recorder::default();
    let out = run.player.handle(Command::Play, 0.0);
    perform_speech(&out, &mut recorder);
    let out = run.player.handle(Command::Pause, 0.0);
    perform_speech(&out, &mut recorder);
    assert_eq!(recorder.0, ["speak Plants make food.", "cancel"]);
}

// ---- properties ----

#[derive(Debug, Clone)]
enum Step {
    Tick(f64),
    Do(Command),
    SpeechEnded(u64),
}

fn arbitrary_action(n: usize) -> impl Strategy<Value = Action> {
    let id = format!("x{n}");
    prop_oneof![
        4 => Just(speech(&id, THREE)),
        1 => Just(speech(&id, "Short one.")),
        1 => Just(spotlight(&id, "title")),
        1 => Just(laser(&id, "title")),
        1 => (0.0..900.0f64, 0.0..500.0f64).prop_map({
            let id = id.clone();
            move |(x, y)| text(&id, &id, x, y)
        }),
        1 => Just(code(&id, &id, "a = 1\nb = 2")),
        1 => Just(clear(&id)),
        1 => Just(wb_close(&id)),
        1 => Just(unknown(&id)),
        1 => Just(discussion(&id, &[])),
    ]
}

fn arbitrary_scenes() -> impl Strategy<Value = Vec<Scene>> {
    prop::collection::vec(
        (any::<bool>(), prop::collection::vec(0usize..1, 0..7)),
        1..4,
    )
    .prop_flat_map(|shapes| {
        let scenes: Vec<BoxedStrategy<Scene>> = shapes
            .into_iter()
            .enumerate()
            .map(|(s, (is_quiz, actions))| {
                let actions: Vec<BoxedStrategy<Action>> = (0..actions.len())
                    .map(|a| arbitrary_action(s * 100 + a).boxed())
                    .collect();
                actions
                    .prop_map(move |actions| {
                        let id = format!("scene{s}");
                        if is_quiz {
                            quiz(&id, actions)
                        } else {
                            slide(&id, actions)
                        }
                    })
                    .boxed()
            })
            .collect();
        scenes
    })
}

fn arbitrary_steps() -> impl Strategy<Value = Vec<Step>> {
    let command = prop_oneof![
        Just(Command::Play),
        Just(Command::Pause),
        Just(Command::TogglePlay),
        (0usize..6, -500.0..20_000.0f64).prop_map(|(scene, ms)| Command::SeekScene { scene, ms }),
        Just(Command::NextScene),
        Just(Command::PreviousScene),
        (0.0..3.0f64).prop_map(Command::SetSpeed),
        any::<bool>().prop_map(Command::SetCaptionsOnly),
        Just(Command::Interrupt),
        Just(Command::Resume),
        Just(Command::AcceptDiscussion),
        Just(Command::SkipDiscussion),
        Just(Command::FinishScene),
    ];
    prop::collection::vec(
        prop_oneof![
            3 => (0.0..3000.0f64).prop_map(Step::Tick),
            2 => command.prop_map(Step::Do),
            1 => (0u64..20).prop_map(Step::SpeechEnded),
        ],
        0..60,
    )
}

fn in_bounds(player: &CoursePlayer) -> Result<(), TestCaseError> {
    let stage = player.stage();
    let scenes = player.course().scenes.len();
    prop_assert!(stage.scene_index < scenes.max(1));
    let total = player.scene_timeline(stage.scene_index).total_ms as f64;
    prop_assert_eq!(stage.scene_total_ms, total);
    prop_assert!(
        (0.0..=total).contains(&stage.scene_ms),
        "{} outside [0, {}]",
        stage.scene_ms,
        total
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_commands_and_ticks_keep_the_scene_and_the_time_in_range(
        scenes in arbitrary_scenes(),
        steps in arbitrary_steps(),
        captions_only in any::<bool>(),
    ) {
        let options = PlayerOptions { captions_only, ..PlayerOptions::default() };
        let mut player = CoursePlayer::new(course(scenes), options);
        let mut now = 0.0;
        let mut last_utterance: u64 = 0;
        for step in steps {
            let out = match step {
                Step::Tick(ms) => { now += ms; player.tick(now) }
                Step::Do(command) => player.handle(command, now),
                // Mostly the utterance really spoken, sometimes a stale one.
                Step::SpeechEnded(back) => player.speech_ended(last_utterance.saturating_sub(back % 3), now),
            };
            for o in &out {
                if let Output::Speak(u) = o { last_utterance = u.id; }
            }
            in_bounds(&player)?;
        }
    }

    #[test]
    fn playing_without_seeks_makes_every_blocking_action_current_in_turn(
        scenes in arbitrary_scenes(),
        ticks in prop::collection::vec(1.0..4000.0f64, 1..30),
        captions_only in any::<bool>(),
    ) {
        let options = PlayerOptions { captions_only, ..PlayerOptions::default() };
        let mut player = CoursePlayer::new(course(scenes), options);
        let mut seen: Vec<Vec<usize>> = vec![Vec::new(); player.course().scenes.len()];
        let mut speaking: Option<u64> = None;
        let mut now = 0.0;
        let mut out = player.handle(Command::Play, now);
        for tick in ticks.iter().cycle().take(3000) {
            for o in &out {
                if let Output::Speak(u) = o { speaking = Some(u.id); }
            }
            if let Some(current) = player.current_segment() {
                let scene = player.stage().scene_index;
                if seen[scene].last() != Some(&current) { seen[scene].push(current); }
            }
            match player.stage().state {
                PlayState::Ended => break,
                PlayState::WaitingForLearner => out = player.handle(Command::FinishScene, now),
                _ => {
                    now += tick;
                    // A voice that takes as long as the tick to say a sentence.
                    out = match speaking.take() {
                        Some(id) => player.speech_ended(id, now),
                        None => player.tick(now),
                    };
                }
            }
        }
        prop_assert_eq!(player.stage().state, PlayState::Ended);
        for (scene, seen) in seen.iter().enumerate() {
            let blocking: Vec<usize> = player
                .scene_timeline(scene)
                .segments
                .iter()
                .enumerate()
                .filter(|(_, s)| s.blocking)
                .map(|(i, _)| i)
                .collect();
            prop_assert_eq!(seen, &blocking, "scene {}", scene);
        }
    }

    #[test]
    fn the_stage_after_a_seek_is_the_stage_reached_by_playing_there(
        scenes in arbitrary_scenes(),
        ticks in prop::collection::vec(1.0..1500.0f64, 1..40),
    ) {
        // Captions only: with a voice, playing is paced by the voice, not the clock.
        let mut played = CoursePlayer::new(course(scenes.clone()), captions());
        let mut now = 0.0;
        played.handle(Command::Play, now);
        for tick in ticks {
            if played.stage().state != PlayState::Playing { break; }
            now += tick;
            played.tick(now);
            let reached = played.stage().clone();
            if reached.state != PlayState::Playing { break; }
            let mut sought = CoursePlayer::new(course(scenes.clone()), captions());
            sought.handle(Command::Play, 0.0);
            sought.handle(Command::SeekScene { scene: reached.scene_index, ms: reached.scene_ms }, 0.0);
            prop_assert_eq!(sought.stage(), &reached);
        }
    }
}

// ---- the live classroom's actions ----

#[test]
fn a_live_drawing_opens_the_board_beside_the_lecture_and_stays_after_resume() {
    let mut run = Run::new(
        vec![
            slide(
                "s1",
                vec![text("d1", "lecture", 100.0, 100.0), speech("sp", THREE)],
            ),
            slide("s2", vec![speech("sp2", THREE)]),
        ],
        captions(),
    );
    run.send(Command::SeekScene { scene: 0, ms: 1e9 });
    run.send(Command::Interrupt);
    run.send(Command::Live(wb_close("c")));
    assert!(!run.stage().board_open);
    run.send(Command::Live(text("live1", "answer", 110.0, 105.0)));
    let stage = run.stage();
    assert!(stage.board_open, "drawing opens the board");
    assert_eq!(board_ids(stage), ["lecture", "answer"]);
    assert!(stage.board[1].frame.overlap_share(&stage.board[0].frame) <= layout::BAD_OVERLAP);
    assert_eq!(stage.board[1].progress, 1.0);

    // A seek within the scene keeps the drawing: the lecture's fold is redone under it.
    run.send(Command::SeekScene { scene: 0, ms: 0.0 });
    assert_eq!(board_ids(run.stage()), ["answer"]);
    run.send(Command::Resume);
    assert!(board_ids(run.stage()).contains(&"answer"));

    run.send(Command::NextScene);
    assert!(
        !board_ids(run.stage()).contains(&"answer"),
        "another scene drops the live layer"
    );
    run.send(Command::PreviousScene);
    assert!(!board_ids(run.stage()).contains(&"answer"));
}

#[test]
fn live_clear_and_delete_hide_the_lectures_drawings_but_later_ones_show() {
    let mut run = Run::new(
        vec![slide(
            "s1",
            vec![
                text("d1", "first", 50.0, 50.0),
                shape("d2"),
                text("d3", "later", 400.0, 400.0),
            ],
        )],
        captions(),
    );
    run.send(Command::SeekScene {
        scene: 0,
        ms: (WB_OPEN_MS + 2 * WB_DRAW_MS) as f64 - 1.0,
    });
    assert_eq!(board_ids(run.stage()), ["first", "d2"]);
    run.send(Command::Live(delete("x", "first")));
    assert_eq!(board_ids(run.stage()), ["d2"]);
    run.send(Command::Live(text("l1", "mine", 600.0, 50.0)));
    run.send(Command::Live(clear("c")));
    assert!(run.stage().board.is_empty());
    run.send(Command::SeekScene { scene: 0, ms: 1e9 });
    assert_eq!(board_ids(run.stage()), ["later"], "drawn after the clear");
}

#[test]
fn live_spotlight_and_laser_show_until_the_lecture_resumes() {
    let mut run = Run::new(vec![slide("s1", vec![speech("sp", THREE)])], captions());
    run.send(Command::Play);
    run.send(Command::Interrupt);
    run.send(Command::Live(spotlight("s", "title")));
    run.send(Command::Live(laser("l", "chart")));
    assert_eq!(run.stage().spotlight, Some(("title".into(), 0.6)));
    assert_eq!(run.stage().laser, Some(("chart".into(), "#ff0000".into())));
    run.send(Command::Resume);
    assert_eq!(run.stage().spotlight, None);
    assert_eq!(run.stage().laser, None);
}

#[test]
fn live_code_edits_apply_to_the_lectures_code_and_speech_changes_nothing() {
    let mut run = Run::new(
        vec![slide("s1", vec![code("k", "src", "a = 1\nb = 2")])],
        captions(),
    );
    run.send(Command::SeekScene { scene: 0, ms: 1e9 });
    let before = run.stage().clone();
    run.send(Command::Live(speech("talk", "Just words.")));
    assert_eq!(run.stage(), &before);
    run.send(Command::Live(replace_line("e", "src", "L2", "b = 3")));
    let BoardContent::Code { lines, .. } = &run.stage().board[0].content else {
        panic!("the code block is gone: {:?}", run.stage().board);
    };
    assert_eq!(
        lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
        ["a = 1", "b = 3"]
    );
    assert_eq!(
        run.stage().board.len(),
        1,
        "the edited copy replaces the lecture's"
    );
}
