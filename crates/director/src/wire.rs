//! A round as a job for the AI worker: the page sends a [`RoundJob`] (everything the round needs,
//! as plain data) and gets one [`RoundReport`] per [`RoundEvent`] back. JSON over `postMessage`.

use aula_course::{AgentProfile, Scene};
use serde::{Deserialize, Serialize};

use crate::model::{LearnerProfile, Utterance};
use crate::round::{Mode, Models, Room, RoundEvent};

/// Everything a round needs; `op` is always `"round"` (it shares the worker's inbox with the
/// providers' jobs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundJob {
    pub op: RoundOp,
    pub id: u32,
    pub models: Models,
    pub agents: Vec<AgentProfile>,
    pub course_title: String,
    #[serde(default)]
    pub course_description: String,
    pub language: String,
    #[serde(default)]
    pub scene: Option<Scene>,
    #[serde(default)]
    pub learner: LearnerProfile,
    #[serde(default)]
    pub whiteboard_open: bool,
    pub mode: Mode,
    pub max_turns: u32,
    /// The conversation so far, ending with the learner's new message.
    pub history: Vec<Utterance>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundOp {
    Round,
}

impl RoundJob {
    pub fn room(&self) -> Room<'_> {
        Room {
            agents: &self.agents,
            course_title: &self.course_title,
            course_description: &self.course_description,
            language: &self.language,
            scene: self.scene.as_ref(),
            learner: &self.learner,
            whiteboard_open: self.whiteboard_open,
        }
    }
}

/// One event of round `id`; the last is always `RoundEvent::Finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundReport {
    pub kind: RoundReportKind,
    pub id: u32,
    pub event: RoundEvent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundReportKind {
    Round,
}

#[cfg(test)]
mod tests {
    use aula_course::default_agents;
    use aula_providers::{preset, Endpoint};

    use super::*;
    use crate::round::RoundEnd;
    use crate::{Decision, EndReason};

    #[test]
    fn a_round_job_and_its_events_survive_json() {
        let endpoint = Endpoint::from_preset(preset("openai").unwrap(), "m", Some("k".into()));
        let job = RoundJob {
            op: RoundOp::Round,
            id: 3,
            models: Models {
                director: endpoint.clone(),
                agents: endpoint,
            },
            agents: default_agents(),
            course_title: "T".into(),
            course_description: String::new(),
            language: "en".into(),
            scene: None,
            learner: LearnerProfile::default(),
            whiteboard_open: false,
            mode: Mode::Questions,
            max_turns: 4,
            history: vec![Utterance::learner("Why?")],
        };
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
