//! Sending a reply: each dialect turns a [`Turn`] into [`Frame`]s, and [`emit`] writes them,
//! applying the scripted pacing and stream faults the same way for every dialect.

use std::io::{self, Write};
use std::thread;
use std::time::{Duration, Instant};

use crate::http::ChunkedBody;
use crate::script::{chunks, estimate_tokens, time_for, FaultSet, Reply};

/// Where a frame sits in the stream; faults count content frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// Before the first token (OpenAI's role chunk, Anthropic's `message_start`, ...).
    Preamble,
    /// Carries a piece of thinking or text.
    Content,
    /// After the last token (finish reason, usage, end markers).
    Closing,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub bytes: Vec<u8>,
    pub kind: FrameKind,
    /// The estimated tokens this frame carries, for `drip_tokens_per_s`.
    pub tokens: usize,
}

impl Frame {
    pub fn preamble(bytes: impl Into<Vec<u8>>) -> Frame {
        Frame {
            bytes: bytes.into(),
            kind: FrameKind::Preamble,
            tokens: 0,
        }
    }

    pub fn content(bytes: impl Into<Vec<u8>>, piece: &str) -> Frame {
        Frame {
            bytes: bytes.into(),
            kind: FrameKind::Content,
            tokens: estimate_tokens(piece),
        }
    }

    pub fn closing(bytes: impl Into<Vec<u8>>) -> Frame {
        Frame {
            bytes: bytes.into(),
            kind: FrameKind::Closing,
            tokens: 0,
        }
    }
}

/// One chat answer to render, whatever the dialect.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The chat request number, for ids.
    pub n: usize,
    pub model: String,
    pub reply: Reply,
    pub input_tokens: usize,
    pub chunk_words: usize,
}

impl Turn {
    pub fn text(&self) -> String {
        self.reply.body()
    }

    pub fn thinking(&self) -> Option<&str> {
        self.reply.thinking.as_deref().filter(|t| !t.is_empty())
    }

    pub fn text_chunks(&self) -> Vec<String> {
        chunks(&self.text(), self.chunk_words)
    }

    pub fn thinking_chunks(&self) -> Vec<String> {
        self.thinking()
            .map(|t| chunks(t, self.chunk_words))
            .unwrap_or_default()
    }

    pub fn thinking_tokens(&self) -> usize {
        self.thinking().map_or(0, estimate_tokens)
    }

    pub fn output_tokens(&self) -> usize {
        self.reply.output_tokens()
    }
}

/// What a dialect sends for the `malformed_frame` and `stream_error` faults.
pub struct Misfits {
    pub malformed: Vec<u8>,
    pub error: Vec<u8>,
}

/// The body writer: chunked for streams, plain for whole bodies with a `Content-Length`.
pub enum Sink<'a, W: Write> {
    Chunked(ChunkedBody<'a, W>),
    Plain(&'a mut W),
}

impl<W: Write> Sink<'_, W> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Sink::Chunked(body) => body.send(bytes),
            Sink::Plain(out) => {
                out.write_all(bytes)?;
                out.flush()
            }
        }
    }

    fn finish(self) -> io::Result<()> {
        match self {
            Sink::Chunked(body) => body.finish(),
            Sink::Plain(out) => out.flush(),
        }
    }
}

/// Counts body bytes, cutting or stalling at the scripted byte offsets.
struct Meter {
    sent: usize,
    cut_at: Option<usize>,
    stall: Option<(usize, Duration)>,
}

impl Meter {
    /// Sends what it may of `bytes`; `false` once the cut point is reached.
    fn send<W: Write>(&mut self, sink: &mut Sink<W>, mut bytes: &[u8]) -> io::Result<bool> {
        loop {
            if let Some((at, pause)) = self.stall {
                if self.sent >= at {
                    thread::sleep(pause);
                    self.stall = None;
                }
            }
            if self.cut_at.is_some_and(|at| self.sent >= at) {
                return Ok(false);
            }
            if bytes.is_empty() {
                return Ok(true);
            }
            let mut take = bytes.len();
            if let Some((at, _)) = self.stall {
                take = take.min(at - self.sent);
            }
            if let Some(at) = self.cut_at {
                take = take.min(at - self.sent);
            }
            sink.send(&bytes[..take])?;
            self.sent += take;
            bytes = &bytes[take..];
        }
    }
}

