//! The round loop: decide → stream the chosen agent → record → decide…, until the director ends
//! the round, hands it to the learner, the turn cap is reached, two turns in a row come back
//! empty, a call fails, or the learner stops it.
//!
//! The loop owns no I/O of its own: it calls the LLM through the providers' [`Transport`] port and
//! reports everything as [`ClassEvent`]s, which the page appends to the session's log as they
//! happen. Host tests drive it with the providers' scripted transport.
//!
//! # One step
//!
//! 1. [`decide`](crate::decide) picks the speaker by code when it can (see there); otherwise the
//!    director model is asked with `prompt::director_prompt` and its reply read strictly. The
//!    director prompt shows what code computed rather than leaving it to the model: whether the
//!    learner's question is still open (`conversation::learner_question_open`: a classmate's
//!    reply does not answer it, nor does a teacher's "OK!" or anything under 15 characters) and
//!    whether the learner sounds frustrated. Its size is bounded: the last 10 messages of at
//!    most 200 characters, turn previews of 100 characters, at most 20 turns.
//! 2. The chosen agent is called with `prompt::agent_prompt` and `conversation::agent_messages`
//!    (its own turns as `assistant`), the oldest messages left out first when the context is
//!    small. The stream goes through `reply::ReplyParser`: text deltas as they arrive, each
//!    complete action turned into the course's `Action`, and actions this agent may not use here
//!    reported as `Dropped`. Every request has a reply limit ([`AGENT_REPLY`],
//!    [`DIRECTOR_REPLY`]), so a runaway reply ends with a length stop.
//! 3. The turn is recorded (a `TurnSummary`, the whiteboard ledger, the history). A turn whose
//!    stream fails keeps its text and ends with `AgentEnd { interrupted: true }`.
//!
//! # In the classroom
//!
//! The page (`crates/app/src/classroom/ask.rs`) posts a [`crate::wire::RoundJob`] to the AI
//! worker, which runs this loop and posts every event back. The page turns every
//! `ClassEvent::Action` into `player::Command::Live`, and the player's live layer shows it over the
//! lecture (`crates/player/src/live.rs`); the lecture's own timeline is never changed. A discussion
//! is a round in [`Mode::Discussion`] with the scene's topic, prompt and initiator, who speaks
//! first by code.
//!
//! `cargo xtask eval-director` plays the scenarios (`scenarios/*.json`) through this loop's
//! parts against a real model (`xtask/src/eval.rs`); `cargo xtask test` runs the same code
//! against mock-llm. `cargo xtask bench` times the reply parser against re-parsing the received
//! text at every chunk (`benches/reply.rs`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use aula_course::Scene;
use aula_providers::budget::{fit_reply, prompt_room, prompt_tokens, ReplySize, TooLong};
use aula_providers::{
    stream_chat, AbortHandle, ChatMessage, ChatRequest, ChatRole, Endpoint, StreamEvent, Transport,
};

use crate::conversation::{self, agent_messages};
use crate::model::{
    preview, Action, AgentProfile, DiscussionContext, LearnerProfile, LedgerEntry, TurnSummary,
    Utterance,
};
use crate::prompt::{agent_prompt, director_prompt, AgentContext, DirectorContext, DIRECTOR_ASK};
use crate::reply::{ReplyEvent, ReplyParser};
use crate::session::ClassEvent;
use crate::whiteboard::describe;
use crate::{decide, parse_director_reply, Decision, DirectorStep, EndReason, RoundState};

/// How many earlier messages an agent's call carries.
const AGENT_HISTORY_MESSAGES: usize = 20;
/// Two agent turns in a row with no speech and no action end the round.
const MAX_EMPTY_TURNS: u32 = 2;

/// The classroom a round happens in.
#[derive(Debug, Clone, Copy)]
pub struct Room<'a> {
    /// The agents taking part, in the learner's order.
    pub agents: &'a [AgentProfile],
    pub course_title: &'a str,
    pub course_description: &'a str,
    pub language: &'a str,
    /// The scene on screen.
    pub scene: Option<&'a Scene>,
    pub learner: &'a LearnerProfile,
    pub whiteboard_open: bool,
    /// The agents' model's context in tokens: every prompt is fitted to it.
    pub context_tokens: u32,
}

/// How long an agent's turn may be: a few sentences and some drawing, with room to spare; never
/// asked for with less than a short answer's room.
pub const AGENT_REPLY: ReplySize = ReplySize::new(800, 200);
/// The director's decision is one small JSON object.
pub const DIRECTOR_REPLY: ReplySize = ReplySize::new(200, 60);

/// Which model decides and which teaches (they may differ: a cheap one for routing).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Models {
    pub director: Endpoint,
    pub agents: Endpoint,
}

/// What kind of round this is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The learner asked something.
    Questions,
    /// A discussion, opened by a scene's discussion action or by the learner.
    Discussion(DiscussionContext),
}

/// Why a round ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoundEnd {
    /// The director (or a code path) ended it.
    Ended(EndReason),
    /// It is the learner's turn: an agent asked them something, or the lone agent answered.
    LearnersTurn,
    /// Two turns in a row said and did nothing.
    EmptyTurns,
    /// The learner pressed stop.
    Cancelled,
    /// A provider call failed; the message is in the preceding [`ClassEvent::Error`].
    Failed,
}

