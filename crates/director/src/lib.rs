//! The director: who speaks next in a classroom round. Code decides whenever it can (one agent
//! in the room, a discussion opened by a known agent, the turn cap, a learner's question that no
//! teacher has answered yet); only otherwise is the LLM
//! asked, and its reply is parsed strictly: anything invalid, ambiguous or naming someone not
//! in the room ends the round safely, with the reason kept for the session's log.
//!
//! The crate owns no I/O and no async runtime and never sees a browser type: `decide` is pure,
//! and the round loop (`round`) and grading call the model through the providers' `Transport`
//! port, which the AI worker implements over `fetch` and tests implement in memory.

pub mod conversation;
pub mod grading;
pub mod model;
pub mod prompt;
pub mod reply;
pub mod round;
pub mod scenario;
pub mod session;
pub mod whiteboard;
pub mod wire;

use std::fmt;

use serde_json::Value;

/// Director replies are one short object; anything longer is not read (and cannot make the
/// brace scan slow).
pub const MAX_REPLY_BYTES: usize = 16 * 1024;

/// What happens next in the round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// This agent speaks.
    Agent(String),
    /// The learner's turn: the round waits for them.
    Learner,
    /// The round is over; the reason goes to the session log.
    End(EndReason),
}

/// Why a decision or a round ended (stored as a code, see [`session`]'s encoding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// The director judged the question answered or the topic covered.
    DirectorSaidEnd,
    /// The round used all its turns.
    TurnLimit,
    /// Nobody is in the room to speak.
    NoAgents,
    /// The director's reply could not be read as a decision.
    InvalidReply(String),
    /// The director named someone who is not in the room.
    UnknownAgent(String),
    /// A session's log does not say why: written before the reasons were codes, or by a newer
    /// Aula with a reason this one does not know. Never decided.
    NotRecorded,
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndReason::DirectorSaidEnd => write!(f, "the director ended the round"),
            EndReason::TurnLimit => write!(f, "the round reached its turn limit"),
            EndReason::NoAgents => write!(f, "there is no agent in the room"),
            EndReason::InvalidReply(why) => {
                write!(f, "the director's reply was not a valid decision: {why}")
            }
            EndReason::UnknownAgent(id) => {
                write!(
                    f,
                    "the director chose \"{id}\", who is not in this classroom"
                )
            }
            EndReason::NotRecorded => write!(f, "the log does not say why"),
        }
    }
}

/// What the director knows at the start of a decision. A round runs from one learner message
/// (or discussion start) to the next.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoundState {
    /// The agents in the room, in the learner's order.
    pub agent_ids: Vec<String>,
    /// Agent turns taken so far in this round.
    pub turn_count: u32,
    /// The most agent turns a round may take.
    pub max_turns: u32,
    /// The agent that opens a discussion, when the round is one.
    pub trigger_agent_id: Option<String>,
    /// The learner's latest question still waits for an answer
    /// ([`conversation::learner_question_open`]).
    pub question_open: bool,
    /// Who answers the learner by rule: the room's first teacher, else its first assistant.
    pub answerer_id: Option<String>,
    /// The agent that took the round's latest turn.
    pub last_speaker_id: Option<String>,
}

