//! Who is in the classroom: agent profiles, their roles, the actions each role may use by
//! default, and the built-in cast.

use serde::{Deserialize, Serialize};

use crate::action::ActionKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentRole {
    /// Leads the lesson: owns the slides, the pacing and the first real answer to a question.
    Teacher,
    /// Fills gaps and rephrases without taking over.
    Assistant,
    /// A classmate: asks, reacts, takes notes, jokes.
    Student,
}

impl AgentRole {
    /// The role's name in course files (`teacher`, `assistant`, `student`).
    pub fn as_str(self) -> &'static str {
        match self {
            AgentRole::Teacher => "teacher",
            AgentRole::Assistant => "assistant",
            AgentRole::Student => "student",
        }
    }

    /// The actions an agent of this role may use unless its profile says otherwise: every role
    /// gets the whiteboard; only the teacher also gets the slide actions.
    pub fn default_actions(self) -> Vec<ActionKind> {
        let whiteboard = ActionKind::ALL
            .iter()
            .copied()
            .filter(|k| k.is_whiteboard());
        match self {
            AgentRole::Teacher => [
                ActionKind::Spotlight,
                ActionKind::Laser,
                ActionKind::PlayVideo,
            ]
            .into_iter()
            .chain(whiteboard)
            .collect(),
            AgentRole::Assistant | AgentRole::Student => whiteboard.collect(),
        }
    }
}

/// A voice to speak with: a speech provider and one of its voices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentVoice {
    /// e.g. `browser`, `openai`.
    pub provider: String,
    /// The provider's voice name or URI.
    pub voice: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentProfile {
    pub id: String,
    /// Shown to the learner.
    pub name: String,
    pub role: AgentRole,
    /// How the agent thinks and talks; goes into its prompt.
    pub persona: String,
    /// Path or URL of the avatar picture.
    pub avatar: String,
    /// `#rrggbb`.
    pub color: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<AgentVoice>,
    /// Higher speaks earlier when the director has no better reason; the teacher is highest.
    pub priority: u8,
    pub allowed_actions: Vec<ActionKind>,
}

/// The built-in cast: a teacher and three classmates with different habits.
pub fn default_agents() -> Vec<AgentProfile> {
    let agent = |id: &str,
                 name: &str,
                 role: AgentRole,
                 priority: u8,
                 color: &str,
                 avatar: &str,
                 persona: &str| AgentProfile {
        id: id.into(),
        name: name.into(),
        role,
        persona: persona.into(),
        avatar: avatar.into(),
        color: color.into(),
        voice: None,
        priority,
        allowed_actions: role.default_actions(),
    };
    vec![
        agent(
            "teacher",
            "Professor Lin",
            AgentRole::Teacher,
            10,
            "#2563eb",
            "/avatars/teacher.svg",
            "A patient lead teacher who builds every idea from something the learner already \
             knows. Explains one step at a time, reaches for a concrete picture before a formula, \
             points at the slide or sketches on the whiteboard while talking, and stops now and \
             then to check the class is still with her. Answers a direct question directly first, \
             then adds the why.",
        ),
        agent(
            "mia",
            "Mia",
            AgentRole::Student,
            5,
            "#db2777",
            "/avatars/mia.svg",
            "The classmate who always asks the next question: why does that work, what happens \
             at the edge, what if the numbers were negative. Short, eager questions; never \
             explains before the teacher has.",
        ),
        agent(
            "leo",
            "Leo",
            AgentRole::Student,
            4,
            "#d97706",
            "/avatars/leo.svg",
            "The class joker. Turns the topic into a one-line comparison from games, food or \
             football that is funny and, more often than not, actually right. Keeps it to one \
             sentence and never mocks anyone.",
        ),
        agent(
            "noor",
            "Noor",
            AgentRole::Student,
            5,
            "#0891b2",
            "/avatars/noor.svg",
            "The careful note-taker. Sums up what was just said in two or three plain bullet \
             points, writes the key formula on the whiteboard, and asks when two explanations \
             seem to disagree.",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_s_name_is_the_one_course_files_use() {
        for role in [AgentRole::Teacher, AgentRole::Assistant, AgentRole::Student] {
            let json = serde_json::to_value(role).unwrap();
            assert_eq!(json.as_str(), Some(role.as_str()));
        }
    }

    #[test]
    fn default_cast_is_one_teacher_and_three_classmates_with_distinct_personas() {
        let agents = default_agents();
        assert_eq!(agents.len(), 4);
        assert_eq!(
            agents
                .iter()
                .filter(|a| a.role == AgentRole::Teacher)
                .count(),
            1
        );
        let mut personas: Vec<_> = agents.iter().map(|a| a.persona.as_str()).collect();
        personas.dedup();
        assert_eq!(personas.len(), 4);
        let mut ids: Vec<_> = agents.iter().map(|a| a.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 4);
    }

    #[test]
    fn only_the_teacher_gets_slide_actions_by_default() {
        let teacher = AgentRole::Teacher.default_actions();
        let student = AgentRole::Student.default_actions();
        assert!(teacher.contains(&ActionKind::Spotlight));
        assert!(teacher.contains(&ActionKind::PlayVideo));
        assert!(!student.contains(&ActionKind::Spotlight));
        assert!(student.contains(&ActionKind::WbDrawText));
        assert!(!student.contains(&ActionKind::Speech));
        assert_eq!(AgentRole::Assistant.default_actions(), student);
    }
}
