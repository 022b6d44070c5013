//! One streamed chat on one endpoint: the HTTP request in the endpoint's dialect, with its
//! authentication and nothing else, and one attempt read to its end, its failures classified
//! into [`ProviderError`]s. Retries are [`crate::retry`]'s.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use crate::{
    anthropic, error, explain_network_failure, gemini, ollama, openai, preset, transport,
    AbortHandle, ByteStream, ChatRequest, ChatStream, Dialect, Endpoint, HttpRequest, HttpResponse,
    KeyNeed, Method, PendingResponse, ProviderError, Sleeper, StreamEvent, Transport,
    TransportError,
};

/// The most of an error body read before classifying it.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The headers that authenticate a request in this endpoint's dialect, and nothing else. No
/// key header when there is no key (local servers need none).
pub(crate) fn auth_headers(endpoint: &Endpoint) -> Vec<(String, String)> {
    let key = endpoint.key();
    let mut headers = Vec::new();
    match endpoint.dialect {
        Dialect::OpenAiChat if !key.is_empty() => {
            headers.push(("authorization".into(), format!("Bearer {key}")));
        }
        Dialect::Anthropic => {
            if !key.is_empty() {
                headers.push(("x-api-key".into(), key.to_string()));
            }
            headers.push(("anthropic-version".into(), "2023-06-01".into()));
            // Anthropic's opt-in for calls from a web page (CORS).
            headers.push((
                "anthropic-dangerous-direct-browser-access".into(),
                "true".into(),
            ));
        }
        Dialect::Gemini if !key.is_empty() => {
            // A header, not `?key=`, so the key never sits in a URL.
            headers.push(("x-goog-api-key".into(), key.to_string()));
        }
        _ => {}
    }
    headers
}

/// The HTTP request for a streamed chat in the endpoint's dialect.
pub fn http_request(endpoint: &Endpoint, request: &ChatRequest) -> HttpRequest {
    let base = endpoint.base();
    let model = endpoint.model.trim();
    let (url, body) = match endpoint.dialect {
        Dialect::OpenAiChat => (
            format!("{base}/chat/completions"),
            openai::vendor_body(request, &endpoint.provider, model),
        ),
        Dialect::Anthropic => (
            format!("{base}/messages"),
            anthropic::request_body(request, model),
        ),
        Dialect::Gemini => (
            format!(
                "{base}/models/{}:streamGenerateContent?alt=sse",
                gemini::model_path(model)
            ),
            gemini::request_body(request),
        ),
        Dialect::OllamaNative => (
            format!("{base}/api/chat"),
            ollama::request_body(request, model),
        ),
    };
    HttpRequest::json(Method::Post, url, auth_headers(endpoint), &body)
}

pub(crate) async fn next_chunk(body: &mut ByteStream) -> Option<Result<Vec<u8>, TransportError>> {
    std::future::poll_fn(|cx| body.as_mut().poll_next(cx)).await
}

/// `future`, or `None` if `limit` (a sleeper and milliseconds) runs out first.
pub(crate) async fn within<T>(
    future: impl Future<Output = T>,
    limit: Option<(&dyn Sleeper, u64)>,
) -> Option<T> {
    let Some((sleeper, ms)) = limit else {
        return Some(future.await);
    };
    let mut future = pin!(future);
    let mut timer = sleeper.sleep(ms);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(value) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(value));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

pub(crate) fn transport_failure(
    endpoint: &Endpoint,
    error: TransportError,
    mid_body: bool,
) -> ProviderError {
    let provider = endpoint.provider_name();
    match error {
        TransportError::Aborted => ProviderError::Aborted { provider },
        TransportError::Network(_) if mid_body => ProviderError::StreamCut { provider },
        TransportError::Network(detail) => ProviderError::Network {
            provider,
            detail: error::redact(&detail, endpoint.key()),
            fix: explain_network_failure(&endpoint.provider),
        },
    }
}

/// Classifies a non-success answer, knowing the endpoint: a keyless local server answering 403
/// is refusing this page's origin, not a key.
pub(crate) fn http_failure(
    endpoint: &Endpoint,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> ProviderError {
    let keyless = preset(&endpoint.provider).is_some_and(|p| p.key == KeyNeed::None);
    if status == 403 && keyless {
        return ProviderError::Network {
            provider: endpoint.provider_name(),
            detail: "403: this page's address is not allowed".into(),
            fix: explain_network_failure(&endpoint.provider),
        };
    }
    ProviderError::from_http(
        &endpoint.provider_name(),
        &endpoint.model,
        status,
        headers,
        body,
        endpoint.key(),
    )
}

/// How long an attempt waits: for the answer to start (headers and the first bytes of the
/// reply: a CPU reading a long prompt, or a server queueing the request behind others, is
/// silent until then), and then between two chunks.
#[derive(Clone, Copy)]
pub(crate) struct Patience<'a> {
    pub sleeper: &'a dyn Sleeper,
    pub first_byte_ms: u64,
    pub stall_ms: u64,
}