/// Writes `frames`, applying `fault`'s stream faults and the script's per-frame delay. A cut
/// returns without finishing the body, so the client sees the connection drop mid-response.
/// `present` tells whether the client is still there: one that hangs up during the wait for
/// the first token frees its slot at once, as llama.cpp cancels a closed connection's task.
pub fn emit<W: Write>(
    mut sink: Sink<W>,
    frames: &[Frame],
    misfits: &Misfits,
    fault: Option<&FaultSet>,
    frame_delay: Duration,
    present: &dyn Fn() -> bool,
) -> io::Result<()> {
    let none = FaultSet::default();
    let fault = fault.unwrap_or(&none);
    let stall_ms = fault.stall_ms.map(Duration::from_millis);
    let mut meter = Meter {
        sent: 0,
        cut_at: fault.cut_after_bytes,
        stall: match (stall_ms, fault.stall_after_bytes) {
            (Some(pause), Some(at)) => Some((at, pause)),
            _ => None,
        },
    };
    let mut content = 0;
    let mut closing = false;
    for frame in frames {
        let strike_now = match frame.kind {
            FrameKind::Content => {
                if content == 0 {
                    if let Some(ms) = fault.ttft_ms {
                        let until = Instant::now() + Duration::from_millis(ms);
                        loop {
                            let left = until.saturating_duration_since(Instant::now());
                            if left.is_zero() {
                                break;
                            }
                            thread::sleep(left.min(Duration::from_millis(100)));
                            if !present() {
                                return Ok(());
                            }
                        }
                    }
                } else if let Some(rate) = fault.drip_tokens_per_s {
                    thread::sleep(time_for(frame.tokens.max(1), rate));
                }
                Some(content)
            }
            // A fault placed at or past the last chunk still strikes before the stream ends.
            FrameKind::Closing if !closing => {
                closing = true;
                Some(usize::MAX)
            }
            _ => None,
        };
        if let Some(at) = strike_now {
            if fault.cut_after_chunks.is_some_and(|n| n <= at) {
                return Ok(());
            }
            if fault
                .stream_error
                .as_ref()
                .is_some_and(|e| e.after_chunks <= at)
            {
                if meter.send(&mut sink, &misfits.error)? {
                    sink.finish()?;
                }
                return Ok(());
            }
        }
        if !frame_delay.is_zero() {
            thread::sleep(frame_delay);
        }
        if !meter.send(&mut sink, &frame.bytes)? {
            return Ok(());
        }
        if frame.kind == FrameKind::Content {
            content += 1;
            if content == 1 {
                if let (Some(pause), None) = (stall_ms, fault.stall_after_bytes) {
                    thread::sleep(pause);
                }
                if fault.malformed_frame && !meter.send(&mut sink, &misfits.malformed)? {
                    return Ok(());
                }
            }
        }
    }
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::StreamError;

    fn frames() -> Vec<Frame> {
        vec![
            Frame::preamble("P|"),
            Frame::content("a|", "a"),
            Frame::content("b|", "b"),
            Frame::content("c|", "c"),
            Frame::closing("Z|"),
        ]
    }

    fn run(fault: FaultSet) -> String {
        let misfits = Misfits {
            malformed: b"M|".to_vec(),
            error: b"E|".to_vec(),
        };
        let mut out = Vec::new();
        emit(
            Sink::Plain(&mut out),
            &frames(),
            &misfits,
            Some(&fault),
            Duration::ZERO,
            &|| true,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn without_faults_every_frame_goes_out() {
        assert_eq!(run(FaultSet::default()), "P|a|b|c|Z|");
    }

    #[test]
    fn cuts_fall_on_bytes_or_before_a_chunk() {
        let bytes = FaultSet {
            cut_after_bytes: Some(5),
            ..FaultSet::default()
        };
        assert_eq!(run(bytes), "P|a|b");
        let chunk = FaultSet {
            cut_after_chunks: Some(2),
            ..FaultSet::default()
        };
        assert_eq!(run(chunk), "P|a|b|");
        let past_end = FaultSet {
            cut_after_chunks: Some(9),
            ..FaultSet::default()
        };
        assert_eq!(run(past_end), "P|a|b|c|");
    }

    #[test]
    fn malformed_frame_follows_the_first_chunk_and_errors_end_the_stream() {
        let malformed = FaultSet {
            malformed_frame: true,
            ..FaultSet::default()
        };
        assert_eq!(run(malformed), "P|a|M|b|c|Z|");
        let error = FaultSet {
            stream_error: Some(StreamError {
                message: "x".into(),
                after_chunks: 1,
            }),
            ..FaultSet::default()
        };
        assert_eq!(run(error), "P|a|E|");
    }

    #[test]
    fn a_stall_pauses_without_losing_bytes() {
        let stall = FaultSet {
            stall_ms: Some(30),
            stall_after_bytes: Some(3),
            ..FaultSet::default()
        };
        let began = std::time::Instant::now();
        assert_eq!(run(stall), "P|a|b|c|Z|");
        assert!(began.elapsed() >= Duration::from_millis(30));
    }
}
