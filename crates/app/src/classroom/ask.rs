//! The live classroom under the stage: the learner asks (typing, or speaking where the browser
//! recognizes speech), the lecture pauses, a round runs in the AI worker (the director picks who
//! speaks, the agents' replies stream in as bubbles, their drawings and spotlights show on the
//! stage), and the lecture goes on after it. A scene's discussion runs the same way, opened by
//! its classmate. The conversation is the fold of its event log (`class_log`), so a reload shows
//! every finished turn and the learner carries on where they were.
//!
//! Every change goes through one `Conversation::record`: it applies the event to the view and
//! hands it to the log writer. The learner's question is recorded before anything is sent, and
//! asking waits until the log has been read back, so nothing interleaves. The round job's
//! history is derived from the fold, so a reload changes nothing the agents see. "New
//! conversation" starts a new session; the old one stays in the store. A round has at most six
//! agent turns, and the lecture resumes after it if it was playing.
//!
//! Discussions: when a provider is usable the page sends `Command::SetLiveDiscussion(true)`, so
//! a scene's discussion without a recording is offered instead of skipped. "Join the
//! discussion" accepts it (the player stops, `Interrupted`) and runs a round in
//! `Mode::Discussion` with the scene's topic, prompt and initiator. The log records
//! `DiscussionStart { topic, initiator }`, shown as a topic line before the discussion's turns
//! and left out of the round's history.

use aula_course::Action;
use aula_director::model::DiscussionContext;
use aula_director::round::RoundEnd;
use aula_director::round::{Mode, Models};
use aula_director::session::{ClassEvent, LoggedEvent, SessionView, ViewMessage, ViewSpeaker};
use aula_director::wire::{HistoryLine, RoundJob, RoundOp};
use aula_player::{Command, DiscussionCue, PlayState};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::class_log::ClassLog;
use super::controls::{agent_style, avatar};
use super::voice_input::VoiceInput;
use super::{Lecture, LiveClass};
use crate::connection::{usable_connection, Role, Unusable};
use crate::i18n::*;
use crate::library::course_text;
use crate::workers;

/// Agent turns per round.
const MAX_TURNS: u32 = 6;

/// The live class under the stage, loaded on first use in a split build (see
/// `shell::on_first_use`): opens the conversation, tells the classroom how to run a discussion
/// live (`live`), and shows the conversation with its question box.
#[cfg_attr(aula_lazy, leptos::lazy)]
pub async fn live_class(session: Lecture, live: LiveClass) -> AnyView {
    let talk = Conversation::new(session, live);
    view! { <AskTheClass talk=talk/> }.into_any()
}

/// The classroom's conversation: its state is the fold of the session log, and every change
/// goes through [`Conversation::record`], which writes the log too.
#[derive(Clone, Copy)]
pub struct Conversation {
    session: Lecture,
    i18n: I18n,
    log: ClassLog,
    /// The fold of the log, shown as bubbles.
    pub view: RwSignal<SessionView>,
    /// The log has been read back; asking waits for it so nothing interleaves.
    pub restored: RwSignal<bool>,
    /// The round running in the AI worker, by job id.
    pub running: RwSignal<Option<u32>>,
    /// A round is being set up (settings and course read) and has no job id yet.
    starting: StoredValue<bool>,
    pub problem: RwSignal<Option<String>>,
    /// The course file, read once per visit (a sample means two fetches).
    course_file: StoredValue<Option<String>>,
}

impl Conversation {
    pub fn new(session: Lecture, live: LiveClass) -> Conversation {
        let view = RwSignal::new(SessionView::default());
        let restored = RwSignal::new(false);
        let log = ClassLog::open(
            session.course_id.get_value(),
            session.course(|c| c.title.clone()),
            move |saved| {
                view.try_set(saved);
                restored.try_set(true);
            },
        );
        spawn_local(async move {
            if usable_connection().await.is_ok() {
                live.live.try_set(true);
                session.send(Command::SetLiveDiscussion(true));
            }
        });
        let running = RwSignal::new(None::<u32>);
        // Leaving the classroom stops its round.
        on_cleanup(move || {
            if let Some(Some(id)) = running.try_get_untracked() {
                workers::abort(id);
            }
        });
        let talk = Conversation {
            session,
            i18n: use_i18n(),
            log,
            view,
            restored,
            running,
            starting: StoredValue::new(false),
            problem: RwSignal::new(None),
            course_file: StoredValue::new(None),
        };
        live.join
            .set_value(Some(Callback::new(move |cue| talk.discuss(cue))));
        talk
    }

