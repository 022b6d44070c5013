//! mock-llm: a native test server that answers like an LLM provider, in the provider's real
//! wire format, from a script, with scripted faults. End-to-end tests point the browser app at
//! it; Rust tests start it in-process with [`start`]. Plain std networking, a thread per
//! connection (at most 256 at once), loopback only, a read timeout on every socket and bounded
//! requests (64 KiB head, 8 MiB body). It must never depend on an async runtime, and nothing in
//! Aula's browser build may depend on it.
//!
//! # Endpoints
//!
//! | Request | Dialect | Key |
//! |---|---|---|
//! | `POST /v1/chat/completions` (also `/chat/completions`) | OpenAI, SSE or JSON | `Authorization: Bearer` |
//! | `POST /v1/messages` | Anthropic, named SSE events or JSON | `x-api-key` (or `Authorization: Bearer`) + `anthropic-version` |
//! | `POST /v1beta/models/{model}:streamGenerateContent[?alt=sse]`, `:generateContent` | Gemini | `x-goog-api-key` or `?key=` |
//! | `POST /api/chat` | Ollama, NDJSON or JSON | none |
//! | `GET /v1/models` | OpenAI list, or Anthropic's when `anthropic-version` is sent | as above |
//! | `GET /v1beta/models`, `GET /api/tags` | Gemini, Ollama model lists | as above |
//! | `GET /props` | llama.cpp's: `default_generation_settings.n_ctx` (`n_ctx`, else 4096), `total_slots` (`slots`, else 1), `model_alias`, `model_path`, `build_info`, ... | none |
//! | `POST /api/show` `{"model": …}` | Ollama's: `model_info` with `"<architecture>.context_length"` (the architecture from the name: `qwen2`, `llama`, ...), `parameters` (`num_ctx` when `n_ctx` is set), `details`, ... | none |
//! | `POST /v1/audio/speech` | silent mp3 / opus (Ogg) / wav / flac / pcm by `response_format` | Bearer |
//! | `POST /v1/audio/transcriptions` (multipart) | `{"text": script.transcript}` | Bearer |
//! | `GET /health` | `ok` | none |
//! | `POST /__script` | replace the script (JSON body); resets fault counters | none |
//! | `GET /__requests` | every request so far: method, path, dialect, model, headers (keys redacted), body, tokens, `received_ms` / `started_ms` (a slot took it) / `answered_ms`, in ms since the server started | none |
//! | `POST /__reset` | forget the requests and fault counters | none |
//!
//! Every answer carries CORS headers and every `OPTIONS` gets a 204. The key `bad-key` is
//! rejected in each vendor's own error shape (any other key is accepted); a missing key too.
//! As the real Anthropic API does, a request with an `Origin` header needs
//! `anthropic-dangerous-direct-browser-access: true`, and `max_tokens` is required.
//!
//! # Scripts
//!
//! ```json
//! {
//!   "rules": [
//!     {"match": {"dialect": "anthropic", "system_contains": "teacher"},
//!      "reply": {"thinking": "The learner asks about light.", "text": "Plants catch light."}},
//!     {"match": {"last_message_contains": "outline"},
//!      "reply": {"json": {"scenes": [{"title": "Light"}]}}},
//!     {"match": {"model": "flaky-model"},
//!      "reply": {"text": "Recovered."},
//!      "faults": [{"times": 1, "http_error": {"status": 429, "retry_after_s": 1}}]}
//!   ],
//!   "default": {"text": "Hello from the default reply."},
//!   "faults": [],
//!   "chunk_words": 3,
//!   "chunk_delay_ms": 0,
//!   "model": "mock-model",
//!   "transcript": "What is photosynthesis?",
//!   "models": ["mock-model"],
//!   "slots": 1,
//!   "n_ctx": 8192,
//!   "prompt_tokens_per_s": 40.0
//! }
//! ```
//!
//! - `rules`: the first whose `match` holds decides. `match` may name `dialect` (`openai`,
//!   `anthropic`, `gemini`, `ollama`), an exact `model`, `last_message_contains` (the text of
//!   the last message) and `system_contains` (system prompt, system/developer messages or
//!   Gemini's `systemInstruction`); all given must hold.
//! - `reply`: `{"text": …}`, `{"json": VALUE}` (sent compact, as text), optionally with
//!   `"thinking": …` (streamed first in the dialect's thinking field) and `"stop_reason":
//!   "max_tokens"` (default `end_turn`). A rule without a reply takes the default one.
//! - `default`: the reply when no rule gives one (built-in text when absent). The older
//!   `replies: [...]` list still works: taken in order by chat request number, the last
//!   repeating, ahead of `default`; `reasoning` is accepted for `thinking`.
//! - `faults`, on a rule (then they replace the top-level ones for that rule's requests) or at
//!   the top: a list of fault sets; each set applies to the next `times` requests of its scope
//!   (absent = all), then the next set takes over, then none: `[{"times": 1, "http_error":
//!   {"status": 429}}]` is "429 once, then succeed". A set combines any of:
//!   `http_error {status, retry_after_s?, retry_after_ms?, message?, body?}` (a vendor-shaped
//!   error unless `body` replaces it), `cut_after_bytes` (close after that many body bytes),
//!   `cut_after_chunks` (close before that content chunk), `stall_ms` (pause after the first
//!   content chunk, or after `stall_after_bytes`), `malformed_frame: true` (one broken frame
//!   after the first content chunk), `drip_tokens_per_s`, `ttft_ms` (before the first content
//!   chunk), `stream_error {message, after_chunks}` (the dialect's in-stream error, then the
//!   end), and `request: N` (only chat request N, counted from 1 across dialects). The older
//!   `{"type": "http_error" | "cut_stream" | "stream_error", ...}` entries still load.
//! - `chunk_words`: words per streamed chunk (a CJK character or 16 letters of a long word
//!   count as one); `chunk_delay_ms`: a pause before every streamed frame.
//! - `slots`: at most this many chat requests (all dialects together) are served at once; the
//!   others wait their turn in arrival order, and as llama.cpp does, nothing of a waiting
//!   request's answer is sent, not even its status line, until it is served (llama.cpp sends
//!   its headers with the first token). A client that hangs up while waiting leaves the line.
//!   Absent: no limit.
//! - `n_ctx`: the context of a slot, in estimated tokens. A prompt of `n_ctx` tokens or more is
//!   refused, once a slot takes it and before any work, with a 400: llama.cpp's
//!   `{"error":{"code":400,"message":"request (N tokens) exceeds the available context size
//!   (M tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":N,
//!   "n_ctx":M}}` for OpenAI, Ollama's `{"error": "<that JSON>"}` (as it answers with
//!   `"truncate": false`), Anthropic's "prompt is too long" and Gemini's `INVALID_ARGUMENT`.
//!   Ollama requests that set `options.num_ctx` get that context instead, as Ollama loads the
//!   model with it. A reply is cut where the context is full (`n_ctx` minus the prompt).
//! - Every reply is cut at the request's own limit too: `max_completion_tokens` or
//!   `max_tokens` (OpenAI), `max_tokens` (Anthropic), `generationConfig.maxOutputTokens`
//!   (Gemini), `options.num_predict` (Ollama; negative = none). A cut reply (thinking first,
//!   then text, counted with the estimate below) ends with the dialect's length stop:
//!   `finish_reason: "length"`, `stop_reason: "max_tokens"`, `finishReason: "MAX_TOKENS"`,
//!   `done_reason: "length"`.
//! - `prompt_tokens_per_s`: the prompt is read at this speed before anything is sent (a CPU's
//!   prompt processing), so the status line, headers and first chunk wait `prompt tokens / R`
//!   seconds; the fault `drip_tokens_per_s` is then the generation speed (a whole, unstreamed
//!   answer waits for all its tokens at that speed), and `ttft_ms` still comes after the
//!   headers. With `"slots": 1`, `"prompt_tokens_per_s": 40` and `"faults":
//!   [{"drip_tokens_per_s": 8}]` the mock answers like a small model on a 2-core CPU.
//!
//! Token counts (usage in replies and in `/__requests`) are an estimate: one token per CJK
//! character plus one per four other characters (spaces included), rounded up, summed over the
//! system prompt and each message; output counts thinking and text.
//!
//! Streams use chunked transfer encoding, so a cut leaves the body unterminated, as a dropped
//! connection to a real vendor does.

