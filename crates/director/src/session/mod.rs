//! The classroom's one vocabulary, [`ClassEvent`]: everything that happens in a session, in
//! order. The round ([`crate::round::run_round`]) emits it, the AI worker posts it to the page
//! ([`crate::wire::RoundReport`]), the page appends it to the session's log ([`log`]) and folds
//! it into what the learner sees ([`view`]). One type in every layer, so adding an event is one
//! variant, one record conversion below and its fold; the page never reads a decision out of a
//! string.
//!
//! # Encoding
//!
//! On the wire and on disk an event is one flat JSON object, [`Record`]: a `kind` tag in
//! snake_case and only the fields that kind uses, e.g.
//! `{"seq": 3, "at_ms": 1700000000000, "kind": "text_delta", "agent_id": "t", "text": "Hi"}`
//! (`seq` and `at_ms` only in the log). Kinds share fields where they mean the same: a dropped
//! reply item's name is its `text`, a discussion's topic too. A plain struct rather than serde's tagged enum: the same
//! JSON, but reading it costs the page's bundle a fraction of the code, and the worker's posts and
//! the log's records share it.
//!
//! A decision's `next` is an agent id, `"USER"` (the learner's turn) or `"END"`. Why a decision
//! or a round (`session_end`) ended is `reason`, a code: [`EndReason`]'s (`turn_limit`,
//! `unknown_agent`, ...) and, for a round, [`RoundEnd`]'s other ends (`learners_turn`,
//! `cancelled`, ...); a detail (the director's bad reply, the unknown agent's name) is in `text`.
//! Records written before these codes existed, or by a newer Aula with a code this one does not
//! know, read as [`EndReason::NotRecorded`]. This version
//! writes `learner_message` and `cue_learner` and also reads the older `user_message` and
//! `cue_user`.

pub mod log;
pub mod view;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use log::{
    course_records, current_conversation_key, delete_course, delete_session, event_key,
    is_valid_session_id, made_key, new_session_id, opened_key, restore_records, resume_key,
    sessions_of_course, SessionHeader, SessionLog, StoredRecord, MAX_SEQ, SESSION_FORMAT,
};
pub use view::{fold, Resume, SessionView, ViewMessage, ViewSpeaker};

use crate::round::RoundEnd;
use crate::{Decision, EndReason};

/// One thing that happened in a classroom session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Record", try_from = "Record")]
pub enum ClassEvent {
    /// The learner asked or said something (written by the page before the round starts).
    LearnerMessage {
        text: String,
    },
    /// A discussion opens: its topic, and the agent who opens it (written by the page).
    DiscussionStart {
        topic: String,
        initiator: Option<String>,
    },
    /// Who speaks next, and whether the director model was asked (not a code path).
    Decision {
        decision: Decision,
        by_llm: bool,
    },
    AgentStart {
        agent_id: String,
    },
    /// A piece of an agent's streamed speech.
    Text {
        agent_id: String,
        text: String,
    },
    Thinking {
        agent_id: String,
        text: String,
    },
    ThinkingEnd {
        agent_id: String,
    },
    /// An action the agent performed, as the course JSON of an action (`{"type": ..., ...}`).
    Action {
        agent_id: String,
        action: serde_json::Value,
    },
    /// A reply item that could not be used (unknown action, bad parameters, not allowed here).
    Dropped {
        agent_id: String,
        name: String,
        reason: String,
    },
    /// The turn is over: everything it said (the log's checkpoint), and whether it was cut off.
    AgentEnd {
        agent_id: String,
        text: String,
        interrupted: bool,
    },
    /// The floor goes to the learner.
    CueLearner {
        from_agent: Option<String>,
    },
    Error {
        agent_id: Option<String>,
        message: String,
    },
    /// The round (or the whole discussion) is over.
    Finished(RoundEnd),
}

impl ClassEvent {
    /// Whether the session's log keeps this event: what was said, done and decided, not a
    /// dropped reply item.
    pub fn is_logged(&self) -> bool {
        !matches!(self, ClassEvent::Dropped { .. })
    }
}

