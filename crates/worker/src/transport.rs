//! The providers' `Transport` port over the browser's `fetch`: the response body is read chunk by
//! chunk from its `ReadableStream` as it arrives, and an `AbortController` stops it. Only the
//! headers the dialect asked for are sent (extra headers break some providers' CORS preflight).
//! `fetch` and `setTimeout` are the global functions, so this runs in the worker and, for the
//! tests, in a page.

use std::future::Future;
use std::pin::Pin;

use aula_providers::{
    AbortHandle, HttpRequest, HttpResponse, PendingResponse, Transport, TransportError,
};
use futures_util::stream;
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, AbortSignal, Headers, ReadableStreamDefaultReader, RequestInit, Response,
};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(input: &str, init: &RequestInit) -> js_sys::Promise;
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: i32) -> JsValue;
}

pub struct FetchTransport;

struct Abort(AbortController);

impl AbortHandle for Abort {
    fn abort(&self) {
        self.0.abort();
    }
}

/// What a failed fetch means. A refused connection and a CORS refusal look the same from inside a
/// page, so the caller's error explains both; nothing of the request (and so no key) is quoted.
fn failure(signal: &AbortSignal, error: JsValue) -> TransportError {
    if signal.aborted() {
        return TransportError::Aborted;
    }
    let name = Reflect::get(&error, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_default();
    if name == "AbortError" {
        TransportError::Aborted
    } else {
        TransportError::Network(format!(
            "the browser could not complete the request ({})",
            if name.is_empty() {
                "network error"
            } else {
                &name
            }
        ))
    }
}

fn response_headers(response: &Response) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    let Ok(Some(iterator)) = js_sys::try_iter(&response.headers()) else {
        return headers;
    };
    for entry in iterator.flatten() {
        let pair = js_sys::Array::from(&entry);
        if let (Some(name), Some(value)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
            headers.push((name, value));
        }
    }
    headers
}

async fn start(request: HttpRequest, signal: AbortSignal) -> Result<HttpResponse, TransportError> {
    let headers = Headers::new().map_err(|e| failure(&signal, e))?;
    for (name, value) in &request.headers {
        headers
            .append(name, value)
            .map_err(|e| failure(&signal, e))?;
    }
    let init = RequestInit::new();
    init.set_method(request.method.as_str());
    init.set_headers(&headers);
    init.set_signal(Some(&signal));
    if !request.body.is_empty() {
        init.set_body(&Uint8Array::from(request.body.as_slice()).into());
    }
    let promise = global_fetch(&request.url, &init);
    let response: Response = JsFuture::from(promise)
        .await
        .map_err(|e| failure(&signal, e))?
        .dyn_into()
        .map_err(|_| TransportError::Network("the answer was not an HTTP response".into()))?;
    let status = response.status();
    let headers = response_headers(&response);
    let reader: Option<ReadableStreamDefaultReader> = response
        .body()
        .and_then(|body| body.get_reader().dyn_into().ok());
    let chunks = stream::unfold((reader, signal), |(reader, signal)| async move {
        let reader = reader?;
        match JsFuture::from(reader.read()).await {
            Err(error) => Some((Err(failure(&signal, error)), (None, signal))),
            Ok(result) => {
                let done = Reflect::get(&result, &"done".into())
                    .ok()
                    .and_then(|d| d.as_bool())
                    .unwrap_or(true);
                if done {
                    return None;
                }
                let bytes = Reflect::get(&result, &"value".into())
                    .ok()
                    .and_then(|v| v.dyn_into::<Uint8Array>().ok())
                    .map(|a| a.to_vec())
                    .unwrap_or_default();
                Some((Ok(bytes), (Some(reader), signal)))
            }
        }
    });
    Ok(HttpResponse {
        status,
        headers,
        body: Box::pin(chunks),
    })
}

impl Transport for FetchTransport {
    fn send(&self, request: HttpRequest) -> PendingResponse {
        let Ok(controller) = AbortController::new() else {
            let failed: Pin<Box<dyn Future<Output = _>>> = Box::pin(std::future::ready(Err(
                TransportError::Network("this browser cannot make cancellable requests".into()),
            )));
            return PendingResponse {
                response: failed,
                abort: Box::new(NoAbort),
            };
        };
        let signal = controller.signal();
        PendingResponse {
            response: Box::pin(start(request, signal)),
            abort: Box::new(Abort(controller)),
        }
    }
}