pub mod anthropic;
pub mod audio;
pub mod gemini;
pub mod http;
pub mod llamacpp;
pub mod ollama;
pub mod openai;
pub mod script;
pub mod slots;
pub mod stream;

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

pub use script::{Dialect, FaultSet, HttpError, Reply, Script, ScriptError, StreamError};

use http::{hung_up, write_head, write_response, ChunkedBody, MultipartValue, Request};
use script::{estimate_tokens, time_for, Prompt};
use slots::Slots;
use stream::{emit, Frame, Misfits, Sink, Turn};

/// The key tests use to get a 401.
pub const REJECTED_KEY: &str = "bad-key";

const MAX_CONNECTIONS: usize = 256;
const MAX_LOGGED_REQUESTS: usize = 2_000;
const READ_TIMEOUT: Duration = Duration::from_secs(10);
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// One request as `/__requests` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// The query string with any `key` redacted.
    pub query: String,
    pub dialect: Option<&'static str>,
    pub model: Option<String>,
    pub headers: Vec<(String, String)>,
    /// The JSON body; multipart fields as an object; `null` when empty or not JSON.
    pub body: Value,
    pub input_tokens: usize,
    pub output_tokens: usize,
    /// The index of the rule that matched.
    pub rule: Option<usize>,
    /// The status the mock decided to answer with.
    pub status: u16,
    /// When the request arrived, in ms since the server started.
    pub received_ms: u64,
    /// When a slot took the chat request and its serving began (after any wait for a slot),
    /// in ms since the server started; `None` until then and for other requests.
    pub started_ms: Option<u64>,
    /// When a chat answer was fully written (or the connection dropped), in ms since the server
    /// started; `None` until then and for other requests.
    pub answered_ms: Option<u64>,
    /// The chat request number (from 1), for chat requests.
    pub chat_number: Option<usize>,
    /// Tells entries apart even when `/__reset` restarts the chat numbers.
    #[serde(skip)]
    pub(crate) id: u64,
}

