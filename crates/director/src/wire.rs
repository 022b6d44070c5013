//! A round as a job for the AI worker: the page sends a [`RoundJob`] (everything the round needs,
//! as plain data) and gets one [`RoundReport`] per [`ClassEvent`] back. JSON over `postMessage`.

use aula_course::{AgentProfile, Course, Scene};
use serde::{Deserialize, Serialize};

use crate::model::{LearnerProfile, Utterance};
use crate::round::{Mode, Models, Room};
use crate::session::ClassEvent;

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

/// One event of round `id`, as the session's flat record (see [`crate::session`]): the page
/// folds and logs the same [`ClassEvent`] the round emitted. The last event of a round is
/// [`ClassEvent::Finished`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundReport {
    pub kind: RoundReportKind,
    pub id: u32,
    pub event: ClassEvent,
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
            ClassEvent::Decision {
                decision: Decision::Agent("teacher".into()),
                by_llm: true,
            },
            ClassEvent::Decision {
                decision: Decision::End(EndReason::InvalidReply("no JSON".into())),
                by_llm: true,
            },
            ClassEvent::Text {
                agent_id: "teacher".into(),
                text: "Hi".into(),
            },
            ClassEvent::Finished(RoundEnd::Ended(EndReason::TurnLimit)),
            ClassEvent::Finished(RoundEnd::LearnersTurn),
        ] {
            let report = RoundReport {
                kind: RoundReportKind::Round,
                id: 3,
                event,
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
