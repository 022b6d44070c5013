//! A round as a job for the AI worker: the page sends a [`RoundJob`] (everything the round needs,
//! as plain data) and gets one [`RoundReport`] per [`RoundEvent`] back. JSON over `postMessage`.

use aula_course::{AgentProfile, Course, Scene};
use serde::{Deserialize, Serialize};

use crate::model::{LearnerProfile, Utterance};
use crate::round::{Mode, Models, Room, RoundEvent};

/// Everything a round needs; `op` is always `"round"` (it shares the worker's inbox with the
/// providers' jobs). The course travels as its file's JSON text and the conversation as plain
/// lines, so the page needs no serializer for the course model (the worker parses both).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundJob {
    pub op: RoundOp,
    pub id: u32,
    pub models: Models,
    /// The course file, as stored.
    pub course_json: String,
    /// The scene on screen.
    pub scene_index: usize,
    #[serde(default)]
    pub learner: LearnerProfile,
    #[serde(default)]
    pub whiteboard_open: bool,
    pub mode: Mode,
    pub max_turns: u32,
    /// The conversation so far, ending with the learner's new message.
    pub history: Vec<HistoryLine>,
    /// What the learner set for the provider (the worker asks the server too).
    #[serde(default)]
    pub limits: aula_providers::LearnerLimits,
}

/// One message of the conversation: `who` is `"learner"` or an agent id of the course.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryLine {
    pub who: String,
    pub text: String,
    #[serde(default)]
    pub interrupted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundOp {
    Round,
}

/// A round job with its course read: what [`RoundJob::room`] lends to the round loop.
#[derive(Debug, Clone)]
pub struct PreparedRound {
    pub agents: Vec<AgentProfile>,
    pub course_title: String,
    pub course_description: String,
    pub language: String,
    pub scene: Option<Scene>,
    pub history: Vec<Utterance>,
    /// The agents' model's context, which the worker sets once it has asked the server.
    pub context_tokens: u32,
}

impl RoundJob {
    /// Reads the course; lines from agents the course does not have are dropped.
    pub fn prepare(&self) -> Result<PreparedRound, String> {
        let course = Course::from_json(&self.course_json).map_err(|e| e.to_string())?;
        let history = self
            .history
            .iter()
            .filter_map(|line| {
                let mut said = if line.who == "learner" {
                    Utterance::learner(line.text.clone())
                } else {
                    Utterance::agent(course.agent(&line.who)?, line.text.clone())
                };
                said.interrupted = line.interrupted;
                Some(said)
            })
            .collect();
        Ok(PreparedRound {
            scene: course.scenes.get(self.scene_index).cloned(),
            agents: course.agents,
            course_title: course.title,
            course_description: course.description,
            language: course.language,
            history,
            context_tokens: aula_providers::ModelLimits::resolve(
                &self.models.agents,
                Default::default(),
                self.limits,
            )
            .context_tokens,
        })
    }

    pub fn room<'a>(&'a self, prepared: &'a PreparedRound) -> Room<'a> {
        Room {
            agents: &prepared.agents,
            course_title: &prepared.course_title,
            course_description: &prepared.course_description,
            language: &prepared.language,
            scene: prepared.scene.as_ref(),
            learner: &self.learner,
            whiteboard_open: self.whiteboard_open,
            context_tokens: prepared.context_tokens,
        }
    }
}

/// One event of round `id`, flattened for the page: a plain struct is much cheaper to read in the
/// page's bundle than the tagged [`RoundEvent`] (which the session log keeps whole). The last
/// update of a round has `event == "finished"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundReport {
    pub kind: RoundReportKind,
    pub id: u32,
    pub update: RoundUpdate,
}

/// `event` is the [`RoundEvent`]'s name; `text` carries its text (a delta, thinking, a turn's whole
/// speech, an error message, a decision's `next`, a finished round's end); `action` an action's
/// course JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RoundUpdate {
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// For `decision`: the director model was asked (not a code path).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_llm: bool,
    /// For `finished`: the round ended on an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
}

