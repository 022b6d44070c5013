//! The player alone, for pages that carry Aula somewhere else: an iframe on another site
//! (`index.html?embed=1#course=<url>`), a SCORM package in an LMS, or the offline `.html` file
//! (both say so in `<script id="aula-package">`). The course comes from a URL (a course `.json`
//! or an `.aula.zip` bundle) or from the page itself, nothing needs IndexedDB, and the host page
//! talks to the player:
//!
//! - events out, as `{source: "aula", type, …}` posted to the parent window and dispatched on
//!   this window as an `aula` CustomEvent: `ready`, `scene`, `state`, `quiz`, `progress`
//!   (bookmark, score, completion) and `completed`;
//! - commands in, as `{target: "aula", type, …}` posted by the parent (or this window):
//!   `play`, `pause`, `seek {ms}`, `goto {scene}`, `restore {bookmark}`.
//!
//! It shows no library, settings or live class. What it reports is
//! `aula_player::progress::Progress`, pure and host-tested: scenes seen, quiz points,
//! completion and pass/fail under the export's rules, and a bookmark of a few hundred
//! characters at most.
//! In a SCORM package, `scorm-bridge.js` (a plain script beside the player, from
//! `crates/export/assets/`) finds the LMS's API, turns these events into `cmi.*` values, and
//! hands a saved bookmark back with `restore`. The offline page inlines the styles, the course,
//! the player's script and its WebAssembly as base64, and starts from those bytes, since a
//! `file://` page cannot fetch (`aula_export::package`). Exports carry the page built in one
//! module (`xtask/src/split.rs`); on the site, the player alone is a chunk of the page.

use aula_course::Course;
use aula_export::package::PackageConfig;
use aula_player::progress::{Progress, ProgressRules, Score};
use aula_player::{Command, PlayState};
use leptos::prelude::*;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::classroom::{Classroom, Host, Lecture};
use crate::i18n::*;

/// Where the embedded player's course comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CourseSource {
    Url(String),
    /// `<script id="aula-course" type="application/json">` in the page.
    Inline,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlayerSetup {
    pub source: CourseSource,
    pub rules: ProgressRules,
}

