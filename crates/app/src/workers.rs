//! The page's side of the AI worker (`crates/worker`): started on the first job, it makes every
//! provider call; each job's reports come back to the callback given with it. Jobs sent before
//! the worker is ready wait in a queue (a worker drops messages that arrive before it listens).
//!
//! The same client runs the files worker (`crates/files`), started on the first export or
//! import. Trunk builds both as Web Workers with a loader shim (`/aula-worker_loader.js`,
//! `/aula-files_loader.js`), so a course that only plays downloads neither, and streaming never
//! competes with the page's main thread.
//!
//! The AI worker takes JSON text: a providers `wire::Job` (chat, model list, limits, abort), a
//! `director::wire::RoundJob` or a `generation::wire::GenJob`. Its reports are a `wire::Report`,
//! one `RoundReport` per `ClassEvent` of a round (the session log's own flat record), or a flat
//! `GenReport`: plain structs on the wire, far cheaper in the page's bundle than tagged enums. A round job carries the course as its
//! file's JSON text and the conversation as plain lines, so the page needs no serializer for the
//! course model; `Job::Abort` with the round's id stops it. A file job is an object
//! `{kind: "file", id, job, bytes?}` (the job as JSON, the file as a `Uint8Array`) and gets one
//! `{kind: "file", id, report, bytes?}` back, the export's bytes transferred rather than copied.
//! A worker that fails to start fails every waiting job with a message saying so.

use std::cell::RefCell;
use std::collections::HashMap;

use aula_director::round::RoundEnd;
use aula_director::session::ClassEvent;
use aula_director::wire::{RoundJob, RoundReport};
use aula_export::wire::{FileJob, FileReport};
use aula_generation::wire::{GenJob, GenOp, GenReport, ReportEvent};
use aula_providers::wire::{Job, Report};
use aula_providers::{ChatRequest, Endpoint};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker};

/// The page's two workers: providers (AI) and files (exports, imports), each started on first use.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ai,
    Files,
}

impl Kind {
    /// Where Trunk puts the worker's loader (see web/index.html).
    fn url(self) -> &'static str {
        match self {
            Kind::Ai => "/aula-worker_loader.js",
            Kind::Files => "/aula-files_loader.js",
        }
    }
}

/// A report of either kind of job.
pub enum Reply {
    Job(Report),
    Round(RoundReport),
    Gen(GenReport),
    File(u32, FileReport, Option<Vec<u8>>),
}

impl Reply {
    fn job(&self) -> Option<u32> {
        match self {
            Reply::Job(report) => report.job(),
            Reply::Round(report) => Some(report.id),
            Reply::Gen(report) => Some(report.id),
            Reply::File(id, ..) => Some(*id),
        }
    }

    fn ends_job(&self) -> bool {
        match self {
            Reply::Job(report) => report.ends_job(),
            Reply::Round(report) => matches!(report.event, ClassEvent::Finished(_)),
            Reply::Gen(report) => report.event == ReportEvent::Settled,
            Reply::File(..) => true,
        }
    }
}

type Handler = Box<dyn FnMut(Reply)>;

#[derive(Default)]
struct Client {
    worker: Option<Worker>,
    ready: bool,
    queued: Vec<(u32, JsValue)>,
    handlers: HashMap<u32, Handler>,
    next_id: u32,
}

thread_local! {
    static CLIENTS: [RefCell<Client>; 2] = Default::default();
}

fn with_client<R>(kind: Kind, f: impl FnOnce(&RefCell<Client>) -> R) -> R {
    CLIENTS.with(|clients| f(&clients[kind as usize]))
}

fn deliver(kind: Kind, report: Reply) {
    let Some(id) = report.job() else {
        // Ready: send what waited.
        let queued = with_client(kind, |c| {
            let mut c = c.borrow_mut();
            c.ready = true;
            std::mem::take(&mut c.queued)
        });
        with_client(kind, |c| {
            if let Some(worker) = &c.borrow().worker {
                for (_, job) in queued {
                    let _ = worker.post_message(&job);
                }
            }
        });
        return;
    };
    // The handler runs outside the borrow: it may start another job.
    let Some(mut handler) = with_client(kind, |c| c.borrow_mut().handlers.remove(&id)) else {
        return;
    };
    let last = report.ends_job();
    handler(report);
    if !last {
        with_client(kind, |c| c.borrow_mut().handlers.insert(id, handler));
    }
}

/// Every waiting job ends with this message (the worker could not start or crashed).
fn fail_all(kind: Kind, message: &str) {
    let handlers: Vec<(u32, Handler)> =
        with_client(kind, |c| c.borrow_mut().handlers.drain().collect());
    for (id, mut handler) in handlers {
        handler(Reply::Job(Report::Failed {
            id,
            message: message.to_owned(),
        }));
    }
    with_client(kind, |c| {
        let mut c = c.borrow_mut();
        c.worker = None;
        c.ready = false;
        c.queued.clear();
    });
}