impl RoundState {
    /// The agent that answers a learner's question by rule: the first teacher in `agents`, else
    /// the first assistant.
    pub fn answerer(agents: &[model::AgentProfile]) -> Option<String> {
        [model::AgentRole::Teacher, model::AgentRole::Assistant]
            .iter()
            .find_map(|role| agents.iter().find(|a| a.role == *role))
            .map(|a| a.id.clone())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectorStep {
    /// Code decided; no LLM call.
    Decided(Decision),
    /// Ask the LLM with the director prompt, then read its reply with [`parse_director_reply`].
    NeedsLlm,
}

/// Decides without the LLM when code can, in this order: the turn cap ends the round; an empty
/// room ends it; a lone agent answers once and then hands back to the learner; a discussion opens
/// with its trigger agent; an open learner question goes to the answerer (teacher, else assistant)
/// unless they took the latest turn. So the director model is never asked, and can never end the
/// round or hand it back, while the learner's question waits for its first answer.
pub fn decide(state: &RoundState) -> DirectorStep {
    use DirectorStep::{Decided, NeedsLlm};
    if state.turn_count >= state.max_turns {
        return Decided(Decision::End(EndReason::TurnLimit));
    }
    match state.agent_ids.as_slice() {
        [] => Decided(Decision::End(EndReason::NoAgents)),
        [only] if state.turn_count == 0 => Decided(Decision::Agent(only.clone())),
        [_] => Decided(Decision::Learner),
        several => match &state.trigger_agent_id {
            Some(trigger) if state.turn_count == 0 && several.contains(trigger) => {
                Decided(Decision::Agent(trigger.clone()))
            }
            // A trigger not in the room is left to the LLM, which sees who is.
            _ => match &state.answerer_id {
                Some(answerer)
                    if state.question_open
                        && several.contains(answerer)
                        && state.last_speaker_id.as_ref() != Some(answerer) =>
                {
                    Decided(Decision::Agent(answerer.clone()))
                }
                _ => NeedsLlm,
            },
        },
    }
}

/// The top-level JSON objects in `text`, in order, skipping brace pairs that are not JSON.
fn json_objects(text: &str) -> Vec<serde_json::Map<String, Value>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut start = 0;
    while let Some(offset) = text[start..].find('{') {
        let open = start + offset;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        let mut close = None;
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            start = open + 1; // an unclosed brace: look for an object after it
            continue;
        };
        match serde_json::from_str::<Value>(&text[open..=close]) {
            Ok(Value::Object(object)) => {
                found.push(object);
                start = close + 1;
            }
            _ => start = open + 1,
        }
    }
    found
}

