//! The Transport port: start a POST, get the status and headers, then the body as a stream of
//! byte chunks; abort at any time. The browser implements it over `fetch` with an
//! `AbortController` and the response's `ReadableStream`; tests use [`memory::ScriptedTransport`].
//!
//! Futures and streams here are not `Send`: in the browser they hold JavaScript values.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use futures_core::Stream;

/// Why bytes stopped coming.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The connection failed or was refused (in a browser this includes CORS refusals, which
    /// look the same from inside the page). The detail must not contain a key.
    Network(String),
    /// [`AbortHandle::abort`] was called.
    Aborted,
}

pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Vec<u8>, TransportError>>>>;
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<HttpResponse, TransportError>>>>;

/// The HTTP method of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    Get,
    #[default]
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// A request to send as it is: the transport adds no header of its own (extra headers break some
/// providers' CORS preflight). `body` is empty for a GET.
#[derive(Clone, PartialEq, Default)]
pub struct HttpRequest {
    pub method: Method,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A request with a JSON body; `content-type: application/json` is added unless given.
    pub fn json(
        method: Method,
        url: impl Into<String>,
        mut headers: Vec<(String, String)>,
        body: &serde_json::Value,
    ) -> HttpRequest {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            headers.insert(0, ("content-type".into(), "application/json".into()));
        }
        HttpRequest {
            method,
            url: url.into(),
            headers,
            body: body.to_string().into_bytes(),
        }
    }

    /// A GET without a body.
    pub fn get(url: impl Into<String>, headers: Vec<(String, String)>) -> HttpRequest {
        HttpRequest {
            method: Method::Get,
            url: url.into(),
            headers,
            body: Vec::new(),
        }
    }

    /// The value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Null` if it is not JSON), for tests and logs.
    pub fn json_body(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Headers whose values are credentials, never printed.
const SECRET_HEADERS: &[&str] = &["authorization", "x-api-key", "x-goog-api-key", "api-key"];

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let secret = SECRET_HEADERS.iter().any(|s| k.eq_ignore_ascii_case(s));
                (k.as_str(), if secret { "[redacted]" } else { v.as_str() })
            })
            .collect();
        let url = match self.url.split_once("key=") {
            Some((head, _)) => format!("{head}key=[redacted]"),
            None => self.url.clone(),
        };
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &url)
            .field("headers", &headers)
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: ByteStream,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Stops a request that is in flight; its stream then ends with [`TransportError::Aborted`].
pub trait AbortHandle {
    fn abort(&self);
}

/// A request that has been started.
pub struct PendingResponse {
    pub response: ResponseFuture,
    pub abort: Box<dyn AbortHandle>,
}

pub trait Transport {
    /// Starts `request` at once, with its own method (GET or POST); the response arrives
    /// through the returned future.
    fn send(&self, request: HttpRequest) -> PendingResponse;
}

/// A transport that plays back canned answers, for tests of everything above the network.
pub mod memory {
    use std::cell::{Cell, RefCell};
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::rc::Rc;
    use std::task::{Context, Poll};

    use futures_core::Stream;

    use super::*;

