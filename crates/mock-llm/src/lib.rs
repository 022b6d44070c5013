//! mock-llm: a native test server that answers like an LLM provider, in the provider's real
//! wire format, from a script (see [`script`]), with scripted faults. End-to-end tests point the
//! browser app at it; Rust tests start it in-process with [`start`].
//!
//! It speaks OpenAI chat completions today (`POST /v1/chat/completions`, streamed or not), plus
//! `GET /health` and CORS preflights. Other dialects are added as modules beside [`openai`],
//! routed by path. Plain std networking, a thread per connection, loopback only: it must never
//! depend on an async runtime, and nothing in Aula's browser build may depend on it.

pub mod http;
pub mod openai;
pub mod script;

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

pub use script::{Fault, Reply, Script, ScriptError};

/// The key tests use to get a 401.
pub const REJECTED_KEY: &str = "bad-key";

/// A running server; dropping it stops it.
pub struct MockServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    chat_requests: Arc<AtomicUsize>,
    accept_loop: Option<JoinHandle<()>>,
}

impl MockServer {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL to configure as an OpenAI-compatible provider.
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// How many chat requests have been answered or started.
    pub fn chat_requests(&self) -> usize {
        self.chat_requests.load(Ordering::SeqCst)
    }

    /// Blocks until the server stops (for the binary).
    pub fn wait(mut self) {
        if let Some(handle) = self.accept_loop.take() {
            let _ = handle.join();
        }
    }

    pub fn shutdown(&mut self) {
        if let Some(handle) = self.accept_loop.take() {
            self.stop.store(true, Ordering::SeqCst);
            // Wake the blocking accept; the loop then sees the flag.
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
            let _ = handle.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts the server on 127.0.0.1:`port` (0 picks a free port) and returns once it listens.
pub fn start(port: u16, script: Script) -> io::Result<MockServer> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let chat_requests = Arc::new(AtomicUsize::new(0));
    let script = Arc::new(script);
    let accept_loop = {
        let stop = stop.clone();
        let chat_requests = chat_requests.clone();
        thread::Builder::new()
            .name("mock-llm-accept".into())
            .spawn(move || {
                for connection in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = connection else { continue };
                    let script = script.clone();
                    let chat_requests = chat_requests.clone();
                    let _ = thread::Builder::new()
                        .name("mock-llm-conn".into())
                        .spawn(move || serve(stream, &script, &chat_requests));
                }
            })?
    };
    Ok(MockServer {
        addr,
        stop,
        chat_requests,
        accept_loop: Some(accept_loop),
    })
}

fn serve(mut stream: TcpStream, script: &Script, chat_requests: &AtomicUsize) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_nodelay(true);
    let outcome = match http::read_request(&mut stream) {
        Ok(None) => Ok(()),
        Ok(Some(request)) => route(&mut stream, &request, script, chat_requests),
        Err(e) => openai::write_error(
            &mut stream,
            400,
            &format!("mock-llm could not read the request: {e}"),
            "invalid_request_error",
            None,
            &[],
        ),
    };
    // The client may hang up first (e.g. an aborted stream); nothing to do about it.
    let _ = outcome.and_then(|()| stream.flush());
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn route(
    out: &mut TcpStream,
    request: &http::Request,
    script: &Script,
    chat_requests: &AtomicUsize,
) -> io::Result<()> {
    match (request.method.as_str(), request.path.as_str()) {
        ("OPTIONS", _) => {
            http::write_head(out, 204, &[("Access-Control-Max-Age", "600".to_string())])
        }
        ("GET", "/health") => http::write_response(out, 200, "text/plain", b"ok", &[]),
        ("POST", "/v1/chat/completions" | "/chat/completions") => {
            let bearer = request.header("authorization").map(str::trim);
            match bearer {
                None => {
                    return openai::write_error(
                        out,
                        401,
                        "You didn't provide an API key. Send it as \"Authorization: Bearer KEY\".",
                        "invalid_request_error",
                        None,
                        &[],
                    )
                }
                Some(value) if value == format!("Bearer {REJECTED_KEY}") => {
                    return openai::write_error(
                        out,
                        401,
                        "Incorrect API key provided.",
                        "invalid_request_error",
                        Some("invalid_api_key"),
                        &[],
                    )
                }
                Some(_) => {}
            }
            let body: serde_json::Value = match serde_json::from_slice(&request.body) {
                Ok(body) => body,
                Err(e) => {
                    return openai::write_error(
                        out,
                        400,
                        &format!("The request body is not valid JSON: {e}"),
                        "invalid_request_error",
                        None,
                        &[],
                    )
                }
            };
            let n = chat_requests.fetch_add(1, Ordering::SeqCst) + 1;
            openai::answer(out, &body, script, n)
        }
        _ => openai::write_error(
            out,
            404,
            &format!(
                "mock-llm has no {} {}; it serves POST /v1/chat/completions and GET /health.",
                request.method, request.path
            ),
            "invalid_request_error",
            Some("unknown_url"),
            &[],
        ),
    }
}
