//! Running a generation: the outline call, then the scene tasks of [`crate::plan_scenes`] under
//! the [`Job`]'s concurrency limit, each task a stage call read strictly, repaired once, and
//! asked again once with the reason it failed ([`run_stage`]). Everything that happens is a
//! [`GenEvent`] for the caller, who saves the record after every finished task. Generic over the
//! providers' `Transport` and `Sleeper` and a clock, so it runs the same in the browser's AI
//! worker and in host tests.
//!
//! # How a course is written
//!
//! 1. The outline: one call ([`generate_outline`]), its scenes reported as they stream. Unless
//!    the learner reviews the plan first or the server answers one request at a time,
//!    [`generate_outline_and_first_contents`] writes the first scenes' contents beside it, each
//!    as soon as its scene's object has streamed, in the slots the outline call leaves free;
//!    [`seed_early_contents`] keeps those whose scene the finished outline still has at the same
//!    place, with the same kind and title. In the bench the first scene is playable about 15%
//!    sooner.
//! 2. The scenes ([`run_scenes`]): every scene's content and its script are tasks of
//!    [`crate::plan_scenes`] (a script waits only for its own content), started in outline
//!    order, as many at once as the server answers (`GenJob::concurrency` of the resolved
//!    limits: the learner's number but never more than the server's slots, else the slots, else
//!    the preset's plan, which is 3 for hosted presets).
//! 3. Each stage's reply must become the course model and pass `Course::validate` in a one-scene
//!    course. Code fixes what code decides (element and question ids, effects pointing at
//!    nothing, a discussion only where the outline planned one, as the last item of its scene,
//!    opened by a classmate) and notes it. A reply that still fails, or falls short of what was
//!    asked, goes back to the model once with the reason.
//! 4. A task that fails anyway, or by a cut stream, a server error or a broken frame, waits out
//!    the job's backoff and goes again, twice; then it gives up, and only its own scene waits
//!    for the learner's **Retry**. A rejected key, an exhausted quota, an unknown model or a
//!    provider that refuses calls from a browser stops the whole job at once with the provider's
//!    message (never the key).
//!
//! After every finished or failed task the caller gets the job record (every finished task's
//! output as its checked JSON text) to save. A cancelled job keeps its record, and a later run
//! starts from it without asking for a finished task twice; [`Plan::redo`] names tasks to write
//! again.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::{pin, Pin};
use std::rc::Rc;

use aula_course::SceneContent;
use aula_providers::{
    estimate_tokens, stream_chat_with_retry, AbortHandle, ChatRequest, Endpoint, ModelLimits,
    ProviderError, RetryPolicy, Sleeper, StopReason, StreamEvent, Transport,
};
use futures_util::future::{select, Either};
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde::{Deserialize, Serialize};

use crate::fit::Target;
use crate::job::{AfterFailure, Job, JobRecord, TaskStats};
use crate::outline::{
    outline_request, parse_outline, CourseRequest, Outline, OutlinePreview, PreviewScene,
    SceneOutline,
};
use crate::stages::{
    actions_request, content_request, feedback_request, parse_actions, parse_content, Read,
    SceneContext,
};
use crate::wire::GenJob;
use crate::{plan_scenes, GenerationStep};

/// What happens during a generation, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum GenEvent {
    /// A scene of the outline, seen while it streams.
    OutlineScene(PreviewScene),
    /// The outline is read and normalized.
    Outline(Outline),
    Started {
        task: String,
    },
    /// A task is done; its output is in the record.
    Finished {
        task: String,
    },
    /// A task failed; it goes again at `retry_at_ms`, or (`None`) it gave up.
    Failed {
        task: String,
        error: String,
        retry_at_ms: Option<f64>,
    },
    /// Something code fixed or a provider retry, for the log.
    Note {
        task: String,
        note: String,
    },
    /// Tokens spent so far, in all.
    Tokens(u64),
    /// How a running task's call is going (sent now and then while it runs).
    Progress(TaskProgress),
    /// Nothing more will run: `fatal` says why when the whole job stopped (a rejected key).
    Settled {
        cancelled: bool,
        fatal: Option<String>,
    },
}

