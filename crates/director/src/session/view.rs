//! What the learner sees of a session: the pure fold of its [`ClassEvent`]s.
//!
//! # Resume rule
//!
//! [`fold`] (the same as [`SessionView::apply`] on each event) shows a turn that has its
//! `AgentStart` but no `AgentEnd` yet as an *open* message: the text streamed so far,
//! `complete: false, interrupted: false`, and [`SessionView::speaking`] names its agent. While
//! the stream runs that is exactly right. After a reload no stream is running, so
//! [`SessionView::resume_point`] returns [`Resume::InterruptedTurn`] and the app appends the
//! checkpoints from [`SessionView::interrupted_checkpoints`]: `AgentEnd { interrupted: true }` with
//! the text streamed so far. From then on the message is shown with that text and
//! `interrupted: true, complete: false`, and the log itself says the turn was cut off, so the
//! next reload agrees. Otherwise the resume point is [`Resume::Ended`] after a `Finished`,
//! [`Resume::WaitingForLearner`] after a `CueLearner` (or a decision for the learner), and
//! [`Resume::Idle`] when none of these hold (a new session, or a round cut off between turns).
//!
//! A `DiscussionStart` is shown as a topic line ([`ViewSpeaker::DiscussionTopic`]) before the
//! discussion's turns.

use super::{ClassEvent, LoggedEvent};
use crate::round::RoundEnd;
use crate::Decision;

/// Who said a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewSpeaker {
    Learner,
    /// An agent, by id.
    Agent(String),
    /// Not a speaker: a discussion opens here; the message's text is its topic.
    DiscussionTopic,
}

/// One message as the learner sees it.
///
/// An agent's message is *open* (still streaming, or cut off by a reload) while
/// `complete` and `interrupted` are both false; `complete` means it ended normally,
/// `interrupted` that it was cut off. Learner messages are always complete.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewMessage {
    pub speaker: ViewSpeaker,
    pub text: String,
    /// Course JSON of the actions the turn performed, in order.
    pub actions: Vec<serde_json::Value>,
    pub interrupted: bool,
    pub complete: bool,
}

impl ViewMessage {
    fn is_open_by(&self, agent: &str) -> bool {
        self.open_agent() == Some(agent)
    }

    pub(super) fn open_agent(&self) -> Option<&str> {
        match &self.speaker {
            ViewSpeaker::Agent(id) if !self.complete && !self.interrupted => Some(id),
            _ => None,
        }
    }
}

/// What the app should do with a session it has just loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// Nothing is pending: a new session, or a round cut off between turns.
    Idle,
    /// The learner has the word.
    WaitingForLearner,
    /// A turn has no `AgentEnd`: append [`SessionView::interrupted_checkpoints`].
    InterruptedTurn { agent_id: String },
    /// The last round (or the discussion) is over.
    Ended,
}

/// The UI state of a session: the fold of its events.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionView {
    pub messages: Vec<ViewMessage>,
    /// The agent currently speaking (an AgentStart without its AgentEnd yet) — after a reload
    /// with no further events this is the interrupted turn: `resume_point()` tells the app to
    /// mark it interrupted. If several turns are open, the latest.
    pub speaking: Option<String>,
    /// Thinking text of the current turn, until ThinkingEnd (or the turn's start or end).
    pub thinking: Option<String>,
    /// The last thing was a `CueLearner` (or a decision for the learner); a learner message, an
    /// agent starting, another decision or the round's end clears it.
    pub waiting_for_learner: bool,
    /// How the last round ended, until a learner message, a decision or an agent starts the
    /// next round.
    pub ended: Option<RoundEnd>,
    pub errors: Vec<String>,
    /// The largest sequence number applied; 0 for none.
    pub last_seq: u64,
}

/// The view of `events`, in the order given: the same as [`SessionView::apply`] on each.
///
/// `Text` and `Action` go to the agent's open message (opening one if there is none);
/// `AgentEnd` replaces that message's text with the checkpoint text and closes it.
pub fn fold(events: &[LoggedEvent]) -> SessionView {
    let mut view = SessionView::default();
    for event in events {
        view.apply(event);
    }
    view
}