/// An action as the course JSON the session carries. Through the text serializer, which the
/// worker has anyway, rather than `serde_json::to_value`, which would compile the action's
/// serializer a second time.
fn course_json(action: &Action) -> serde_json::Value {
    serde_json::to_string(action)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Stops a running round from outside (the stop button): the current stream is aborted and the
/// loop ends at its next step.
#[derive(Clone, Default)]
pub struct RoundControl(Rc<ControlInner>);

#[derive(Default)]
struct ControlInner {
    cancelled: Cell<bool>,
    current: RefCell<Option<Box<dyn AbortHandle>>>,
}

impl RoundControl {
    pub fn cancel(&self) {
        self.0.cancelled.set(true);
        if let Some(abort) = self.0.current.borrow().as_ref() {
            abort.abort();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.get()
    }

    fn track(&self, abort: Box<dyn AbortHandle>) {
        if self.is_cancelled() {
            abort.abort();
        }
        *self.0.current.borrow_mut() = Some(abort);
    }

    fn untrack(&self) {
        self.0.current.borrow_mut().take();
    }
}

/// One round's memory: the turns taken and what was drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    pub mode: Mode,
    pub max_turns: u32,
    pub turns: Vec<TurnSummary>,
    pub ledger: Vec<LedgerEntry>,
    /// What the round's model calls cost, as the providers reported it.
    pub tokens: Tokens,
    empty_in_a_row: u32,
}

/// Tokens used by model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// Of `input`, how many the provider read from its prompt cache.
    pub cached: u64,
}

impl Tokens {
    fn add(&mut self, input: u64, output: u64, cached: u64) {
        self.input += input;
        self.output += output;
        self.cached += cached;
    }
}

impl Round {
    /// A new round. A room with one agent takes one turn; otherwise up to `max_turns` (at least 1).
    pub fn new(mode: Mode, max_turns: u32) -> Round {
        Round {
            mode,
            max_turns: max_turns.max(1),
            turns: Vec::new(),
            ledger: Vec::new(),
            tokens: Tokens::default(),
            empty_in_a_row: 0,
        }
    }

    fn discussion(&self) -> Option<&DiscussionContext> {
        match &self.mode {
            Mode::Discussion(d) => Some(d),
            Mode::Questions => None,
        }
    }

    fn state(&self, room: &Room, history: &[Utterance]) -> RoundState {
        RoundState {
            agent_ids: room.agents.iter().map(|a| a.id.clone()).collect(),
            turn_count: self.turns.len() as u32,
            max_turns: self.max_turns,
            trigger_agent_id: self.discussion().and_then(|d| d.initiator.clone()),
            question_open: conversation::learner_question_open(history),
            answerer_id: RoundState::answerer(room.agents),
            last_speaker_id: self.turns.last().map(|t| t.agent_id.clone()),
        }
    }
}

/// Runs one call to its end and gives its events to `on_stream`; the round's stop button aborts it.
async fn call(
    transport: &dyn Transport,
    control: &RoundControl,
    endpoint: Endpoint,
    request: &ChatRequest,
    on_stream: &mut dyn FnMut(StreamEvent),
) {
    let (abort, run) = stream_chat(transport, endpoint, request, on_stream);
    control.track(abort);
    run.await;
    control.untrack();
}

/// Asks the director model; the decision, or the provider's error message.
async fn ask_director(
    transport: &dyn Transport,
    control: &RoundControl,
    endpoint: Endpoint,
    prompt: String,
    known: &[String],
    context_tokens: u32,
    tokens: &mut Tokens,
) -> Result<Decision, String> {
    let mut request = ChatRequest::new(prompt, vec![ChatMessage::user(DIRECTOR_ASK)]);
    request.temperature = Some(0.0);
    fit_reply(&mut request, context_tokens, DIRECTOR_REPLY).map_err(|e| e.to_string())?;
    let mut reply = String::new();
    let mut failure = None;
    call(
        transport,
        control,
        endpoint,
        &request,
        &mut |event| match event {
            StreamEvent::TextDelta(text) => reply.push_str(&text),
            StreamEvent::Usage {
                input,
                output,
                cached,
            } => tokens.add(input, output, cached),
            StreamEvent::Error(error) => failure = Some(error.to_string()),
            _ => {}
        },
    )
    .await;
    match failure {
        Some(message) => Err(message),
        None => Ok(parse_director_reply(&reply, known)),
    }
}

/// What one agent turn produced.
struct TurnOutcome {
    text: String,
    actions: Vec<Action>,
    failure: Option<String>,
    tokens: Tokens,
}