/// Runs one request's answer to its end. Every event but a final error goes to `on_event`; the
/// error is returned instead, so a caller may retry. `patience` bounds the waits. A
/// [`StreamEvent::Stopped`] before the error (the provider had said why the model stopped) goes
/// to `on_event` like any other event, whether the error came in the reply or from the
/// connection.
pub(crate) async fn drive_attempt(
    response: transport::ResponseFuture,
    endpoint: &Endpoint,
    wants_json: bool,
    patience: Option<Patience<'_>>,
    on_event: &mut dyn FnMut(StreamEvent),
) -> Option<ProviderError> {
    let stalled = |endpoint: &Endpoint, ms: u64| ProviderError::Stalled {
        provider: endpoint.provider_name(),
        seconds: ms.div_ceil(1000),
    };
    let first = patience.map(|p| (p.sleeper, p.first_byte_ms));
    let between = patience.map(|p| (p.sleeper, p.stall_ms));
    let response = match within(response, first).await {
        None => return Some(stalled(endpoint, first.map_or(0, |(_, ms)| ms))),
        Some(Err(e)) => return Some(transport_failure(endpoint, e, false)),
        Some(Ok(response)) => response,
    };
    let HttpResponse {
        status,
        headers,
        mut body,
    } = response;
    if !(200..300).contains(&status) {
        let mut bytes = Vec::new();
        while let Some(Some(Ok(chunk))) = within(next_chunk(&mut body), between).await {
            bytes.extend_from_slice(&chunk);
            if bytes.len() >= MAX_ERROR_BODY_BYTES {
                break;
            }
        }
        return Some(http_failure(
            endpoint,
            status,
            &headers,
            &String::from_utf8_lossy(&bytes),
        ));
    }
    let mut decoder = ChatStream::new(endpoint.dialect, endpoint.provider_name());
    if wants_json {
        decoder = decoder.expecting_json();
    }
    let mut deliver = |events: Vec<StreamEvent>| -> Option<Option<ProviderError>> {
        for event in events {
            match event {
                StreamEvent::Error(e) => return Some(Some(e)),
                end @ StreamEvent::Done { .. } => {
                    on_event(end);
                    return Some(None);
                }
                other => on_event(other),
            }
        }
        None
    };
    let mut started = false;
    loop {
        let limit = if started { between } else { first };
        let bytes = match within(next_chunk(&mut body), limit).await {
            None => {
                let error = stalled(endpoint, limit.map_or(0, |(_, ms)| ms));
                return deliver(decoder.fail(error)).flatten();
            }
            Some(None) => break,
            Some(Some(Err(e))) => {
                return deliver(decoder.fail(transport_failure(endpoint, e, true))).flatten()
            }
            Some(Some(Ok(bytes))) => bytes,
        };
        started |= !bytes.is_empty();
        // Anything after the end is ignored; dropping the body cancels it.
        if let Some(outcome) = deliver(decoder.push(&bytes)) {
            return outcome;
        }
    }
    deliver(decoder.finish()).flatten()
}

/// Starts a streamed chat on `endpoint`, in its dialect. Returns the handle that aborts it and
/// the future that drives it: every event goes to `on_event`, and the last one is always a
/// single [`StreamEvent::Done`] or [`StreamEvent::Error`] (after a [`StreamEvent::Stopped`] when
/// the provider had said why the model stopped). The future owns what it needs, so the browser
/// can spawn it.
pub fn stream_chat<F: FnMut(StreamEvent)>(
    transport: &dyn Transport,
    endpoint: Endpoint,
    request: &ChatRequest,
    on_event: F,
) -> (Box<dyn AbortHandle>, impl Future<Output = ()>) {
    let PendingResponse { response, abort } = transport.send(http_request(&endpoint, request));
    let wants_json = request.json_schema.is_some();
    let drive = async move {
        let mut on_event = on_event;
        if let Some(error) =
            drive_attempt(response, &endpoint, wants_json, None, &mut on_event).await
        {
            on_event(StreamEvent::Error(error));
        }
    };
    (abort, drive)
}