/// Where a running task's call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPhase {
    /// Sent; the model has not started its answer (it reads the prompt, or the server has the
    /// request queued behind others).
    Waiting,
    /// The answer is streaming.
    Writing,
}

/// A running task's call, as the progress page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskProgress {
    pub task: String,
    pub phase: CallPhase,
    /// Tokens of this call's answer so far (estimated from its text until the provider counts).
    pub tokens: u64,
    /// Since this call was sent.
    pub elapsed_ms: u64,
}

/// Live progress is sent at most this often per call, besides every change of phase.
const PROGRESS_EVERY_MS: f64 = 1_000.0;

/// The stop button and the retry requests of a running generation.
#[derive(Clone, Default)]
pub struct GenControl(Rc<ControlState>);

#[derive(Default)]
struct ControlState {
    cancelled: Cell<bool>,
    retries: RefCell<Vec<String>>,
    calls: RefCell<HashMap<u64, Box<dyn AbortHandle>>>,
    next_call: Cell<u64>,
    /// Wakes the job loop when the learner asks for something.
    wake: RefCell<Option<futures_channel::oneshot::Sender<()>>>,
}

impl GenControl {
    /// Stops every running call; the job settles as cancelled. Finished tasks stay in the record.
    pub fn cancel(&self) {
        self.0.cancelled.set(true);
        for (_, call) in self.0.calls.borrow_mut().drain() {
            call.abort();
        }
        self.poke();
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.get()
    }

    /// Asks for `task` (and what depends on it) to be done again.
    pub fn retry(&self, task: &str) {
        self.0.retries.borrow_mut().push(task.to_string());
        self.poke();
    }

    fn poke(&self) {
        if let Some(wake) = self.0.wake.borrow_mut().take() {
            let _ = wake.send(());
        }
    }

    fn track(&self, abort: Box<dyn AbortHandle>) -> u64 {
        let id = self.0.next_call.get();
        self.0.next_call.set(id + 1);
        if self.is_cancelled() {
            abort.abort();
        }
        self.0.calls.borrow_mut().insert(id, abort);
        id
    }

    fn untrack(&self, id: u64) {
        self.0.calls.borrow_mut().remove(&id);
    }
}

/// Where a generation calls its model, and how it waits and tells time.
pub struct Env<'a> {
    pub transport: &'a dyn Transport,
    pub sleeper: &'a dyn Sleeper,
    /// Milliseconds, monotonic enough for backoff.
    pub now_ms: &'a dyn Fn() -> f64,
    pub endpoint: Endpoint,
    pub control: GenControl,
    /// The model's context and how many requests its server answers at once.
    pub limits: ModelLimits,
    /// Live progress of running calls, for the page.
    pub progress: &'a dyn Fn(TaskProgress),
}

impl Env<'_> {
    /// What every request is fitted to.
    pub fn target(&self) -> Target {
        Target::new(&self.endpoint, &self.limits)
    }
}

/// Why a call or a stage failed.
#[derive(Debug, Clone, PartialEq)]
pub struct StageError {
    pub message: String,
    /// Trying again cannot help (a rejected key, a model that does not exist): stop the job.
    pub fatal: bool,
}

/// A call's answer: its text and why it stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub stop: Option<StopReason>,
}

impl Reply {
    fn cut_at_limit(&self) -> bool {
        self.stop == Some(StopReason::MaxTokens)
    }
}