fn start_worker(kind: Kind) -> Result<Worker, String> {
    let worker = Worker::new(kind.url())
        .map_err(|_| "this browser cannot start the AI worker".to_owned())?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let data = event.data();
        let Some(text) = data.as_string() else {
            if let Some(reply) = file_reply(&data) {
                deliver(kind, reply);
            }
            return;
        };
        if let Ok(report) = serde_json::from_str::<Report>(&text) {
            deliver(kind, Reply::Job(report));
        } else if let Ok(report) = serde_json::from_str::<RoundReport>(&text) {
            deliver(kind, Reply::Round(report));
        } else if let Ok(report) = serde_json::from_str::<GenReport>(&text) {
            deliver(kind, Reply::Gen(report));
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        fail_all(kind, "An Aula worker could not start. Reload the page; if it happens again, the page's files are incomplete.");
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    Ok(worker)
}

/// Sends a job; `on_report` gets its reports until the last one. Returns the job's id.
fn send(make: impl FnOnce(u32) -> Option<String>, on_report: impl FnMut(Reply) + 'static) -> u32 {
    send_value(Kind::Ai, move |id| make(id).map(JsValue::from), on_report)
}

/// [`send`] for a message that is not JSON text (a file job with its bytes).
fn send_value(
    kind: Kind,
    make: impl FnOnce(u32) -> Option<JsValue>,
    on_report: impl FnMut(Reply) + 'static,
) -> u32 {
    let started = with_client(kind, |c| {
        let mut c = c.borrow_mut();
        if c.worker.is_none() {
            match start_worker(kind) {
                Ok(worker) => c.worker = Some(worker),
                Err(message) => return Err(message),
            }
        }
        c.next_id += 1;
        Ok(c.next_id)
    });
    let id = match started {
        Ok(id) => id,
        Err(message) => {
            let mut on_report = on_report;
            on_report(Reply::Job(Report::Failed { id: 0, message }));
            return 0;
        }
    };
    let Some(message) = make(id) else {
        return id;
    };
    with_client(kind, |c| {
        let mut c = c.borrow_mut();
        c.handlers.insert(id, Box::new(on_report));
        if c.ready {
            if let Some(worker) = &c.worker {
                let _ = worker.post_message(&message);
            }
        } else {
            c.queued.push((id, message));
        }
    });
    id
}

/// A file job's reply object (see `crates/files/src/jobs.rs`).
fn file_reply(data: &JsValue) -> Option<Reply> {
    let get = |name: &str| js_sys::Reflect::get(data, &JsValue::from_str(name)).ok();
    if get("kind")?.as_string()? != "file" {
        return None;
    }
    let id = get("id")?.as_f64()? as u32;
    let report = serde_json::from_str(&get("report")?.as_string()?).ok()?;
    let bytes = get("bytes")
        .filter(|b| b.is_instance_of::<js_sys::Uint8Array>())
        .map(|b| js_sys::Uint8Array::from(b).to_vec());
    Some(Reply::File(id, report, bytes))
}

/// Exports a course to a file or opens a file to import, in the worker: the one report (with
/// the export's bytes), also when the worker fails; `None` when the job ended without one (the
/// worker went away).
pub async fn file_job(
    job: &FileJob,
    bytes: Option<&[u8]>,
) -> Option<(FileReport, Option<Vec<u8>>)> {
    let Ok(text) = serde_json::to_string(job) else {
        return Some((
            FileReport::failed("The request could not be written."),
            None,
        ));
    };
    let (done, report) = futures_channel::oneshot::channel();
    let message = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = js_sys::Reflect::set(&message, &JsValue::from_str(k), v);
    };
    set("kind", &JsValue::from_str("file"));
    set("job", &JsValue::from_str(&text));
    if let Some(bytes) = bytes {
        set("bytes", &js_sys::Uint8Array::from(bytes));
    }
    let mut done = Some(done);
    send_value(
        Kind::Files,
        move |id| {
            let _ = js_sys::Reflect::set(
                &message,
                &JsValue::from_str("id"),
                &JsValue::from_f64(f64::from(id)),
            );
            Some(message.into())
        },
        move |reply| {
            let (report, bytes) = match reply {
                Reply::File(_, report, bytes) => (report, bytes),
                Reply::Job(Report::Failed { message, .. }) => (FileReport::failed(message), None),
                _ => return,
            };
            if let Some(done) = done.take() {
                let _ = done.send((report, bytes));
            }
        },
    );
    report.await.ok()
}