struct State {
    started: Instant,
    script: Mutex<Script>,
    slots: Slots,
    /// Numbers the logged requests, never reset.
    next_id: AtomicU64,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Requests seen per fault scope: a rule with its own faults, or the script (`None`).
    scope_hits: Mutex<HashMap<Option<usize>, usize>>,
    chat_requests: AtomicUsize,
    connections: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking connection thread must not take the server down with it.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl State {
    fn since_start(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Changes the logged request `id`, if it is still in the log.
    fn update(&self, id: u64, change: impl FnOnce(&mut RecordedRequest)) {
        if let Some(entry) = lock(&self.requests).iter_mut().rev().find(|e| e.id == id) {
            change(entry);
        }
    }

    /// Marks the logged request `id` as being served from now.
    fn started(&self, id: u64) {
        let now = self.since_start();
        self.update(id, |entry| entry.started_ms = Some(now));
    }

    /// Marks the logged request `id` as answered now.
    fn answered(&self, id: u64) {
        let now = self.since_start();
        self.update(id, |entry| entry.answered_ms = Some(now));
    }

    /// Logs a request as arrived now; its id, for later updates.
    fn record(&self, mut entry: RecordedRequest) -> u64 {
        entry.received_ms = self.since_start();
        entry.id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let id = entry.id;
        let mut requests = lock(&self.requests);
        if requests.len() >= MAX_LOGGED_REQUESTS {
            requests.remove(0);
        }
        requests.push(entry);
        id
    }

    fn set_script(&self, script: Script) {
        let slots = script.slots;
        *lock(&self.script) = script;
        lock(&self.scope_hits).clear();
        self.slots.set_limit(slots);
    }

    fn reset(&self) {
        lock(&self.requests).clear();
        lock(&self.scope_hits).clear();
        self.chat_requests.store(0, Ordering::SeqCst);
    }
}

/// A running server; dropping it stops it.
pub struct MockServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    state: Arc<State>,
    accept_loop: Option<JoinHandle<()>>,
}

impl MockServer {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, for Anthropic (`/v1/messages`), Gemini (`/v1beta/...`) and
    /// Ollama (`/api/chat`) clients.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL to configure as an OpenAI-compatible provider.
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// How many chat requests (any dialect) have been answered or started.
    pub fn chat_requests(&self) -> usize {
        self.state.chat_requests.load(Ordering::SeqCst)
    }

    /// Every request received so far (what `GET /__requests` returns).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state.requests).clone()
    }

    /// Replaces the script (what `POST /__script` does).
    pub fn set_script(&self, script: Script) {
        self.state.set_script(script);
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
    let state = Arc::new(State {
        started: Instant::now(),
        slots: Slots::new(script.slots),
        next_id: AtomicU64::new(0),
        script: Mutex::new(script),
        requests: Mutex::new(Vec::new()),
        scope_hits: Mutex::new(HashMap::new()),
        chat_requests: AtomicUsize::new(0),
        connections: AtomicUsize::new(0),
    });
    let accept_loop = {
        let stop = stop.clone();
        let state = state.clone();
        thread::Builder::new()
            .name("mock-llm-accept".into())
            .spawn(move || {
                for connection in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = connection else { continue };
                    let state = state.clone();
                    let _ = thread::Builder::new()
                        .name("mock-llm-conn".into())
                        .spawn(move || serve(stream, &state));
                }
            })?
    };
    Ok(MockServer {
        addr,
        stop,
        state,
        accept_loop: Some(accept_loop),
    })
}

fn serve(mut stream: TcpStream, state: &State) {
    let open = state.connections.fetch_add(1, Ordering::SeqCst) + 1;
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = stream.set_nodelay(true);
    let outcome = if open > MAX_CONNECTIONS {
        write_json(
            &mut stream,
            503,
            &openai::error_body(
                "mock-llm has too many open connections.",
                "server_error",
                None,
            ),
            &[],
        )
    } else {
        match http::read_request(&mut stream) {
            Ok(None) => Ok(()),
            Ok(Some(request)) => route(&mut stream, &request, state),
            Err(e) => write_json(
                &mut stream,
                if e.to_string().contains("too large") {
                    413
                } else {
                    400
                },
                &openai::error_body(
                    &format!("mock-llm could not read the request: {e}"),
                    "invalid_request_error",
                    None,
                ),
                &[],
            ),
        }
    };
    // The client may hang up first (e.g. an aborted stream); nothing to do about it.
    let _ = outcome.and_then(|()| stream.flush());
    let _ = stream.shutdown(std::net::Shutdown::Both);
    state.connections.fetch_sub(1, Ordering::SeqCst);
}