/// One call to its end. The provider-level retry (rate limits, dropped connections) is inside;
/// a retry starts the reply over. Waits fit the endpoint (a local server gets minutes to read a
/// prompt). Its tokens, calls and time go into `stats`; how it goes, to `env.progress`.
pub async fn call(
    env: &Env<'_>,
    request: &ChatRequest,
    task: &str,
    stats: &mut TaskStats,
    notes: &mut Vec<String>,
    on_text: &mut dyn FnMut(&str),
) -> Result<Reply, StageError> {
    let reply = Rc::new(RefCell::new(String::new()));
    let tokens = Rc::new(Cell::new(0u64));
    let stop: Rc<Cell<Option<StopReason>>> = Rc::default();
    let failure: Rc<RefCell<Option<ProviderError>>> = Rc::default();
    let retries: Rc<RefCell<Vec<String>>> = Rc::default();
    let policy = RetryPolicy {
        retry_after_output: true,
        stall_ms: 60_000,
        ..RetryPolicy::default()
    }
    .patient_for(&env.endpoint);
    let started = (env.now_ms)();
    let shown = Cell::new((CallPhase::Waiting, started));
    let report = |phase: CallPhase, text_len: &str, force: bool| {
        let now = (env.now_ms)();
        let (last_phase, last_at) = shown.get();
        if force || phase != last_phase || now - last_at >= PROGRESS_EVERY_MS {
            shown.set((phase, now));
            (env.progress)(TaskProgress {
                task: task.to_string(),
                phase,
                tokens: u64::from(estimate_tokens(text_len)),
                elapsed_ms: (now - started).max(0.0) as u64,
            });
        }
    };
    report(CallPhase::Waiting, "", true);
    let (text, spent, failed, again, stopped) = (
        reply.clone(),
        tokens.clone(),
        failure.clone(),
        reply.clone(),
        stop.clone(),
    );
    let noted = retries.clone();
    let (abort, drive) = stream_chat_with_retry(
        env.transport,
        env.sleeper,
        policy,
        env.endpoint.clone(),
        request,
        move |event| match event {
            StreamEvent::TextDelta(t) | StreamEvent::JsonDelta(t) => {
                text.borrow_mut().push_str(&t);
                on_text(&t);
                report(CallPhase::Writing, &text.borrow(), false);
            }
            StreamEvent::ThinkingDelta(_) => report(CallPhase::Writing, &text.borrow(), false),
            StreamEvent::Usage { input, output, .. } => spent.set(spent.get() + input + output),
            StreamEvent::Done { stop_reason } => stopped.set(stop_reason),
            StreamEvent::Stopped { stop_reason } => stopped.set(Some(stop_reason)),
            StreamEvent::Error(e) => *failed.borrow_mut() = Some(e),
            _ => {}
        },
        move |attempt, wait_ms, error| {
            again.borrow_mut().clear();
            noted.borrow_mut().push(format!(
                "attempt {attempt} failed ({error}); trying again in {wait_ms} ms"
            ));
        },
    );
    let call_id = env.control.track(abort);
    drive.await;
    env.control.untrack(call_id);
    stats.ms += ((env.now_ms)() - started).max(0.0) as u64;
    stats.tokens += tokens.get();
    let provider_retries = retries.borrow().len() as u32;
    stats.calls += 1 + provider_retries;
    stats.failures.extend(retries.borrow().iter().cloned());
    notes.extend(
        retries
            .borrow_mut()
            .drain(..)
            .map(|n| format!("{task}: {n}")),
    );
    if let Some(error) = failure.borrow_mut().take() {
        return Err(StageError {
            fatal: is_fatal(&error),
            message: error.to_string(),
        });
    }
    let reply = Reply {
        text: reply.borrow().clone(),
        stop: stop.take(),
    };
    if reply.cut_at_limit() {
        stats.cut_at_limit += 1;
        notes.push(format!(
            "{task}: the reply reached its length limit ({} tokens) and was cut",
            request.max_tokens.unwrap_or(0)
        ));
    }
    Ok(reply)
}

/// Errors no retry can mend, the same for every task: the job stops and says so. Anything else
/// (a broken frame, a cut stream, a server error) is one task's bad luck and goes to its backoff.
fn is_fatal(error: &ProviderError) -> bool {
    matches!(
        error,
        ProviderError::KeyRejected { .. }
            | ProviderError::QuotaExhausted { .. }
            | ProviderError::ModelNotFound { .. }
            | ProviderError::BrowserAccessDenied { .. }
    )
}

