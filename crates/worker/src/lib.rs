//! The AI worker: every call to an LLM provider runs here, in a dedicated Web Worker that the page
//! starts the first time it needs AI. A course that only plays never downloads this code, and
//! streaming and parsing never compete with the page for its main thread.
//!
//! Jobs arrive as JSON [`Job`]s through `postMessage`; each gets [`Report`]s back with its id.
#![cfg(target_arch = "wasm32")]

mod transport;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use aula_director::round::{run_round, Round, RoundControl, RoundEnd};
use aula_director::session::ClassEvent;
use aula_director::wire::{RoundJob, RoundReport, RoundReportKind};

use aula_generation::run::{run_job, Env, GenControl, GenEvent, TaskProgress};
use aula_generation::wire::{
    progress_report, report as gen_report, GenJob, GenOp, GenReport, ReportEvent,
};
use aula_providers::limits::probe_limits;
use aula_providers::wire::{Job, Report};
use aula_providers::{
    list_models, stream_chat, stream_chat_with_retry, AbortHandle, ModelLimits, ProviderError,
    RetryPolicy,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use transport::{FetchTransport, TimeoutSleeper};

thread_local! {
    /// The running chat jobs' abort handles.
    static RUNNING: RefCell<HashMap<u32, Box<dyn AbortHandle>>> = RefCell::new(HashMap::new());
    /// The running rounds' stop buttons.
    static ROUNDS: RefCell<HashMap<u32, RoundControl>> = RefCell::new(HashMap::new());
    /// The running generations' controls.
    static GENERATIONS: RefCell<HashMap<u32, GenControl>> = RefCell::new(HashMap::new());
}

/// Where reports go: `postMessage` to the page, or a test's list.
type Sink = Rc<dyn Fn(String)>;

fn send(sink: &Sink, value: &impl serde::Serialize) {
    if let Ok(text) = serde_json::to_string(value) {
        sink(text);
    }
}

/// A job's stream, driven to its end on the worker's event loop.
type Drive = std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn run_round_job(job: RoundJob, sink: Sink) {
    let id = job.id;
    let report = move |event| {
        send(
            &sink,
            &RoundReport {
                kind: RoundReportKind::Round,
                id,
                event,
            },
        )
    };
    let mut prepared = match job.prepare() {
        Ok(prepared) => prepared,
        Err(message) => {
            report(ClassEvent::Error {
                agent_id: None,
                message,
            });
            report(ClassEvent::Finished(RoundEnd::Failed));
            return;
        }
    };
    let control = RoundControl::default();
    ROUNDS.with(|r| r.borrow_mut().insert(id, control.clone()));
    wasm_bindgen_futures::spawn_local(async move {
        // A local server says how much context it has; every prompt of the round fits it.
        let server = probe_limits(&FetchTransport, &job.models.agents).await;
        prepared.context_tokens =
            ModelLimits::resolve(&job.models.agents, server, job.limits).context_tokens;
        let mut round = Round::new(job.mode.clone(), job.max_turns);
        let mut history = prepared.history.clone();
        run_round(
            &FetchTransport,
            &job.models,
            job.room(&prepared),
            &mut round,
            &mut history,
            &control,
            &mut { report },
        )
        .await;
        ROUNDS.with(|r| r.borrow_mut().remove(&id));
    });
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// A generation (`aula_generation::run::run_job`): every event goes to the page as a flat
/// [`GenReport`]; a finished task's report carries the record and the course as far as it is
/// written, for the page to store.
fn run_generation(job: GenJob, sink: Sink) {
    match job.op {
        GenOp::Cancel => {
            if let Some(control) = GENERATIONS.with(|g| g.borrow().get(&job.id).cloned()) {
                control.cancel();
            }
            return;
        }
        GenOp::Retry => {
            if let Some(control) = GENERATIONS.with(|g| g.borrow().get(&job.id).cloned()) {
                for task in &job.redo {
                    control.retry(task);
                }
            }
            return;
        }
        GenOp::Generate => {}
    }
    let (Some(endpoint), Some(mut request)) = (job.endpoint.clone(), job.request.clone()) else {
        let mut report = GenReport::new(job.id, ReportEvent::Settled);
        report.text = "The generation request was incomplete.".into();
        return send(&sink, &report);
    };
    // The page sends the cast with English personas; the course's cast speaks its language.
    request.cast_in_its_language();
    let control = GenControl::default();
    GENERATIONS.with(|g| g.borrow_mut().insert(job.id, control.clone()));
    wasm_bindgen_futures::spawn_local(async move {
        // A local server says how much it takes and how many requests it answers at once.
        let server = probe_limits(&FetchTransport, &endpoint).await;
        let limits = ModelLimits::resolve(&endpoint, server, job.limits);
        let progress_sink = sink.clone();
        let progress_id = job.id;
        let progress = move |progress: TaskProgress| {
            send(&progress_sink, &progress_report(progress_id, &progress));
        };
        let env = Env {
            transport: &FetchTransport,
            sleeper: &TimeoutSleeper,
            now_ms: &now_ms,
            endpoint,
            control,
            limits,
            progress: &progress,
        };
        let mut post = |outline: Option<&aula_generation::outline::Outline>,
                        event: &GenEvent,
                        record: &aula_generation::job::JobRecord| {
            send(
                &sink,
                &gen_report(&job, &request, outline, event, record, now_ms() as u64),
            )
        };
        run_job(&env, &job, &request, &mut post).await;
        GENERATIONS.with(|g| g.borrow_mut().remove(&job.id));
    });
}

/// Reads one message from the page and starts what it asks.
fn handle(text: &str, sink: Sink) {
    if let Ok(job) = serde_json::from_str::<Job>(text) {
        return run(job, sink);
    }
    if let Ok(job) = serde_json::from_str::<GenJob>(text) {
        return run_generation(job, sink);
    }
    match serde_json::from_str::<RoundJob>(text) {
        Ok(job) => run_round_job(job, sink),
        // A page of another version: say so rather than guess.
        Err(error) => send(
            &sink,
            &Report::Failed {
                id: 0,
                message: format!("The AI worker did not understand a request: {error}"),
            },
        ),
    }
}

fn run(job: Job, sink: Sink) {
    let post = Rc::new(move |report: &Report| send(&sink, report));
    match job {
        Job::Chat {
            id,
            endpoint,
            request,
            retry,
        } => {
            let retrying = post.clone();
            let on_event = move |event| {
                if let Some(report) = Report::of(id, event) {
                    post(&report);
                }
            };
            let (abort, drive): (Box<dyn AbortHandle>, Drive) = if retry {
                let on_retry = move |attempt: u32, wait_ms: u64, error: &ProviderError| {
                    retrying(&Report::Retrying {
                        id,
                        attempt,
                        wait_ms,
                        message: error.to_string(),
                    })
                };
                let policy = RetryPolicy::default().patient_for(&endpoint);
                let (abort, drive) = stream_chat_with_retry(
                    &FetchTransport,
                    &TimeoutSleeper,
                    policy,
                    endpoint,
                    &request,
                    on_event,
                    on_retry,
                );
                (abort, Box::pin(drive))
            } else {
                let (abort, drive) = stream_chat(&FetchTransport, endpoint, &request, on_event);
                (abort, Box::pin(drive))
            };
            RUNNING.with(|r| r.borrow_mut().insert(id, abort));
            wasm_bindgen_futures::spawn_local(async move {
                drive.await;
                RUNNING.with(|r| r.borrow_mut().remove(&id));
            });
        }
        Job::Models { id, endpoint } => wasm_bindgen_futures::spawn_local(async move {
            post(&match list_models(&FetchTransport, &endpoint).await {
                Ok(models) => Report::Models { id, models },
                Err(error) => Report::Failed {
                    id,
                    message: error.to_string(),
                },
            });
        }),
        Job::Limits { id, endpoint } => wasm_bindgen_futures::spawn_local(async move {
            let limits = probe_limits(&FetchTransport, &endpoint).await;
            post(&Report::Limits { id, limits });
        }),
        Job::Abort { id } => {
            RUNNING.with(|r| {
                if let Some(abort) = r.borrow().get(&id) {
                    abort.abort();
                }
            });
            if let Some(control) = ROUNDS.with(|r| r.borrow().get(&id).cloned()) {
                control.cancel();
            }
        }
    }
}

fn to_page() -> Sink {
    Rc::new(|text: String| {
        let _ = scope().post_message(&JsValue::from_str(&text));
    })
}

/// Starts reading jobs; called once by the binary's `main` when the worker loads.
pub fn start() {
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| {
        if let Some(text) = event.data().as_string() {
            handle(&text, to_page());
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    send(&to_page(), &Report::Ready);
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use aula_director::prompt::DIRECTOR_ASK;
    use aula_director::round::{Mode, Models};
    use aula_director::wire::{HistoryLine, RoundJob, RoundOp, RoundReport};
    use aula_director::EndReason;
    use aula_providers::{preset, Endpoint, Sleeper};
    use wasm_bindgen_test::*;

    use super::*;
    use crate::transport::tests::{mock_url, set_script};

    wasm_bindgen_test_configure!(run_in_browser);

    /// A whole round through the real fetch transport against mock-llm: the director picks the
    /// teacher, the teacher streams a spotlight-free reply with a whiteboard formula, the
    /// director ends the round. The worker's message handler is driven as the page would.
    #[wasm_bindgen_test]
    async fn a_round_runs_in_the_worker_against_mock_llm() {
        let teacher_reply = r#"[{"type":"action","name":"wb_draw_latex","params":{"latex":"\\frac{QK^T}{\\sqrt{d_k}}","x":60,"y":60}},{"type":"text","content":"We divide by the square root of d_k so the scores stay in a range where softmax still learns."}]"#;
        let script = serde_json::json!({
            "rules": [
                {"match": {"last_message_contains": DIRECTOR_ASK, "system_contains": "Nobody has spoken yet this round."},
                 "reply": {"text": "{\"next_agent\":\"teacher\"}"}},
                {"match": {"last_message_contains": DIRECTOR_ASK}, "reply": {"text": "{\"next_agent\":\"END\"}"}}
            ],
            "default": {"text": teacher_reply},
            "chunk_words": 2
        });
        set_script(&script.to_string()).await;
        let custom = preset("custom").unwrap();
        let mut endpoint = Endpoint::from_preset(custom, "mock-model", Some("test-key".into()));
        endpoint.base_url = format!("{}/v1", mock_url());
        let job = RoundJob {
            op: RoundOp::Round,
            id: 41,
            models: Models {
                director: endpoint.clone(),
                agents: endpoint,
            },
            course_json: include_str!("../../../public/courses/transformer-en.json").to_owned(),
            scene_index: 0,
            learner: Default::default(),
            whiteboard_open: false,
            mode: Mode::Questions,
            max_turns: 4,
            limits: Default::default(),
            history: vec![HistoryLine {
                who: "learner".into(),
                text: "Why do we divide by the square root of d_k?".into(),
                interrupted: false,
            }],
        };
        let received = Rc::new(RefCell::new(Vec::<String>::new()));
        let sink = received.clone();
        handle(
            &serde_json::to_string(&job).unwrap(),
            Rc::new(move |text| sink.borrow_mut().push(text)),
        );
        for _ in 0..200 {
            if received
                .borrow()
                .iter()
                .any(|t| t.contains("\"session_end\""))
            {
                break;
            }
            crate::transport::TimeoutSleeper.sleep(25).await;
        }
        let events: Vec<_> = received
            .borrow()
            .iter()
            .map(|t| {
                serde_json::from_str::<RoundReport>(t)
                    .expect("a round report")
                    .event
            })
            .collect();
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                ClassEvent::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "We divide by the square root of d_k so the scores stay in a range where softmax still learns.");
        let texts = events
            .iter()
            .filter(|e| matches!(e, ClassEvent::Text { .. }))
            .count();
        assert!(texts > 3, "the reply streamed in pieces: {texts}");
        assert!(events.iter().any(
            |e| matches!(e, ClassEvent::Action { action, .. } if action["type"] == "wb_draw_latex")
        ));
        assert_eq!(
            events.last(),
            Some(&ClassEvent::Finished(RoundEnd::Ended(
                EndReason::DirectorSaidEnd
            ))),
            "{events:?}"
        );
    }
}
