//! When to try a failed request again, and the retrying stream built on it. The decision is a
//! pure function ([`RetryPolicy::decide`]); waiting goes through the [`Sleeper`] port (the
//! browser's `setTimeout`, or an instant fake in tests), which also bounds how long a silent
//! stream is waited for.
//!
//! By default a request gets four attempts, up to 60 s for its first bytes and 45 s between
//! chunks. A server on the learner's own computer or network ([`crate::Endpoint::is_local`])
//! gets [`RetryPolicy::patient_for`]: up to 20 minutes for the first byte (a small model on a
//! CPU reads a long prompt slowly, and a one-slot server answers queued requests in turn) and
//! 120 s between chunks. Generation stages and the AI worker's retrying chat jobs use it.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::rc::Rc;

use crate::error::ProviderError;
use crate::event::StreamEvent;
use crate::request::{ChatRequest, Endpoint};
use crate::transport::{AbortHandle, PendingResponse, Transport};
use crate::{drive_attempt, http_request};

/// Waits. Implemented over `setTimeout` in the browser; futures are not `Send`.
pub trait Sleeper {
    fn sleep(&self, ms: u64) -> Pin<Box<dyn Future<Output = ()>>>;
}

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The wait before the first retry; it doubles with each further one.
    pub base_ms: u64,
    /// No wait is longer than this, whatever the provider asks.
    pub cap_ms: u64,
    /// An attempt whose answer has not started after this long fails as stalled: the wait for
    /// the first bytes, which covers reading the prompt and any queue at the server.
    pub first_byte_ms: u64,
    /// An attempt that then receives no bytes for this long fails as stalled.
    pub stall_ms: u64,
    /// Retry even after part of the reply was shown (the caller must then discard it; it is told
    /// through `on_retry`).
    pub retry_after_output: bool,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_ms: 1_000,
            cap_ms: 30_000,
            first_byte_ms: 60_000,
            stall_ms: 45_000,
            retry_after_output: false,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    /// Wait this many milliseconds, then try again.
    RetryIn(u64),
    GiveUp,
}

/// How long a server on the learner's own computer may take to start answering: a small model
/// on a CPU reads a few thousand prompt tokens in minutes, and a server with one slot answers
/// queued requests one after another.
pub const LOCAL_FIRST_BYTE_MS: u64 = 20 * 60_000;
/// The longest pause between two chunks from such a server (a busy CPU can slow to a token
/// every few seconds).
pub const LOCAL_STALL_MS: u64 = 120_000;

impl RetryPolicy {
    /// This policy with waits that fit the endpoint: a local server gets minutes to start.
    pub fn patient_for(self, endpoint: &Endpoint) -> RetryPolicy {
        if endpoint.is_local() {
            RetryPolicy {
                first_byte_ms: self.first_byte_ms.max(LOCAL_FIRST_BYTE_MS),
                stall_ms: self.stall_ms.max(LOCAL_STALL_MS),
                ..self
            }
        } else {
            self
        }
    }