fn write_json(
    out: &mut impl Write,
    status: u16,
    body: &Value,
    extra: &[(&str, String)],
) -> io::Result<()> {
    write_response(
        out,
        status,
        "application/json",
        body.to_string().as_bytes(),
        extra,
    )
}

/// Headers as logged: credentials replaced by `[redacted]`.
fn redacted_headers(request: &Request) -> Vec<(String, String)> {
    request
        .headers
        .iter()
        .map(|(k, v)| {
            let secret = ["authorization", "x-api-key", "x-goog-api-key", "cookie"]
                .iter()
                .any(|s| k.eq_ignore_ascii_case(s));
            (
                k.clone(),
                if secret {
                    "[redacted]".to_string()
                } else {
                    v.clone()
                },
            )
        })
        .collect()
}

fn redacted_query(query: &str) -> String {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            if p.starts_with("key=") {
                "key=[redacted]".to_string()
            } else {
                p.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// What the log holds for a request before the mock decides anything.
fn recorded(request: &Request, dialect: Option<Dialect>, status: u16) -> RecordedRequest {
    let body = if request.body.is_empty() {
        Value::Null
    } else if let Some(kind) = request
        .header("content-type")
        .filter(|t| t.starts_with("multipart/form-data"))
    {
        let fields: serde_json::Map<String, Value> = http::multipart_fields(kind, &request.body)
            .into_iter()
            .map(|(name, value)| {
                let value = match value {
                    MultipartValue::Text(text) => json!(text),
                    MultipartValue::File { filename, bytes } => {
                        json!({"filename": filename, "bytes": bytes})
                    }
                };
                (name, value)
            })
            .collect();
        Value::Object(fields)
    } else {
        serde_json::from_slice(&request.body).unwrap_or(Value::Null)
    };
    RecordedRequest {
        method: request.method.clone(),
        path: request.path.clone(),
        query: redacted_query(&request.query),
        dialect: dialect.map(Dialect::name),
        model: body["model"].as_str().map(str::to_string),
        headers: redacted_headers(request),
        body,
        input_tokens: 0,
        output_tokens: 0,
        rule: None,
        status,
        received_ms: 0,
        started_ms: None,
        answered_ms: None,
        chat_number: None,
        id: 0,
    }
}

/// The model and method of a Gemini path: `/v1beta/models/{model}:{method}`.
fn gemini_target(path: &str) -> Option<(&str, &str)> {
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    rest.split_once(':')
}

fn route(out: &mut TcpStream, request: &Request, state: &State) -> io::Result<()> {
    let method = request.method.as_str();
    let path = request.path.as_str();
    if method == "OPTIONS" {
        state.record(recorded(request, None, 204));
        return write_head(
            out,
            204,
            &[
                ("Access-Control-Max-Age", "600".to_string()),
                ("Content-Length", "0".to_string()),
            ],
        );
    }
    match (method, path) {
        ("GET", "/health") => return write_response(out, 200, "text/plain", b"ok", &[]),
        ("POST", "/__script") => {
            let text = String::from_utf8_lossy(&request.body);
            return match Script::from_json(&text, "POST /__script") {
                Ok(script) => {
                    state.set_script(script);
                    write_json(out, 200, &json!({"ok": true}), &[])
                }
                Err(e) => write_json(out, 400, &json!({"error": e.to_string()}), &[]),
            };
        }
        ("GET", "/__requests") => {
            let requests = lock(&state.requests).clone();
            return write_json(out, 200, &json!(requests), &[]);
        }
        ("POST", "/__reset") => {
            state.reset();
            return write_json(out, 200, &json!({"ok": true}), &[]);
        }
        // llama.cpp answers it without a key unless started with one.
        ("GET", "/props") => {
            state.record(recorded(request, None, 200));
            let props = {
                let script = lock(&state.script);
                llamacpp::props(
                    &script.model,
                    script.n_ctx.unwrap_or(llamacpp::DEFAULT_N_CTX),
                    script.slots.unwrap_or(1),
                )
            };
            return write_json(out, 200, &props, &[]);
        }
        _ => {}
    }

    let body: Value = if request.body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&request.body).unwrap_or(Value::Null)
    };
    let json_ok = !request.body.is_empty() && !body.is_null();
    let anthropic_list = request.header("anthropic-version").is_some();
    let dialect = match (method, path) {
        ("POST", "/v1/chat/completions" | "/chat/completions") => Some(Dialect::Openai),
        ("POST", "/v1/messages") => Some(Dialect::Anthropic),
        ("POST", p) if gemini_target(p).is_some() => Some(Dialect::Gemini),
        ("POST", "/api/chat") => Some(Dialect::Ollama),
        ("GET", "/v1/models") if anthropic_list => Some(Dialect::Anthropic),
        ("GET", "/v1/models") | ("POST", "/v1/audio/speech" | "/v1/audio/transcriptions") => {
            Some(Dialect::Openai)
        }
        ("GET", "/v1beta/models") => Some(Dialect::Gemini),
        ("GET", "/api/tags") | ("POST", "/api/show") => Some(Dialect::Ollama),
        _ => None,
    };
    let Some(dialect) = dialect else {
        state.record(recorded(request, None, 404));
        return write_json(
            out,
            404,
            &openai::error_body(
                &format!(
                    "mock-llm has no {method} {path}; see the crate docs for the endpoints it serves."
                ),
                "invalid_request_error",
                Some("unknown_url"),
            ),
            &[],
        );
    };
    let n_for_ids = state.chat_requests.load(Ordering::SeqCst) + 1;
    let script = lock(&state.script).clone();
    // A local llama.cpp server (scripted with slots) takes requests without a key.
    let keyless = script.slots.is_some() && dialect == Dialect::Openai;
    if let Some((status, error)) = auth_error(request, dialect, n_for_ids).filter(|_| !keyless) {
        state.record(recorded(request, Some(dialect), status));
        return write_json(out, status, &error, &[]);
    }
    let is_multipart = path == "/v1/audio/transcriptions";

    match (method, path) {
        ("GET", _) => {
            state.record(recorded(request, Some(dialect), 200));
            let ids = |defaults: &[&str]| {
                script
                    .models
                    .clone()
                    .unwrap_or_else(|| defaults.iter().map(|s| s.to_string()).collect())
            };
            let list = match dialect {
                Dialect::Openai => openai::models(&ids(openai::MODELS)),
                Dialect::Anthropic => anthropic::models(&ids(anthropic::MODELS)),
                Dialect::Gemini => gemini::models(&ids(gemini::MODELS)),
                Dialect::Ollama => ollama::tags(&ids(ollama::MODELS)),
            };
            write_json(out, 200, &list, &[])
        }
        ("POST", "/v1/audio/speech") => speech(out, request, state, &body),
        _ if is_multipart => transcription(out, request, state, &script),
        _ if !json_ok => {
            state.record(recorded(request, Some(dialect), 400));
            let message = "The request body is not valid JSON.";
            let error = match dialect {
                Dialect::Openai => openai::error_body(message, "invalid_request_error", None),
                Dialect::Anthropic => {
                    anthropic::error_body("invalid_request_error", message, n_for_ids)
                }
                Dialect::Gemini => gemini::error_body(400, message),
                Dialect::Ollama => ollama::error_body(message),
            };
            write_json(out, 400, &error, &[])
        }
        ("POST", "/api/show") => {
            let answer = match body["model"].as_str().or(body["name"].as_str()) {
                Some(model) => Ok(ollama::show(model, script.n_ctx)),
                None => Err(ollama::error_body("model is required")),
            };
            let (status, value) = match answer {
                Ok(value) => (200, value),
                Err(error) => (400, error),
            };
            state.record(recorded(request, Some(dialect), status));
            write_json(out, status, &value, &[])
        }
        _ => chat(out, request, state, &script, dialect, &body),
    }
}