impl RoundUpdate {
    pub fn of(event: &RoundEvent) -> RoundUpdate {
        let named = |event: &str| RoundUpdate {
            event: event.into(),
            ..RoundUpdate::default()
        };
        let by = |event: &str, agent: &str, text: &str| RoundUpdate {
            agent_id: Some(agent.to_owned()),
            text: text.to_owned(),
            ..named(event)
        };
        match event {
            RoundEvent::Decision { decision, by_llm } => RoundUpdate {
                by_llm: *by_llm,
                text: match decision {
                    crate::Decision::Agent(id) => id.clone(),
                    crate::Decision::User => "USER".into(),
                    crate::Decision::End(reason) => format!("END: {reason}"),
                },
                ..named("decision")
            },
            RoundEvent::AgentStart { agent_id } => by("agent_start", agent_id, ""),
            RoundEvent::Text { agent_id, text } => by("text", agent_id, text),
            RoundEvent::Thinking { agent_id, text } => by("thinking", agent_id, text),
            RoundEvent::ThinkingEnd { agent_id } => by("thinking_end", agent_id, ""),
            RoundEvent::Action { agent_id, action } => RoundUpdate {
                action: serde_json::to_string(action).ok(),
                ..by("action", agent_id, "")
            },
            RoundEvent::Dropped {
                agent_id,
                name,
                reason,
            } => by("dropped", agent_id, &format!("{name}: {reason}")),
            RoundEvent::AgentEnd {
                agent_id,
                text,
                interrupted,
                ..
            } => RoundUpdate {
                interrupted: *interrupted,
                ..by("agent_end", agent_id, text)
            },
            RoundEvent::CueLearner { from_agent } => RoundUpdate {
                agent_id: from_agent.clone(),
                ..named("cue_learner")
            },
            RoundEvent::Usage { input, output, .. } => RoundUpdate {
                text: format!("{input}+{output}"),
                ..named("usage")
            },
            RoundEvent::Error { agent_id, message } => RoundUpdate {
                agent_id: agent_id.clone(),
                text: message.clone(),
                ..named("error")
            },
            RoundEvent::Finished(end) => RoundUpdate {
                text: format!("{end:?}"),
                failed: *end == crate::round::RoundEnd::Failed,
                ..named("finished")
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundReportKind {
    Round,
}

#[cfg(test)]
mod tests {
    use aula_providers::{preset, Endpoint};

    use super::*;
    use crate::round::RoundEnd;
    use crate::{Decision, EndReason};

    #[test]
    fn updates_flatten_the_events_the_page_shows() {
        let end = RoundUpdate::of(&RoundEvent::AgentEnd {
            agent_id: "t".into(),
            text: "All of it.".into(),
            actions: 1,
            interrupted: true,
        });
        assert_eq!(
            (
                end.event.as_str(),
                end.agent_id.as_deref(),
                end.text.as_str(),
                end.interrupted
            ),
            ("agent_end", Some("t"), "All of it.", true)
        );
        let decided = RoundUpdate::of(&RoundEvent::Decision {
            decision: Decision::Agent("t".into()),
            by_llm: true,
        });
        assert!(decided.by_llm && decided.text == "t");
        let failed = RoundUpdate::of(&RoundEvent::Finished(RoundEnd::Failed));
        assert!(failed.event == "finished" && failed.failed);
        assert!(!RoundUpdate::of(&RoundEvent::Finished(RoundEnd::LearnersTurn)).failed);
    }

    #[test]
    fn a_round_job_and_its_events_survive_json() {
        let endpoint = Endpoint::from_preset(preset("openai").unwrap(), "m", Some("k".into()));
        let course_json = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../public/courses/transformer-en.json"
        ))
        .unwrap();
        let job = RoundJob {
            op: RoundOp::Round,
            id: 3,
            models: Models {
                director: endpoint.clone(),
                agents: endpoint,
            },
            course_json,
            scene_index: 1,
            learner: LearnerProfile::default(),
            whiteboard_open: false,
            mode: Mode::Questions,
            max_turns: 4,
            limits: Default::default(),
            history: vec![
                HistoryLine {
                    who: "learner".into(),
                    text: "Why?".into(),
                    interrupted: false,
                },
                HistoryLine {
                    who: "teacher".into(),
                    text: "Because.".into(),
                    interrupted: true,
                },
                HistoryLine {
                    who: "nobody".into(),
                    text: "dropped".into(),
                    interrupted: false,
                },
            ],
        };
        let prepared = job.prepare().unwrap();
        assert_eq!(
            prepared.history.len(),
            2,
            "a line from an unknown agent is dropped"
        );
        assert!(prepared.history[1].interrupted);
        assert!(prepared.scene.is_some() && !prepared.agents.is_empty());
        assert_eq!(job.room(&prepared).agents.len(), prepared.agents.len());
        let mut broken = job.clone();
        broken.course_json = "{".into();
        assert!(broken.prepare().is_err());
        let text = serde_json::to_string(&job).unwrap();
        assert!(text.starts_with("{\"op\":\"round\""), "{text}");
        assert_eq!(serde_json::from_str::<RoundJob>(&text).unwrap(), job);
        for event in [
            RoundEvent::Decision {
                decision: Decision::Agent("teacher".into()),
                by_llm: true,
            },
            RoundEvent::Decision {
                decision: Decision::End(EndReason::InvalidReply("no JSON".into())),
                by_llm: true,
            },
            RoundEvent::Text {
                agent_id: "teacher".into(),
                text: "Hi".into(),
            },
            RoundEvent::Finished(RoundEnd::Ended(EndReason::TurnLimit)),
            RoundEvent::Finished(RoundEnd::LearnersTurn),
        ] {
            let text = serde_json::to_string(&event).unwrap();
            assert_eq!(
                serde_json::from_str::<RoundEvent>(&text).unwrap(),
                event,
                "{text}"
            );
            let report = RoundReport {
                kind: RoundReportKind::Round,
                id: 3,
                update: RoundUpdate::of(&event),
            };
            let text = serde_json::to_string(&report).unwrap();
            assert_eq!(
                serde_json::from_str::<RoundReport>(&text).unwrap(),
                report,
                "{text}"
            );
        }
    }
}