/// Why a reply goes back to the model: the reader's error or problems, and a length cut.
fn correction_reason(reply: &Reply, reason: &str) -> String {
    if reply.cut_at_limit() {
        format!(
            "{reason}. It was also cut off at the length limit: write it shorter, within the \
             length this format needs"
        )
    } else {
        reason.to_string()
    }
}

/// A stage: one call, read strictly (the reader repairs once by itself); a reply that cannot be
/// used, or is usable but short of what was asked (its problems), goes back to the model once
/// with why. A usable first reply is kept when the second is no better, as code completes it
/// where it can (its `fallback`). Tokens, calls, repairs and corrections go into `stats`.
pub async fn run_stage<T>(
    env: &Env<'_>,
    request: &ChatRequest,
    task: &str,
    read: impl Fn(&str) -> Result<Read<T>, String>,
    stats: &mut TaskStats,
    notes: &mut Vec<String>,
) -> Result<T, StageError> {
    run_stage_streaming(env, request, task, read, stats, notes, &mut |_| {}).await
}

async fn run_stage_streaming<T>(
    env: &Env<'_>,
    request: &ChatRequest,
    task: &str,
    read: impl Fn(&str) -> Result<Read<T>, String>,
    stats: &mut TaskStats,
    notes: &mut Vec<String>,
    on_text: &mut dyn FnMut(&str),
) -> Result<T, StageError> {
    let reply = call(env, request, task, stats, notes, on_text).await?;
    let keep = |read: &Read<T>, notes: &mut Vec<String>, stats: &mut TaskStats| {
        stats.repairs += u32::from(read.repaired);
        notes.extend(read.notes.iter().map(|n| format!("{task}: {n}")));
    };
    // A reply kept with its problems: what code makes of it, where code can do better.
    let settle = |read: Read<T>, notes: &mut Vec<String>| match read.fallback {
        Some((value, note)) => {
            notes.push(format!("{task}: {note}"));
            value
        }
        None => read.value,
    };
    let (usable, reason) = match read(&reply.text) {
        Ok(first) if first.problems.is_empty() => {
            keep(&first, notes, stats);
            return Ok(first.value);
        }
        Ok(first) => {
            keep(&first, notes, stats);
            let reason = first.problems.join("; ");
            (Some(first), reason)
        }
        Err(error) => (None, error),
    };
    let reason = correction_reason(&reply, &reason);
    notes.push(format!("{task}: asking again: {reason}"));
    stats.corrections += 1;
    let again = feedback_request(request, &reply.text, &reason, env.target());
    let second = match call(env, &again, task, stats, notes, &mut |_| {}).await {
        Ok(second) => second,
        Err(error) => return usable.map(|first| settle(first, notes)).ok_or(error),
    };
    let second_read = read(&second.text);
    let better = match &second_read {
        Ok(read) => read.problems.is_empty() || usable.is_none(),
        Err(_) => false,
    };
    match (second_read, usable) {
        (Ok(read), _) if better => {
            keep(&read, notes, stats);
            for problem in &read.problems {
                notes.push(format!("{task}: kept, though {problem}"));
            }
            Ok(settle(read, notes))
        }
        (_, Some(first)) => {
            notes.push(format!(
                "{task}: kept the first reply: the second was no better"
            ));
            Ok(settle(first, notes))
        }
        (Ok(read), None) => Ok(settle(read, notes)),
        (Err(error), None) => {
            let message = if second.cut_at_limit() {
                format!("The model's answer was cut off at its length limit twice in a row: {error}. Retry, or choose a model with a larger context in Settings → AI provider.")
            } else {
                format!("The model's answer could not be used twice in a row: {error}. Retry, or choose a stronger course-writing model in Settings → AI provider.")
            };
            Err(StageError {
                message,
                fatal: false,
            })
        }
    }
}

