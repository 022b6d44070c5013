//! LLM providers: one request shape ([`ChatRequest`]), one event type for every streamed reply
//! ([`StreamEvent`]), an incremental SSE decoder, the OpenAI chat-completions dialect, the
//! [`Transport`] port through which bytes move, and an error taxonomy whose messages tell the
//! learner what to do and never contain a key.
//!
//! This crate decides and decodes; it does not do I/O. It must never depend on a browser type
//! (web-sys, gloo, wasm-bindgen), an HTTP client or an async runtime: the browser's fetch
//! transport lives in `app`, and a scripted one in [`transport::memory`] for tests.

pub mod error;
pub mod event;
pub mod openai;
pub mod request;
pub mod sse;
pub mod transport;

#[cfg(test)]
mod fixtures;

use std::future::Future;

pub use error::ProviderError;
pub use event::{StopReason, StreamEvent};
pub use openai::OpenAiChatDecoder;
pub use request::{ChatMessage, ChatRequest, ChatRole, Endpoint, JsonSchema, Thinking};
pub use sse::{SseDecoder, SseFrame};
pub use transport::{
    AbortHandle, ByteStream, HttpRequest, HttpResponse, PendingResponse, Transport, TransportError,
};

/// The most of an error body read before classifying it.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The HTTP request for a streamed chat on an OpenAI-compatible endpoint. No `Authorization`
/// header when there is no key (local servers such as Ollama need none).
pub fn openai_http_request(endpoint: &Endpoint, request: &ChatRequest) -> HttpRequest {
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    if !endpoint.api_key.is_empty() {
        headers.push((
            "authorization".to_string(),
            format!("Bearer {}", endpoint.api_key),
        ));
    }
    HttpRequest {
        url: format!(
            "{}/chat/completions",
            endpoint.base_url.trim_end_matches('/')
        ),
        headers,
        body: openai::request_body(request, &endpoint.model).to_string(),
    }
}

async fn next_chunk(body: &mut ByteStream) -> Option<Result<Vec<u8>, TransportError>> {
    std::future::poll_fn(|cx| body.as_mut().poll_next(cx)).await
}

fn transport_failure(endpoint: &Endpoint, error: TransportError, mid_body: bool) -> ProviderError {
    let provider = endpoint.provider.clone();
    match error {
        TransportError::Aborted => ProviderError::Aborted { provider },
        TransportError::Network(_) if mid_body => ProviderError::StreamCut { provider },
        TransportError::Network(detail) => ProviderError::Network {
            provider,
            detail: error::redact(&detail, &endpoint.api_key),
        },
    }
}