#[allow(clippy::too_many_arguments)]
async fn run_agent(
    transport: &dyn Transport,
    control: &RoundControl,
    endpoint: Endpoint,
    room: &Room<'_>,
    round: &Round,
    agent: &AgentProfile,
    history: &[Utterance],
    emit: &mut dyn FnMut(ClassEvent),
) -> TurnOutcome {
    let allowed = crate::prompt::effective_actions(agent, room.scene.map(|s| &s.content));
    let system = agent_prompt(&AgentContext {
        agent,
        course_title: room.course_title,
        course_description: room.course_description,
        language: room.language,
        scene: room.scene,
        turns: &round.turns,
        ledger: &round.ledger,
        learner: room.learner,
        discussion: round.discussion(),
        whiteboard_open: room.whiteboard_open,
        answering_learner: conversation::learner_question_open(history),
    });
    let id = agent.id.clone();
    let mut parser = ReplyParser::new();
    let mut outcome = TurnOutcome {
        text: String::new(),
        actions: Vec::new(),
        failure: None,
        tokens: Tokens::default(),
    };
    let schema = aula_providers::preset(&endpoint.provider)
        .is_some_and(|p| p.enforces_schemas)
        .then(|| agent_reply_schema(&allowed));
    let request = match fitted_agent_request(
        system,
        agent_messages(history, &agent.id, AGENT_HISTORY_MESSAGES),
        schema,
        room.context_tokens,
    ) {
        Ok(request) => request,
        Err(too_long) => {
            outcome.failure = Some(too_long.to_string());
            return outcome;
        }
    };
    let mut thinking = false;
    let handle =
        |events: Vec<ReplyEvent>, outcome: &mut TurnOutcome, emit: &mut dyn FnMut(ClassEvent)| {
            for event in events {
                match event {
                    ReplyEvent::Text(text) => {
                        outcome.text.push_str(&text);
                        emit(ClassEvent::Text {
                            agent_id: id.clone(),
                            text,
                        });
                    }
                    ReplyEvent::Action(action)
                        if action.kind().is_some_and(|k| allowed.contains(&k)) =>
                    {
                        emit(ClassEvent::Action {
                            agent_id: id.clone(),
                            action: course_json(&action),
                        });
                        outcome.actions.push(action);
                    }
                    ReplyEvent::Action(action) => emit(ClassEvent::Dropped {
                        agent_id: id.clone(),
                        name: action.type_name().to_owned(),
                        reason: "this agent may not use that action here".into(),
                    }),
                    ReplyEvent::Dropped { name, reason } => emit(ClassEvent::Dropped {
                        agent_id: id.clone(),
                        name,
                        reason,
                    }),
                }
            }
        };
    call(
        transport,
        control,
        endpoint,
        &request,
        &mut |event| match event {
            // With a reply schema the words arrive as JSON deltas.
            StreamEvent::TextDelta(text) | StreamEvent::JsonDelta(text) => {
                if thinking {
                    thinking = false;
                    emit(ClassEvent::ThinkingEnd {
                        agent_id: id.clone(),
                    });
                }
                let events = parser.push(&text);
                handle(events, &mut outcome, emit);
            }
            StreamEvent::ThinkingDelta(text) => {
                thinking = true;
                emit(ClassEvent::Thinking {
                    agent_id: id.clone(),
                    text,
                });
            }
            StreamEvent::ThinkingEnd if thinking => {
                thinking = false;
                emit(ClassEvent::ThinkingEnd {
                    agent_id: id.clone(),
                });
            }
            StreamEvent::Usage {
                input,
                output,
                cached,
            } => outcome.tokens.add(input, output, cached),
            StreamEvent::Error(error) => outcome.failure = Some(error.to_string()),
            _ => {}
        },
    )
    .await;
    let rest = parser.finish();
    handle(rest, &mut outcome, emit);
    outcome
}

/// The agent reply format as a JSON schema, for servers that enforce one (llama.cpp, Ollama,
/// LM Studio turn it into a sampling grammar): a non-empty array of speech items and of the
/// actions this agent may use, so a small model's reply is an array of items by construction
/// instead of a bare object or prose the parser must guess at.
fn agent_reply_schema(allowed: &[aula_course::ActionKind]) -> aula_providers::JsonSchema {
    // Read from text rather than built with `json!`: far less code in the worker.
    const SCHEMA: &str = r#"{"type":"array","minItems":1,"maxItems":8,"items":{"anyOf":[
        {"type":"object","properties":{"type":{"type":"string","enum":["text"]},
            "content":{"type":"string","minLength":1,"maxLength":600}},
            "required":["type","content"],"additionalProperties":false},
        {"type":"object","properties":{"type":{"type":"string","enum":["action"]},
            "name":{"type":"string","enum":[]},"params":{"type":"object"}},
            "required":["type","name","params"],"additionalProperties":false}]}}"#;
    let mut schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap_or_default();
    if let Some(kinds) = schema["items"]["anyOf"].as_array_mut() {
        if allowed.is_empty() {
            kinds.truncate(1);
        } else if let Some(names) = kinds[1]["properties"]["name"]["enum"].as_array_mut() {
            names.extend(allowed.iter().map(|k| serde_json::Value::from(k.as_str())));
        }
    }
    aula_providers::JsonSchema {
        name: "agent_reply".into(),
        schema,
    }
}

/// An agent's request fitted to the model's context: the oldest messages of the conversation
/// are left out first (the latest one, which the agent answers, always stays), then the reply
/// gets what is left, up to [`AGENT_REPLY`].
fn fitted_agent_request(
    system: String,
    mut messages: Vec<ChatMessage>,
    schema: Option<aula_providers::JsonSchema>,
    context_tokens: u32,
) -> Result<ChatRequest, TooLong> {
    let room = prompt_room(context_tokens, AGENT_REPLY.want);
    let mut request = ChatRequest::new(system, Vec::new());
    request.json_schema = schema;
    loop {
        request.messages = messages.clone();
        if prompt_tokens(&request) <= room || messages.len() <= 1 {
            break;
        }
        // Drop the oldest message; a conversation must still start with the learner's turn.
        messages.remove(0);
        while messages.len() > 1 && messages[0].role != ChatRole::User {
            messages.remove(0);
        }
    }
    fit_reply(&mut request, context_tokens, AGENT_REPLY)?;
    Ok(request)
}