/// Reads the director LLM's reply: exactly one JSON object `{"next_agent": "<id>" | "USER" |
/// "END"}`, optionally inside a code fence or prose. Agent ids must match one of
/// `known_agent_ids` exactly; `USER` and `END` are read in any case.
pub fn parse_director_reply<S: AsRef<str>>(reply: &str, known_agent_ids: &[S]) -> Decision {
    let invalid = |why: &str| Decision::End(EndReason::InvalidReply(why.to_string()));
    if reply.len() > MAX_REPLY_BYTES {
        return invalid("it is far too long");
    }
    let objects = json_objects(reply);
    if objects.is_empty() {
        return invalid("it contains no JSON object");
    }
    let decisions: Vec<&Value> = objects.iter().filter_map(|o| o.get("next_agent")).collect();
    let value = match decisions.as_slice() {
        [] => return invalid("no \"next_agent\" field"),
        [one] => *one,
        _ => return invalid("it contains more than one decision"),
    };
    let Some(choice) = value.as_str() else {
        return invalid("\"next_agent\" is not a string");
    };
    if known_agent_ids.iter().any(|id| id.as_ref() == choice) {
        return Decision::Agent(choice.to_string());
    }
    let keyword = choice.trim();
    if keyword.eq_ignore_ascii_case("USER") {
        Decision::Learner
    } else if keyword.eq_ignore_ascii_case("END") {
        Decision::End(EndReason::DirectorSaidEnd)
    } else if keyword.is_empty() {
        invalid("\"next_agent\" is empty")
    } else {
        Decision::End(EndReason::UnknownAgent(choice.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ROOM: [&str; 3] = ["teacher", "mia", "leo"];

    fn round(agents: &[&str], turn_count: u32, trigger: Option<&str>) -> RoundState {
        RoundState {
            agent_ids: agents.iter().map(|a| a.to_string()).collect(),
            turn_count,
            max_turns: 10,
            trigger_agent_id: trigger.map(Into::into),
            ..RoundState::default()
        }
    }

    fn asked(turn_count: u32, answerer: Option<&str>, last: Option<&str>) -> RoundState {
        RoundState {
            question_open: true,
            answerer_id: answerer.map(Into::into),
            last_speaker_id: last.map(Into::into),
            ..round(&ROOM, turn_count, None)
        }
    }

    fn agent(id: &str) -> DirectorStep {
        DirectorStep::Decided(Decision::Agent(id.into()))
    }

    #[test]
    fn a_lone_agent_answers_then_hands_back_to_the_learner() {
        assert_eq!(decide(&round(&["teacher"], 0, None)), agent("teacher"));
        assert_eq!(
            decide(&round(&["teacher"], 1, None)),
            DirectorStep::Decided(Decision::Learner)
        );
    }

    #[test]
    fn a_discussion_opens_with_its_trigger_agent_without_the_llm() {
        assert_eq!(decide(&round(&ROOM, 0, Some("leo"))), agent("leo"));
        assert_eq!(
            decide(&round(&ROOM, 1, Some("leo"))),
            DirectorStep::NeedsLlm
        );
    }

    #[test]
    fn a_trigger_agent_not_in_the_room_is_left_to_the_llm() {
        assert_eq!(
            decide(&round(&ROOM, 0, Some("ghost"))),
            DirectorStep::NeedsLlm
        );
    }

    #[test]
    fn several_agents_without_a_trigger_need_the_llm() {
        assert_eq!(decide(&round(&ROOM, 0, None)), DirectorStep::NeedsLlm);
    }

    #[test]
    fn an_open_learner_question_goes_to_the_answerer_without_the_llm() {
        assert_eq!(decide(&asked(0, Some("teacher"), None)), agent("teacher"));
        // Mid-round (a question asked during a discussion), after a classmate spoke.
        assert_eq!(
            decide(&asked(3, Some("teacher"), Some("mia"))),
            agent("teacher")
        );
    }

    #[test]
    fn the_answerer_does_not_take_two_turns_in_a_row_nor_answer_from_outside_the_room() {
        assert_eq!(
            decide(&asked(1, Some("teacher"), Some("teacher"))),
            DirectorStep::NeedsLlm
        );
        assert_eq!(
            decide(&asked(0, Some("ghost"), None)),
            DirectorStep::NeedsLlm
        );
        assert_eq!(decide(&asked(0, None, None)), DirectorStep::NeedsLlm);
    }

    #[test]
    fn an_answered_question_or_a_discussions_opening_is_not_the_answerers() {
        let answered = RoundState {
            question_open: false,
            ..asked(0, Some("teacher"), None)
        };
        assert_eq!(decide(&answered), DirectorStep::NeedsLlm);
        let discussion = RoundState {
            trigger_agent_id: Some("leo".into()),
            ..asked(0, Some("teacher"), None)
        };
        assert_eq!(decide(&discussion), agent("leo"));
    }

    #[test]
    fn the_answerer_is_the_first_teacher_else_the_first_assistant() {
        let cast = aula_course::default_agents();
        let teacher = cast
            .iter()
            .find(|a| a.role == model::AgentRole::Teacher)
            .unwrap();
        assert_eq!(RoundState::answerer(&cast), Some(teacher.id.clone()));
        let without: Vec<_> = cast
            .iter()
            .filter(|a| a.role != model::AgentRole::Teacher)
            .cloned()
            .collect();
        let expected = without
            .iter()
            .find(|a| a.role == model::AgentRole::Assistant)
            .map(|a| a.id.clone());
        assert_eq!(RoundState::answerer(&without), expected);
        let students: Vec<_> = cast
            .iter()
            .filter(|a| a.role == model::AgentRole::Student)
            .cloned()
            .collect();
        assert_eq!(RoundState::answerer(&students), None);
    }

    #[test]
    fn the_turn_limit_ends_the_round_before_anything_else() {
        let mut state = round(&["teacher"], 0, None);
        state.max_turns = 0;
        assert_eq!(
            decide(&state),
            DirectorStep::Decided(Decision::End(EndReason::TurnLimit))
        );
    }

    #[test]
    fn an_empty_room_ends_the_round() {
        assert_eq!(
            decide(&round(&[], 0, None)),
            DirectorStep::Decided(Decision::End(EndReason::NoAgents))
        );
    }

    #[test]
    fn a_bare_decision_names_the_agent() {
        assert_eq!(
            parse_director_reply(r#"{"next_agent":"mia"}"#, &ROOM),
            Decision::Agent("mia".into())
        );
    }

    #[test]
    fn a_decision_in_a_code_fence_with_prose_around_it_is_read() {
        let reply = "Mia asked a follow-up, so the teacher should answer.\n```json\n{\n  \"next_agent\": \"teacher\"\n}\n```\nThat keeps it short.";
        assert_eq!(
            parse_director_reply(reply, &ROOM),
            Decision::Agent("teacher".into())
        );
    }

    #[test]
    fn braces_in_prose_and_inside_strings_do_not_confuse_the_reader() {
        let reply =
            r#"Options were {teacher, mia}. {"next_agent": "leo", "why": "a joke about {braces}"}"#;
        assert_eq!(
            parse_director_reply(reply, &ROOM),
            Decision::Agent("leo".into())
        );
    }

    #[test]
    fn an_unclosed_brace_before_the_decision_is_skipped() {
        let reply = r#"Thinking { out loud... {"next_agent":"mia"}"#;
        assert_eq!(
            parse_director_reply(reply, &ROOM),
            Decision::Agent("mia".into())
        );
    }

    #[test]
    fn an_overlong_reply_is_not_read() {
        let reply = format!("{}{{\"next_agent\":\"mia\"}}", " ".repeat(MAX_REPLY_BYTES));
        assert!(matches!(
            parse_director_reply(&reply, &ROOM),
            Decision::End(EndReason::InvalidReply(_))
        ));
    }

    #[test]
    fn user_and_end_are_read_in_any_case() {
        assert_eq!(
            parse_director_reply(r#"{"next_agent":"USER"}"#, &ROOM),
            Decision::Learner
        );
        assert_eq!(
            parse_director_reply(r#"{"next_agent":"end"}"#, &ROOM),
            Decision::End(EndReason::DirectorSaidEnd)
        );
    }

    #[test]
    fn an_agent_not_in_the_room_ends_the_round_naming_it() {
        let decision = parse_director_reply(r#"{"next_agent":"Mia"}"#, &ROOM);
        assert_eq!(
            decision,
            Decision::End(EndReason::UnknownAgent("Mia".into()))
        );
        let Decision::End(reason) = decision else {
            unreachable!()
        };
        assert!(reason.to_string().contains("\"Mia\""));
    }

    #[test]
    fn invalid_json_ends_the_round() {
        assert!(matches!(
            parse_director_reply(r#"{"next_agent": mia}"#, &ROOM),
            Decision::End(EndReason::InvalidReply(_))
        ));
        assert!(matches!(
            parse_director_reply("The teacher should go next.", &ROOM),
            Decision::End(EndReason::InvalidReply(_))
        ));
        assert!(matches!(
            parse_director_reply(r#"{"next_agent":"mia""#, &ROOM),
            Decision::End(EndReason::InvalidReply(_))
        ));
    }

    #[test]
    fn a_missing_or_non_string_field_ends_the_round() {
        for reply in [
            r#"{"agent":"mia"}"#,
            r#"{"next_agent":null}"#,
            r#"{"next_agent":2}"#,
            r#"{"next_agent":"  "}"#,
        ] {
            assert!(
                matches!(
                    parse_director_reply(reply, &ROOM),
                    Decision::End(EndReason::InvalidReply(_))
                ),
                "{reply}"
            );
        }
    }

    #[test]
    fn two_decisions_in_one_reply_end_the_round() {
        let reply = r#"{"next_agent":"mia"} or maybe {"next_agent":"leo"}"#;
        assert!(matches!(
            parse_director_reply(reply, &ROOM),
            Decision::End(EndReason::InvalidReply(why)) if why.contains("more than one")
        ));
    }

    proptest! {
        #[test]
        fn any_reply_gives_a_decision_and_only_known_agents_are_chosen(reply in ".{0,200}") {
            if let Decision::Agent(id) = parse_director_reply(&reply, &ROOM) {
                prop_assert!(ROOM.contains(&id.as_str()));
            }
        }

        #[test]
        fn a_decision_wrapped_in_any_prose_without_braces_is_read(
            before in "[^{}]{0,40}", after in "[^{}]{0,40}", pick in 0usize..3,
        ) {
            let reply = format!("{before}{{\"next_agent\":\"{}\"}}{after}", ROOM[pick]);
            prop_assert_eq!(parse_director_reply(&reply, &ROOM), Decision::Agent(ROOM[pick].into()));
        }
    }
}