    /// Runs `future` to its end by polling it with a waker that does nothing: what only waits on
    /// a scripted transport (and on sleepers that end at once) finishes without a runtime. The
    /// one helper every crate's tests drive the core's async code with. Panics if the future
    /// still waits after many polls: something real was awaited.
    pub fn run_to_end<T>(future: impl std::future::Future<Output = T>) -> T {
        let mut future = std::pin::pin!(future);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        for _ in 0..100_000 {
            if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
                return value;
            }
        }
        panic!("the future never finished: it waits on something no test answers");
    }

    /// One canned answer.
    #[derive(Debug, Clone)]
    pub struct ScriptedAnswer {
        pub status: u16,
        pub headers: Vec<(String, String)>,
        pub chunks: Vec<Vec<u8>>,
        /// How the body ends after the chunks: `None` for a clean close.
        pub ending: Option<TransportError>,
        /// Fail before any answer (e.g. a refused connection).
        pub connect_error: Option<TransportError>,
        /// After the chunks the body neither ends nor sends anything (a stalled server).
        pub hangs: bool,
    }

    impl ScriptedAnswer {
        /// A 200 `text/event-stream` answer of these chunks.
        pub fn streaming(chunks: Vec<Vec<u8>>) -> ScriptedAnswer {
            ScriptedAnswer {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                chunks,
                ending: None,
                connect_error: None,
                hangs: false,
            }
        }

        /// A non-streamed answer: `status`, these headers, and `body` in one chunk.
        pub fn status(status: u16, headers: Vec<(String, String)>, body: &str) -> ScriptedAnswer {
            ScriptedAnswer {
                status,
                headers,
                chunks: vec![body.as_bytes().to_vec()],
                ending: None,
                connect_error: None,
                hangs: false,
            }
        }
    }

    /// Answers requests with the `queued` answers first, one each, then every further request
    /// with `then`.
    #[derive(Debug, Clone)]
    pub struct ScriptedTransport {
        /// The answer to every request once `queued` is empty.
        pub then: ScriptedAnswer,
        /// Answers played before the one above, in order.
        pub queued: Rc<RefCell<VecDeque<ScriptedAnswer>>>,
        /// Every request received, in order.
        pub requests: Rc<RefCell<Vec<HttpRequest>>>,
        /// Set by the abort handle of the latest request.
        pub aborted: Rc<Cell<bool>>,
    }

    impl ScriptedTransport {
        /// A 200 `text/event-stream` answer of these chunks.
        pub fn streaming(chunks: Vec<Vec<u8>>) -> ScriptedTransport {
            ScriptedTransport::answering(Vec::new(), ScriptedAnswer::streaming(chunks))
        }

        /// Plays `first` in order, then answers `then` forever.
        pub fn answering(first: Vec<ScriptedAnswer>, then: ScriptedAnswer) -> ScriptedTransport {
            ScriptedTransport {
                then,
                queued: Rc::new(RefCell::new(first.into())),
                requests: Rc::default(),
                aborted: Rc::default(),
            }
        }

        fn next_answer(&self) -> ScriptedAnswer {
            self.queued
                .borrow_mut()
                .pop_front()
                .unwrap_or_else(|| self.then.clone())
        }
    }

    struct Flag(Rc<Cell<bool>>);

    impl AbortHandle for Flag {
        fn abort(&self) {
            self.0.set(true);
        }
    }

    struct Chunks {
        chunks: std::vec::IntoIter<Vec<u8>>,
        ending: Option<TransportError>,
        hangs: bool,
        aborted: Rc<Cell<bool>>,
        over: bool,
    }

    impl Stream for Chunks {
        type Item = Result<Vec<u8>, TransportError>;

        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            if self.over {
                return Poll::Ready(None);
            }
            if self.aborted.get() {
                self.over = true;
                return Poll::Ready(Some(Err(TransportError::Aborted)));
            }
            if let Some(chunk) = self.chunks.next() {
                return Poll::Ready(Some(Ok(chunk)));
            }
            if self.hangs {
                return Poll::Pending; // never woken: the stall timeout must end it
            }
            self.over = true;
            Poll::Ready(self.ending.take().map(Err))
        }
    }

    impl Transport for ScriptedTransport {
        fn send(&self, request: HttpRequest) -> PendingResponse {
            self.requests.borrow_mut().push(request);
            self.aborted.set(false);
            let answer = self.next_answer();
            let response = match answer.connect_error {
                Some(e) => Err(e),
                None => Ok(HttpResponse {
                    status: answer.status,
                    headers: answer.headers,
                    body: Box::pin(Chunks {
                        chunks: answer.chunks.into_iter(),
                        ending: answer.ending,
                        hangs: answer.hangs,
                        aborted: self.aborted.clone(),
                        over: false,
                    }),
                }),
            };
            PendingResponse {
                response: Box::pin(std::future::ready(response)),
                abort: Box::new(Flag(self.aborted.clone())),
            }
        }
    }
}