/// The player-only setup when the page is a package or an embed; `None` for the full app.
pub fn player_setup() -> Option<PlayerSetup> {
    let document = leptos::prelude::document();
    if let Some(config) = document.get_element_by_id("aula-package") {
        let config: PackageConfig =
            serde_json::from_str(&config.text_content().unwrap_or_default()).ok()?;
        return Some(PlayerSetup {
            source: config
                .course
                .map_or(CourseSource::Inline, CourseSource::Url),
            rules: config.rules,
        });
    }
    let location = leptos::prelude::window().location();
    let search = location.search().unwrap_or_default();
    if !search
        .trim_start_matches('?')
        .split('&')
        .any(|p| p == "embed=1")
    {
        return None;
    }
    let hash = location.hash().unwrap_or_default();
    let url = hash
        .trim_start_matches('#')
        .split('&')
        .find_map(|p| p.strip_prefix("course="))
        .map(|u| {
            js_sys::decode_uri_component(u)
                .ok()
                .and_then(|s| s.as_string())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    Some(PlayerSetup {
        source: CourseSource::Url(url),
        rules: ProgressRules::default(),
    })
}

async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    let failed = || format!("The course at {url} could not be loaded.");
    let response: web_sys::Response =
        wasm_bindgen_futures::JsFuture::from(leptos::prelude::window().fetch_with_str(url))
            .await
            .map_err(|_| failed())?
            .dyn_into()
            .map_err(|_| failed())?;
    if !response.ok() {
        return Err(format!("{} (HTTP {})", failed(), response.status()));
    }
    let buffer =
        wasm_bindgen_futures::JsFuture::from(response.array_buffer().map_err(|_| failed())?)
            .await
            .map_err(|_| failed())?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// A bundle's course file: the files worker checks and opens it. Loaded on first use in a
/// split build, with the workers' client.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn open_bundle(bytes: Vec<u8>) -> Result<String, String> {
    let job = aula_export::wire::FileJob::Import {
        existing: Vec::new(),
    };
    let (report, _) = crate::workers::file_job(&job, Some(&bytes))
        .await
        .ok_or("The course could not be opened.")?;
    match (report.error, report.course) {
        (Some(error), _) => Err(error),
        (None, Some(course)) => Ok(course),
        (None, None) => Err("The course could not be opened.".into()),
    }
}

async fn load(source: CourseSource) -> Result<Course, String> {
    let text = match source {
        CourseSource::Inline => leptos::prelude::document()
            .get_element_by_id("aula-course")
            .and_then(|e| e.text_content())
            .ok_or("This page has no course in it.")?,
        CourseSource::Url(url) if url.is_empty() => {
            return Err("No course given: add #course=<address of a course .json or .aula.zip> to the page's address.".into())
        }
        CourseSource::Url(url) => {
            let bytes = fetch_bytes(&url).await?;
            if bytes.starts_with(b"PK") {
                open_bundle(bytes).await?
            } else {
                String::from_utf8(bytes).map_err(|_| "The course file is not text.".to_string())?
            }
        }
    };
    Course::from_json(&text).map_err(|e| e.to_string())
}

/// The player alone, loaded on first use in a split build (a page that embeds it loads the
/// page's first module and this).
#[cfg_attr(aula_lazy, leptos::lazy)]
pub async fn player_only(setup: PlayerSetup) -> AnyView {
    view! { <PlayerOnly setup=setup/> }.into_any()
}

#[component]
fn PlayerOnly(setup: PlayerSetup) -> impl IntoView {
    let i18n = use_i18n();
    let host = Host {
        rules: setup.rules,
        bridge: |session, rules| view! { <HostBridge session=session rules=rules/> }.into_any(),
    };
    let course = LocalResource::new(move || load(setup.source.clone()));
    view! {
        <Suspense fallback=move || view! { <p class="muted">{t!(i18n, classroom_loading)}</p> }>
            {move || Suspend::new(async move {
                match course.await {
                    Ok(course) => view! { <Classroom course=course reload=RwSignal::new(0) host=Some(host)/> }.into_any(),
                    Err(error) => view! { <p class="error" role="alert" data-testid="player-error">{error}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// One event for the host page.
#[derive(Debug, Clone, Default, Serialize)]
struct HostEvent {
    source: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    scene: usize,
    scenes: usize,
    seen: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bookmark: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<Score>,
    completed: bool,
    passed: Option<bool>,
}

fn emit(event: &HostEvent) {
    let Ok(text) = serde_json::to_string(event) else {
        return;
    };
    let Ok(detail) = js_sys::JSON::parse(&text) else {
        return;
    };
    let window = leptos::prelude::window();
    let init = web_sys::CustomEventInit::new();
    init.set_detail(&detail);
    if let Ok(custom) = web_sys::CustomEvent::new_with_event_init_dict("aula", &init) {
        let _ = window.dispatch_event(&custom);
    }
    if let Ok(Some(parent)) = window.parent() {
        if parent != window {
            let _ = parent.post_message(&detail, "*");
        }
    }
}

fn state_name(state: PlayState) -> &'static str {
    match state {
        PlayState::Playing => "playing",
        PlayState::Ended => "ended",
        PlayState::Paused => "paused",
        _ => "waiting",
    }
}

/// Reports the session to the host page and obeys its commands; renders nothing.
#[component]
fn HostBridge(session: Lecture, rules: ProgressRules) -> impl IntoView {
    let progress = StoredValue::new(session.course(Progress::new));
    let completed_sent = StoredValue::new(false);
    let event = move |kind: &'static str| {
        progress.with_value(|p| HostEvent {
            source: "aula",
            kind,
            scene: p.current,
            scenes: p.scenes(),
            seen: p.seen(),
            completed: p.completed(&rules),
            passed: p.passed(&rules),
            score: p.score(),
            ..HostEvent::default()
        })
    };
    let report = move || {
        let mut e = event("progress");
        e.bookmark = Some(progress.with_value(Progress::bookmark));
        emit(&e);
        if e.completed && !completed_sent.get_value() {
            completed_sent.set_value(true);
            emit(&event("completed"));
        }
    };

    let stage = session.stage;
    let scene = Memo::new(move |_| stage.with(|s| s.scene_index));
    let state = Memo::new(move |_| stage.with(|s| state_name(s.state)));
    Effect::new(move || {
        let index = scene.get();
        progress.update_value(|p| {
            p.visit(index);
        });
        let mut e = event("scene");
        e.title = session.course(|c| c.scenes.get(index).map(|s| s.title.clone()));
        emit(&e);
        report();
    });
    Effect::new(move || {
        let mut e = event("state");
        e.state = Some(state.get());
        emit(&e);
    });
    Effect::new(move || {
        if let Some((index, earned, possible)) = session.quiz_result.get() {
            progress.update_value(|p| {
                p.quiz_checked(index, earned);
            });
            let mut e = event("quiz");
            e.scene = index;
            e.score = Some(Score {
                raw: earned,
                max: possible,
            });
            emit(&e);
            report();
        }
    });

    let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
        move |message: web_sys::MessageEvent| {
            let window = leptos::prelude::window();
            let from_host = message.source().is_some_and(|s| {
                let s: JsValue = s.into();
                window
                    .parent()
                    .ok()
                    .flatten()
                    .is_some_and(|p| JsValue::from(p) == s)
                    || JsValue::from(window.clone()) == s
            });
            let data = message.data();
            let get = |k: &str| js_sys::Reflect::get(&data, &JsValue::from_str(k)).ok();
            if !from_host || get("target").and_then(|t| t.as_string()).as_deref() != Some("aula") {
                return;
            }
            let number = |k: &str| get(k).and_then(|v| v.as_f64());
            match get("type").and_then(|t| t.as_string()).as_deref() {
                Some("play") => session.send(Command::Play),
                Some("pause") => session.send(Command::Pause),
                Some("seek") => session.send(Command::SeekScene {
                    scene: scene.get_untracked(),
                    ms: number("ms").unwrap_or(0.0).max(0.0),
                }),
                Some("goto") => session.send(Command::SeekScene {
                    scene: number("scene").unwrap_or(0.0).max(0.0) as usize,
                    ms: 0.0,
                }),
                Some("restore") => {
                    let bookmark = get("bookmark")
                        .and_then(|b| b.as_string())
                        .unwrap_or_default();
                    if progress.try_update_value(|p| p.restore(&bookmark)) == Some(true) {
                        let at = progress.with_value(|p| p.current);
                        session.send(Command::SeekScene { scene: at, ms: 0.0 });
                        report();
                    } else {
                        leptos::logging::warn!("player: the host's bookmark {bookmark:?} does not fit this course; starting afresh");
                    }
                }
                _ => {}
            }
        },
    );
    let window = leptos::prelude::window();
    let _ = window.add_event_listener_with_callback("message", on_message.as_ref().unchecked_ref());
    // The player-only page shows one classroom for its whole life.
    on_message.forget();

    let mut ready = event("ready");
    ready.title = Some(session.course(|c| c.title.clone()));
    emit(&ready);
}
