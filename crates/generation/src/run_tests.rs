//! The runner against a transport that answers each request by what it asks for, with the
//! faults mock-llm can script (HTTP errors, cut streams, broken frames, in-stream errors,
//! a rejected key), and against malformed stage output.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::rc::Rc;

use aula_course::{default_agents, Action, Course};
use aula_providers::transport::memory::{run_to_end, ScriptedAnswer, ScriptedTransport};
use aula_providers::transport::{HttpRequest, PendingResponse, TransportError};
use aula_providers::{preset, Endpoint, Sleeper, Transport};
use serde_json::Value;

use crate::assemble::{assemble_json, scene_states, SceneState};
use crate::job::JobRecord;
use crate::outline::{normalize, CourseRequest, Outline};
use crate::run::{generate_outline, run_scenes, Env, GenControl, GenEvent, Plan};

const FIXTURE: &str = include_str!("../fixtures/photosynthesis.json");

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).unwrap()
}

fn request() -> CourseRequest {
    CourseRequest {
        topic: fixture()["topic"].as_str().unwrap().into(),
        language: "en".into(),
        document: None,
        learner: String::new(),
        agents: default_agents(),
    }
}

fn outline() -> Outline {
    let mut outline: Outline = serde_json::from_value(fixture()["outline"].clone()).unwrap();
    normalize(&mut outline, &request());
    outline
}

/// An OpenAI-compatible stream of `text` in pieces, with a usage chunk: 10 tokens in, one per
/// four characters out.
fn sse(text: &str) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(40) {
        let piece: String = piece.iter().collect();
        let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]});
        frames.push(format!("data: {chunk}\n\n").into_bytes());
    }
    let usage = serde_json::json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": text.len().div_ceil(4)}});
    frames.push(format!("data: {usage}\n\n").into_bytes());
    frames.push(b"data: [DONE]\n\n".to_vec());
    frames
}

fn ok(text: &str) -> ScriptedAnswer {
    ScriptedAnswer::streaming(sse(text))
}

/// What the fixture's model says to a request, by the words of its first user message (a
/// second try asks for the same thing).
fn fixture_reply(body: &Value) -> String {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string();
    let f = fixture();
    if last.starts_with("What I want to learn") {
        return f["outline"].to_string();
    }
    for (title, content) in f["content"].as_object().unwrap() {
        if last.contains(&format!("for \"{title}\"")) && !last.starts_with("Write the script") {
            return content.to_string();
        }
    }
    for (title, script) in f["scripts"].as_object().unwrap() {
        if last.contains(&format!("Write the script for \"{title}\"")) {
            return script.to_string();
        }
    }
    panic!("no fixture reply for {last}")
}

type Route = Box<dyn Fn(&Value, usize) -> Option<ScriptedAnswer>>;

/// Answers every request from the fixture unless `route` (given the request body and how many
/// requests came before) answers it otherwise.
struct Model {
    route: Route,
    requests: RefCell<Vec<Value>>,
}

impl Model {
    fn new(route: impl Fn(&Value, usize) -> Option<ScriptedAnswer> + 'static) -> Model {
        Model {
            route: Box::new(route),
            requests: RefCell::default(),
        }
    }

    fn fixture() -> Model {
        Model::new(|_, _| None)
    }

