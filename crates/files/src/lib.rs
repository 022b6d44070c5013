//! The files worker: exporting a course to a file and opening a file to import run here, in a
//! Web Worker the page starts the first time it needs one, so the zip, PowerPoint, SCORM and
//! OpenMAIC code is downloaded only by learners who use it and never blocks the page.
//!
//! Jobs arrive as `{kind: "file", id, job, bytes?}` objects (see [`jobs`]); each gets one reply.
#![cfg(target_arch = "wasm32")]

mod jobs;

use aula_export::wire::FileReport;
use aula_providers::wire::Report;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(input: &str, init: &web_sys::RequestInit) -> js_sys::Promise;
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Runs one posted job and posts its reply, the file's bytes transferred rather than copied.
fn handle(data: JsValue) {
    let Some(jobs::Posted { id, job, bytes }) = jobs::job_of(&data) else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let (report, bytes) = match job {
            Ok(job) => jobs::run(job, bytes).await,
            Err(error) => (
                FileReport::failed(format!(
                    "The files worker did not understand a request: {error}"
                )),
                None,
            ),
        };
        let (message, transfer) = jobs::reply(id, &report, bytes);
        let sent = match transfer {
            Some(buffer) => {
                scope().post_message_with_transfer(&message, &js_sys::Array::of1(&buffer))
            }
            None => scope().post_message(&message),
        };
        if sent.is_err() {
            let failed = FileReport::failed("The file could not be handed to the page.");
            let _ = scope().post_message(&jobs::reply(id, &failed, None).0);
        }
    });
}

/// Starts reading jobs; called once by the binary's `main` when the worker loads.
pub fn start() {
    let on_message =
        Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| handle(event.data()));
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // The page queues jobs until the worker says it listens (the AI worker's `Ready`).
    if let Ok(ready) = serde_json::to_string(&Report::Ready) {
        let _ = scope().post_message(&JsValue::from_str(&ready));
    }
}