/// Runs the round to its end. `history` is the session's conversation; each agent turn is
/// appended to it as it finishes. Returns why the round ended (also the last event).
pub async fn run_round(
    transport: &dyn Transport,
    models: &Models,
    room: Room<'_>,
    round: &mut Round,
    history: &mut Vec<Utterance>,
    control: &RoundControl,
    emit: &mut dyn FnMut(ClassEvent),
) -> RoundEnd {
    let end = loop {
        if control.is_cancelled() {
            break RoundEnd::Cancelled;
        }
        let (decision, by_llm) = match decide(&round.state(&room, history)) {
            DirectorStep::Decided(decision) => (decision, false),
            DirectorStep::NeedsLlm => {
                let prompt = director_prompt(&DirectorContext {
                    agents: room.agents,
                    turns: &round.turns,
                    history,
                    discussion: round.discussion(),
                    ledger: &round.ledger,
                    learner: room.learner,
                    whiteboard_open: room.whiteboard_open,
                });
                let known: Vec<String> = room.agents.iter().map(|a| a.id.clone()).collect();
                match ask_director(
                    transport,
                    control,
                    models.director.clone(),
                    prompt,
                    &known,
                    room.context_tokens,
                    &mut round.tokens,
                )
                .await
                {
                    _ if control.is_cancelled() => break RoundEnd::Cancelled,
                    Ok(decision) => (decision, true),
                    Err(message) => {
                        emit(ClassEvent::Error {
                            agent_id: None,
                            message,
                        });
                        break RoundEnd::Failed;
                    }
                }
            }
        };
        emit(ClassEvent::Decision {
            decision: decision.clone(),
            by_llm,
        });
        let agent_id = match decision {
            Decision::End(reason) => break RoundEnd::Ended(reason),
            Decision::Learner => {
                emit(ClassEvent::CueLearner {
                    from_agent: round.turns.last().map(|t| t.agent_id.clone()),
                });
                break RoundEnd::LearnersTurn;
            }
            Decision::Agent(id) => id,
        };
        let Some(agent) = room.agents.iter().find(|a| a.id == agent_id) else {
            break RoundEnd::Ended(EndReason::UnknownAgent(agent_id));
        };

        emit(ClassEvent::AgentStart {
            agent_id: agent.id.clone(),
        });
        let outcome = run_agent(
            transport,
            control,
            models.agents.clone(),
            &room,
            round,
            agent,
            history,
            emit,
        )
        .await;
        let cancelled = control.is_cancelled();
        // A stream that failed mid-turn was cut off too: what it said is kept, marked so.
        let interrupted = cancelled || outcome.failure.is_some();
        emit(ClassEvent::AgentEnd {
            agent_id: agent.id.clone(),
            text: outcome.text.clone(),
            interrupted,
        });
        record(round, history, agent, &outcome, interrupted);
        if cancelled {
            break RoundEnd::Cancelled;
        }
        if let Some(message) = outcome.failure {
            emit(ClassEvent::Error {
                agent_id: Some(agent.id.clone()),
                message,
            });
            break RoundEnd::Failed;
        }
        if outcome.text.trim().is_empty() && outcome.actions.is_empty() {
            round.empty_in_a_row += 1;
            if round.empty_in_a_row >= MAX_EMPTY_TURNS {
                break RoundEnd::EmptyTurns;
            }
        } else {
            round.empty_in_a_row = 0;
        }
    };
    emit(ClassEvent::Finished(end.clone()));
    end
}

fn record(
    round: &mut Round,
    history: &mut Vec<Utterance>,
    agent: &AgentProfile,
    outcome: &TurnOutcome,
    interrupted: bool,
) {
    let tokens = outcome.tokens;
    round.tokens.add(tokens.input, tokens.output, tokens.cached);
    let board: Vec<&Action> = outcome
        .actions
        .iter()
        .filter(|a| a.kind().is_some_and(|k| k.is_whiteboard()))
        .collect();
    round.turns.push(TurnSummary {
        agent_id: agent.id.clone(),
        agent_name: agent.name.clone(),
        role: agent.role,
        preview: preview(&outcome.text, TurnSummary::PREVIEW_CHARS),
        action_count: outcome.actions.len(),
        board_notes: board.iter().filter_map(|a| describe(a)).collect(),
    });
    round
        .ledger
        .extend(board.into_iter().map(|action| LedgerEntry {
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            action: action.clone(),
        }));
    let mut said = Utterance::agent(agent, outcome.text.clone());
    said.actions = outcome.actions.clone();
    said.interrupted = interrupted;
    history.push(said);
}

#[cfg(test)]
mod tests {

    use aula_course::{default_agents, AgentRole};
    use aula_providers::transport::memory::{run_to_end, ScriptedAnswer, ScriptedTransport};
    use aula_providers::{preset, Endpoint};