    /// Decides after attempt number `attempt` (1 for the first) failed with `error`.
    /// `output_shown` says whether any of its reply reached the learner; `jitter_0_to_1` is a
    /// random number in `[0, 1]`. The wait is "equal jitter" exponential backoff, between half
    /// and all of `base_ms · 2^(attempt-1)`, raised to the provider's `retry-after` if that is
    /// longer, and never above `cap_ms`.
    pub fn decide(
        &self,
        attempt: u32,
        error: &ProviderError,
        output_shown: bool,
        retry_even_after_output: bool,
        jitter_0_to_1: f64,
    ) -> RetryDecision {
        if attempt >= self.max_attempts || !error.is_retryable() {
            return RetryDecision::GiveUp;
        }
        if output_shown && !retry_even_after_output {
            return RetryDecision::GiveUp;
        }
        let exponent = attempt.saturating_sub(1).min(32);
        let backoff = self
            .base_ms
            .saturating_mul(1u64 << exponent)
            .min(self.cap_ms);
        let jitter = if jitter_0_to_1.is_finite() {
            jitter_0_to_1.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let jittered = backoff / 2 + ((backoff - backoff / 2) as f64 * jitter).round() as u64;
        let asked = match error {
            ProviderError::RateLimited {
                retry_after_ms: Some(ms),
                ..
            } => *ms,
            _ => 0,
        };
        RetryDecision::RetryIn(jittered.max(asked).min(self.cap_ms))
    }
}

/// A random number in `[0, 1]` without a dependency: the standard library's hasher keys are
/// seeded per call (from the OS where there is one).
fn jitter() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Aborts whichever attempt is running, and stops further ones.
#[derive(Default)]
struct SharedAbort {
    stopped: Cell<bool>,
    current: RefCell<Option<Box<dyn AbortHandle>>>,
}

struct RetryAbort(Rc<SharedAbort>);

impl AbortHandle for RetryAbort {
    fn abort(&self) {
        self.0.stopped.set(true);
        if let Some(handle) = self.0.current.borrow().as_ref() {
            handle.abort();
        }
    }
}

/// [`crate::stream_chat`] with retries: a failed attempt that `policy` says is worth retrying is
/// reported to `on_retry(attempt, wait_ms, &error)` (attempt 1 is the first) instead of
/// `on_event`, and tried again after the wait. Each attempt fails as
/// [`ProviderError::Stalled`] if its answer has not started after `policy.first_byte_ms`, or
/// then no bytes come for `policy.stall_ms`. `on_event` sees the events of every attempt and,
/// at the end, exactly one `Done` or `Error`. A retried attempt's events, a
/// [`StreamEvent::Stopped`] among them, are the caller's to discard when `on_retry` is called;
/// the `Stopped` of the attempt that gives up comes just before its `Error`. A refusal or a
/// request too long for the model's context is never retried.
pub fn stream_chat_with_retry<'a, E, R>(
    transport: &'a dyn Transport,
    sleeper: &'a dyn Sleeper,
    policy: RetryPolicy,
    endpoint: Endpoint,
    request: &ChatRequest,
    on_event: E,
    on_retry: R,
) -> (Box<dyn AbortHandle>, impl Future<Output = ()> + 'a)
where
    E: FnMut(StreamEvent) + 'a,
    R: FnMut(u32, u64, &ProviderError) + 'a,
{
    let http = http_request(&endpoint, request);
    let wants_json = request.json_schema.is_some();
    let shared = Rc::new(SharedAbort::default());
    let handle = Box::new(RetryAbort(shared.clone()));
    let drive = async move {
        let mut on_event = on_event;
        let mut on_retry = on_retry;
        let mut attempt = 1;
        loop {
            if shared.stopped.get() {
                return on_event(StreamEvent::Error(ProviderError::Aborted {
                    provider: endpoint.provider_name(),
                }));
            }
            let PendingResponse { response, abort } = transport.send(http.clone());
            *shared.current.borrow_mut() = Some(abort);
            let mut shown = false;
            let mut forward = |event: StreamEvent| {
                if matches!(
                    event,
                    StreamEvent::TextDelta(_)
                        | StreamEvent::ThinkingDelta(_)
                        | StreamEvent::JsonDelta(_)
                ) {
                    shown = true;
                }
                on_event(event);
            };
            let patience = Some(crate::Patience {
                sleeper,
                first_byte_ms: policy.first_byte_ms,
                stall_ms: policy.stall_ms,
            });
            let failure =
                drive_attempt(response, &endpoint, wants_json, patience, &mut forward).await;
            let Some(error) = failure else { return };
            let decision = if shared.stopped.get() {
                RetryDecision::GiveUp
            } else {
                policy.decide(attempt, &error, shown, policy.retry_after_output, jitter())
            };
            match decision {
                RetryDecision::GiveUp => return on_event(StreamEvent::Error(error)),
                RetryDecision::RetryIn(ms) => {
                    on_retry(attempt, ms, &error);
                    sleeper.sleep(ms).await;
                    attempt += 1;
                }
            }
        }
    };
    (handle as Box<dyn AbortHandle>, drive)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy::default()
    }

    fn server() -> ProviderError {
        ProviderError::ServerError {
            provider: "P".into(),
            status: 500,
            message: "oops".into(),
        }
    }

    fn limited(ms: Option<u64>) -> ProviderError {
        ProviderError::RateLimited {
            provider: "P".into(),
            retry_after_ms: ms,
        }
    }

    #[test]
    fn a_rejected_key_is_never_retried() {
        let err = ProviderError::KeyRejected {
            provider: "P".into(),
            status: 401,
        };
        assert_eq!(
            policy().decide(1, &err, false, false, 0.5),
            RetryDecision::GiveUp
        );
    }

    #[test]
    fn only_errors_that_may_pass_are_retried() {
        let p = "P".to_string();
        let never = [
            ProviderError::QuotaExhausted {
                provider: p.clone(),
            },
            ProviderError::ModelNotFound {
                provider: p.clone(),
                model: "m".into(),
            },
            ProviderError::BadRequest {
                provider: p.clone(),
                status: 400,
                message: "x".into(),
            },
            ProviderError::Aborted {
                provider: p.clone(),
            },
            ProviderError::MalformedReply {
                provider: p.clone(),
                detail: "x".into(),
            },
            ProviderError::Upstream {
                provider: p.clone(),
                message: "x".into(),
            },
            ProviderError::BrowserAccessDenied {
                provider: p.clone(),
            },
            ProviderError::Refused {
                provider: p.clone(),
                message: "I can't help with that".into(),
            },
            ProviderError::ContextTooLong {
                provider: p.clone(),
                prompt_tokens: Some(9030),
                context_tokens: Some(8192),
            },
        ];
        for err in &never {
            assert_eq!(
                policy().decide(1, err, false, false, 0.5),
                RetryDecision::GiveUp,
                "{err:?}"
            );
        }
        let worth = [
            limited(None),
            server(),
            ProviderError::Network {
                provider: p.clone(),
                detail: "x".into(),
                fix: "y".into(),
            },
            ProviderError::StreamCut {
                provider: p.clone(),
            },
            ProviderError::Stalled {
                provider: p,
                seconds: 45,
            },
        ];
        for err in &worth {
            assert!(
                matches!(
                    policy().decide(1, err, false, false, 0.5),
                    RetryDecision::RetryIn(_)
                ),
                "{err:?}"
            );
        }
    }

    #[test]
    fn server_errors_back_off_exponentially_within_the_jitter_band() {
        let p = policy();
        for (attempt, full) in [(1u32, 1_000u64), (2, 2_000), (3, 4_000)] {
            assert_eq!(
                p.decide(attempt, &server(), false, false, 0.0),
                RetryDecision::RetryIn(full / 2)
            );
            assert_eq!(
                p.decide(attempt, &server(), false, false, 1.0),
                RetryDecision::RetryIn(full)
            );
        }
    }

    #[test]
    fn waits_are_capped_at_thirty_seconds() {
        let p = RetryPolicy {
            max_attempts: 100,
            ..policy()
        };
        assert_eq!(
            p.decide(40, &server(), false, false, 1.0),
            RetryDecision::RetryIn(30_000)
        );
        assert_eq!(
            p.decide(1, &limited(Some(90_000)), false, false, 0.0),
            RetryDecision::RetryIn(30_000)
        );
    }

    #[test]
    fn rate_limits_honour_retry_after_above_the_backoff() {
        assert_eq!(
            policy().decide(1, &limited(Some(7_000)), false, false, 0.3),
            RetryDecision::RetryIn(7_000)
        );
        // A shorter ask does not shorten the backoff.
        assert_eq!(
            policy().decide(3, &limited(Some(100)), false, false, 1.0),
            RetryDecision::RetryIn(4_000)
        );
    }

    #[test]
    fn no_retry_after_output_unless_asked() {
        let cut = ProviderError::StreamCut {
            provider: "P".into(),
        };
        assert_eq!(
            policy().decide(1, &cut, true, false, 0.5),
            RetryDecision::GiveUp
        );
        assert!(matches!(
            policy().decide(1, &cut, true, true, 0.5),
            RetryDecision::RetryIn(_)
        ));
    }

    #[test]
    fn attempts_run_out() {
        assert_eq!(
            policy().decide(4, &server(), false, false, 0.5),
            RetryDecision::GiveUp
        );
        assert!(matches!(
            policy().decide(3, &server(), false, false, 0.5),
            RetryDecision::RetryIn(_)
        ));
    }

    #[test]
    fn a_stall_is_retried_like_a_cut() {
        let err = ProviderError::Stalled {
            provider: "P".into(),
            seconds: 45,
        };
        assert_eq!(
            policy().decide(1, &err, false, false, 1.0),
            RetryDecision::RetryIn(1_000)
        );
        assert_eq!(
            policy().decide(1, &err, true, false, 1.0),
            RetryDecision::GiveUp
        );
    }

    #[test]
    fn jitter_is_in_the_unit_interval() {
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..=1.0).contains(&j));
        }
    }
}
