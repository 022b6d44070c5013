//! Around the stage: the scene list, subtitles, the roundtable of agents, transport controls
//! and the keyboard.

use aula_course::{AgentProfile, AgentRole};
use aula_player::{Command, PlayState};
use leptos::ev;
use leptos::prelude::*;

use super::lecture::Lecture;
use crate::i18n::*;
use crate::preferences::SPEEDS;

/// Seek step of the arrow keys, in timeline milliseconds.
const SEEK_STEP_MS: f64 = 5000.0;

/// Up to two initials, upper-cased by the browser (Rust's `to_uppercase` would bring its
/// Unicode case tables, about 12 KB, into the page).
fn initials(name: &str) -> String {
    let initials: String = name
        .split_whitespace()
        .filter_map(|w| w.chars().next())
        .take(2)
        .collect();
    js_sys::JsString::from(initials).to_upper_case().into()
}

/// The style giving an element the agent's colour as `--agent`; a colour that is not a short
/// `#hex` (the course file is outside input) gets a neutral grey instead.
pub(super) fn agent_style(agent: &AgentProfile) -> String {
    format!(
        "--agent:{};",
        if agent.color.starts_with('#')
            && agent.color.len() <= 9
            && agent.color[1..].bytes().all(|b| b.is_ascii_hexdigit())
        {
            agent.color.as_str()
        } else {
            "#64748b"
        }
    )
}

/// An agent's disc: its colour and initials (avatars are pictures later, names always).
pub(super) fn avatar(agent: &AgentProfile, class: &'static str) -> impl IntoView {
    view! { <span class=class style=agent_style(agent) aria-hidden="true">{initials(&agent.name)}</span> }
}

/// Inline icons: symbol fonts are not on every machine, SVG is.
pub(super) fn icon(name: &'static str) -> impl IntoView {
    let path = match name {
        "prev" => "M6 5h2v14H6zM20 5v14L9 12z",
        "next" => "M16 5h2v14h-2zM4 5l11 7-11 7z",
        "play" => "M7 4.5v15l12.5-7.5z",
        "pause" => "M6 5h4v14H6zM14 5h4v14h-4z",
        "voice" => "M4 9h4l5-4v14l-5-4H4zM16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12",
        "mute" => "M4 9h4l5-4v14l-5-4H4zM16 9l5 6M21 9l-5 6",
        "full" => "M4 9V4h5M15 4h5v5M20 15v5h-5M9 20H4v-5",
        "mic" => "M12 3a3 3 0 0 1 3 3v6a3 3 0 0 1-6 0V6a3 3 0 0 1 3-3zM6 11a6 6 0 0 0 12 0M12 17v4",
        _ => "",
    };
    let filled = matches!(name, "prev" | "next" | "play" | "pause");
    view! {
        <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" fill=if filled { "currentColor" } else { "none" }
            stroke=if filled { "none" } else { "currentColor" } stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
            <path d=path/>
        </svg>
    }
}

fn clock(ms: f64) -> String {
    let seconds = (ms / 1000.0).max(0.0).round() as u64;
    format!("{}:{:02}", seconds / 60, seconds % 60)
}

#[component]
pub fn SceneList(session: Lecture) -> impl IntoView {
    let i18n = use_i18n();
    let stage = session.stage;
    let current = Memo::new(move |_| stage.with(|s| s.scene_index));
    let scenes: Vec<(usize, String, &'static str)> = session.course(|c| {
        c.scenes
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s.title.clone(), s.content.kind_name()))
            .collect()
    });
    view! {
        <nav class="scene-list" aria-label=move || t_string!(i18n, scenes_nav)>
            <ol>
                {scenes
                    .into_iter()
                    .map(|(index, title, kind)| {
                        view! {
                            <li>
                                <button
                                    class="scene-button"
                                    class:current=move || current.get() == index
                                    aria-current=move || (current.get() == index).then_some("step")
                                    data-testid="scene-button"
                                    on:click=move |_| session.send(Command::SeekScene { scene: index, ms: 0.0 })
                                >
                                    <span class="scene-number">{index + 1}</span>
                                    <span class="scene-title">{title}</span>
                                    <span class=format!("scene-kind kind-{kind}")>
                                        {move || match kind {
                                            "quiz" => t_string!(i18n, kind_quiz),
                                            "interactive" => t_string!(i18n, kind_interactive),
                                            "pbl" => t_string!(i18n, kind_pbl),
                                            _ => t_string!(i18n, kind_slide),
                                        }}
                                    </span>
                                </button>
                            </li>
                        }
                    })
                    .collect_view()}
            </ol>
        </nav>
    }
}

