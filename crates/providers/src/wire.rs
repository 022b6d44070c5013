//! The messages between the page and the AI worker, which makes every provider call: the page
//! posts a [`Job`], the worker answers with [`Report`]s carrying the job's id. JSON text over
//! `postMessage` (same origin, same process: the key in an endpoint never leaves the browser).

use serde::{Deserialize, Serialize};

use crate::event::StreamEvent;
use crate::request::{ChatRequest, Endpoint};

/// What the page asks of the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Job {
    /// Stream one chat reply; `retry` applies the default retry policy (before any output).
    Chat {
        id: u32,
        endpoint: Endpoint,
        request: ChatRequest,
        retry: bool,
    },
    /// List the endpoint's models.
    Models { id: u32, endpoint: Endpoint },
    /// Stop a job (its stream ends with a `Failed` saying it was stopped).
    Abort { id: u32 },
}

/// What the worker tells the page. Every job ends with exactly one `Done`, `Failed` or `Models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Report {
    /// The worker has started and reads jobs.
    Ready,
    Text {
        id: u32,
        text: String,
    },
    Thinking {
        id: u32,
        text: String,
    },
    ThinkingEnd {
        id: u32,
    },
    Json {
        id: u32,
        text: String,
    },
    Usage {
        id: u32,
        input: u64,
        output: u64,
        cached: u64,
    },
    /// A retryable error; the job tries again after `wait_ms` (attempt counts from 1).
    Retrying {
        id: u32,
        attempt: u32,
        wait_ms: u64,
        message: String,
    },
    /// The job's end with an error, as the learner should read it (never containing a key).
    Failed {
        id: u32,
        message: String,
    },
    Done {
        id: u32,
    },
    /// The answer to `Job::Models`: `None` when the provider has no list.
    Models {
        id: u32,
        models: Option<Vec<String>>,
    },
}

impl Report {
    /// The report of a stream event of job `id`.
    pub fn of(id: u32, event: StreamEvent) -> Report {
        match event {
            StreamEvent::TextDelta(text) => Report::Text { id, text },
            StreamEvent::ThinkingDelta(text) => Report::Thinking { id, text },
            StreamEvent::ThinkingEnd => Report::ThinkingEnd { id },
            StreamEvent::JsonDelta(text) => Report::Json { id, text },
            StreamEvent::Usage {
                input,
                output,
                cached,
            } => Report::Usage {
                id,
                input,
                output,
                cached,
            },
            StreamEvent::Done { .. } => Report::Done { id },
            StreamEvent::Error(error) => Report::Failed {
                id,
                message: error.to_string(),
            },
        }
    }

    /// The job this report is about (`None` for `Ready`).
    pub fn job(&self) -> Option<u32> {
        match self {
            Report::Ready => None,
            Report::Text { id, .. }
            | Report::Thinking { id, .. }
            | Report::ThinkingEnd { id }
            | Report::Json { id, .. }
            | Report::Usage { id, .. }
            | Report::Retrying { id, .. }
            | Report::Failed { id, .. }
            | Report::Done { id }
            | Report::Models { id, .. } => Some(*id),
        }
    }

    /// Whether this is the last report of its job.
    pub fn ends_job(&self) -> bool {
        matches!(
            self,
            Report::Failed { .. } | Report::Done { .. } | Report::Models { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ChatMessage;
    use crate::{preset, ProviderError};

    #[test]
    fn jobs_and_reports_survive_json_and_end_where_they_should() {
        let endpoint =
            Endpoint::from_preset(preset("openai").unwrap(), "gpt-x", Some("sk-1".into()));
        let job = Job::Chat {
            id: 7,
            endpoint: endpoint.clone(),
            request: ChatRequest::new("sys", vec![ChatMessage::user("hi")]),
            retry: true,
        };
        let text = serde_json::to_string(&job).unwrap();
        assert!(text.starts_with("{\"op\":\"chat\""), "{text}");
        assert_eq!(serde_json::from_str::<Job>(&text).unwrap(), job);
        for report in [
            Report::Ready,
            Report::of(7, StreamEvent::TextDelta("a".into())),
            Report::of(7, StreamEvent::Done { stop_reason: None }),
            Report::Retrying {
                id: 7,
                attempt: 1,
                wait_ms: 1000,
                message: "busy".into(),
            },
            Report::Models {
                id: 8,
                models: None,
            },
        ] {
            let text = serde_json::to_string(&report).unwrap();
            assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), report);
        }
        let failed = Report::of(
            7,
            StreamEvent::Error(ProviderError::KeyRejected {
                provider: "OpenAI".into(),
                status: 401,
            }),
        );
        assert!(failed.ends_job() && failed.job() == Some(7));
        assert!(!Report::of(7, StreamEvent::TextDelta("a".into())).ends_job());
        assert!(matches!(failed, Report::Failed { message, .. } if message.contains("rejected")));
    }
}