/// The vendor's answer to a missing or rejected key, or to a missing required header.
fn auth_error(request: &Request, dialect: Dialect, n: usize) -> Option<(u16, Value)> {
    match dialect {
        Dialect::Openai => match request.header("authorization").map(str::trim) {
            None | Some("") | Some("Bearer") => Some((
                401,
                openai::error_body(
                    "You didn't provide an API key. You need to provide your API key in an \
                     Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                    "invalid_request_error",
                    None,
                ),
            )),
            Some(value) if value == format!("Bearer {REJECTED_KEY}") => Some((
                401,
                openai::error_body(
                    "Incorrect API key provided. You can find your API key at \
                     https://platform.openai.com/account/api-keys.",
                    "invalid_request_error",
                    Some("invalid_api_key"),
                ),
            )),
            Some(_) => None,
        },
        Dialect::Anthropic => {
            let error = |status, kind, message: &str| {
                Some((status, anthropic::error_body(kind, message, n)))
            };
            if request.header("origin").is_some()
                && request.header("anthropic-dangerous-direct-browser-access") != Some("true")
            {
                return error(
                    401,
                    "authentication_error",
                    "CORS requests must set 'anthropic-dangerous-direct-browser-access' header",
                );
            }
            // Current SDKs send the key as a bearer token; browsers and older clients as x-api-key.
            let bearer = request
                .header("authorization")
                .and_then(|v| v.trim().strip_prefix("Bearer "));
            match request.header("x-api-key").or(bearer).map(str::trim) {
                None | Some("") => {
                    return error(401, "authentication_error", "x-api-key header is required")
                }
                Some(REJECTED_KEY) => {
                    return error(401, "authentication_error", "invalid x-api-key")
                }
                Some(_) => {}
            }
            if request.header("anthropic-version").is_none() && request.method == "POST" {
                return error(
                    400,
                    "invalid_request_error",
                    "anthropic-version: header is required",
                );
            }
            None
        }
        Dialect::Gemini => {
            let key = request
                .header("x-goog-api-key")
                .map(str::to_string)
                .or_else(|| request.query_param("key"));
            match key.as_deref().map(str::trim) {
                None | Some("") => Some((403, gemini::missing_key_body())),
                Some(REJECTED_KEY) => Some((400, gemini::bad_key_body())),
                Some(_) => None,
            }
        }
        Dialect::Ollama => None,
    }
}