/// The outline stage, with its scenes shown while they stream; its cost goes into `stats`.
pub async fn generate_outline(
    env: &Env<'_>,
    request: &CourseRequest,
    stats: &mut TaskStats,
    emit: &mut dyn FnMut(GenEvent),
) -> Result<Outline, StageError> {
    let (chat, cuts) = outline_request(request, env.target()).map_err(|e| StageError {
        message: e.to_string(),
        fatal: true,
    })?;
    let mut preview = OutlinePreview::default();
    stats.document_cut |= crate::fit::cuts_document(&cuts);
    let mut notes: Vec<String> = cuts.into_iter().map(|c| format!("outline: {c}")).collect();
    let result = run_stage_streaming(
        env,
        &chat,
        "outline",
        |reply| parse_outline(reply, request),
        stats,
        &mut notes,
        &mut |text| {
            for scene in preview.push(text) {
                emit(GenEvent::OutlineScene(scene));
            }
        },
    )
    .await;
    for note in notes.drain(..) {
        emit(GenEvent::Note {
            task: "outline".into(),
            note,
        });
    }
    result.map_err(|error| StageError {
        message: error
            .message
            .replace("Retry, or", "Continue to try again, or"),
        fatal: error.fatal,
    })
}

/// A scene's content written while the outline was still streaming.
#[derive(Debug)]
pub struct EarlyContent {
    /// Where the scene was in the streaming outline.
    pub index: usize,
    pub kind: crate::outline::SceneKind,
    pub title: String,
    /// The content's checked JSON, or why it failed.
    pub output: Result<String, StageError>,
    pub stats: TaskStats,
}

/// The outline, and meanwhile the contents of its first scenes: as soon as a scene's object
/// has streamed, its content is written in one of `slots` calls beside the outline's (with the
/// plan as far as it has come), so the first scene is playable sooner and the outline's time is
/// not idle. Use [`seed_early_contents`] with the finished outline to keep what still fits.
pub async fn generate_outline_and_first_contents(
    env: &Env<'_>,
    request: &CourseRequest,
    stats: &mut TaskStats,
    slots: usize,
    emit: &mut dyn FnMut(GenEvent),
) -> (Result<Outline, StageError>, Vec<EarlyContent>) {
    let emit = RefCell::new(emit);
    let (sender, mut scenes) = futures_channel::mpsc::unbounded::<crate::outline::PreviewScene>();
    let outline = async {
        let mut forward = |event: GenEvent| {
            if let GenEvent::OutlineScene(scene) = &event {
                if scene.index < slots {
                    let _ = sender.unbounded_send(scene.clone());
                }
            }
            (emit.borrow_mut())(event);
        };
        let outline = generate_outline(env, request, stats, &mut forward).await;
        sender.close_channel();
        outline
    };
    let early = async {
        let mut seen: Vec<SceneOutline> = Vec::new();
        let mut running: FuturesUnordered<Pin<Box<dyn Future<Output = EarlyContent> + '_>>> =
            FuturesUnordered::new();
        let mut done = Vec::new();
        let mut streaming = true;
        while streaming || !running.is_empty() {
            let next_done = async {
                if running.is_empty() {
                    futures_util::future::pending().await
                } else {
                    running.next().await
                }
            };
            let next_scene = async {
                if streaming {
                    scenes.next().await
                } else {
                    futures_util::future::pending().await
                }
            };
            match select(pin!(next_done), pin!(next_scene)).await {
                Either::Left((Some(finished), _)) => done.push(finished),
                Either::Left((None, _)) => {}
                Either::Right((None, _)) => streaming = false,
                Either::Right((Some(preview), _)) => {
                    let mut scene = preview.scene.clone();
                    scene.id = format!("s{}", preview.index + 1);
                    seen.push(scene);
                    let plan = Outline {
                        title: clip_title(&request.topic),
                        description: String::new(),
                        language_directive: String::new(),
                        scenes: seen.clone(),
                    };
                    running.push(Box::pin(early_content(env, request, plan, preview)));
                }
            }
        }
        done
    };
    let (outline, mut early) = futures_util::future::join(outline, early).await;
    early.sort_by_key(|e| e.index);
    (outline, early)
}

