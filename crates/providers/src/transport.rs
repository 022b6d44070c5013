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

#[derive(Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
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
    /// Starts `request` at once; the response arrives through the returned future.
    fn post(&self, request: HttpRequest) -> PendingResponse;
}

/// A transport that plays back a canned answer, for tests of everything above the network.
pub mod memory {
    use std::cell::{Cell, RefCell};
    use std::pin::Pin;
    use std::rc::Rc;
    use std::task::{Context, Poll};

    use futures_core::Stream;

    use super::*;

    /// Answers every request with `status`, `headers` and `chunks`, then `ending`.
    #[derive(Debug, Clone)]
    pub struct ScriptedTransport {
        pub status: u16,
        pub headers: Vec<(String, String)>,
        pub chunks: Vec<Vec<u8>>,
        /// How the body ends after the chunks: `None` for a clean close.
        pub ending: Option<TransportError>,
        /// Fail before any answer (e.g. a refused connection).
        pub connect_error: Option<TransportError>,
        /// Every request received, in order.
        pub requests: Rc<RefCell<Vec<HttpRequest>>>,
        /// Set by the abort handle of the latest request.
        pub aborted: Rc<Cell<bool>>,
    }

    impl ScriptedTransport {
        /// A 200 `text/event-stream` answer of these chunks.
        pub fn streaming(chunks: Vec<Vec<u8>>) -> ScriptedTransport {
            ScriptedTransport {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                chunks,
                ending: None,
                connect_error: None,
                requests: Rc::default(),
                aborted: Rc::default(),
            }
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
            self.over = true;
            Poll::Ready(self.ending.take().map(Err))
        }
    }

    impl Transport for ScriptedTransport {
        fn post(&self, request: HttpRequest) -> PendingResponse {
            self.requests.borrow_mut().push(request);
            self.aborted.set(false);
            let answer = match self.connect_error.clone() {
                Some(e) => Err(e),
                None => Ok(HttpResponse {
                    status: self.status,
                    headers: self.headers.clone(),
                    body: Box::pin(Chunks {
                        chunks: self.chunks.clone().into_iter(),
                        ending: self.ending.clone(),
                        aborted: self.aborted.clone(),
                        over: false,
                    }),
                }),
            };
            PendingResponse {
                response: Box::pin(std::future::ready(answer)),
                abort: Box::new(Flag(self.aborted.clone())),
            }
        }
    }
}
