//! Ask the class: the learner's question pauses the lecture, a round runs in the AI worker (the
//! director picks who answers, the agents' replies stream in, their drawings and spotlights show
//! on the stage), and the lecture goes on after it.

use aula_course::Action;
use aula_director::round::{Mode, Models};
use aula_director::wire::{HistoryLine, RoundJob, RoundOp};
use aula_player::{Command, PlayState};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::Session;
use crate::ai;
use crate::connection::{load_connection, Role};
use crate::i18n::*;
use crate::library::course_text;

/// One line of the conversation as shown.
#[derive(Debug, Clone, PartialEq)]
struct Bubble {
    /// `None` for the learner.
    agent: Option<String>,
    text: String,
    thinking: String,
    done: bool,
}

/// Agent turns per round.
const MAX_TURNS: u32 = 6;

#[component]
pub fn AskTheClass(session: Session) -> impl IntoView {
    let i18n = use_i18n();
    let question = RwSignal::new(String::new());
    let bubbles = RwSignal::new(Vec::<Bubble>::new());
    let running = RwSignal::new(None::<u32>);
    let problem = RwSignal::new(None::<String>);
    let history = StoredValue::new(Vec::<HistoryLine>::new());
    // The course file, read once per visit (a sample means two fetches).
    let course_file = StoredValue::new(None::<String>);

    let ask = move || {
        let text = question.get_untracked().trim().to_owned();
        if text.is_empty() || running.get_untracked().is_some() {
            return;
        }
        problem.set(None);
        spawn_local(async move {
            let connection = match load_connection().await {
                Ok(Some(c))
                    if !c.is_locked()
                        && (c.api_key.is_some()
                            || c.preset().key != aula_providers::KeyNeed::Required) =>
                {
                    c
                }
                Ok(Some(c)) if c.is_locked() => {
                    problem.set(Some(t_string!(i18n, ask_unlock).to_owned()));
                    return;
                }
                Ok(_) => {
                    problem.set(Some(t_string!(i18n, ask_needs_provider).to_owned()));
                    return;
                }
                Err(error) => {
                    problem.set(Some(error.to_string()));
                    return;
                }
            };
            let course_id = session.course_id.get_value();
            let course_json = match course_file.get_value() {
                Some(text) => Ok(Some(text)),
                None => course_text(&course_id).await,
            };
            let course_json = match course_json {
                Ok(Some(text)) => {
                    course_file.set_value(Some(text.clone()));
                    text
                }
                Ok(None) => {
                    problem.set(Some(format!(
                        "The course \"{course_id}\" is no longer in the library."
                    )));
                    return;
                }
                Err(error) => {
                    problem.set(Some(error));
                    return;
                }
            };
            let was_playing = session
                .stage
                .with_untracked(|s| s.state == PlayState::Playing);
            session.send(Command::Interrupt);
            question.set(String::new());
            history.update_value(|h| {
                h.push(HistoryLine {
                    who: "learner".into(),
                    text: text.clone(),
                    interrupted: false,
                })
            });
            bubbles.update(|b| {
                b.push(Bubble {
                    agent: None,
                    text,
                    thinking: String::new(),
                    done: true,
                })
            });
            let (scene_index, whiteboard_open) = session
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
                mode: Mode::Questions,
                max_turns: MAX_TURNS,
                history: history.get_value(),
            };
            let id = ai::round(job, move |update| match update.event.as_str() {
                "agent_start" => bubbles.update(|b| {
                    b.push(Bubble {
                        agent: update.agent_id,
                        text: String::new(),
                        thinking: String::new(),
                        done: false,
                    })
                }),
                "text" => bubbles.update(|b| {
                    if let Some(last) = b.last_mut() {
                        last.text.push_str(&update.text);
                    }
                }),
                "thinking" => bubbles.update(|b| {
                    if let Some(last) = b.last_mut() {
                        last.thinking.push_str(&update.text);
                    }
                }),
                "agent_end" => {
                    bubbles.update(|b| {
                        if let Some(last) = b.last_mut() {
                            last.done = true;
                            last.thinking.clear();
                        }
                        // A turn that said nothing leaves no empty bubble.
                        if b.last()
                            .is_some_and(|l| l.agent.is_some() && l.text.trim().is_empty())
                        {
                            b.pop();
                        }
                    });
                    let who = update.agent_id.unwrap_or_default();
                    let (text, interrupted) = (update.text, update.interrupted);
                    history.update_value(|h| {
                        h.push(HistoryLine {
                            who,
                            text,
                            interrupted,
                        })
                    });
                }
                // Drawings, spotlight and laser show on the stage as they arrive.
                "action" => {
                    let action = update.action.as_deref().map(serde_json::from_str::<Action>);
                    if let Some(Ok(action)) = action {
                        session.send(Command::Live(action));
                    }
                }
                "error" => problem.set(Some(update.text)),
                "finished" => {
                    running.set(None);
                    if !update.failed && was_playing {
                        session.send(Command::Resume);
                    }
                }
                _ => {}
            });
            running.set(Some(id));
        });
    };
    let stop = move |_| {
        if let Some(id) = running.get_untracked() {
            ai::abort(id);
        }
    };

    let bubble_view = move |bubble: Bubble| {
        let agent = bubble
            .agent
            .as_deref()
            .and_then(|id| session.course(|c| c.agent(id).cloned()));
        let name = match &agent {
            Some(a) => a.name.clone(),
            None => t_string!(i18n, ask_you).to_owned(),
        };
        let color = agent
            .as_ref()
            .map(|a| format!("--agent: {}", a.color))
            .unwrap_or_default();
        let class = if bubble.agent.is_some() {
            "bubble agent"
        } else {
            "bubble learner"
        };
        let no_thinking = bubble.thinking.is_empty();
        view! {
            <li class=class style=color data-testid="bubble" data-done=bubble.done.to_string()>
                <span class="bubble-name">{name}</span>
                <p class="bubble-thinking" hidden=no_thinking>{bubble.thinking}</p>
                <p class="bubble-text">{bubble.text}</p>
            </li>
        }
    };

    view! {
        <section class="ask" data-testid="ask" aria-label=t!(i18n, ask_label)>
            <ol class="bubbles" aria-live="polite">
                {move || bubbles.get().into_iter().map(bubble_view).collect_view()}
            </ol>
            <p class="error" role="alert" data-testid="ask-problem" hidden=move || problem.get().is_none()>
                {move || problem.get().unwrap_or_default()}
                " " <a href="/settings">{t!(i18n, nav_settings)}</a>
            </p>
            <form class="inline-form" on:submit=move |ev| { ev.prevent_default(); ask(); }>
                <input data-testid="ask-input" placeholder=t!(i18n, ask_placeholder) aria-label=t!(i18n, ask_label)
                    prop:value=move || question.get()
                    on:input=move |ev| question.set(event_target_value(&ev))/>
                <button class="primary" type="submit" data-testid="ask-send" disabled=move || running.get().is_some()>{t!(i18n, ask_send)}</button>
                <button class="secondary" type="button" data-testid="ask-stop" hidden=move || running.get().is_none() on:click=stop>{t!(i18n, provider_stop)}</button>
            </form>
        </section>
    }
}