    /// Applies one event to what the learner sees and appends it to the log, if the log keeps
    /// its kind.
    fn record(&self, event: ClassEvent) {
        if !event.is_logged() {
            return;
        }
        // try_: a round's last updates may arrive after the learner left the classroom.
        self.view.try_update(|view| {
            let seq = view.last_seq + 1;
            view.apply(&LoggedEvent {
                seq,
                at_ms: 0,
                event: event.clone(),
            })
        });
        self.log.append(event);
    }

    /// The learner's question. `Err` keeps the question in the box, with the reason shown.
    pub async fn ask(self, text: String) -> Result<(), ()> {
        let i18n = self.i18n;
        self.start_round(Mode::Questions, Some(text), |why| match why {
            Unusable::NotSetUp => t_string!(i18n, ask_needs_provider).to_owned(),
            Unusable::Locked => t_string!(i18n, ask_unlock).to_owned(),
            Unusable::Unreadable(error) => error,
        })
        .await
    }

    /// A scene's discussion, run live: the player has already stopped for it.
    pub fn discuss(self, cue: DiscussionCue) {
        let i18n = self.i18n;
        spawn_local(async move {
            let mode = Mode::Discussion(DiscussionContext {
                topic: cue.topic,
                prompt: cue.prompt,
                initiator: cue.agent_id,
            });
            let started = self
                .start_round(mode, None, |why| match why {
                    Unusable::Unreadable(error) => error,
                    _ => t_string!(i18n, ask_needs_provider).to_owned(),
                })
                .await;
            if started.is_err() {
                self.session.send(Command::Resume);
            }
        });
    }

    async fn start_round(
        self,
        mode: Mode,
        question: Option<String>,
        explain: impl Fn(Unusable) -> String,
    ) -> Result<(), ()> {
        // One round at a time, counting one still being set up (a double click on Ask).
        if self.running.get_untracked().is_some()
            || !self.restored.get_untracked()
            || self.starting.get_value()
        {
            return Err(());
        }
        self.starting.set_value(true);
        let started = self.set_up_round(mode, question, explain).await;
        self.starting.try_set_value(false);
        started
    }

    async fn set_up_round(
        self,
        mode: Mode,
        question: Option<String>,
        explain: impl Fn(Unusable) -> String,
    ) -> Result<(), ()> {
        self.problem.set(None);
        let fail = |message: String| {
            self.problem.set(Some(message));
            Err(())
        };
        let connection = match usable_connection().await {
            Ok(connection) => connection,
            Err(why) => return fail(explain(why)),
        };
        let course_id = self.session.course_id.get_value();
        let course_json = match self.course_file.get_value() {
            Some(text) => text,
            None => match course_text(&course_id).await {
                Ok(Some(text)) => {
                    self.course_file.set_value(Some(text.clone()));
                    text
                }
                Ok(None) => {
                    return fail(format!(
                        "The course \"{course_id}\" is no longer in the library."
                    ))
                }
                Err(error) => return fail(error),
            },
        };
        let discussing = matches!(mode, Mode::Discussion(_));
        let was_playing = discussing
            || self
                .session
                .stage
                .with_untracked(|s| s.state == PlayState::Playing);
        if let Some(text) = question {
            self.session.send(Command::Interrupt);
            // Written before anything else happens, so a crash never loses it.
            self.record(ClassEvent::LearnerMessage { text });
        }
        if let Mode::Discussion(discussion) = &mode {
            self.record(ClassEvent::DiscussionStart {
                topic: discussion.topic.clone(),
                initiator: discussion.initiator.clone(),
            });
        }
        let (scene_index, whiteboard_open) = self
            .session
            .stage
            .with_untracked(|s| (s.scene_index, s.board_open));
        let job = RoundJob {
            op: RoundOp::Round,
            id: 0,
            models: Models {
                director: connection.endpoint(Role::Director),
                agents: connection.endpoint(Role::Agents),
            },
            course_json,
            scene_index,
            learner: Default::default(),
            whiteboard_open,
            mode,
            max_turns: MAX_TURNS,
            history: self.view.with_untracked(history),
            limits: connection.limits(),
        };
        let id = workers::round(job, move |event| {
            match &event {
                // Drawings, spotlight and laser show on the stage as they arrive.
                ClassEvent::Action { action, .. } => {
                    // Through the text, whose action reader the page has for courses anyway.
                    let action = serde_json::to_string(action)
                        .ok()
                        .and_then(|text| serde_json::from_str::<Action>(&text).ok());
                    if let Some(action) = action {
                        self.session.send(Command::Live(action));
                    }
                }
                ClassEvent::Error { message, .. } => {
                    self.problem.try_set(Some(message.clone()));
                }
                ClassEvent::Finished(end) => {
                    self.running.try_set(None);
                    if *end != RoundEnd::Failed && was_playing {
                        self.session.send(Command::Resume);
                    }
                }
                _ => {}
            }
            self.record(event);
        });
        self.running.set(Some(id));
        Ok(())
    }