fn clip_title(topic: &str) -> String {
    topic.trim().chars().take(80).collect()
}

async fn early_content(
    env: &Env<'_>,
    request: &CourseRequest,
    plan: Outline,
    preview: crate::outline::PreviewScene,
) -> EarlyContent {
    let mut stats = TaskStats::default();
    let mut notes = Vec::new();
    let scene = &plan.scenes[plan.scenes.len() - 1];
    let ctx = SceneContext {
        request,
        outline: &plan,
        scene,
        target: env.target(),
    };
    let task = crate::content_task(&scene.id);
    let output = match content_request(&ctx) {
        Err(too_long) => Err(StageError {
            message: too_long.to_string(),
            fatal: false,
        }),
        Ok((chat, _cuts)) => run_stage(
            env,
            &chat,
            &task,
            |reply| parse_content(reply, &ctx),
            &mut stats,
            &mut notes,
        )
        .await
        .map(|written| written.json),
    };
    EarlyContent {
        index: preview.index,
        kind: preview.kind,
        title: preview.title,
        output,
        stats,
    }
}

/// Keeps the early contents whose scene the finished outline still has at the same place with
/// the same kind and title, as finished content tasks of the record; every early call's tokens
/// count. Returns the tasks kept.
pub fn seed_early_contents(
    outline: &Outline,
    record: &mut JobRecord,
    early: Vec<EarlyContent>,
) -> Vec<String> {
    let mut kept = Vec::new();
    for content in early {
        record.tokens_spent += content.stats.tokens;
        let Ok(json) = content.output else {
            continue;
        };
        let Some(scene) = outline.scenes.get(content.index) else {
            continue;
        };
        if scene.kind == content.kind && scene.title == content.title {
            let task = crate::content_task(&scene.id);
            record.count(&task, &content.stats);
            record.finished.entry(task.clone()).or_insert(json);
            kept.push(task);
        } else {
            record.count("outline", &content.stats);
        }
    }
    kept
}

/// What to generate: the outline (and the request) are fixed; the record carries what is done.
pub struct Plan {
    pub request: CourseRequest,
    pub outline: Outline,
    pub record: JobRecord,
    pub limit: NonZeroUsize,
    /// Tasks to do again even though the record has them (the learner's "regenerate").
    pub redo: Vec<String>,
    pub token_budget: Option<u64>,
}

type TaskRun<'a> = Pin<
    Box<dyn Future<Output = (String, Result<String, StageError>, TaskStats, Vec<String>)> + 'a>,
>;