/// The sentence being spoken, always on screen (unless the learner hides it with C).
#[component]
pub fn CaptionBar(session: Lecture) -> impl IntoView {
    let stage = session.stage;
    let caption = Memo::new(move |_| stage.with(|s| s.caption.clone()));
    let visible = session.captions_visible;
    view! {
        <div class="caption-bar" class:hidden=move || !visible.get() data-testid="caption-bar" aria-live="polite">
            {move || match caption.get() {
                Some(caption) => {
                    let speaker = session.course(|c| c.agent(&caption.speaker).cloned());
                    let name = speaker.as_ref().map(|a| a.name.clone()).unwrap_or_default();
                    view! {
                        {speaker.as_ref().map(|a| avatar(a, "avatar small"))}
                        <span class="caption-speaker">{name}</span>
                        <span class="caption-text" data-testid="caption-text">{caption.text.clone()}</span>
                    }
                    .into_any()
                }
                None => view! { <span class="caption-idle">"…"</span> }.into_any(),
            }}
        </div>
    }
}

/// Everyone in the class; the one speaking lights up.
#[component]
pub fn Roundtable(session: Lecture) -> impl IntoView {
    let i18n = use_i18n();
    let stage = session.stage;
    let speaking =
        Memo::new(move |_| stage.with(|s| s.caption.as_ref().map(|c| c.speaker.clone())));
    let agents = session.course(|c| c.agents.clone());
    view! {
        <ul class="roundtable" aria-label=move || t_string!(i18n, roundtable_label)>
            {agents
                .into_iter()
                .map(|agent| {
                    let id = agent.id.clone();
                    let role = agent.role;
                    let role = move || match role {
                        AgentRole::Teacher => t_string!(i18n, role_teacher),
                        AgentRole::Assistant => t_string!(i18n, role_assistant),
                        AgentRole::Student => t_string!(i18n, role_student),
                    };
                    let is_speaking = move || speaking.get().as_deref() == Some(id.as_str());
                    view! {
                        <li class="seat" class:speaking=is_speaking.clone() data-testid="seat" aria-current=move || is_speaking().then_some("true")>
                            {avatar(&agent, "avatar")}
                            <span class="seat-name">{agent.name.clone()}</span>
                            <span class="seat-role">{role}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

fn toggle_fullscreen(target: Option<web_sys::HtmlElement>) {
    let document = document();
    if document.fullscreen_element().is_some() {
        document.exit_fullscreen();
    } else if let Some(element) = target {
        let _ = element.request_fullscreen();
    }
}

#[component]
pub fn ControlBar(session: Lecture, stage_ref: NodeRef<leptos::html::Div>) -> impl IntoView {
    let i18n = use_i18n();
    let stage = session.stage;
    let state = Memo::new(move |_| stage.with(|s| s.state));
    let scene_ms = Memo::new(move |_| stage.with(|s| s.scene_ms.round()));
    let total_ms = Memo::new(move |_| stage.with(|s| s.scene_total_ms.round()));
    let playing = move || matches!(state.get(), PlayState::Playing);
    let speed = session.speed;
    let captions_only = session.captions_only;
    view! {
        <div class="controls" role="toolbar" aria-label="Playback">
            <button class="icon-button" title=move || t_string!(i18n, previous_scene_hint) aria-label=move || t_string!(i18n, previous_scene) on:click=move |_| session.send(Command::PreviousScene)>{icon("prev")}</button>
            <button class="play-button" data-testid="play" aria-label=move || if playing() { t_string!(i18n, pause) } else { t_string!(i18n, play) }
                title=move || t_string!(i18n, play_pause_hint) on:click=move |_| session.send(Command::TogglePlay)>
                {move || if playing() { icon("pause").into_any() } else { icon("play").into_any() }}
            </button>
            <button class="icon-button" title=move || t_string!(i18n, next_scene_hint) aria-label=move || t_string!(i18n, next_scene) data-testid="next-scene" on:click=move |_| session.send(Command::NextScene)>{icon("next")}</button>
            <label class="seek">
                <span class="visually-hidden">{t!(i18n, seek_label)}</span>
                <input type="range" min="0" step="100" data-testid="seek"
                    prop:max=move || total_ms.get().max(1.0)
                    prop:value=move || scene_ms.get()
                    on:input=move |ev| {
                        // The browser's number, not the text parsed (no float parser in the page).
                        let ms = event_target::<web_sys::HtmlInputElement>(&ev).value_as_number();
                        if ms.is_finite() {
                            let scene = stage.with_untracked(|s| s.scene_index);
                            session.send(Command::SeekScene { scene, ms });
                        }
                    }/>
            </label>
            <span class="time" data-testid="time">{move || format!("{} / {}", clock(scene_ms.get()), clock(total_ms.get()))}</span>
            <label class="speed">
                <span class="visually-hidden">{t!(i18n, speed_label)}</span>
                <select data-testid="speed" on:change=move |ev| {
                    let value = event_target_value(&ev);
                    if let Some(speed) = SPEEDS.iter().copied().find(|s| s.to_string() == value) { session.send(Command::SetSpeed(speed)); }
                }>
                    {SPEEDS.iter().map(|&s| view! { <option value=s.to_string() selected=move || speed.get() == s>{format!("{s}×")}</option> }).collect_view()}
                </select>
            </label>
            <button class="icon-button" data-testid="voice-toggle"
                disabled=!session.voice_available
                title=move || if !session.voice_available { t_string!(i18n, voice_missing) } else if captions_only.get() { t_string!(i18n, voice_turn_on) } else { t_string!(i18n, voice_turn_off) }
                aria-pressed=move || (!captions_only.get()).to_string()
                on:click=move |_| session.send(Command::SetCaptionsOnly(!captions_only.get_untracked()))>
                {move || if captions_only.get() { icon("mute").into_any() } else { icon("voice").into_any() }}
            </button>
            <button class="icon-button" title=move || t_string!(i18n, captions_hint) aria-label=move || t_string!(i18n, captions_toggle) aria-pressed=move || session.captions_visible.get().to_string()
                on:click=move |_| session.captions_visible.update(|v| *v = !*v)>"CC"</button>
            <button class="icon-button" title=move || t_string!(i18n, fullscreen_hint) aria-label=move || t_string!(i18n, fullscreen) on:click=move |_| toggle_fullscreen(stage_ref.get_untracked().map(Into::into))>{icon("full")}</button>
        </div>
    }
}

/// Space, arrows, F and C, except while typing or with modifier keys (other than Shift).
pub fn bind_keyboard(session: Lecture) {
    let handle = window_event_listener(ev::keydown, move |event: web_sys::KeyboardEvent| {
        if event.ctrl_key() || event.meta_key() || event.alt_key() {
            return;
        }
        let typing = event
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .is_some_and(|el| {
                matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
                    || el.has_attribute("contenteditable")
            });
        if typing {
            return;
        }
        let (scene, ms) = session
            .stage
            .with_untracked(|s| (s.scene_index, s.scene_ms));
        let command = match (event.key().as_str(), event.shift_key()) {
            (" ", _) => Some(Command::TogglePlay),
            ("ArrowLeft", false) => Some(Command::SeekScene {
                scene,
                ms: (ms - SEEK_STEP_MS).max(0.0),
            }),
            ("ArrowRight", false) => Some(Command::SeekScene {
                scene,
                ms: ms + SEEK_STEP_MS,
            }),
            ("ArrowLeft", true) | ("PageUp", _) => Some(Command::PreviousScene),
            ("ArrowRight", true) | ("PageDown", _) => Some(Command::NextScene),
            ("f" | "F", _) => {
                toggle_fullscreen(
                    document()
                        .query_selector(".stage-shell")
                        .ok()
                        .flatten()
                        .and_then(|e| wasm_bindgen::JsCast::dyn_into(e).ok()),
                );
                None
            }
            ("c" | "C", _) => {
                session.captions_visible.update(|v| *v = !*v);
                None
            }
            _ => return,
        };
        event.prevent_default();
        if let Some(command) = command {
            session.send(command);
        }
    });
    on_cleanup(move || handle.remove());
}