    fn last_messages(&self) -> Vec<String> {
        self.requests
            .borrow()
            .iter()
            .map(|b| {
                b["messages"].as_array().unwrap().last().unwrap()["content"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }
}

impl Transport for Model {
    fn send(&self, request: HttpRequest) -> PendingResponse {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let n = self.requests.borrow().len();
        self.requests.borrow_mut().push(body.clone());
        let answer = (self.route)(&body, n).unwrap_or_else(|| ok(&fixture_reply(&body)));
        ScriptedTransport::answering(Vec::new(), answer).send(request)
    }
}

/// Sleeps end at once and move the clock on.
struct Clock(Rc<Cell<f64>>);

impl Sleeper for Clock {
    fn sleep(&self, ms: u64) -> Pin<Box<dyn Future<Output = ()>>> {
        self.0.set(self.0.get() + ms as f64);
        Box::pin(std::future::ready(()))
    }
}

fn endpoint() -> Endpoint {
    Endpoint::from_preset(
        preset("openai").unwrap(),
        "gpt-4o-mini",
        Some("sk-test-1234567890".into()),
    )
}

struct Run {
    events: Vec<GenEvent>,
    record: JobRecord,
}

/// Runs `body` with an environment over `model`, a clock that sleeps move on, and `control`.
fn with_env<T>(model: &Model, control: GenControl, body: impl FnOnce(&Env) -> T) -> T {
    let time = Rc::new(Cell::new(0.0));
    let sleeper = Clock(time.clone());
    let now = move || time.get();
    let endpoint = endpoint();
    let limits =
        aula_providers::ModelLimits::resolve(&endpoint, Default::default(), Default::default());
    let env = Env {
        transport: model,
        sleeper: &sleeper,
        now_ms: &now,
        endpoint,
        control,
        limits,
        progress: &|_| {},
    };
    body(&env)
}

fn run_with(
    model: &Model,
    record: JobRecord,
    limit: usize,
    redo: &[&str],
    control: GenControl,
) -> Run {
    let mut events = Vec::new();
    let plan = Plan {
        request: request(),
        outline: outline(),
        record,
        limit: NonZeroUsize::new(limit).unwrap(),
        redo: redo.iter().map(|s| s.to_string()).collect(),
        token_budget: None,
    };
    let record = with_env(model, control, |env| {
        run_to_end(run_scenes(env, plan, &mut |event, _| events.push(event)))
    });
    Run { events, record }
}

fn run(model: &Model) -> Run {
    run_with(model, JobRecord::default(), 3, &[], GenControl::default())
}

fn notes(events: &[GenEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            GenEvent::Note { note, .. } => Some(note.clone()),
            _ => None,
        })
        .collect()
}

fn settled(events: &[GenEvent]) -> (bool, Option<String>) {
    match events.last() {
        Some(GenEvent::Settled { cancelled, fatal }) => (*cancelled, fatal.clone()),
        other => panic!("the last event is not Settled: {other:?}"),
    }
}

#[test]
fn the_outline_streams_its_scenes_and_is_read() {
    let model = Model::fixture();
    let mut events = Vec::new();
    let mut stats = crate::job::TaskStats::default();
    let outline = with_env(&model, GenControl::default(), |env| {
        run_to_end(generate_outline(env, &request(), &mut stats, &mut |e| {
            events.push(e)
        }))
    })
    .unwrap();
    let tokens = stats.tokens;
    assert_eq!(stats.calls, 1);
    assert_eq!(outline.scenes.len(), 4);
    let previews: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            GenEvent::OutlineScene(s) => Some(s.title.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        previews,
        outline
            .scenes
            .iter()
            .map(|s| s.title.clone())
            .collect::<Vec<_>>()
    );
    assert!(tokens > 10, "{tokens}");
    let body = &model.requests.borrow()[0];
    assert_eq!(
        body["response_format"]["type"], "json_schema",
        "structured output where the provider has it"
    );
}

#[test]
fn a_whole_course_is_written_and_every_scene_plays() {
    let model = Model::fixture();
    let run = run(&model);
    assert_eq!(settled(&run.events), (false, None));
    assert_eq!(run.record.finished.len(), 8);
    assert!(run.record.failed.is_empty());
    assert_eq!(model.requests.borrow().len(), 8, "one call per task");
    let course = assemble_json("c1", &request(), &outline(), &run.record, 1, 2).unwrap();
    let course = Course::from_json(&course).expect("a valid course file");
    assert_eq!(course.scenes.len(), 4);
    let Some(Action::Discussion(discussion)) = course.scenes[3].actions.last() else {
        panic!("the planned discussion ends the last scene");
    };
    assert_eq!(
        discussion.agent_id.as_deref(),
        Some("mia"),
        "an unknown opener becomes a classmate"
    );
    // Tokens: what the usage chunks said, summed over every call.
    let expected: u64 = model
        .requests
        .borrow()
        .iter()
        .map(|b| 10 + fixture_reply(b).len().div_ceil(4) as u64)
        .sum();
    assert_eq!(run.record.tokens_spent, expected);
}

#[test]
fn no_more_than_the_limit_is_in_flight() {
    for limit in [1, 2, 3] {
        let model = Model::fixture();
        let run = run_with(
            &model,
            JobRecord::default(),
            limit,
            &[],
            GenControl::default(),
        );
        let (mut in_flight, mut most) = (0i32, 0);
        for event in &run.events {
            match event {
                GenEvent::Started { .. } => in_flight += 1,
                GenEvent::Finished { .. } | GenEvent::Failed { .. } => in_flight -= 1,
                _ => {}
            }
            most = most.max(in_flight);
        }
        assert_eq!(most, limit as i32, "limit {limit}");
    }
}

#[test]
fn prose_fences_and_trailing_commas_are_repaired_without_another_call() {
    let model = Model::new(|body, _| {
        let reply = fixture_reply(body);
        reply.starts_with("{\"background\"").then(|| {
            let sloppy = reply.replacen("]}", "],}", 1);
            ok(&format!(
                "Here is the slide you asked for:\n```json\n{sloppy}\n```\nEnjoy!"
            ))
        })
    });
    let run = run(&model);
    assert_eq!(run.record.finished.len(), 8);
    assert_eq!(model.requests.borrow().len(), 8);
    assert!(
        notes(&run.events)
            .iter()
            .any(|n| n.contains("s1/content: the reply needed repair")),
        "{:?}",
        notes(&run.events)
    );
}

#[test]
fn an_unusable_reply_is_asked_again_with_the_reason() {
    let model = Model::new(|body, _| {
        let reply = fixture_reply(body);
        let first_try = body["messages"].as_array().unwrap().len() == 2; // system + ask
        (reply.contains("Inside the chloroplast") && first_try)
            .then(|| ok(&reply.replace("\"left\":520", "\"left\":5200")))
    });
    let run = run(&model);
    assert_eq!(run.record.finished.len(), 8, "{:?}", run.record.failed);
    let retry = model
        .requests
        .borrow()
        .iter()
        .find(|b| b["messages"].as_array().unwrap().len() == 4)
        .cloned()
        .expect("a second call with the reply and the reason");
    let reason = retry["messages"][3]["content"].as_str().unwrap();
    assert!(
        reason.contains("could not be used") && reason.contains("content.elements[4]"),
        "{reason}"
    );
    assert_eq!(model.requests.borrow().len(), 9);
}

#[test]
fn a_scene_that_keeps_failing_gives_up_and_holds_back_only_its_own_script() {
    let model = Model::new(|body, _| {
        let last = body["messages"][1]["content"].as_str().unwrap_or("");
        last.contains("Write the slide for \"Inside the chloroplast\"")
            .then(|| ok("I would rather not draw slides today."))
    });
    let run = run(&model);
    assert_eq!(settled(&run.events), (false, None));
    assert_eq!(
        scene_states(&outline(), &run.record),
        [
            SceneState::Ready,
            SceneState::Failed,
            SceneState::Ready,
            SceneState::Ready
        ]
    );
    assert!(run.record.failed["s2/content"].contains("could not be used twice"));
    // Three tries of two calls each, with backoff between them.
    let asked = model
        .last_messages()
        .iter()
        .filter(|m| m.contains("Inside the chloroplast") || m.contains("could not be used"))
        .count();
    assert_eq!(asked, 6);
    let retries: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            GenEvent::Failed { retry_at_ms, .. } => Some(*retry_at_ms),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 3);
    assert!(retries[0].is_some() && retries[1].is_some() && retries[2].is_none());
    let course = assemble_json("c1", &request(), &outline(), &run.record, 1, 2).unwrap();
    let course = Course::from_json(&course).expect("a valid course file");
    assert_eq!(course.scenes.len(), 3, "the rest of the course plays");
}

/// mock-llm's faults, as the transport sees them: each fails one call, the call is tried again
/// (by the provider retry or the job's backoff) and the course is complete.
#[test]
fn every_passing_fault_is_survived() {
    type Fault = fn() -> ScriptedAnswer;
    let faults: [(&str, Fault); 5] = [
        ("http_error 500", || {
            ScriptedAnswer::status(500, vec![], "{\"error\":{\"message\":\"boom\"}}")
        }),
        ("http_error 429", || {
            ScriptedAnswer::status(
                429,
                vec![("retry-after".into(), "1".into())],
                "{\"error\":{\"message\":\"slow down\"}}",
            )
        }),
        ("cut_after_chunks", || {
            let mut answer = ok("{\"elements\": [");
            answer.chunks.truncate(1);
            answer.ending = Some(TransportError::Network("connection reset".into()));
            answer
        }),
        ("malformed_frame", || {
            ScriptedAnswer::streaming(vec![
                b"data: {\"choices\": [{\"delta\": {\"content\": \"x\"}}\n\n".to_vec(),
                b"data: {not json\n\n".to_vec(),
            ])
        }),
        ("stream_error", || {
            ScriptedAnswer::streaming(vec![b"data: {\"error\": {\"message\": \"The server is overloaded\", \"type\": \"server_error\"}}\n\n".to_vec()])
        }),
    ];
    for (name, fault) in faults {
        let model = Model::new(move |_, n| (n == 0).then(fault));
        let run = run(&model);
        assert_eq!(
            run.record.finished.len(),
            8,
            "{name}: {:?}",
            run.record.failed
        );
        assert_eq!(
            model.requests.borrow().len(),
            9,
            "{name}: the failed call went again once"
        );
    }
}

#[test]
fn a_rejected_key_stops_the_whole_job_with_the_reason() {
    let model = Model::new(|_, _| {
        Some(ScriptedAnswer::status(
            401,
            vec![],
            "{\"error\":{\"message\":\"Incorrect API key provided: sk-test-1234567890\"}}",
        ))
    });
    let run = run_with(&model, JobRecord::default(), 2, &[], GenControl::default());
    let (cancelled, fatal) = settled(&run.events);
    assert!(!cancelled);
    let fatal = fatal.expect("a fatal reason");
    assert!(
        fatal.contains("401") || fatal.to_lowercase().contains("key"),
        "{fatal}"
    );
    assert!(!fatal.contains("sk-test-1234567890"), "the key never shows");
    let asked = model.requests.borrow().len();
    assert!(
        (1..=2).contains(&asked),
        "at most the calls already in flight: {asked}"
    );
    assert!(run.record.finished.is_empty());
}

#[test]
fn a_resumed_job_never_asks_again_for_a_finished_task() {
    let model = Model::fixture();
    let full = run(&model).record;
    let mut partial = full.clone();
    partial
        .finished
        .retain(|task, _| task.starts_with("s1/") || task == "s3/content");
    let again = Model::fixture();
    let run = run_with(&again, partial, 3, &[], GenControl::default());
    assert_eq!(run.record.finished.len(), 8);
    let asked = again.last_messages();
    assert_eq!(asked.len(), 5, "{asked:?}");
    assert!(
        !asked.iter().any(|m| m.contains("What photosynthesis does")),
        "scene 1 was done"
    );
    assert_eq!(
        run.record.finished["s1/content"],
        full.finished["s1/content"]
    );
}

#[test]
fn regenerating_one_scripts_redoes_that_script_only() {
    let model = Model::fixture();
    let full = run(&model).record;
    let again = Model::fixture();
    let run = run_with(&again, full, 3, &["s2/actions"], GenControl::default());
    assert_eq!(run.record.finished.len(), 8);
    assert_eq!(again.last_messages(), ["Write the script for \"Inside the chloroplast\". Reply with the JSON only: no prose, no code fence."]);
    let again = Model::fixture();
    let whole = run_with(
        &again,
        run.record,
        3,
        &["s2/content"],
        GenControl::default(),
    );
    assert_eq!(whole.record.finished.len(), 8);
    assert_eq!(
        again.requests.borrow().len(),
        2,
        "content and then its script"
    );
}

#[test]
fn a_cancelled_job_asks_nothing_and_says_so() {
    let control = GenControl::default();
    control.cancel();
    let model = Model::fixture();
    let run = run_with(&model, JobRecord::default(), 3, &[], control);
    assert_eq!(settled(&run.events), (true, None));
    assert!(model.requests.borrow().is_empty());
}

#[test]
fn the_first_contents_are_written_while_the_outline_streams_and_never_twice() {
    use crate::run::{generate_outline_and_first_contents, seed_early_contents};
    let model = Model::fixture();
    let mut stats = crate::job::TaskStats::default();
    let mut events = Vec::new();
    let (outline, early) = with_env(&model, GenControl::default(), |env| {
        run_to_end(generate_outline_and_first_contents(
            env,
            &request(),
            &mut stats,
            2,
            &mut |e| events.push(e),
        ))
    });
    let outline = outline.unwrap();
    let tokens = stats.tokens;
    assert_eq!(early.len(), 2, "one per slot, for the first scenes");
    let mut record = JobRecord {
        tokens_spent: tokens,
        ..JobRecord::default()
    };
    let kept = seed_early_contents(&outline, &mut record, early);
    assert_eq!(kept, ["s1/content", "s2/content"]);
    assert!(
        record.tokens_spent > tokens,
        "the early calls' tokens count"
    );
    let asked_before = model.requests.borrow().len();
    assert_eq!(asked_before, 3);
    let run = run_with(&model, record, 3, &[], GenControl::default());
    assert_eq!(run.record.finished.len(), 8);
    assert_eq!(
        model.requests.borrow().len(),
        9,
        "no content was asked for twice"
    );
}

#[test]
fn an_early_content_whose_scene_moved_or_changed_is_dropped() {
    use crate::outline::SceneKind;
    use crate::run::{seed_early_contents, EarlyContent};
    let outline = outline();
    let mut record = JobRecord::default();
    let early = |index: usize, title: &str| EarlyContent {
        index,
        kind: SceneKind::Slide,
        title: title.into(),
        output: Ok("{}".into()),
        stats: crate::job::TaskStats {
            tokens: 5,
            ..Default::default()
        },
    };
    let kept = seed_early_contents(
        &outline,
        &mut record,
        vec![
            early(0, "Something else"),
            early(1, &outline.scenes[0].title),
            early(0, &outline.scenes[0].title),
        ],
    );
    assert_eq!(kept, ["s1/content"]);
    assert_eq!(record.tokens_spent, 15);
}

/// The fixture's script for `title` with its spoken items cut to their first few words.
fn thin_script(body: &Value) -> Option<String> {
    let reply = fixture_reply(body);
    let mut items: Vec<Value> = serde_json::from_str(&reply).ok()?;
    for item in &mut items {
        if item["type"] == "text" {
            let short: String = item["content"]
                .as_str()?
                .split(' ')
                .take(3)
                .collect::<Vec<_>>()
                .join(" ");
            item["content"] = Value::String(short);
        }
    }
    Some(Value::Array(items).to_string())
}

fn asks_for_script(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .is_some_and(|m| m.starts_with("Write the script"))
}

/// A second try carries the first reply and the reason after the first question.
fn is_correction(body: &Value) -> bool {
    body["messages"].as_array().is_some_and(|m| m.len() > 2)
}

#[test]
fn a_narration_too_thin_for_its_slide_goes_back_once_and_the_fuller_one_is_kept() {
    // Every first script is three words a sentence; the corrected one is the fixture's.
    let model = Model::new(|body, _| {
        (asks_for_script(body) && !is_correction(body))
            .then(|| thin_script(body).map(|t| ok(&t)))
            .flatten()
    });
    let run = run(&model);
    assert!(run.record.failed.is_empty(), "{:?}", run.record.failed);
    let corrections: Vec<String> = model
        .last_messages()
        .into_iter()
        .filter(|m| m.contains("could not be used as it is"))
        .collect();
    assert!(!corrections.is_empty());
    assert!(
        corrections[0].contains("words in all"),
        "{}",
        corrections[0]
    );
    let stats = &run.record.stats["s1/actions"];
    assert_eq!((stats.calls, stats.corrections), (2, 1));
    // The fuller script is what the course plays.
    let course = assemble_json("c1", &request(), &outline(), &run.record, 1, 2).unwrap();
    let course = Course::from_json(&course).unwrap();
    let said: usize = course.scenes[0]
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Speech(s) => Some(s.text.split_whitespace().count()),
            _ => None,
        })
        .sum();
    assert!(said > 40, "{said} words");
}

