//! The data the director's parts share: who said what this session, what each agent did this
//! round, and what was drawn on the whiteboard. Plain values; the app records them from the
//! session's event log.

pub use aula_course::{Action, ActionKind, AgentProfile, AgentRole};
use serde::{Deserialize, Serialize};

/// Who said something in the classroom conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "who", rename_all = "snake_case")]
pub enum Speaker {
    /// The human learner.
    Learner,
    /// One of the AI agents.
    Agent {
        id: String,
        name: String,
        role: AgentRole,
    },
    /// A note from the app itself (e.g. "the lecture resumed").
    System,
}

/// One message of the conversation, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Utterance {
    pub speaker: Speaker,
    /// What was said (speech only, no action JSON).
    pub text: String,
    /// The actions the speaker performed with this message, in order.
    #[serde(default)]
    pub actions: Vec<Action>,
    /// The learner cut this message off before it finished.
    #[serde(default)]
    pub interrupted: bool,
}

impl Utterance {
    pub fn learner(text: impl Into<String>) -> Utterance {
        Utterance {
            speaker: Speaker::Learner,
            text: text.into(),
            actions: Vec::new(),
            interrupted: false,
        }
    }

    pub fn agent(agent: &AgentProfile, text: impl Into<String>) -> Utterance {
        Utterance {
            speaker: Speaker::Agent {
                id: agent.id.clone(),
                name: agent.name.clone(),
                role: agent.role,
            },
            text: text.into(),
            actions: Vec::new(),
            interrupted: false,
        }
    }
}

/// One agent turn of the current round, as the director and the other agents see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSummary {
    pub agent_id: String,
    pub agent_name: String,
    pub role: AgentRole,
    /// The turn's speech, cut to [`TurnSummary::PREVIEW_CHARS`] characters.
    pub preview: String,
    pub action_count: usize,
    /// One short note per whiteboard action of the turn (`drew formula "E=mc^2"`, ...).
    pub board_notes: Vec<String>,
}

impl TurnSummary {
    pub const PREVIEW_CHARS: usize = 300;
}

/// A whiteboard action taken this round, and by whom.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub agent_id: String,
    pub agent_name: String,
    pub action: Action,
}

/// A discussion the class is having instead of plain questions and answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscussionContext {
    pub topic: String,
    /// How the discussion should go, if the course says.
    pub prompt: Option<String>,
    /// The agent who opened it.
    pub initiator: Option<String>,
}

/// What the learner told Aula about themselves (all optional).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LearnerProfile {
    pub nickname: Option<String>,
    pub bio: Option<String>,
}

impl LearnerProfile {
    pub fn is_empty(&self) -> bool {
        self.nickname.as_deref().is_none_or(|n| n.trim().is_empty())
            && self.bio.as_deref().is_none_or(|b| b.trim().is_empty())
    }
}

/// `text` with every run of whitespace turned into one space, trimmed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` on one line, cut to at most `max` characters with `…` (for prompts and notes).
pub fn clip(text: &str, max: usize) -> String {
    preview(&one_line(text), max)
}

/// Cuts `text` to at most `max` characters (not bytes), adding `…` when it was longer.
pub fn preview(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", text[..cut].trim_end()),
    }
}