/// A handler for a providers' job: it gets that job's reports (a round's never reach it).
fn job_reports(mut on_report: impl FnMut(Report) + 'static) -> impl FnMut(Reply) + 'static {
    move |reply| {
        if let Reply::Job(report) = reply {
            on_report(report)
        }
    }
}

/// Streams one chat reply (with retries before any output when `retry`).
pub fn chat(
    endpoint: Endpoint,
    request: ChatRequest,
    retry: bool,
    on_report: impl FnMut(Report) + 'static,
) -> u32 {
    let job = move |id| Job::Chat {
        id,
        endpoint,
        request,
        retry,
    };
    send(
        |id| serde_json::to_string(&job(id)).ok(),
        job_reports(on_report),
    )
}

/// Runs a classroom round in the worker; `job.id` is replaced by the job's id.
pub fn round(mut job: RoundJob, mut on_event: impl FnMut(ClassEvent) + 'static) -> u32 {
    send(
        move |id| {
            job.id = id;
            serde_json::to_string(&job).ok()
        },
        move |reply| match reply {
            Reply::Round(report) => on_event(report.event),
            Reply::Job(Report::Failed { message, .. }) => {
                on_event(ClassEvent::Error {
                    agent_id: None,
                    message,
                });
                on_event(ClassEvent::Finished(RoundEnd::Failed));
            }
            Reply::Job(_) | Reply::Gen(_) | Reply::File(..) => {}
        },
    )
}

/// Runs a course generation in the worker; `job.id` is replaced by the job's id. The last
/// report is `settled` (also when the worker fails: then its `text` says why).
pub fn generate(mut job: GenJob, mut on_report: impl FnMut(GenReport) + 'static) -> u32 {
    send(
        move |id| {
            job.id = id;
            serde_json::to_string(&job).ok()
        },
        move |reply| match reply {
            Reply::Gen(report) => on_report(report),
            Reply::Job(Report::Failed { id, message }) => {
                let mut settled = GenReport::new(id, ReportEvent::Settled);
                settled.text = message;
                on_report(settled);
            }
            _ => {}
        },
    )
}

/// Tells a running generation to stop (`Cancel`) or to do `redo` again (`Retry`).
pub fn steer_generation(id: u32, op: GenOp, redo: Vec<String>) {
    let kind = Kind::Ai;
    let job = GenJob {
        op,
        id,
        endpoint: None,
        course_id: String::new(),
        request: None,
        outline: None,
        record: Default::default(),
        limits: Default::default(),
        outline_only: false,
        redo,
        created_at: 0,
    };
    let Ok(text) = serde_json::to_string(&job) else {
        return;
    };
    with_client(kind, |c| {
        let mut c = c.borrow_mut();
        if c.ready {
            if let Some(worker) = &c.worker {
                let _ = worker.post_message(&JsValue::from_str(&text));
            }
        } else {
            c.queued.push((id, JsValue::from(text)));
        }
    });
}

/// Lists the endpoint's models.
pub fn models(endpoint: Endpoint, on_report: impl FnMut(Report) + 'static) -> u32 {
    send(
        move |id| serde_json::to_string(&Job::Models { id, endpoint }).ok(),
        job_reports(on_report),
    )
}

/// Asks the endpoint's server for its context and slots; the answer is one `Limits` report.
pub fn limits(endpoint: Endpoint, on_report: impl FnMut(Report) + 'static) -> u32 {
    send(
        move |id| serde_json::to_string(&Job::Limits { id, endpoint }).ok(),
        job_reports(on_report),
    )
}

/// Stops a job; its handler still gets the job's last report.
pub fn abort(id: u32) {
    let kind = Kind::Ai;
    let unsent = with_client(kind, |c| {
        let mut c = c.borrow_mut();
        if let Some(at) = c.queued.iter().position(|(queued, _)| *queued == id) {
            c.queued.remove(at);
            return true;
        }
        if let (true, Some(worker)) = (c.ready, &c.worker) {
            if let Ok(text) = serde_json::to_string(&Job::Abort { id }) {
                let _ = worker.post_message(&JsValue::from_str(&text));
            }
        }
        false
    });
    if unsent {
        deliver(
            kind,
            Reply::Job(Report::Failed {
                id,
                message: "The request was stopped before it was sent.".into(),
            }),
        );
    }
}

/// The last report of a job, as a future (for code that runs jobs one after another).
pub struct LastReport(std::rc::Rc<RefCell<(Option<Report>, Option<std::task::Waker>)>>);

impl std::future::Future for LastReport {
    type Output = Report;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Report> {
        let mut slot = self.0.borrow_mut();
        match slot.0.take() {
            Some(report) => std::task::Poll::Ready(report),
            None => {
                slot.1 = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    }
}

/// [`chat`], with every report but the last given to `on_report` and the last one awaited.
pub fn chat_to_end(
    endpoint: Endpoint,
    request: ChatRequest,
    retry: bool,
    mut on_report: impl FnMut(&Report) + 'static,
) -> (u32, LastReport) {
    let slot = std::rc::Rc::new(RefCell::new((None, None::<std::task::Waker>)));
    let filled = slot.clone();
    let id = chat(endpoint, request, retry, move |report| {
        if report.ends_job() {
            let waker = {
                let mut slot = filled.borrow_mut();
                slot.0 = Some(report);
                slot.1.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        } else {
            on_report(&report);
        }
    });
    (id, LastReport(slot))
}