struct NoAbort;

impl AbortHandle for NoAbort {
    fn abort(&self) {}
}

/// The providers' `Sleeper` port over `setTimeout`, for retry waits and stall timeouts.
pub struct TimeoutSleeper;

#[cfg(test)]
impl TimeoutSleeper {
    pub async fn sleep_for_test(&self, ms: u64) {
        aula_providers::Sleeper::sleep(self, ms).await;
    }
}

impl aula_providers::Sleeper for TimeoutSleeper {
    fn sleep(&self, ms: u64) -> Pin<Box<dyn Future<Output = ()>>> {
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            let delay = i32::try_from(ms).unwrap_or(i32::MAX);
            let _ = set_timeout(&resolve, delay);
        });
        Box::pin(async move {
            let _ = JsFuture::from(promise).await;
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use aula_providers::{
        stream_chat, ChatMessage, ChatRequest, Dialect, Endpoint, StreamEvent, TransportError,
    };
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    /// Set by `cargo xtask test`, which starts mock-llm before the browser tests.
    const MOCK_LLM: Option<&str> = option_env!("AULA_MOCK_LLM_URL");

    pub(crate) fn mock_url() -> &'static str {
        MOCK_LLM.expect("AULA_MOCK_LLM_URL was not set at build time: run the browser tests through `cargo xtask test`")
    }

    pub(crate) async fn set_script(script: &str) {
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_body(&JsValue::from_str(script));
        let promise = global_fetch(&format!("{}/__script", mock_url()), &init);
        let response: Response = JsFuture::from(promise).await.unwrap().dyn_into().unwrap();
        assert!(
            response.ok(),
            "mock-llm refused the script: {}",
            response.status()
        );
    }

    fn endpoint() -> Endpoint {
        Endpoint {
            provider: "custom".into(),
            dialect: Dialect::OpenAiChat,
            base_url: format!("{}/v1", mock_url()),
            model: "mock-model".into(),
            api_key: Some("test-key".into()),
        }
    }

    const REPLY: &str = "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen, one small step at a time.";

    #[wasm_bindgen_test]
    async fn reply_streams_from_mock_llm_through_fetch_in_several_chunks() {
        set_script(&format!(
            r#"{{"rules": [], "default": {{"text": "{REPLY}"}}, "chunk_words": 2}}"#
        ))
        .await;
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink = events.clone();
        let request = ChatRequest::new(
            "You are a teacher.",
            vec![ChatMessage::user("What is photosynthesis?")],
        );
        let (_abort, run) = stream_chat(&FetchTransport, endpoint(), &request, move |e| {
            sink.borrow_mut().push(e)
        });
        run.await;
        let events = events.borrow();
        let deltas: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            deltas.len() > 3,
            "the reply should arrive in pieces, got {deltas:?}"
        );
        assert_eq!(deltas.concat(), REPLY);
        assert!(
            events.iter().any(|e| matches!(e, StreamEvent::Done { .. })),
            "the stream ends with Done: {events:?}"
        );
    }

    #[wasm_bindgen_test]
    async fn abort_stops_a_slow_stream() {
        set_script(&format!(r#"{{"rules": [], "default": {{"text": "{REPLY}"}}, "chunk_words": 1, "chunk_delay_ms": 150}}"#)).await;
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink = events.clone();
        let request = ChatRequest::new(
            "You are a teacher.",
            vec![ChatMessage::user("Explain slowly.")],
        );
        let (abort, run) = stream_chat(&FetchTransport, endpoint(), &request, move |e| {
            sink.borrow_mut().push(e)
        });
        let abort = Rc::new(abort);
        let stopper = abort.clone();
        let watched = events.clone();
        // Abort as soon as the first words have arrived.
        wasm_bindgen_futures::spawn_local(async move {
            loop {
                let seen = watched
                    .borrow()
                    .iter()
                    .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
                    .count();
                if seen >= 2 {
                    stopper.abort();
                    break;
                }
                TimeoutSleeper.sleep_for_test(20).await;
            }
        });
        run.await;
        let events = events.borrow();
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            text.len() < REPLY.len(),
            "the stream went on after abort: {text:?}"
        );
        assert!(
            !events.iter().any(|e| matches!(e, StreamEvent::Done { .. })),
            "an aborted stream is not Done"
        );
        let _ = TransportError::Aborted;
    }
}
