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
    /// Ask the endpoint's server for its context and slots (see [`crate::limits`]).
    Limits { id: u32, endpoint: Endpoint },
    /// Stop a job (its stream ends with a `Failed` saying it was stopped).
    Abort { id: u32 },
}

/// What the worker tells the page. Every job ends with exactly one `Done`, `Failed` or `Models`.
///
/// On the wire it is one JSON object tagged by `kind` (`{"kind": "text", "id": 3, "text": "Hi"}`),
/// read and written through [`ReportRecord`], one flat struct: the same JSON as a tagged enum,
/// but the page's bundle pays for a fraction of the code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ReportRecord", try_from = "ReportRecord")]
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
    /// The answer to `Job::Limits`: what the server said (nothing when it has no such answer).
    Limits {
        id: u32,
        limits: crate::ServerLimits,
    },
}

impl Report {
    /// The report of a stream event of job `id`; `None` for [`StreamEvent::Stopped`]: the page
    /// is not told why a model stopped (a `Done` does not carry it either), and the error that
    /// follows reaches it as `Failed`.
    pub fn of(id: u32, event: StreamEvent) -> Option<Report> {
        Some(match event {
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
            StreamEvent::Stopped { .. } => return None,
            StreamEvent::Error(error) => Report::Failed {
                id,
                message: error.to_string(),
            },
        })
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
            | Report::Models { id, .. }
            | Report::Limits { id, .. } => Some(*id),
        }
    }

    /// Whether this is the last report of its job.
    pub fn ends_job(&self) -> bool {
        matches!(
            self,
            Report::Failed { .. }
                | Report::Done { .. }
                | Report::Models { .. }
                | Report::Limits { .. }
        )
    }
}

/// A [`Report`] as sent: every field any kind uses, absent when unused.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ReportRecord {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cached: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wait_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// For `models`: absent when the provider has no list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    models: Option<Vec<String>>,
    /// For `limits`: what the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    context_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    slots: Option<u32>,
}

impl From<Report> for ReportRecord {
    fn from(report: Report) -> ReportRecord {
        let of = |kind: &str, id: u32| ReportRecord {
            kind: kind.to_owned(),
            id: Some(id),
            ..ReportRecord::default()
        };
        match report {
            Report::Ready => ReportRecord {
                kind: "ready".into(),
                ..ReportRecord::default()
            },
            Report::Text { id, text } => ReportRecord {
                text: Some(text),
                ..of("text", id)
            },
            Report::Thinking { id, text } => ReportRecord {
                text: Some(text),
                ..of("thinking", id)
            },
            Report::ThinkingEnd { id } => of("thinking_end", id),
            Report::Json { id, text } => ReportRecord {
                text: Some(text),
                ..of("json", id)
            },
            Report::Usage {
                id,
                input,
                output,
                cached,
            } => ReportRecord {
                input: Some(input),
                output: Some(output),
                cached: Some(cached),
                ..of("usage", id)
            },
            Report::Retrying {
                id,
                attempt,
                wait_ms,
                message,
            } => ReportRecord {
                attempt: Some(attempt),
                wait_ms: Some(wait_ms),
                message: Some(message),
                ..of("retrying", id)
            },
            Report::Failed { id, message } => ReportRecord {
                message: Some(message),
                ..of("failed", id)
            },
            Report::Done { id } => of("done", id),
            Report::Models { id, models } => ReportRecord {
                models,
                ..of("models", id)
            },
            Report::Limits { id, limits } => ReportRecord {
                context_tokens: limits.context_tokens,
                slots: limits.slots,
                ..of("limits", id)
            },
        }
    }
}

impl TryFrom<ReportRecord> for Report {
    type Error = String;

    fn try_from(record: ReportRecord) -> Result<Report, String> {
        let missing = |field: &str| format!("a \"{}\" report without \"{field}\"", record.kind);
        if record.kind == "ready" {
            return Ok(Report::Ready);
        }
        let id = record.id.ok_or_else(|| missing("id"))?;
        let text = || record.text.clone().ok_or_else(|| missing("text"));
        let message = || record.message.clone().ok_or_else(|| missing("message"));
        Ok(match record.kind.as_str() {
            "text" => Report::Text { id, text: text()? },
            "thinking" => Report::Thinking { id, text: text()? },
            "thinking_end" => Report::ThinkingEnd { id },
            "json" => Report::Json { id, text: text()? },
            "usage" => Report::Usage {
                id,
                input: record.input.unwrap_or_default(),
                output: record.output.unwrap_or_default(),
                cached: record.cached.unwrap_or_default(),
            },
            "retrying" => Report::Retrying {
                id,
                attempt: record.attempt.ok_or_else(|| missing("attempt"))?,
                wait_ms: record.wait_ms.ok_or_else(|| missing("wait_ms"))?,
                message: message()?,
            },
            "failed" => Report::Failed {
                id,
                message: message()?,
            },
            "done" => Report::Done { id },
            "models" => Report::Models {
                id,
                models: record.models.clone(),
            },
            "limits" => Report::Limits {
                id,
                limits: crate::ServerLimits {
                    context_tokens: record.context_tokens,
                    slots: record.slots,
                },
            },
            other => return Err(format!("an unknown report kind \"{other}\"")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ChatMessage;
    use crate::{preset, ProviderError, StopReason};

    fn report(id: u32, event: StreamEvent) -> Report {
        Report::of(id, event).expect("a report")
    }

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
            report(7, StreamEvent::TextDelta("a".into())),
            report(7, StreamEvent::Done { stop_reason: None }),
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
            Report::Models {
                id: 8,
                models: Some(vec!["m1".into()]),
            },
            Report::Limits {
                id: 10,
                limits: crate::ServerLimits {
                    context_tokens: Some(8192),
                    slots: Some(1),
                },
            },
            Report::Limits {
                id: 10,
                limits: crate::ServerLimits::default(),
            },
            Report::Usage {
                id: 9,
                input: 10,
                output: 2,
                cached: 1,
            },
            report(9, StreamEvent::ThinkingDelta("hm".into())),
            report(9, StreamEvent::ThinkingEnd),
            report(9, StreamEvent::JsonDelta("{".into())),
        ] {
            let text = serde_json::to_string(&report).unwrap();
            assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), report);
        }
        // The JSON is the tagged object the page has always read.
        assert_eq!(
            serde_json::to_string(&report(3, StreamEvent::TextDelta("Hi".into()))).unwrap(),
            r#"{"kind":"text","id":3,"text":"Hi"}"#
        );
        assert_eq!(
            serde_json::to_string(&Report::Models {
                id: 8,
                models: None
            })
            .unwrap(),
            r#"{"kind":"models","id":8}"#
        );
        for broken in [
            r#"{"kind":"text","id":3}"#,
            r#"{"kind":"done"}"#,
            r#"{"kind":"teleport","id":3}"#,
            r#"{"kind":"failed","id":3}"#,
        ] {
            assert!(serde_json::from_str::<Report>(broken).is_err(), "{broken}");
        }
        let failed = report(
            7,
            StreamEvent::Error(ProviderError::KeyRejected {
                provider: "OpenAI".into(),
                status: 401,
            }),
        );
        assert!(failed.ends_job() && failed.job() == Some(7));
        assert!(!report(7, StreamEvent::TextDelta("a".into())).ends_job());
        assert!(matches!(failed, Report::Failed { message, .. } if message.contains("rejected")));
        assert_eq!(
            Report::of(
                7,
                StreamEvent::Stopped {
                    stop_reason: StopReason::MaxTokens
                }
            ),
            None
        );
    }
}