    use super::*;

    /// An OpenAI-format SSE stream of `text`, cut into pieces of `piece` characters, one chunk
    /// each, and a usage chunk: 100 tokens in (40 of them cached), 10 out.
    fn sse(text: &str, piece: usize) -> ScriptedAnswer {
        let chars: Vec<char> = text.chars().collect();
        let mut chunks: Vec<Vec<u8>> = chars
            .chunks(piece.max(1))
            .map(|part| {
                let delta = serde_json::json!({"choices":[{"index":0,"delta":{"content": part.iter().collect::<String>()}}]});
                format!("data: {delta}\n\n").into_bytes()
            })
            .collect();
        chunks.push(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                .to_vec(),
        );
        chunks.push(b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":10,\"prompt_tokens_details\":{\"cached_tokens\":40}}}\n\ndata: [DONE]\n\n".to_vec());
        ScriptedAnswer::streaming(chunks)
    }

    fn models() -> Models {
        let endpoint = |model: &str| {
            Endpoint::from_preset(preset("openai").unwrap(), model, Some("sk-test".into()))
        };
        Models {
            director: endpoint("router-model"),
            agents: endpoint("teacher-model"),
        }
    }

    struct Run {
        events: Vec<ClassEvent>,
        end: RoundEnd,
        history: Vec<Utterance>,
        round: Round,
        requests: Vec<serde_json::Value>,
    }

    fn run(
        agents: &[AgentProfile],
        mode: Mode,
        answers: Vec<ScriptedAnswer>,
        question: &str,
        control: &RoundControl,
    ) -> Run {
        run_with(&models(), agents, mode, answers, question, control)
    }

    fn run_with(
        models: &Models,
        agents: &[AgentProfile],
        mode: Mode,
        answers: Vec<ScriptedAnswer>,
        question: &str,
        control: &RoundControl,
    ) -> Run {
        let transport = ScriptedTransport::answering(
            answers,
            ScriptedAnswer::status(
                500,
                vec![],
                "{\"error\":{\"message\":\"no more scripted answers\"}}",
            ),
        );
        let learner = LearnerProfile::default();
        let room = Room {
            agents,
            course_title: "Transformers",
            course_description: "",
            language: "en",
            scene: None,
            learner: &learner,
            whiteboard_open: false,
            context_tokens: 128_000,
        };
        let mut round = Round::new(mode, 4);
        let mut history = vec![Utterance::learner(question)];
        let mut events = Vec::new();
        let end = run_to_end(run_round(
            &transport,
            models,
            room,
            &mut round,
            &mut history,
            control,
            &mut |event| events.push(event),
        ));
        let requests = transport
            .requests
            .borrow()
            .iter()
            .map(|r| r.json_body())
            .collect();
        Run {
            events,
            end,
            history,
            round,
            requests,
        }
    }

    fn texts(events: &[ClassEvent]) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                ClassEvent::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    fn system_of(request: &serde_json::Value) -> String {
        request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    fn cast() -> Vec<AgentProfile> {
        default_agents()
    }

    fn teacher(agents: &[AgentProfile]) -> &AgentProfile {
        agents
            .iter()
            .find(|a| a.role == AgentRole::Teacher)
            .unwrap()
    }

    const TEACHER_REPLY: &str = r#"[{"type":"action","name":"wb_draw_latex","params":{"latex":"\\mathrm{softmax}(x)","x":60,"y":60}},{"type":"text","content":"Softmax turns scores into weights that add up to one."}]"#;

    #[test]
    fn a_lone_agent_answers_without_the_director_and_hands_back_to_the_learner() {
        let agents = vec![teacher(&cast()).clone()];
        let result = run(
            &agents,
            Mode::Questions,
            vec![sse(TEACHER_REPLY, 7)],
            "What is softmax?",
            &RoundControl::default(),
        );
        assert_eq!(result.end, RoundEnd::LearnersTurn);
        assert_eq!(result.requests.len(), 1, "one agent call, no director call");
        assert_eq!(result.requests[0]["model"], "teacher-model");
        assert_eq!(
            texts(&result.events),
            "Softmax turns scores into weights that add up to one."
        );
        assert!(matches!(
            result.events.first(),
            Some(ClassEvent::Decision { by_llm: false, .. })
        ));
        assert!(result.events.iter().any(
            |e| matches!(e, ClassEvent::Action { action, .. } if action["type"] == "wb_draw_latex")
        ));
        assert!(matches!(
            result.events.last(),
            Some(ClassEvent::Finished(RoundEnd::LearnersTurn))
        ));
        assert_eq!(result.history.len(), 2);
        assert_eq!(
            result.history[1].text,
            "Softmax turns scores into weights that add up to one."
        );
        assert_eq!(result.round.ledger.len(), 1);
        assert_eq!(result.round.turns[0].board_notes.len(), 1);
    }

    #[test]
    fn on_a_server_that_enforces_schemas_an_agents_reply_is_held_to_the_item_array() {
        let agents = cast();
        let local = |model: &str| Endpoint::from_preset(preset("llamacpp").unwrap(), model, None);
        let models = Models {
            director: local("router-model"),
            agents: local("teacher-model"),
        };
        let answers = vec![sse(TEACHER_REPLY, 11), sse("{\"next_agent\":\"END\"}", 4)];
        let result = run_with(
            &models,
            &agents,
            Mode::Questions,
            answers,
            "What is softmax?",
            &RoundControl::default(),
        );
        assert!(
            texts(&result.events).contains("Softmax turns scores"),
            "{:?}\n{:?}",
            result.events,
            result.requests
        );
        let format = &result.requests[0]["response_format"];
        assert_eq!(format["json_schema"]["name"], "agent_reply", "{format}");
        let schema = &format["json_schema"]["schema"];
        assert_eq!(schema["type"], "array");
        assert_eq!(schema["minItems"], 1);
        let kinds = schema["items"]["anyOf"].as_array().unwrap();
        assert_eq!(kinds[0]["properties"]["type"]["enum"][0], "text");
        let allowed = crate::prompt::effective_actions(teacher(&agents), None);
        let names: Vec<&str> = allowed.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            kinds[1]["properties"]["name"]["enum"],
            serde_json::json!(names)
        );
        assert!(
            result.requests[1].get("response_format").is_none(),
            "the director's reply is not an item array"
        );
        // A hosted provider is asked by the prompt alone.
        let hosted = run(
            &agents,
            Mode::Questions,
            vec![sse(TEACHER_REPLY, 11), sse("{\"next_agent\":\"END\"}", 4)],
            "What is softmax?",
            &RoundControl::default(),
        );
        assert!(hosted.requests[0].get("response_format").is_none());
        // An agent with no actions here may only speak.
        let only_speech = agent_reply_schema(&[]).schema;
        assert_eq!(only_speech["items"]["anyOf"].as_array().unwrap().len(), 1);
        assert_eq!(kinds[0]["properties"]["content"]["maxLength"], 600);
        assert_eq!(schema["maxItems"], 8);
    }