#[test]
fn a_thin_reply_is_kept_and_completed_with_its_slides_texts_when_the_correction_is_no_better() {
    // Scripts stay thin however often they are asked: the first thin one is kept, not failed,
    // and the teacher reads out what the slide shows that the script does not speak about.
    let model = Model::new(|body, _| {
        asks_for_script(body)
            .then(|| thin_script(body).map(|t| ok(&t)))
            .flatten()
    });
    let run = run(&model);
    assert!(run.record.failed.is_empty(), "{:?}", run.record.failed);
    assert_eq!(run.record.finished.len(), 8);
    let notes = notes(&run.events);
    assert!(notes
        .iter()
        .any(|n| n == "s1/actions: kept the first reply: the second was no better"));
    assert!(
        notes.iter().any(|n| n.starts_with(
            "s1/actions: the script stayed short of its slide: the teacher reads out"
        )),
        "{notes:?}"
    );
    let course = assemble_json("c1", &request(), &outline(), &run.record, 1, 2).unwrap();
    let course = Course::from_json(&course).unwrap();
    let scene = &course.scenes[0];
    let aula_course::SceneContent::Slide(slide) = &scene.content else {
        panic!("the fixture's first scene is a slide");
    };
    let said: Vec<&str> = scene
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Speech(s) => Some(s.text.as_str()),
            _ => None,
        })
        .collect();
    // The model's first line still opens the scene.
    let thin = thin_script(&serde_json::json!({"messages": [{"role": "user",
        "content": format!("Write the script for \"{}\"", scene.title)}]}));
    let first_thin: Vec<Value> = serde_json::from_str(&thin.unwrap()).unwrap();
    let first_line = first_thin.iter().find(|i| i["type"] == "text").unwrap();
    assert_eq!(Some(said[0]), first_line["content"].as_str());
    let words: usize = said.iter().map(|s| s.split_whitespace().count()).sum();
    assert!(words > 30, "{words} words: {said:?}");
    // Each text the slide shows is read out, after a spotlight on it.
    let texts = slide.elements.iter().filter_map(|e| match e {
        aula_course::SlideElement::Text(t) => Some((t.id.as_str(), t.markdown.as_str())),
        _ => None,
    });
    for (id, markdown) in texts {
        let first_words: String = markdown
            .trim_start_matches(['#', ' ', '-', '*'])
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        let at = scene.actions.iter().position(|a| match a {
            Action::Speech(s) => s.text.starts_with(&first_words),
            _ => false,
        });
        let Some(at) = at else {
            continue; // spoken about by the thin script itself
        };
        assert!(
            matches!(&scene.actions[at - 1], Action::Spotlight(s) if s.element_id == id),
            "the line reading {id} follows a spotlight on it"
        );
    }
    assert!(scene
        .actions
        .iter()
        .any(|a| matches!(a, Action::Spotlight(s) if s.id.contains("-p"))));
}