/// Runs the scene tasks to the end: every task finished or given up, the job cancelled, or a
/// fatal error. `on_event` also gets the record after each change worth saving.
pub async fn run_scenes(
    env: &Env<'_>,
    plan: Plan,
    on_event: &mut dyn FnMut(GenEvent, &JobRecord),
) -> JobRecord {
    let scene_ids: Vec<String> = plan.outline.scenes.iter().map(|s| s.id.clone()).collect();
    let graph = match plan_scenes(&scene_ids) {
        Ok(graph) => graph,
        Err(error) => {
            let record = plan.record;
            on_event(
                GenEvent::Settled {
                    cancelled: false,
                    fatal: Some(error.to_string()),
                },
                &record,
            );
            return record;
        }
    };
    let mut job = Job::new(graph, plan.record, plan.limit);
    if let Some(budget) = plan.token_budget {
        job = job.with_token_budget(budget);
    }
    for task in &plan.redo {
        job.retry(task);
    }
    let request = &plan.request;
    let outline = &plan.outline;
    let mut running: FuturesUnordered<TaskRun<'_>> = FuturesUnordered::new();
    let mut fatal: Option<String> = None;
    loop {
        if env.control.is_cancelled() || fatal.is_some() {
            env.control.cancel();
            break;
        }
        let retries: Vec<String> = env.control.0.retries.borrow_mut().drain(..).collect();
        for task in retries {
            job.retry(&task);
        }
        let now = (env.now_ms)();
        for id in job.start(now) {
            let Some(step) = job.graph().task(&id).map(|t| t.work.clone()) else {
                continue;
            };
            on_event(GenEvent::Started { task: id.clone() }, job.record());
            let content = match &step {
                GenerationStep::SceneActions { scene_id } => job
                    .output(&crate::content_task(scene_id))
                    .map(str::to_string),
                GenerationStep::SceneContent { .. } => None,
            };
            running.push(Box::pin(run_task(env, request, outline, id, step, content)));
        }
        if running.is_empty() && job.next_wake_ms().is_none() {
            break;
        }
        let (sender, woken) = futures_channel::oneshot::channel();
        *env.control.0.wake.borrow_mut() = Some(sender);
        let wait_ms = job.next_wake_ms().map(|at| (at - now).max(0.0) as u64);
        let timer: Pin<Box<dyn Future<Output = ()>>> = match wait_ms {
            Some(ms) => env.sleeper.sleep(ms),
            None => Box::pin(futures_util::future::pending()),
        };
        let next_done = async {
            if running.is_empty() {
                futures_util::future::pending().await
            } else {
                running.next().await
            }
        };
        let outcome = match select(pin!(next_done), select(timer, woken)).await {
            Either::Left((done, _)) => done,
            Either::Right(_) => None,
        };
        let Some((task, result, stats, notes)) = outcome else {
            continue;
        };
        for note in notes {
            on_event(
                GenEvent::Note {
                    task: task.clone(),
                    note,
                },
                job.record(),
            );
        }
        match result {
            Ok(output) => {
                job.count(&task, &stats);
                job.finished(&task, output, stats.tokens);
                on_event(GenEvent::Tokens(job.record().tokens_spent), job.record());
                on_event(GenEvent::Finished { task }, job.record());
            }
            Err(error) => {
                if error.fatal {
                    fatal = Some(error.message.clone());
                }
                let mut stats = stats;
                stats.failures.push(error.message.clone());
                job.count(&task, &stats);
                let tokens = stats.tokens;
                let after = if error.fatal {
                    // Trying again cannot help; record it as given up at once.
                    while !matches!(
                        job.failed(&task, error.message.clone(), 0, (env.now_ms)()),
                        AfterFailure::GaveUp
                    ) {}
                    AfterFailure::GaveUp
                } else {
                    job.failed(&task, error.message.clone(), tokens, (env.now_ms)())
                };
                let retry_at_ms = match after {
                    AfterFailure::RetryAt { at_ms } => Some(at_ms),
                    AfterFailure::GaveUp => None,
                };
                on_event(GenEvent::Tokens(job.record().tokens_spent), job.record());
                on_event(
                    GenEvent::Failed {
                        task,
                        error: error.message,
                        retry_at_ms,
                    },
                    job.record(),
                );
            }
        }
    }
    *env.control.0.wake.borrow_mut() = None;
    let record = job.record().clone();
    on_event(
        GenEvent::Settled {
            cancelled: env.control.is_cancelled() && fatal.is_none(),
            fatal,
        },
        &record,
    );
    record
}

