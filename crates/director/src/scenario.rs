//! Director scenarios: small classroom situations, kept as JSON files in `scenarios/`, each with
//! what the director must do. The host tests check the code paths and the prompts against them;
//! `cargo xtask eval-director` plays them against a real model and counts good answers.

use serde::Deserialize;

use crate::model::{AgentProfile, DiscussionContext, TurnSummary, Utterance};
use crate::{Decision, RoundState};

/// One situation and what should happen in it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub id: String,
    /// `premature_end`, `acknowledgement`, `frustrated`, `answer_content` or `code_path`.
    pub kind: String,
    pub summary: String,
    /// Ids of the built-in agents in the room, in order.
    pub agents: Vec<String>,
    pub mode: ScenarioMode,
    /// `[speaker, text]`: `learner` or an agent id.
    pub history: Vec<(String, String)>,
    /// This round's agent turns so far: `[agent id, preview]`.
    #[serde(default)]
    pub turns: Vec<(String, String)>,
    pub expect: Expectation,
    /// The director reply mock-llm plays for this scenario in the end-to-end tests.
    #[serde(default)]
    pub mock_reply: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ScenarioMode {
    /// `"qa"`.
    Questions(String),
    Discussion {
        discussion: DiscussionSpec,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscussionSpec {
    pub topic: String,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub initiator: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// `llm` when the director model must be asked, else the agent id code picks.
    pub code_path: String,
    #[serde(default)]
    pub director_prompt_contains: Vec<String>,
    #[serde(default)]
    pub director_prompt_lacks: Vec<String>,
    /// Decisions that count as right: agent ids, `USER`, `END`.
    pub good: Vec<String>,
    /// Decisions that count as the failure this scenario is about.
    #[serde(default)]
    pub bad: Vec<String>,
    /// For `answer_content`: one of these must appear in the first two sentences of the teacher's reply.
    #[serde(default)]
    pub answer_keywords: Vec<String>,
}

impl Scenario {
    /// The agents in the room, taken from `all` by id.
    pub fn cast(&self, all: &[AgentProfile]) -> Result<Vec<AgentProfile>, String> {
        self.agents
            .iter()
            .map(|id| {
                all.iter()
                    .find(|a| &a.id == id)
                    .cloned()
                    .ok_or_else(|| format!("{}: no agent \"{id}\"", self.id))
            })
            .collect()
    }

    fn agent<'c>(&self, cast: &'c [AgentProfile], id: &str) -> &'c AgentProfile {
        cast.iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("{}: \"{id}\" is not in the room", self.id))
    }

    pub fn history(&self, cast: &[AgentProfile]) -> Vec<Utterance> {
        self.history
            .iter()
            .map(|(who, text)| match who.as_str() {
                "learner" => Utterance::learner(text.clone()),
                id => Utterance::agent(self.agent(cast, id), text.clone()),
            })
            .collect()
    }

    pub fn turns(&self, cast: &[AgentProfile]) -> Vec<TurnSummary> {
        self.turns
            .iter()
            .map(|(id, text)| {
                let agent = self.agent(cast, id);
                TurnSummary {
                    agent_id: agent.id.clone(),
                    agent_name: agent.name.clone(),
                    role: agent.role,
                    preview: text.clone(),
                    action_count: 0,
                    board_notes: Vec::new(),
                }
            })
            .collect()
    }

    pub fn discussion(&self) -> Option<DiscussionContext> {
        match &self.mode {
            ScenarioMode::Questions(_) => None,
            ScenarioMode::Discussion { discussion } => Some(DiscussionContext {
                topic: discussion.topic.clone(),
                prompt: discussion.prompt.clone(),
                initiator: discussion.initiator.clone(),
            }),
        }
    }

    pub fn round_state(&self, cast: &[AgentProfile]) -> RoundState {
        RoundState {
            agent_ids: cast.iter().map(|a| a.id.clone()).collect(),
            turn_count: self.turns.len() as u32,
            max_turns: 10,
            trigger_agent_id: self.discussion().and_then(|d| d.initiator),
            question_open: crate::conversation::learner_question_open(&self.history(cast)),
            answerer_id: RoundState::answerer(cast),
            last_speaker_id: self.turns(cast).last().map(|t| t.agent_id.clone()),
        }
    }

    /// The decision as the label the expectation uses.
    pub fn label(decision: &Decision) -> String {
        match decision {
            Decision::Agent(id) => id.clone(),
            Decision::Learner => "USER".into(),
            Decision::End(_) => "END".into(),
        }
    }

    pub fn is_good(&self, decision: &Decision) -> bool {
        self.expect.good.contains(&Scenario::label(decision))
    }

    pub fn is_bad(&self, decision: &Decision) -> bool {
        self.expect.bad.contains(&Scenario::label(decision))
    }
}

/// Every `*.json` scenario in `dir`, sorted by file name.
#[cfg(not(target_arch = "wasm32"))]
pub fn load_dir(dir: &std::path::Path) -> Result<Vec<Scenario>, String> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect()
}