    #[test]
    fn a_learners_question_goes_to_the_teacher_by_code_then_the_director_sees_the_turns_taken() {
        let agents = cast();
        let t = teacher(&agents).clone();
        let answers = vec![
            sse(TEACHER_REPLY, 11),
            sse("```json\n{\"next_agent\":\"END\"}\n```", 4),
        ];
        let result = run(
            &agents,
            Mode::Questions,
            answers,
            "What is softmax?",
            &RoundControl::default(),
        );
        assert_eq!(result.end, RoundEnd::Ended(EndReason::DirectorSaidEnd));
        assert_eq!(
            result.requests.len(),
            2,
            "no director call before the teacher"
        );
        assert_eq!(result.requests[0]["model"], "teacher-model");
        assert_eq!(result.requests[1]["model"], "router-model");
        let second = system_of(&result.requests[1]);
        assert!(
            second.contains(&format!("- {} ({}, teacher)", t.name, t.id)),
            "{second}"
        );
        assert!(second.contains("Softmax turns scores"));
        assert!(
            !second.contains("# Open question"),
            "the teacher answered it"
        );
        // The agent call carried the learner's question.
        let agent_messages = result.requests[0]["messages"].to_string();
        assert!(agent_messages.contains("What is softmax?"));
        assert!(system_of(&result.requests[0]).contains("# Answering the learner"));
        let order: Vec<&str> = result
            .events
            .iter()
            .map(|e| match e {
                ClassEvent::Decision { by_llm: true, .. } => "decision(llm)",
                ClassEvent::Decision { .. } => "decision",
                ClassEvent::AgentStart { .. } => "start",
                ClassEvent::Text { .. } => "text",
                ClassEvent::Action { .. } => "action",
                ClassEvent::AgentEnd { .. } => "end",
                ClassEvent::Finished(_) => "finished",
                _ => "other",
            })
            .filter(|s| *s != "other")
            .collect();
        assert_eq!(order.first(), Some(&"decision"));
        assert_eq!(order[1], "start");
        assert!(
            order.iter().position(|s| *s == "action") < order.iter().position(|s| *s == "text"),
            "{order:?}"
        );
        assert_eq!(
            &order[order.len() - 3..],
            ["end", "decision(llm)", "finished"]
        );
        // Both calls' usage, the agent's and the director's, is the round's.
        assert_eq!(
            result.round.tokens,
            Tokens {
                input: 200,
                output: 20,
                cached: 80
            }
        );
    }

    #[test]
    fn an_unreadable_or_unknown_director_choice_ends_the_round_safely() {
        let agents = cast();
        let result = run(
            &agents,
            Mode::Questions,
            vec![sse("I think the teacher should go.", 8)],
            "ok thanks",
            &RoundControl::default(),
        );
        assert!(
            matches!(result.end, RoundEnd::Ended(EndReason::InvalidReply(_))),
            "{:?}",
            result.end
        );
        let result = run(
            &agents,
            Mode::Questions,
            vec![sse("{\"next_agent\":\"the-principal\"}", 8)],
            "ok thanks",
            &RoundControl::default(),
        );
        assert_eq!(
            result.end,
            RoundEnd::Ended(EndReason::UnknownAgent("the-principal".into()))
        );
        assert_eq!(result.history.len(), 1, "nobody spoke");
    }