#[test]
fn every_task_keeps_its_time_tokens_and_calls_in_the_record() {
    let model = Model::fixture();
    let run = run(&model);
    assert_eq!(run.record.stats.len(), 8);
    for (task, stats) in &run.record.stats {
        assert_eq!(stats.calls, 1, "{task}");
        assert!(stats.tokens > 10, "{task}");
        assert_eq!(
            (stats.repairs, stats.corrections, stats.cut_at_limit),
            (0, 0, 0)
        );
    }
    let tokens: u64 = run.record.stats.values().map(|s| s.tokens).sum();
    assert_eq!(tokens, run.record.tokens_spent);
}

#[test]
fn a_call_reports_waiting_then_writing_with_its_tokens() {
    let model = Model::fixture();
    let seen: RefCell<Vec<(String, crate::run::CallPhase, u64)>> = RefCell::default();
    let time = Rc::new(Cell::new(0.0));
    let sleeper = Clock(time.clone());
    let clock = time.clone();
    // Time moves on with every read of the clock, so progress is sent as the reply streams.
    let now = move || {
        clock.set(clock.get() + 700.0);
        clock.get()
    };
    let endpoint = endpoint();
    let limits =
        aula_providers::ModelLimits::resolve(&endpoint, Default::default(), Default::default());
    let progress =
        |p: crate::run::TaskProgress| seen.borrow_mut().push((p.task, p.phase, p.tokens));
    let env = Env {
        transport: &model,
        sleeper: &sleeper,
        now_ms: &now,
        endpoint,
        control: GenControl::default(),
        limits,
        progress: &progress,
    };
    let mut stats = crate::job::TaskStats::default();
    run_to_end(generate_outline(&env, &request(), &mut stats, &mut |_| {})).unwrap();
    let seen = seen.borrow();
    assert_eq!(seen[0].1, crate::run::CallPhase::Waiting);
    assert_eq!(seen[0].2, 0);
    let writing: Vec<u64> = seen
        .iter()
        .filter(|(_, phase, _)| *phase == crate::run::CallPhase::Writing)
        .map(|(_, _, tokens)| *tokens)
        .collect();
    assert!(writing.len() >= 2, "{seen:?}");
    assert!(
        writing.windows(2).all(|w| w[0] <= w[1]),
        "tokens only grow: {writing:?}"
    );
    assert!(seen.iter().all(|(task, ..)| task == "outline"));
}