    pub fn stop(&self) {
        if let Some(id) = self.running.get_untracked() {
            workers::abort(id);
        }
    }

    /// The next question starts a new conversation; this one stays in the log.
    pub fn start_over(&self) {
        if self.running.get_untracked().is_none() {
            self.log.start_over();
            self.view.set(SessionView::default());
            self.problem.set(None);
        }
    }
}

/// The conversation as the round job carries it: every message that said something.
fn history(view: &SessionView) -> Vec<HistoryLine> {
    view.messages
        .iter()
        .filter(|m| !m.text.trim().is_empty())
        .filter_map(|m| {
            Some(HistoryLine {
                who: match &m.speaker {
                    ViewSpeaker::Learner => "learner".to_owned(),
                    ViewSpeaker::Agent(id) => id.clone(),
                    // The round's mode carries the discussion's topic.
                    ViewSpeaker::DiscussionTopic => return None,
                },
                text: m.text.clone(),
                interrupted: m.interrupted,
            })
        })
        .collect()
}

#[component]
pub fn AskTheClass(talk: Conversation) -> impl IntoView {
    let i18n = use_i18n();
    let session = talk.session;
    let question = RwSignal::new(String::new());
    let ask = move || {
        let text = question.get_untracked().trim().to_owned();
        if text.is_empty() {
            return;
        }
        spawn_local(async move {
            if talk.ask(text).await.is_ok() {
                question.set(String::new());
            }
        });
    };
    let language = session.course(|c| c.language.clone());

    let bubble_view = move |(message, thinking): (ViewMessage, Option<String>)| {
        let agent = match &message.speaker {
            ViewSpeaker::Agent(id) => session.course(|c| c.agent(id).cloned()),
            ViewSpeaker::Learner => None,
            ViewSpeaker::DiscussionTopic => {
                let topic = message.text;
                return view! {
                    <li class="topic-line" data-testid="topic-line">
                        {t!(i18n, ask_discussion, topic = move || topic.clone())}
                    </li>
                }
                .into_any();
            }
        };
        let name = match &agent {
            Some(a) => a.name.clone(),
            None => t_string!(i18n, ask_you).to_owned(),
        };
        let color = agent.as_ref().map(agent_style).unwrap_or_default();
        let disc = agent.as_ref().map(|a| avatar(a, "avatar small"));
        let class = match message.speaker {
            ViewSpeaker::Learner => "bubble learner",
            _ => "bubble agent",
        };
        let open = !message.complete && !message.interrupted;
        view! {
            <li class=class style=color data-testid="bubble" data-done=(!open).to_string() data-cut=message.interrupted.to_string()>
                <div class="bubble-head">{disc}<span class="bubble-name">{name}</span></div>
                {thinking.map(|text| view! {
                    <p class="bubble-thinking" data-testid="thinking">
                        <span class="thinking-label">{t!(i18n, ask_thinking)}</span>
                        " " {text}
                    </p>
                })}
                <p class="bubble-text">{message.text}</p>
                {message.interrupted.then(|| view! { <p class="bubble-cut">{t!(i18n, ask_cut_off)}</p> })}
            </li>
        }
        .into_any()
    };
    // What is shown: every message with something in it, the open one always (it is streaming),
    // and the thinking of the agent speaking.
    let shown = move || {
        talk.view.with(|view| {
            view.messages
                .iter()
                .filter(|m| {
                    !m.text.trim().is_empty()
                        || !matches!(m.speaker, ViewSpeaker::Agent(_))
                        || (!m.complete && !m.interrupted)
                })
                .map(|m| {
                    let speaking = matches!(&m.speaker, ViewSpeaker::Agent(id)
                        if view.speaking.as_deref() == Some(id.as_str()) && !m.complete && !m.interrupted);
                    (m.clone(), view.thinking.clone().filter(|_| speaking))
                })
                .collect::<Vec<_>>()
        })
    };
    let choosing = move || talk.running.get().is_some() && talk.view.with(|v| v.speaking.is_none());
    // The learner's words are the last said, no round runs and nothing went wrong: no one
    // answered (the director ended the round first, every agent's turn came back without words,
    // or it was stopped or the page closed before a turn).
    let unanswered = move || {
        talk.running.get().is_none()
            && talk.problem.with(Option::is_none)
            && talk.view.with(|v| {
                v.messages
                    .iter()
                    .rfind(|m| !m.text.trim().is_empty())
                    .is_some_and(|m| m.speaker == ViewSpeaker::Learner)
            })
    };

    view! {
        <section class="ask" data-testid="ask" aria-label=t!(i18n, ask_label)>
            <ol class="bubbles" aria-live="polite">
                {move || shown().into_iter().map(bubble_view).collect_view()}
            </ol>
            <p class="ask-status muted" role="status" data-testid="ask-status" hidden=move || !choosing() && !unanswered()>
                {move || if choosing() { t_string!(i18n, ask_choosing) } else { t_string!(i18n, ask_nobody_spoke) }}
            </p>
            <p class="error" role="alert" data-testid="ask-problem" hidden=move || talk.problem.get().is_none()>
                {move || talk.problem.get().unwrap_or_default()}
                " " <a href="/settings">{t!(i18n, nav_settings)}</a>
                // A failed round leaves the lecture waiting: offer to go on without an answer.
                " " <button type="button" class="secondary" data-testid="ask-go-on"
                    hidden=move || talk.running.get().is_some() || talk.session.stage.with(|s| s.state != PlayState::Interrupted)
                    on:click=move |_| {
                        talk.problem.set(None);
                        talk.session.send(Command::Resume);
                    }>{t!(i18n, ask_go_on)}</button>
            </p>
            <form class="inline-form" on:submit=move |ev| { ev.prevent_default(); ask(); }>
                <input data-testid="ask-input" placeholder=t!(i18n, ask_placeholder) aria-label=t!(i18n, ask_label)
                    prop:value=move || question.get()
                    on:input=move |ev| question.set(event_target_value(&ev))/>
                <VoiceInput language=language into=question/>
                <button class="primary" type="submit" data-testid="ask-send" disabled=move || talk.running.get().is_some() || !talk.restored.get()>{t!(i18n, ask_send)}</button>
                <button class="secondary" type="button" data-testid="ask-stop" hidden=move || talk.running.get().is_none() on:click=move |_| talk.stop()>{t!(i18n, provider_stop)}</button>
                <button class="secondary" type="button" data-testid="ask-new" hidden=move || talk.running.get().is_some() || talk.view.with(|v| v.messages.is_empty())
                    on:click=move |_| talk.start_over()>{t!(i18n, ask_new)}</button>
            </form>
        </section>
    }
}