async fn run_task(
    env: &Env<'_>,
    request: &CourseRequest,
    outline: &Outline,
    task: String,
    step: GenerationStep,
    content_json: Option<String>,
) -> (String, Result<String, StageError>, TaskStats, Vec<String>) {
    let mut stats = TaskStats::default();
    let mut notes = Vec::new();
    let Some(scene) = outline.scene(step.scene_id()) else {
        let error = StageError {
            message: format!("The outline has no scene \"{}\".", step.scene_id()),
            fatal: false,
        };
        return (task, Err(error), stats, notes);
    };
    let ctx = SceneContext {
        request,
        outline,
        scene,
        target: env.target(),
    };
    let too_long = |e: aula_providers::budget::TooLong| StageError {
        message: e.to_string(),
        fatal: false,
    };
    let result = match step {
        GenerationStep::SceneContent { .. } => match content_request(&ctx) {
            Err(e) => Err(too_long(e)),
            Ok((chat, cuts)) => {
                stats.document_cut |= crate::fit::cuts_document(&cuts);
                notes.extend(cuts.into_iter().map(|c| format!("{task}: {c}")));
                run_stage(
                    env,
                    &chat,
                    &task,
                    |reply| parse_content(reply, &ctx),
                    &mut stats,
                    &mut notes,
                )
                .await
                .map(|written| written.json)
            }
        },
        GenerationStep::SceneActions { .. } => {
            let content: Option<SceneContent> =
                content_json.and_then(|json| serde_json::from_str(&json).ok());
            match content {
                None => Err(StageError {
                    message: "This scene's content could not be read back; write it again.".into(),
                    fatal: false,
                }),
                Some(content) => match actions_request(&ctx, &content) {
                    Err(e) => Err(too_long(e)),
                    Ok((chat, cuts)) => {
                        stats.document_cut |= crate::fit::cuts_document(&cuts);
                        notes.extend(cuts.into_iter().map(|c| format!("{task}: {c}")));
                        run_stage(
                            env,
                            &chat,
                            &task,
                            |reply| parse_actions(reply, &ctx, &content),
                            &mut stats,
                            &mut notes,
                        )
                        .await
                        .map(|written| written.json)
                    }
                },
            }
        }
    };
    (task, result, stats, notes)
}

/// A whole job as the AI worker runs it: the outline unless the job brings one, then the scenes
/// (unless the learner reviews the plan first: then it settles after the outline). While the
/// outline streams, the first scenes' contents are written beside it, unless the learner reviews
/// the plan or the server answers one request at a time. Every event goes to `post` with the
/// outline as far as known and the record as it stands; the last is always `Settled`.
pub async fn run_job(
    env: &Env<'_>,
    job: &GenJob,
    request: &CourseRequest,
    post: &mut dyn FnMut(Option<&Outline>, &GenEvent, &JobRecord),
) {
    let mut record = job.record.clone();
    let concurrency = GenJob::concurrency(&env.limits);
    let outline = match job.outline.clone() {
        Some(outline) => outline,
        None => {
            let mut stats = TaskStats::default();
            let seen = record.clone();
            let mut emit = |event| post(None, &event, &seen);
            let slots = concurrency.get().saturating_sub(1);
            let (result, early) = if job.outline_only || slots == 0 {
                let result = generate_outline(env, request, &mut stats, &mut emit).await;
                (result, Vec::new())
            } else {
                generate_outline_and_first_contents(env, request, &mut stats, slots, &mut emit)
                    .await
            };
            record.tokens_spent += stats.tokens;
            record.count("outline", &stats);
            let outline = match result {
                Ok(outline) => outline,
                Err(error) => {
                    for content in &early {
                        record.tokens_spent += content.stats.tokens;
                        record.count("outline", &content.stats);
                    }
                    let settled = GenEvent::Settled {
                        cancelled: env.control.is_cancelled(),
                        fatal: Some(error.message),
                    };
                    return post(None, &settled, &record);
                }
            };
            seed_early_contents(&outline, &mut record, early);
            post(None, &GenEvent::Outline(outline.clone()), &record);
            if job.outline_only {
                let settled = GenEvent::Settled {
                    cancelled: false,
                    fatal: None,
                };
                return post(None, &settled, &record);
            }
            outline
        }
    };
    let plan = Plan {
        request: request.clone(),
        outline: outline.clone(),
        record,
        limit: concurrency,
        redo: job.redo.clone(),
        token_budget: None,
    };
    run_scenes(env, plan, &mut |event, record| {
        post(Some(&outline), &event, record)
    })
    .await;
}