#[test]
fn a_reply_cut_at_its_length_limit_is_repaired_or_asked_again_saying_so() {
    // The first slide's reply stops half-way with finish_reason "length".
    let model = Model::new(|body, n| {
        let reply = fixture_reply(body);
        (reply.starts_with("{\"background\"") && n < 3).then(|| {
            let half: String = reply.chars().take(reply.len() / 2).collect();
            let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": half}, "finish_reason": "length"}]});
            ScriptedAnswer::streaming(vec![
                format!("data: {chunk}\n\n").into_bytes(),
                b"data: [DONE]\n\n".to_vec(),
            ])
        })
    });
    let run = run(&model);
    let stats = &run.record.stats["s1/content"];
    assert!(stats.cut_at_limit >= 1, "{stats:?}");
    assert!(notes(&run.events)
        .iter()
        .any(|n| n.contains("length limit")));
    assert!(
        run.record.finished.contains_key("s1/content"),
        "{:?}",
        run.record.failed
    );
}

#[test]
fn every_request_fits_a_small_context_and_says_how_long_its_reply_may_be() {
    let model = Model::fixture();
    let endpoint = endpoint();
    let limits = aula_providers::ModelLimits::resolve(
        &endpoint,
        aula_providers::ServerLimits {
            context_tokens: Some(4_096),
            slots: Some(1),
        },
        Default::default(),
    );
    let time = Rc::new(Cell::new(0.0));
    let sleeper = Clock(time.clone());
    let now = move || time.get();
    let mut request = request();
    request.document = Some("Chlorophyll absorbs red and blue light. ".repeat(3_000));
    let env = Env {
        transport: &model,
        sleeper: &sleeper,
        now_ms: &now,
        endpoint,
        control: GenControl::default(),
        limits,
        progress: &|_| {},
    };
    let plan = Plan {
        request: request.clone(),
        outline: outline(),
        record: JobRecord::default(),
        limit: NonZeroUsize::MIN,
        redo: Vec::new(),
        token_budget: None,
    };
    let mut stats = crate::job::TaskStats::default();
    run_to_end(generate_outline(&env, &request, &mut stats, &mut |_| {})).unwrap();
    assert!(
        stats.document_cut,
        "the document was cut to fit and that is recorded"
    );
    let record = run_to_end(run_scenes(&env, plan, &mut |_, _| {}));
    assert_eq!(record.finished.len(), 8);
    for body in model.requests.borrow().iter() {
        let chat: aula_providers::ChatRequest = aula_providers::ChatRequest {
            system: body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            messages: body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .skip(1)
                .map(|m| aula_providers::ChatMessage::user(m["content"].as_str().unwrap_or("")))
                .collect(),
            json_schema: None,
            temperature: None,
            max_tokens: None,
            thinking: Default::default(),
        };
        let max = body["max_completion_tokens"]
            .as_u64()
            .or(body["max_tokens"].as_u64())
            .expect("every request has a length limit") as u32;
        let prompt = aula_providers::budget::prompt_tokens(&chat)
            + body["response_format"]["json_schema"]["schema"]
                .as_object()
                .map_or(0, |s| {
                    aula_providers::budget::text_tokens(&Value::Object(s.clone()).to_string())
                });
        assert!(prompt + max <= 4_096, "{prompt} + {max}");
    }
    assert!(
        record.stats.values().any(|s| s.document_cut),
        "the scenes' passages were cut too"
    );
}