/// An event as the log stores it: its place in the session (sequence numbers start at 1) and
/// when it happened (milliseconds since the Unix epoch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Record", try_from = "Record")]
pub struct LoggedEvent {
    pub seq: u64,
    pub at_ms: u64,
    pub event: ClassEvent,
}

/// What a decision's `next` says when the learner is to speak.
const NEXT_LEARNER: &str = "USER";

/// What a decision's `next` says when the round is over.
const NEXT_END: &str = "END";

/// An event, logged or not, as one flat JSON object: every field any kind uses, absent when
/// unused (see the module's encoding).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Record {
    #[serde(default, skip_serializing_if = "is_zero")]
    seq: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    at_ms: u64,
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by_llm: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interrupted: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `(reason code, detail)` of an end reason.
fn end_reason_fields(reason: EndReason) -> (&'static str, Option<String>) {
    match reason {
        EndReason::DirectorSaidEnd => ("director_said_end", None),
        EndReason::TurnLimit => ("turn_limit", None),
        EndReason::NoAgents => ("no_agents", None),
        EndReason::InvalidReply(why) => ("invalid_reply", Some(why)),
        EndReason::UnknownAgent(id) => ("unknown_agent", Some(id)),
        EndReason::NotRecorded => ("not_recorded", None),
    }
}

fn end_reason_of(code: Option<&str>, detail: Option<String>) -> EndReason {
    let detail = || detail.unwrap_or_default();
    match code {
        Some("director_said_end") => EndReason::DirectorSaidEnd,
        Some("turn_limit") => EndReason::TurnLimit,
        Some("no_agents") => EndReason::NoAgents,
        Some("invalid_reply") => EndReason::InvalidReply(detail()),
        Some("unknown_agent") => EndReason::UnknownAgent(detail()),
        _ => EndReason::NotRecorded,
    }
}

impl Record {
    fn of(event: ClassEvent) -> Record {
        let base = |kind: &str| Record {
            kind: kind.to_owned(),
            ..Record::default()
        };
        let by = |kind: &str, agent_id: String| Record {
            agent_id: Some(agent_id),
            ..base(kind)
        };
        let with_text = |kind: &str, agent_id: String, text: String| Record {
            text: Some(text),
            ..by(kind, agent_id)
        };
        match event {
            ClassEvent::LearnerMessage { text } => Record {
                text: Some(text),
                ..base("learner_message")
            },
            ClassEvent::DiscussionStart { topic, initiator } => Record {
                text: Some(topic),
                agent_id: initiator,
                ..base("discussion_start")
            },
            ClassEvent::Decision { decision, by_llm } => {
                let (next, reason, text) = match decision {
                    Decision::Agent(id) => (id, None, None),
                    Decision::Learner => (NEXT_LEARNER.to_owned(), None, None),
                    Decision::End(reason) => {
                        let (code, detail) = end_reason_fields(reason);
                        (NEXT_END.to_owned(), Some(code.to_owned()), detail)
                    }
                };
                Record {
                    next: Some(next),
                    by_llm: Some(by_llm),
                    reason,
                    text,
                    ..base("director_decision")
                }
            }
            ClassEvent::AgentStart { agent_id } => by("agent_start", agent_id),
            ClassEvent::Text { agent_id, text } => with_text("text_delta", agent_id, text),
            ClassEvent::Thinking { agent_id, text } => with_text("thinking", agent_id, text),
            ClassEvent::ThinkingEnd { agent_id } => by("thinking_end", agent_id),
            ClassEvent::Action { agent_id, action } => Record {
                action: Some(action),
                ..by("action", agent_id)
            },
            ClassEvent::Dropped {
                agent_id,
                name,
                reason,
            } => Record {
                message: Some(reason),
                ..with_text("dropped", agent_id, name)
            },
            ClassEvent::AgentEnd {
                agent_id,
                text,
                interrupted,
            } => Record {
                interrupted: Some(interrupted),
                ..with_text("agent_end", agent_id, text)
            },
            ClassEvent::CueLearner { from_agent } => Record {
                from_agent,
                ..base("cue_learner")
            },
            ClassEvent::Error { agent_id, message } => Record {
                agent_id,
                message: Some(message),
                ..base("error")
            },
            ClassEvent::Finished(end) => {
                let (reason, text) = match end {
                    RoundEnd::Ended(reason) => end_reason_fields(reason),
                    RoundEnd::LearnersTurn => ("learners_turn", None),
                    RoundEnd::EmptyTurns => ("empty_turns", None),
                    RoundEnd::Cancelled => ("cancelled", None),
                    RoundEnd::Failed => ("failed", None),
                };
                Record {
                    reason: Some(reason.to_owned()),
                    text,
                    ..base("session_end")
                }
            }
        }
    }