/// What a request that the vendor would refuse for its content gets instead of a reply.
fn invalid_request(dialect: Dialect, body: &Value, n: usize) -> Option<Value> {
    match dialect {
        Dialect::Openai if body["model"].as_str().is_none() => Some(openai::error_body(
            "you must provide a model parameter",
            "invalid_request_error",
            None,
        )),
        Dialect::Openai if !body["messages"].is_array() => Some(openai::error_body(
            "Missing required parameter: 'messages'.",
            "invalid_request_error",
            Some("missing_required_parameter"),
        )),
        Dialect::Anthropic if body["model"].as_str().is_none() => Some(anthropic::error_body(
            "invalid_request_error",
            "model: Field required",
            n,
        )),
        Dialect::Anthropic if body["max_tokens"].as_u64().is_none() => Some(anthropic::error_body(
            "invalid_request_error",
            "max_tokens: Field required",
            n,
        )),
        Dialect::Anthropic if !body["messages"].is_array() => Some(anthropic::error_body(
            "invalid_request_error",
            "messages: Field required",
            n,
        )),
        Dialect::Gemini if !body["contents"].is_array() => Some(gemini::error_body(
            400,
            "* GenerateContentRequest.contents: contents is not specified\n",
        )),
        Dialect::Ollama if body["model"].as_str().is_none() => {
            Some(ollama::error_body("model is required"))
        }
        _ => None,
    }
}

/// The reply's token limit the request sets, in its dialect's field.
fn max_tokens(dialect: Dialect, body: &Value) -> Option<usize> {
    match dialect {
        Dialect::Openai => openai::max_tokens(body),
        Dialect::Anthropic => anthropic::max_tokens(body),
        Dialect::Gemini => gemini::max_tokens(body),
        Dialect::Ollama => ollama::max_tokens(body),
    }
}

/// The dialect's refusal of a prompt of `prompt_tokens` that does not fit `n_ctx`.
fn context_refusal(dialect: Dialect, prompt_tokens: usize, n_ctx: usize, n: usize) -> String {
    match dialect {
        Dialect::Openai => llamacpp::context_error(prompt_tokens, n_ctx),
        Dialect::Anthropic => anthropic::prompt_too_long(prompt_tokens, n_ctx, n).to_string(),
        Dialect::Gemini => gemini::prompt_too_long(prompt_tokens, n_ctx).to_string(),
        Dialect::Ollama => ollama::prompt_too_long(prompt_tokens, n_ctx).to_string(),
    }
}