/// Starts a streamed chat on an OpenAI-compatible endpoint. Returns the handle that aborts it
/// and the future that drives it: every event goes to `on_event`, and the last one is always a
/// single [`StreamEvent::Done`] or [`StreamEvent::Error`]. The future owns what it needs, so the
/// browser can spawn it.
pub fn stream_openai_chat<F: FnMut(StreamEvent)>(
    transport: &dyn Transport,
    endpoint: Endpoint,
    request: &ChatRequest,
    on_event: F,
) -> (Box<dyn AbortHandle>, impl Future<Output = ()>) {
    let PendingResponse { response, abort } =
        transport.post(openai_http_request(&endpoint, request));
    let wants_json = request.json_schema.is_some();
    let drive = async move {
        let mut on_event = on_event;
        let response = match response.await {
            Ok(response) => response,
            Err(e) => return on_event(StreamEvent::Error(transport_failure(&endpoint, e, false))),
        };
        let HttpResponse {
            status,
            headers,
            mut body,
        } = response;
        if !(200..300).contains(&status) {
            let mut bytes = Vec::new();
            while let Some(Ok(chunk)) = next_chunk(&mut body).await {
                bytes.extend_from_slice(&chunk);
                if bytes.len() >= MAX_ERROR_BODY_BYTES {
                    break;
                }
            }
            let error = ProviderError::from_http(
                &endpoint.provider,
                &endpoint.model,
                status,
                &headers,
                &String::from_utf8_lossy(&bytes),
                &endpoint.api_key,
            );
            return on_event(StreamEvent::Error(error));
        }

        let mut sse = SseDecoder::new();
        let mut decoder = OpenAiChatDecoder::new(endpoint.provider.clone());
        if wants_json {
            decoder = decoder.expecting_json();
        }
        while let Some(chunk) = next_chunk(&mut body).await {
            let bytes = match chunk {
                Ok(bytes) => bytes,
                Err(e) => {
                    return on_event(StreamEvent::Error(transport_failure(&endpoint, e, true)))
                }
            };
            for frame in sse.push(&bytes) {
                decoder.decode(&frame).into_iter().for_each(&mut on_event);
                if decoder.is_done() {
                    return; // anything after the end is ignored; dropping the body cancels it
                }
            }
        }
        if let Some(frame) = sse.finish() {
            decoder.decode(&frame).into_iter().for_each(&mut on_event);
        }
        decoder.finish().into_iter().for_each(&mut on_event);
    };
    (abort, drive)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::pin::pin;
    use std::rc::Rc;
    use std::task::{Context, Poll, Waker};

    use super::*;
    use crate::fixtures::OPENAI_TRANSCRIPT;
    use crate::transport::memory::ScriptedTransport;

    const KEY: &str = "sk-test-9f8e7d6c5b4a39281706";

    /// The scripted transport never waits, so one poll finishes the future.
    fn run(future: impl Future<Output = ()>) {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        assert_eq!(future.as_mut().poll(&mut cx), Poll::Ready(()));
    }

    fn endpoint() -> Endpoint {
        Endpoint {
            provider: "OpenAI".into(),
            base_url: "https://api.openai.com/v1/".into(),
            api_key: KEY.into(),
            model: "gpt-4o-mini".into(),
        }
    }

    fn request() -> ChatRequest {
        ChatRequest::new("Teach.", vec![ChatMessage::user("What is light?")])
    }

    fn collect(transport: &ScriptedTransport) -> Vec<StreamEvent> {
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink = events.clone();
        let endpoint = endpoint();
        let (_abort, drive) = stream_openai_chat(transport, endpoint, &request(), move |e| {
            sink.borrow_mut().push(e)
        });
        run(drive);
        let out = events.borrow().clone();
        out
    }

    fn chunks_of(text: &str, size: usize) -> Vec<Vec<u8>> {
        text.as_bytes().chunks(size).map(<[u8]>::to_vec).collect()
    }

    #[test]
    fn streamed_reply_arrives_whole_whatever_the_chunk_size() {
        for size in [1, 7, 64, 4096] {
            let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, size));
            let events = collect(&transport);
            let text: String = events
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::TextDelta(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(text, "Plants turn light into sugar — 光合作用 🌱.");
            assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
            assert!(events.last().is_some_and(StreamEvent::is_terminal));
        }
    }

    #[test]
    fn request_goes_to_chat_completions_with_the_key_as_bearer() {
        let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, 100));
        collect(&transport);
        let sent = transport.requests.borrow()[0].clone();
        assert_eq!(sent.url, "https://api.openai.com/v1/chat/completions");
        assert!(sent
            .headers
            .contains(&("authorization".into(), format!("Bearer {KEY}"))));
        assert!(
            !format!("{sent:?}").contains(KEY),
            "Debug must hide the key"
        );
    }

    #[test]
    fn local_server_without_a_key_gets_no_authorization_header() {
        let mut local = endpoint();
        local.api_key.clear();
        let http = openai_http_request(&local, &request());
        assert!(!http.headers.iter().any(|(k, _)| k == "authorization"));
    }

    #[test]
    fn rejected_key_becomes_an_error_without_the_key() {
        let mut transport = ScriptedTransport::streaming(vec![format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","code":"invalid_api_key"}}}}"#
        )
        .into_bytes()]);
        transport.status = 401;
        let events = collect(&transport);
        assert_eq!(
            events,
            [StreamEvent::Error(ProviderError::KeyRejected {
                provider: "OpenAI".into(),
                status: 401
            })]
        );
    }

    #[test]
    fn refused_connection_is_a_network_error_that_mentions_cors() {
        let mut transport = ScriptedTransport::streaming(vec![]);
        transport.connect_error = Some(TransportError::Network(format!(
            "TypeError: Failed to fetch https://x/?key={KEY}"
        )));
        let events = collect(&transport);
        let [StreamEvent::Error(err @ ProviderError::Network { .. })] = events.as_slice() else {
            panic!("expected a network error, got {events:?}");
        };
        assert!(err.to_string().contains("CORS"));
        assert!(!err.to_string().contains(KEY));
    }

    #[test]
    fn connection_lost_mid_reply_is_a_cut_stream() {
        let mut transport = ScriptedTransport::streaming(chunks_of(&OPENAI_TRANSCRIPT[..400], 50));
        transport.ending = Some(TransportError::Network("connection reset".into()));
        let events = collect(&transport);
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Error(ProviderError::StreamCut {
                provider: "OpenAI".into()
            }))
        );
    }

    #[test]
    fn aborting_before_the_body_ends_with_aborted_only() {
        let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, 40));
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink = events.clone();
        let endpoint = endpoint();
        let (abort, drive) = stream_openai_chat(&transport, endpoint, &request(), move |e| {
            sink.borrow_mut().push(e)
        });
        abort.abort();
        run(drive);
        assert_eq!(
            events.borrow().as_slice(),
            [StreamEvent::Error(ProviderError::Aborted {
                provider: "OpenAI".into()
            })]
        );
    }

    #[test]
    fn aborting_mid_reply_keeps_what_arrived_and_ends_with_aborted() {
        let transport = ScriptedTransport::streaming(chunks_of(OPENAI_TRANSCRIPT, 40));
        // The learner presses stop as the first words appear (the handle sets this flag).
        let stop = transport.aborted.clone();
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink = events.clone();
        let endpoint = endpoint();
        let (_abort, drive) = stream_openai_chat(&transport, endpoint, &request(), move |e| {
            if matches!(e, StreamEvent::TextDelta(_)) {
                stop.set(true);
            }
            sink.borrow_mut().push(e);
        });
        run(drive);
        assert_eq!(
            events.borrow().as_slice(),
            [
                StreamEvent::TextDelta("Plants turn light ".into()),
                StreamEvent::Error(ProviderError::Aborted {
                    provider: "OpenAI".into()
                })
            ]
        );
    }
}
