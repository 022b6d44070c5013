//! The AI worker: every call to an LLM provider runs here, in a dedicated Web Worker that the page
//! starts the first time it needs AI. A course that only plays never downloads this code, and
//! streaming and parsing never compete with the page for its main thread.
//!
//! Jobs arrive as JSON [`Job`]s through `postMessage`; each gets [`Report`]s back with its id.
#![cfg(target_arch = "wasm32")]

mod transport;

use std::cell::RefCell;
use std::collections::HashMap;

use aula_providers::wire::{Job, Report};
use aula_providers::{
    list_models, stream_chat, stream_chat_with_retry, AbortHandle, ProviderError, RetryPolicy,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use transport::{FetchTransport, TimeoutSleeper};

thread_local! {
    /// The running chat jobs' abort handles.
    static RUNNING: RefCell<HashMap<u32, Box<dyn AbortHandle>>> = RefCell::new(HashMap::new());
}

/// A job's stream, driven to its end on the worker's event loop.
type Drive = std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(report: &Report) {
    if let Ok(text) = serde_json::to_string(report) {
        let _ = scope().post_message(&JsValue::from_str(&text));
    }
}

fn run(job: Job) {
    match job {
        Job::Chat {
            id,
            endpoint,
            request,
            retry,
        } => {
            let on_event = move |event| post(&Report::of(id, event));
            let (abort, drive): (Box<dyn AbortHandle>, Drive) = if retry {
                let on_retry = move |attempt: u32, wait_ms: u64, error: &ProviderError| {
                    post(&Report::Retrying {
                        id,
                        attempt,
                        wait_ms,
                        message: error.to_string(),
                    })
                };
                let (abort, drive) = stream_chat_with_retry(
                    &FetchTransport,
                    &TimeoutSleeper,
                    RetryPolicy::default(),
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
        Job::Abort { id } => RUNNING.with(|r| {
            if let Some(abort) = r.borrow().get(&id) {
                abort.abort();
            }
        }),
    }
}

/// Starts reading jobs; called once by the binary's `main` when the worker loads.
pub fn start() {
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| {
        let Some(text) = event.data().as_string() else {
            return;
        };
        match serde_json::from_str::<Job>(&text) {
            Ok(job) => run(job),
            // A page of another version: say so once per job rather than guess.
            Err(error) => post(&Report::Failed {
                id: 0,
                message: format!("The AI worker did not understand a request: {error}"),
            }),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&Report::Ready);
}