fn chat(
    out: &mut TcpStream,
    request: &Request,
    state: &State,
    script: &Script,
    dialect: Dialect,
    body: &Value,
) -> io::Result<()> {
    let gemini = gemini_target(&request.path);
    let prompt: Prompt = match (dialect, gemini) {
        (Dialect::Openai, _) => openai::prompt(body),
        (Dialect::Anthropic, _) => anthropic::prompt(body),
        (Dialect::Gemini, Some((model, _))) => gemini::prompt(model, body),
        (_, _) => ollama::prompt(body),
    };
    let input_tokens = prompt.input_tokens();
    let mut entry = recorded(request, Some(dialect), 200);
    entry.model = prompt.model.clone();
    entry.input_tokens = input_tokens;

    if let Some(error) = invalid_request(
        dialect,
        body,
        state.chat_requests.load(Ordering::SeqCst) + 1,
    ) {
        entry.status = 400;
        state.record(entry);
        return write_json(out, 400, &error, &[]);
    }

    let n = state.chat_requests.fetch_add(1, Ordering::SeqCst) + 1;
    entry.chat_number = Some(n);
    let rule = script.rule_for(dialect, &prompt);
    let scope = if script.rule_has_faults(rule) {
        rule
    } else {
        None
    };
    let nth = {
        let mut hits = lock(&state.scope_hits);
        let count = hits.entry(scope).or_insert(0);
        *count += 1;
        *count - 1
    };
    let decision = script.decide(rule, n, nth);
    let fault = decision.fault.clone();
    entry.rule = rule;

    if let Some(error) = fault.as_ref().and_then(|f| f.http_error.as_ref()) {
        entry.status = error.status;
        state.record(entry);
        return http_error(out, dialect, error, n);
    }

    // Ollama loads the model with the context the request asks for.
    let n_ctx = match dialect {
        Dialect::Ollama => ollama::num_ctx(body).or(script.n_ctx),
        _ => script.n_ctx,
    };
    // As llama.cpp checks it: a prompt that fills the whole context leaves no room either.
    let refusal = n_ctx
        .filter(|&n_ctx| input_tokens >= n_ctx)
        .map(|n_ctx| context_refusal(dialect, input_tokens, n_ctx, n));
    let room = n_ctx.map(|n_ctx| n_ctx.saturating_sub(input_tokens));
    let limit = [max_tokens(dialect, body), room]
        .into_iter()
        .flatten()
        .min();
    let reply = limit
        .and_then(|limit| decision.reply.cut_to(limit))
        .unwrap_or(decision.reply);
    let turn = Turn {
        n,
        model: prompt.model.clone().unwrap_or_else(|| script.model.clone()),
        reply,
        input_tokens,
        chunk_words: script.chunk_words,
    };
    if refusal.is_some() {
        entry.status = 400;
    } else {
        entry.output_tokens = turn.output_tokens();
    }
    let id = state.record(entry);

    // Nothing goes out, not even the status line, before a slot takes the request: llama.cpp
    // answers only once a slot has read the prompt and made the first token.
    let Some(_slot) = state.slots.take(|| hung_up(out)) else {
        state.answered(id);
        return Ok(());
    };
    state.started(id);
    let written = match refusal {
        Some(refusal) => write_response(out, 400, "application/json", refusal.as_bytes(), &[]),
        None => answer(out, request, script, dialect, body, &turn, fault.as_ref()),
    };
    state.answered(id);
    written
}

/// Waits `time`, or less when the client hangs up meanwhile; whether it is still there.
fn pause(client: &TcpStream, time: Duration) -> bool {
    let until = Instant::now() + time;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        thread::sleep(left.min(Duration::from_millis(100)));
        if hung_up(client) {
            return false;
        }
    }
}

/// Writes the reply of a chat request that has its slot.
fn answer(
    out: &mut TcpStream,
    request: &Request,
    script: &Script,
    dialect: Dialect,
    body: &Value,
    turn: &Turn,
    fault: Option<&FaultSet>,
) -> io::Result<()> {
    // A CPU reads the prompt before it makes the first token.
    if let Some(rate) = script.prompt_tokens_per_s {
        if !pause(out, time_for(turn.input_tokens, rate)) {
            return Ok(());
        }
    }
    let n = turn.n;
    let stream = match (dialect, gemini_target(&request.path)) {
        (Dialect::Gemini, Some((_, method))) => method == "streamGenerateContent",
        (Dialect::Ollama, _) => ollama::streams(body),
        _ => body["stream"] == json!(true),
    };
    let message = fault
        .and_then(|f| f.stream_error.as_ref())
        .map(|e| e.message.clone())
        .unwrap_or_else(script::default_error_message);
    let sse = request.query_param("alt").as_deref() == Some("sse");
    let delay = Duration::from_millis(script.chunk_delay_ms);
    let request_id = [("request-id", format!("req_mock{n:06}"))];

    if !stream {
        // A whole answer waits for its last token.
        if let Some(rate) = fault.and_then(|f| f.drip_tokens_per_s) {
            if !pause(out, time_for(turn.output_tokens(), rate)) {
                return Ok(());
            }
        }
        let value = match dialect {
            Dialect::Openai => openai::whole(turn),
            Dialect::Anthropic => anthropic::whole(turn),
            Dialect::Gemini => gemini::whole(turn),
            Dialect::Ollama => ollama::whole(turn),
        };
        let mut bytes = value.to_string().into_bytes();
        let mut fault = fault.cloned().unwrap_or_default();
        if fault.malformed_frame {
            bytes.truncate(bytes.len() / 2);
        }
        fault.malformed_frame = false;
        fault.stream_error = None;
        write_head(
            out,
            200,
            &[
                ("Content-Type", "application/json".to_string()),
                ("Content-Length", bytes.len().to_string()),
                request_id[0].clone(),
            ],
        )?;
        let misfits = Misfits {
            malformed: Vec::new(),
            error: Vec::new(),
        };
        let peer = out.try_clone()?;
        return emit(
            Sink::Plain(out),
            &[Frame::content(bytes, "")],
            &misfits,
            Some(&fault),
            Duration::ZERO,
            &|| !hung_up(&peer),
        );
    }

    let (content_type, frames, misfits) = match dialect {
        Dialect::Openai => (
            "text/event-stream; charset=utf-8",
            openai::frames(turn, openai::include_usage(body)),
            openai::misfits(&message),
        ),
        Dialect::Anthropic => (
            "text/event-stream; charset=utf-8",
            anthropic::frames(turn),
            anthropic::misfits(&message, n),
        ),
        Dialect::Gemini => (
            if sse {
                "text/event-stream"
            } else {
                "application/json; charset=UTF-8"
            },
            gemini::frames(turn, sse),
            gemini::misfits(&message, sse),
        ),
        Dialect::Ollama => (
            "application/x-ndjson",
            ollama::frames(turn),
            ollama::misfits(&message),
        ),
    };
    write_head(
        out,
        200,
        &[
            ("Content-Type", content_type.to_string()),
            ("Cache-Control", "no-cache".to_string()),
            ("Transfer-Encoding", "chunked".to_string()),
            request_id[0].clone(),
        ],
    )?;
    let peer = out.try_clone()?;
    emit(
        Sink::Chunked(ChunkedBody::new(out)),
        &frames,
        &misfits,
        fault,
        delay,
        &|| !hung_up(&peer),
    )
}

