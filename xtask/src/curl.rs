//! The providers' `Transport` over the `curl` program, for command-line tools (`eval-director`)
//! that talk to real providers without pulling a TLS stack into xtask. The key travels in a
//! header given to curl on its standard input (`--config -`), never on its command line, so it
//! does not show in the process list; the body goes through a temporary file removed afterwards.
//!
//! Reads block: the futures it returns are ready whenever polled, which suits [`block_on`].

use std::cell::RefCell;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::pin::{pin, Pin};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};

use aula_providers::{
    AbortHandle, HttpRequest, HttpResponse, PendingResponse, Sleeper, Transport, TransportError,
};
use futures_core::Stream;

pub struct CurlTransport;

/// Runs a future whose every poll does its work synchronously (this transport and [`ThreadSleeper`]).
pub fn block_on<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Timers for retry waits and stall limits: ready once their deadline has passed ([`block_on`]
/// polls again every few milliseconds). They must not block when created: the stall limit's
/// timer is made before the read it guards.
pub struct ThreadSleeper;

struct Deadline(std::time::Instant);

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if std::time::Instant::now() >= self.0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Sleeper for ThreadSleeper {
    fn sleep(&self, ms: u64) -> Pin<Box<dyn Future<Output = ()>>> {
        Box::pin(Deadline(
            std::time::Instant::now() + std::time::Duration::from_millis(ms),
        ))
    }
}

/// A value in curl's config syntax: double-quoted, with `\` and `"` escaped.
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

static BODIES: AtomicU64 = AtomicU64::new(0);

struct Running {
    child: Child,
    body_file: Option<std::path::PathBuf>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(path) = self.body_file.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

type Shared = Rc<RefCell<Option<Running>>>;

struct Kill(Shared);

impl AbortHandle for Kill {
    fn abort(&self) {
        if let Some(running) = self.0.borrow_mut().as_mut() {
            let _ = running.child.kill();
        }
    }
}

fn start(request: &HttpRequest) -> Result<(Running, ChildStdout), String> {
    let mut config = format!(
        "url = {}\nrequest = {}\n",
        quoted(&request.url),
        request.method.as_str()
    );
    for (name, value) in &request.headers {
        config.push_str(&format!(
            "header = {}\n",
            quoted(&format!("{name}: {value}"))
        ));
    }
    let body_file = if request.body.is_empty() {
        None
    } else {
        let path = std::env::temp_dir().join(format!(
            "aula-eval-{}-{}.json",
            std::process::id(),
            BODIES.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, &request.body)
            .map_err(|e| format!("writing the request body: {e}"))?;
        config.push_str(&format!(
            "data-binary = {}\n",
            quoted(&format!("@{}", path.display()))
        ));
        Some(path)
    };
    let mut child = Command::new("curl")
        .args([
            "--silent",
            "--show-error",
            "--no-buffer",
            "--include",
            "--config",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run curl ({e}); install it"))?;
    let mut stdin = child.stdin.take().ok_or("curl has no stdin")?;
    stdin
        .write_all(config.as_bytes())
        .map_err(|e| format!("talking to curl: {e}"))?;
    drop(stdin);
    let stdout = child.stdout.take().ok_or("curl has no stdout")?;
    Ok((Running { child, body_file }, stdout))
}

/// Reads the status line and headers; 1xx blocks (e.g. `100 Continue`) are skipped.
fn read_head(reader: &mut BufReader<ChildStdout>) -> Result<(u16, Vec<(String, String)>), String> {
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("no answer".into());
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP status line: {}", line.trim()))?;
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).map_err(|e| e.to_string())? == 0 {
                break;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        if !(100..200).contains(&status) {
            return Ok((status, headers));
        }
    }
}

fn stderr_of(shared: &Shared) -> String {
    let mut text = String::new();
    if let Some(running) = shared.borrow_mut().as_mut() {
        let _ = running.child.wait();
        if let Some(mut err) = running.child.stderr.take() {
            let _ = err.read_to_string(&mut text);
        }
    }
    text.trim().to_owned()
}

struct Body {
    reader: BufReader<ChildStdout>,
    shared: Shared,
    over: bool,
}

impl Stream for Body {
    type Item = Result<Vec<u8>, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.over {
            return Poll::Ready(None);
        }
        let mut buffer = vec![0u8; 8192];
        match self.reader.read(&mut buffer) {
            Ok(0) => {
                self.over = true;
                let failed = self
                    .shared
                    .borrow_mut()
                    .as_mut()
                    .and_then(|r| r.child.wait().ok())
                    .is_some_and(|status| !status.success());
                Poll::Ready(failed.then(|| Err(TransportError::Network(stderr_of(&self.shared)))))
            }
            Ok(n) => {
                buffer.truncate(n);
                Poll::Ready(Some(Ok(buffer)))
            }
            Err(e) => {
                self.over = true;
                Poll::Ready(Some(Err(TransportError::Network(e.to_string()))))
            }
        }
    }
}

impl Transport for CurlTransport {
    fn send(&self, request: HttpRequest) -> PendingResponse {
        let shared: Shared = Rc::new(RefCell::new(None));
        let abort = Box::new(Kill(shared.clone()));
        let response = match start(&request) {
            Err(message) => Err(TransportError::Network(message)),
            Ok((running, stdout)) => {
                *shared.borrow_mut() = Some(running);
                let mut reader = BufReader::new(stdout);
                match read_head(&mut reader) {
                    Ok((status, headers)) => Ok(HttpResponse {
                        status,
                        headers,
                        body: Box::pin(Body {
                            reader,
                            shared: shared.clone(),
                            over: false,
                        }),
                    }),
                    Err(_) => Err(TransportError::Network(stderr_of(&shared))),
                }
            }
        };
        PendingResponse {
            response: Box::pin(std::future::ready(response)),
            abort,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn config_values_are_quoted_and_escaped() {
        assert_eq!(quoted("a \"b\" \\c"), "\"a \\\"b\\\" \\\\c\"");
        assert_eq!(quoted("line\nbreak"), "\"line break\"");
    }
}