    #[test]
    fn the_director_can_cue_the_learner_after_an_agent_asked_them() {
        let agents = cast();
        let t = teacher(&agents).clone();
        let answers = vec![
            sse(
                r#"[{"type":"text","content":"Which word do you think matters most here?"}]"#,
                9,
            ),
            sse("{\"next_agent\":\"USER\"}", 50),
        ];
        let result = run(
            &agents,
            Mode::Questions,
            answers,
            "Explain attention",
            &RoundControl::default(),
        );
        assert_eq!(result.end, RoundEnd::LearnersTurn);
        assert!(result.events.contains(&ClassEvent::CueLearner {
            from_agent: Some(t.id.clone())
        }));
    }

    #[test]
    fn a_discussion_opens_with_its_initiator_without_asking_the_director() {
        let agents = cast();
        let student = agents
            .iter()
            .find(|a| a.role == AgentRole::Student)
            .unwrap()
            .clone();
        let mode = Mode::Discussion(DiscussionContext {
            topic: "Are RNNs obsolete?".into(),
            prompt: None,
            initiator: Some(student.id.clone()),
        });
        let answers = vec![
            sse(
                r#"[{"type":"text","content":"I say RNNs still matter for streaming."}]"#,
                6,
            ),
            sse("{\"next_agent\":\"END\"}", 50),
        ];
        let result = run(&agents, mode, answers, "ok", &RoundControl::default());
        assert_eq!(
            result.requests[0]["model"], "teacher-model",
            "the initiator spoke first, no routing call"
        );
        assert!(system_of(&result.requests[0]).contains("You open this discussion"));
        assert!(system_of(&result.requests[1]).contains("Are RNNs obsolete?"));
        assert_eq!(result.end, RoundEnd::Ended(EndReason::DirectorSaidEnd));
    }

    #[test]
    fn two_empty_turns_in_a_row_end_the_round() {
        let agents = cast();
        let t = teacher(&agents).clone();
        let pick = || sse(&format!("{{\"next_agent\":\"{}\"}}", t.id), 50);
        // The teacher takes the open question by code; her empty turn leaves it open, and the
        // director picks her again.
        let answers = vec![sse("[]", 5), pick(), sse("[ ]", 5)];
        let result = run(
            &agents,
            Mode::Questions,
            answers,
            "Hello?",
            &RoundControl::default(),
        );
        assert_eq!(result.end, RoundEnd::EmptyTurns);
        assert_eq!(result.round.turns.len(), 2);
    }

    #[test]
    fn the_turn_cap_ends_a_long_round() {
        let agents = cast();
        let t = teacher(&agents).clone();
        let mut answers = Vec::new();
        for turn in 0..4 {
            if turn > 0 {
                answers.push(sse(&format!("{{\"next_agent\":\"{}\"}}", t.id), 50));
            }
            answers.push(sse(
                r#"[{"type":"text","content":"And one more thing."}]"#,
                50,
            ));
        }
        let result = run(
            &agents,
            Mode::Questions,
            answers,
            "Tell me everything",
            &RoundControl::default(),
        );
        assert_eq!(result.end, RoundEnd::Ended(EndReason::TurnLimit));
        assert_eq!(result.round.turns.len(), 4);
    }

    #[test]
    fn a_failed_call_reports_the_provider_error_without_the_key() {
        let agents = cast();
        let rejected = ScriptedAnswer::status(
            401,
            vec![],
            "{\"error\":{\"message\":\"Incorrect API key provided: sk-test\"}}",
        );
        let result = run(
            &agents,
            Mode::Questions,
            vec![rejected],
            "Hi",
            &RoundControl::default(),
        );
        assert_eq!(result.end, RoundEnd::Failed);
        let message = result
            .events
            .iter()
            .find_map(|e| match e {
                ClassEvent::Error { message, .. } => Some(message.clone()),
                _ => None,
            })
            .unwrap();
        assert!(
            message.contains("rejected") && !message.contains("sk-test"),
            "{message}"
        );
    }

    #[test]
    fn a_stream_cut_mid_turn_keeps_what_was_said_marked_as_cut_off() {
        let agents = cast();
        let t = teacher(&agents).clone();
        let mut cut = sse(
            r#"[{"type":"text","content":"Attention weighs every word against"#,
            8,
        );
        cut.chunks.pop(); // no finish, no [DONE]
        cut.ending = Some(aula_providers::TransportError::Network(
            "connection reset".into(),
        ));
        let answers = vec![cut];
        let result = run(
            &agents,
            Mode::Questions,
            answers,
            "Explain attention",
            &RoundControl::default(),
        );
        assert_eq!(result.end, RoundEnd::Failed);
        let end = result
            .events
            .iter()
            .find_map(|e| match e {
                ClassEvent::AgentEnd {
                    text, interrupted, ..
                } => Some((text.clone(), *interrupted)),
                _ => None,
            })
            .unwrap();
        assert_eq!(end, ("Attention weighs every word against".into(), true));
        assert!(result
            .events
            .iter()
            .any(|e| matches!(e, ClassEvent::Error { agent_id: Some(id), .. } if *id == t.id)));
        assert!(result.history.last().unwrap().interrupted);
    }