impl SessionView {
    /// Applies one more event, so the UI can follow a stream without folding again.
    pub fn apply(&mut self, logged: &LoggedEvent) {
        self.last_seq = self.last_seq.max(logged.seq);
        match &logged.event {
            ClassEvent::LearnerMessage { text } => {
                self.push_complete(ViewSpeaker::Learner, text);
                self.waiting_for_learner = false;
                self.ended = None;
            }
            ClassEvent::DiscussionStart { topic, .. } => {
                self.push_complete(ViewSpeaker::DiscussionTopic, topic);
                self.waiting_for_learner = false;
                self.ended = None;
            }
            ClassEvent::Decision { decision, .. } => {
                self.waiting_for_learner = *decision == Decision::Learner;
                self.ended = None;
            }
            ClassEvent::AgentStart { agent_id } => {
                if let Some(index) = self.open_message(agent_id) {
                    self.messages[index].interrupted = true;
                }
                self.push_open(agent_id);
                self.thinking = None;
                self.waiting_for_learner = false;
                self.ended = None;
                self.update_speaking();
            }
            ClassEvent::Text { agent_id, text } => {
                let index = self.open_or_push(agent_id);
                self.messages[index].text.push_str(text);
            }
            ClassEvent::Thinking { text, .. } => {
                self.thinking.get_or_insert_with(String::new).push_str(text);
            }
            ClassEvent::ThinkingEnd { .. } => self.thinking = None,
            ClassEvent::Action { agent_id, action } => {
                let index = self.open_or_push(agent_id);
                self.messages[index].actions.push(action.clone());
            }
            ClassEvent::AgentEnd {
                agent_id,
                text,
                interrupted,
            } => {
                let index = self
                    .open_message(agent_id)
                    .unwrap_or_else(|| self.push_open(agent_id));
                let message = &mut self.messages[index];
                message.text = text.clone();
                message.interrupted = *interrupted;
                message.complete = !*interrupted;
                self.thinking = None;
                self.update_speaking();
            }
            ClassEvent::CueLearner { .. } => self.waiting_for_learner = true,
            ClassEvent::Error { message, .. } => self.errors.push(message.clone()),
            ClassEvent::Finished(end) => {
                self.ended = Some(end.clone());
                self.waiting_for_learner = false;
            }
            ClassEvent::Dropped { .. } => {}
        }
    }

    /// What the app should do after loading the session (see the module's resume rule).
    pub fn resume_point(&self) -> Resume {
        if let Some(agent_id) = &self.speaking {
            Resume::InterruptedTurn {
                agent_id: agent_id.clone(),
            }
        } else if self.ended.is_some() {
            Resume::Ended
        } else if self.waiting_for_learner {
            Resume::WaitingForLearner
        } else {
            Resume::Idle
        }
    }

    /// The `AgentEnd { interrupted: true }` checkpoints that close every open turn with the text
    /// streamed so far, in message order. Empty unless the resume point is
    /// [`Resume::InterruptedTurn`].
    pub fn interrupted_checkpoints(&self) -> Vec<ClassEvent> {
        self.messages
            .iter()
            .filter_map(|message| {
                message.open_agent().map(|agent_id| ClassEvent::AgentEnd {
                    agent_id: agent_id.to_owned(),
                    text: message.text.clone(),
                    interrupted: true,
                })
            })
            .collect()
    }

    fn push_complete(&mut self, speaker: ViewSpeaker, text: &str) {
        self.messages.push(ViewMessage {
            speaker,
            text: text.to_owned(),
            actions: Vec::new(),
            interrupted: false,
            complete: true,
        });
    }

    fn open_message(&self, agent_id: &str) -> Option<usize> {
        self.messages.iter().rposition(|m| m.is_open_by(agent_id))
    }

    fn push_open(&mut self, agent_id: &str) -> usize {
        self.messages.push(ViewMessage {
            speaker: ViewSpeaker::Agent(agent_id.to_owned()),
            text: String::new(),
            actions: Vec::new(),
            interrupted: false,
            complete: false,
        });
        self.messages.len() - 1
    }

    fn open_or_push(&mut self, agent_id: &str) -> usize {
        match self.open_message(agent_id) {
            Some(index) => index,
            None => {
                let index = self.push_open(agent_id);
                self.update_speaking();
                index
            }
        }
    }

    fn update_speaking(&mut self) {
        self.speaking = self
            .messages
            .iter()
            .rev()
            .find_map(|m| m.open_agent())
            .map(str::to_owned);
    }
}