fn http_error(
    out: &mut impl Write,
    dialect: Dialect,
    error: &HttpError,
    n: usize,
) -> io::Result<()> {
    let mut extra = Vec::new();
    if let Some(s) = error.retry_after_s {
        extra.push(("Retry-After", s.to_string()));
    }
    if let Some(ms) = error.retry_after_ms {
        extra.push(("retry-after-ms", ms.to_string()));
    }
    let message = error
        .message
        .clone()
        .unwrap_or_else(script::default_error_message);
    match &error.body {
        Some(Value::String(text)) => {
            return write_response(out, error.status, "text/plain", text.as_bytes(), &extra)
        }
        Some(value) => return write_json(out, error.status, value, &extra),
        None => {}
    }
    let body = match dialect {
        Dialect::Openai => openai::status_error(error.status, &message),
        Dialect::Anthropic => {
            anthropic::error_body(anthropic::error_kind(error.status), &message, n)
        }
        Dialect::Gemini => gemini::error_body(error.status, &message),
        Dialect::Ollama => ollama::error_body(&message),
    };
    write_json(out, error.status, &body, &extra)
}

fn speech(out: &mut impl Write, request: &Request, state: &State, body: &Value) -> io::Result<()> {
    let mut entry = recorded(request, Some(Dialect::Openai), 200);
    let input = body["input"].as_str().unwrap_or_default();
    entry.input_tokens = estimate_tokens(input);
    let format = body["response_format"].as_str().unwrap_or("mp3");
    let refuse = |message: &str| openai::error_body(message, "invalid_request_error", None);
    let outcome = if input.is_empty() {
        Err(refuse("Missing required parameter: 'input'."))
    } else if body["voice"].as_str().is_none() {
        Err(refuse("Missing required parameter: 'voice'."))
    } else {
        audio::speech(format).ok_or_else(|| {
            refuse(&format!(
                "mock-llm does not synthesise '{format}'; use mp3, opus, wav, flac or pcm."
            ))
        })
    };
    match outcome {
        Ok((content_type, audio)) => {
            state.record(entry);
            write_response(out, 200, content_type, &audio, &[])
        }
        Err(error) => {
            entry.status = 400;
            state.record(entry);
            write_json(out, 400, &error, &[])
        }
    }
}

fn transcription(
    out: &mut impl Write,
    request: &Request,
    state: &State,
    script: &Script,
) -> io::Result<()> {
    let mut entry = recorded(request, Some(Dialect::Openai), 200);
    let has_file = entry.body["file"]["bytes"].is_u64();
    if !has_file {
        entry.status = 400;
        state.record(entry);
        return write_json(
            out,
            400,
            &openai::error_body(
                "Missing required parameter: 'file'.",
                "invalid_request_error",
                None,
            ),
            &[],
        );
    }
    entry.output_tokens = estimate_tokens(&script.transcript);
    let format = entry.body["response_format"]
        .as_str()
        .unwrap_or("json")
        .to_string();
    state.record(entry);
    match format.as_str() {
        "text" => write_response(
            out,
            200,
            "text/plain; charset=utf-8",
            format!("{}\n", script.transcript).as_bytes(),
            &[],
        ),
        "verbose_json" => write_json(
            out,
            200,
            &json!({"task": "transcribe", "language": "english", "duration": 1.0,
                    "text": script.transcript, "segments": []}),
            &[],
        ),
        _ => write_json(out, 200, &json!({"text": script.transcript}), &[]),
    }
}