/// A worker's job: no outline yet unless `outline` is given.
fn job(outline: Option<Outline>, outline_only: bool) -> crate::wire::GenJob {
    crate::wire::GenJob {
        op: crate::wire::GenOp::Generate,
        id: 1,
        endpoint: Some(endpoint()),
        course_id: "gen-1".into(),
        request: Some(request()),
        outline,
        record: JobRecord::default(),
        limits: Default::default(),
        outline_only,
        redo: Vec::new(),
        created_at: 0,
    }
}

/// Runs a whole job; every post: (outline known, event, record).
fn run_whole(model: &Model, job: &crate::wire::GenJob) -> Vec<(bool, GenEvent, JobRecord)> {
    let mut posts = Vec::new();
    with_env(model, GenControl::default(), |env| {
        run_to_end(crate::run::run_job(
            env,
            job,
            &request(),
            &mut |outline, event, record| {
                posts.push((outline.is_some(), event.clone(), record.clone()))
            },
        ))
    });
    posts
}

#[test]
fn a_job_that_reviews_its_plan_writes_the_outline_only_and_settles() {
    let model = Model::fixture();
    let posts = run_whole(&model, &job(None, true));
    let events: Vec<&GenEvent> = posts.iter().map(|(_, e, _)| e).collect();
    assert!(matches!(events[events.len() - 2], GenEvent::Outline(_)));
    assert_eq!(
        settled(&posts.iter().map(|p| p.1.clone()).collect::<Vec<_>>()),
        (false, None)
    );
    assert_eq!(
        model.requests.borrow().len(),
        1,
        "only the outline was asked for"
    );
    assert!(posts.iter().all(|(known, ..)| !known));
}