    fn event(self) -> Result<ClassEvent, String> {
        let kind = self.kind;
        let missing = |field: &str| format!("a \"{kind}\" event needs \"{field}\"");
        let need = |value: Option<String>, field: &str| value.ok_or_else(|| missing(field));
        let agent = |value: Option<String>| need(value, "agent_id");
        Ok(match kind.as_str() {
            "learner_message" | "user_message" => ClassEvent::LearnerMessage {
                text: need(self.text, "text")?,
            },
            "discussion_start" => ClassEvent::DiscussionStart {
                topic: need(self.text, "text")?,
                initiator: self.agent_id,
            },
            "director_decision" => ClassEvent::Decision {
                decision: match need(self.next, "next")?.as_str() {
                    NEXT_LEARNER => Decision::Learner,
                    NEXT_END => Decision::End(end_reason_of(self.reason.as_deref(), self.text)),
                    id => Decision::Agent(id.to_owned()),
                },
                by_llm: self.by_llm.ok_or_else(|| missing("by_llm"))?,
            },
            "agent_start" => ClassEvent::AgentStart {
                agent_id: agent(self.agent_id)?,
            },
            "text_delta" => ClassEvent::Text {
                agent_id: agent(self.agent_id)?,
                text: need(self.text, "text")?,
            },
            "thinking" => ClassEvent::Thinking {
                agent_id: agent(self.agent_id)?,
                text: need(self.text, "text")?,
            },
            "thinking_end" => ClassEvent::ThinkingEnd {
                agent_id: agent(self.agent_id)?,
            },
            "action" => ClassEvent::Action {
                agent_id: agent(self.agent_id)?,
                action: self.action.ok_or_else(|| missing("action"))?,
            },
            "dropped" => ClassEvent::Dropped {
                agent_id: agent(self.agent_id)?,
                name: need(self.text, "text")?,
                reason: need(self.message, "message")?,
            },
            "agent_end" => ClassEvent::AgentEnd {
                agent_id: agent(self.agent_id)?,
                text: need(self.text, "text")?,
                interrupted: self.interrupted.ok_or_else(|| missing("interrupted"))?,
            },
            "cue_learner" | "cue_user" => ClassEvent::CueLearner {
                from_agent: self.from_agent,
            },
            "error" => ClassEvent::Error {
                agent_id: self.agent_id,
                message: need(self.message, "message")?,
            },
            "session_end" => ClassEvent::Finished(match self.reason.as_deref() {
                Some("learners_turn") => RoundEnd::LearnersTurn,
                Some("empty_turns") => RoundEnd::EmptyTurns,
                Some("cancelled") => RoundEnd::Cancelled,
                Some("failed") => RoundEnd::Failed,
                reason => RoundEnd::Ended(end_reason_of(reason, self.text)),
            }),
            _ => return Err(format!("\"{kind}\" is not an event kind this Aula knows")),
        })
    }
}

impl From<ClassEvent> for Record {
    fn from(event: ClassEvent) -> Record {
        Record::of(event)
    }
}

impl TryFrom<Record> for ClassEvent {
    type Error = String;

    fn try_from(record: Record) -> Result<ClassEvent, String> {
        record.event()
    }
}

impl From<LoggedEvent> for Record {
    fn from(logged: LoggedEvent) -> Record {
        Record {
            seq: logged.seq,
            at_ms: logged.at_ms,
            ..Record::of(logged.event)
        }
    }
}

impl TryFrom<Record> for LoggedEvent {
    type Error = String;

    fn try_from(record: Record) -> Result<LoggedEvent, String> {
        let (seq, at_ms) = (record.seq, record.at_ms);
        Ok(LoggedEvent {
            seq,
            at_ms,
            event: record.event()?,
        })
    }
}