    #[test]
    fn actions_the_agent_may_not_use_are_dropped_not_performed() {
        let agents = cast();
        let student = agents
            .iter()
            .find(|a| a.role == AgentRole::Student)
            .unwrap()
            .clone();
        let lone = vec![student];
        let reply = r#"[{"type":"action","name":"spotlight","params":{"element_id":"title"}},{"type":"text","content":"Look!"}]"#;
        let result = run(
            &lone,
            Mode::Questions,
            vec![sse(reply, 10)],
            "Hi",
            &RoundControl::default(),
        );
        assert!(result
            .events
            .iter()
            .any(|e| matches!(e, ClassEvent::Dropped { name, .. } if name == "spotlight")));
        assert!(!result
            .events
            .iter()
            .any(|e| matches!(e, ClassEvent::Action { .. })));
        assert_eq!(texts(&result.events), "Look!");
    }

    #[test]
    fn stop_before_the_round_sends_nothing_and_stop_mid_turn_keeps_what_was_said() {
        let agents = cast();
        let control = RoundControl::default();
        control.cancel();
        let result = run(
            &agents,
            Mode::Questions,
            vec![sse("{\"next_agent\":\"END\"}", 50)],
            "Hi",
            &control,
        );
        assert_eq!(result.end, RoundEnd::Cancelled);
        assert!(result.requests.is_empty());

        // Stop as soon as the first words arrive.
        let t = teacher(&agents).clone();
        let lone = vec![t];
        let transport = ScriptedTransport::answering(
            vec![sse(TEACHER_REPLY, 3)],
            ScriptedAnswer::status(500, vec![], ""),
        );
        let control = RoundControl::default();
        let learner = LearnerProfile::default();
        let room = Room {
            agents: &lone,
            course_title: "",
            course_description: "",
            language: "en",
            scene: None,
            learner: &learner,
            whiteboard_open: false,
            context_tokens: 128_000,
        };
        let mut round = Round::new(Mode::Questions, 4);
        let mut history = vec![Utterance::learner("Explain")];
        let mut events = Vec::new();
        let stopper = control.clone();
        let end = run_to_end(run_round(
            &transport,
            &models(),
            room,
            &mut round,
            &mut history,
            &control,
            &mut |event| {
                if matches!(event, ClassEvent::Text { .. }) {
                    stopper.cancel();
                }
                events.push(event);
            },
        ));
        assert_eq!(end, RoundEnd::Cancelled);
        let said = texts(&events);
        assert!(
            !said.is_empty()
                && said.len() < "Softmax turns scores into weights that add up to one.".len(),
            "{said:?}"
        );
        assert!(events.iter().any(|e| matches!(
            e,
            ClassEvent::AgentEnd {
                interrupted: true,
                ..
            }
        )));
        assert!(history.last().unwrap().interrupted);
        assert_eq!(history.last().unwrap().text, said);
    }

    #[test]
    fn an_agents_request_fits_a_small_context_by_leaving_out_the_oldest_messages_first() {
        let mut messages = Vec::new();
        for i in 0..30 {
            messages.push(ChatMessage::user(format!(
                "Question {i}: {}",
                "why? ".repeat(40)
            )));
            messages.push(ChatMessage::assistant(format!(
                "Answer {i}: {}",
                "because. ".repeat(40)
            )));
        }
        messages.push(ChatMessage::user("And the newest question?"));
        let system = "You teach. ".repeat(150);
        for context in [2_048u32, 4_096, 8_192] {
            let request =
                fitted_agent_request(system.clone(), messages.clone(), None, context).unwrap();
            let max = request.max_tokens.unwrap();
            assert!(prompt_tokens(&request) + max <= context, "{context}");
            assert!(max >= AGENT_REPLY.least);
            assert_eq!(
                request.messages.last().unwrap().content,
                "And the newest question?"
            );
            assert_eq!(request.messages[0].role, ChatRole::User);
            assert!(request.messages.len() < messages.len(), "{context}");
        }
        let roomy = fitted_agent_request(system, messages.clone(), None, 128_000).unwrap();
        assert_eq!(roomy.messages.len(), messages.len());
        assert_eq!(roomy.max_tokens, Some(AGENT_REPLY.want));
    }

    #[test]
    fn an_agents_turn_that_cannot_fit_fails_with_the_reason_and_sends_nothing() {
        let transport = ScriptedTransport::streaming(Vec::new());
        let control = RoundControl::default();
        let learner = LearnerProfile::default();
        let mut agents = default_agents();
        agents.truncate(1);
        agents[0].persona = "A very long persona. ".repeat(2_000);
        let room = Room {
            agents: &agents,
            course_title: "",
            course_description: "",
            language: "en",
            scene: None,
            learner: &learner,
            whiteboard_open: false,
            context_tokens: 2_048,
        };
        let endpoint = Endpoint::from_preset(preset("openai").unwrap(), "m", Some("k".into()));
        let models = Models {
            director: endpoint.clone(),
            agents: endpoint,
        };
        let mut round = Round::new(Mode::Questions, 4);
        let mut history = vec![Utterance::learner("Why?")];
        let mut events = Vec::new();
        let end = run_to_end(run_round(
            &transport,
            &models,
            room,
            &mut round,
            &mut history,
            &control,
            &mut |e| events.push(e),
        ));
        assert_eq!(end, RoundEnd::Failed);
        assert!(transport.requests.borrow().is_empty(), "nothing was sent");
        assert!(events.iter().any(
            |e| matches!(e, ClassEvent::Error { message, .. } if message.contains("context"))
        ));
    }
}