#[test]
fn a_whole_job_writes_the_outline_the_first_contents_beside_it_then_every_scene() {
    let model = Model::fixture();
    let posts = run_whole(&model, &job(None, false));
    let at_outline = posts
        .iter()
        .position(|(_, e, _)| matches!(e, GenEvent::Outline(_)))
        .expect("the outline is posted");
    let outline = match &posts[at_outline].1 {
        GenEvent::Outline(outline) => outline.clone(),
        _ => unreachable!(),
    };
    // The scenes' events carry the outline; the last record has every scene ready.
    assert!(posts[at_outline + 1..].iter().all(|(known, ..)| *known));
    let events: Vec<GenEvent> = posts.iter().map(|p| p.1.clone()).collect();
    assert_eq!(settled(&events), (false, None));
    let last = &posts.last().unwrap().2;
    assert!(scene_states(&outline, last)
        .iter()
        .all(|s| *s == SceneState::Ready));
    // Contents written while the outline streamed are in the record the outline comes with
    // (when the server takes several requests at once), and never asked for twice.
    let limits =
        aula_providers::ModelLimits::resolve(&endpoint(), Default::default(), Default::default());
    assert!(
        limits.parallel > 1,
        "the preset takes several requests at once"
    );
    assert!(
        !posts[at_outline].2.finished.is_empty(),
        "first contents beside the outline"
    );
    let asked = model.last_messages();
    let mut unique = asked.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), asked.len(), "no request twice");
}

#[test]
fn a_job_whose_outline_fails_settles_with_the_reason_and_writes_no_scene() {
    let model = Model::new(|_, _| {
        Some(ScriptedAnswer::status(
            401,
            vec![],
            "{\"error\":{\"message\":\"Incorrect API key provided\"}}",
        ))
    });
    let posts = run_whole(&model, &job(None, false));
    let events: Vec<GenEvent> = posts.iter().map(|p| p.1.clone()).collect();
    assert!(!events.iter().any(|e| matches!(e, GenEvent::Outline(_))));
    let (_, fatal) = settled(&events);
    assert!(fatal.is_some());
    assert!(posts.last().unwrap().2.finished.is_empty());
}

#[test]
fn a_job_that_brings_its_outline_goes_straight_to_the_scenes() {
    let model = Model::fixture();
    let posts = run_whole(&model, &job(Some(outline()), false));
    assert!(!posts
        .iter()
        .any(|(_, e, _)| matches!(e, GenEvent::Outline(_))));
    assert!(posts.iter().all(|(known, ..)| *known));
    assert!(!model
        .last_messages()
        .iter()
        .any(|m| m.starts_with("What I want to learn")));
}
