//! `/generate/<course id>`: a course being written. The outline streams in; the learner may edit
//! it (rename, reorder, change a scene's kind, delete, add); then every scene shows its state as
//! the worker writes it, with the time and tokens spent, a retry for a scene that failed, a
//! regenerate for one that is done, and "Start learning" as soon as the first scene is ready.

use aula_generation::outline::{SceneKind, SceneOutline};
use aula_generation::{actions_task, content_task};
use leptos::prelude::*;

use crate::generate::{self, view_of, GenView, SceneProgress, Status};
use crate::i18n::*;

#[component]
pub fn GeneratePage(id: String) -> impl IntoView {
    let i18n = use_i18n();
    let view = view_of(&id);
    let problem = RwSignal::new(String::new());
    {
        let id = id.clone();
        leptos::task::spawn_local(async move {
            if let Err(error) = generate::open(&id).await {
                problem.set(error);
            }
        });
    }
    // The clock on screen moves once a second while something runs, and is stored every few.
    let now = RwSignal::new(crate::now_ms());
    let ticks = std::cell::Cell::new(0u32);
    let tick = set_interval_with_handle(
        move || {
            now.set(crate::now_ms());
            ticks.set(ticks.get() + 1);
            if ticks.get().is_multiple_of(3) {
                generate::checkpoint_clock(view);
            }
        },
        std::time::Duration::from_secs(1),
    )
    .ok();
    on_cleanup(move || {
        if let Some(tick) = tick {
            tick.clear();
        }
    });
    let status = Memo::new(move |_| view.with(GenView::status));
    let title = dyn_text(move || {
        view.with(|v| {
            v.file
                .as_ref()
                .map(|f| match &f.outline {
                    Some(o) => o.title.clone(),
                    None => f.request.topic.clone(),
                })
                .unwrap_or_default()
        })
    });
    let eyebrow = dyn_text(move || {
        let failed = view.with(GenView::any_failed);
        if status.get() == Status::Settled && failed {
            i18n.text(Key::gen_status_partial).to_string()
        } else {
            status_text(i18n, status.get())
        }
    });
    let tokens = dyn_text(move || {
        i18n.fill(
            Key::gen_tokens,
            &[("count", view.with(|v| v.tokens).to_string())],
        )
    });
    let meta = dyn_text(move || {
        let seconds = (view.with(|v| v.elapsed_ms(now.get())) / 1000.0) as u64;
        format!("{}:{:02} · {}", seconds / 60, seconds % 60, tokens.get())
    });
    let error = dyn_text(move || {
        let p = problem.get();
        if p.is_empty() {
            view.with(|v| v.error().to_string())
        } else {
            p
        }
    });
    let no_error = dyn_flag(move || error.with(String::is_empty));
    let document_whole = dyn_flag(move || {
        !view.with(|v| {
            v.file
                .as_ref()
                .is_some_and(|f| f.record.stats.values().any(|s| s.document_cut))
        })
    });
    let not_running = dyn_flag(move || view.with(|v| v.job.is_none()));
    let not_stored = dyn_flag(move || view.with(|v| v.course_version == 0));
    let not_missing = dyn_flag(move || !view.with(|v| v.loaded && v.file.is_none()));
    let href = format!("/classroom/{id}");
    let cancel_id = id.clone();
    let continue_id = id.clone();
    let state_name = dyn_text(move || status.get().name().to_string());
    view! {
        <section class="generate" data-testid="generate" data-status=state_name>
            <p class="error" role="alert" prop:hidden=not_missing>{t!(i18n, gen_missing)}</p>
            <header class="generate-head">
                <div>
                    <p class="eyebrow">{eyebrow}</p>
                    <h1 data-testid="generate-title">{title}</h1>
                    <p class="meta" data-testid="gen-meta">{meta}</p>
                    <span class="visually-hidden" data-testid="gen-tokens">{tokens}</span>
                </div>
                <div class="generate-actions">
                    <button data-testid="gen-cancel" prop:hidden=not_running on:click=move |_| generate::cancel(&cancel_id)>
                        {t!(i18n, gen_stop)}
                    </button>
                    <button data-testid="gen-continue" prop:hidden=dyn_flag(move || status.get() != Status::Stopped)
                        on:click=move |_| {
                            let id = continue_id.clone();
                            leptos::task::spawn_local(async move {
                                problem.set(String::new());
                                if let Err(error) = generate::carry_on(&id).await {
                                    problem.set(error);
                                }
                            });
                        }>
                        {t!(i18n, gen_continue)}
                    </button>
                    <a class="button primary" data-testid="start-learning" href=href
                        class:disabled=not_stored aria-disabled=not_stored
                        on:click=move |ev| if not_stored.get_untracked() { ev.prevent_default() }>
                        {t!(i18n, gen_start_learning)}
                    </a>
                </div>
            </header>
            <p class="note" data-testid="gen-document-cut" prop:hidden=document_whole>{t!(i18n, gen_document_cut)}</p>
            <div class="error-box" role="alert" data-testid="gen-error" prop:hidden=no_error>
                <p>{error}</p>
                <a href="/settings" class="button">{t!(i18n, gen_open_settings)}</a>
            </div>
            // The three steps are siblings shown by status, not views swapped in and out: each
            // swapped view type costs the bundle its own copy of the rendering code.
            <div prop:hidden=dyn_flag(move || status.get() != Status::Outlining)>
                <OutlinePreview view=view/>
            </div>
            <div prop:hidden=dyn_flag(move || status.get() != Status::Reviewing)>
                <OutlineEditor id=id.clone() view=view problem=problem/>
            </div>
            <div prop:hidden=dyn_flag(move || matches!(status.get(), Status::Outlining | Status::Reviewing))>
                <SceneList id=id.clone() view=view problem=problem/>
            </div>
        </section>
    }
}

fn status_text(i18n: I18n, status: Status) -> String {
    let key = match status {
        Status::Outlining => Key::gen_status_outlining,
        Status::Reviewing => Key::gen_status_reviewing,
        Status::Writing => Key::gen_status_writing,
        Status::Settled => Key::gen_status_settled,
        Status::Stopped => Key::gen_status_stopped,
    };
    i18n.text(key).to_string()
}

fn kind_label(i18n: I18n, kind: &str) -> &'static str {
    i18n.text(match kind {
        "quiz" => Key::kind_quiz,
        "interactive" => Key::kind_interactive,
        "pbl" => Key::kind_pbl,
        _ => Key::kind_slide,
    })
}

// The lists below are markup strings with one delegated listener each, not a view per row:
// per-row reactive views cost the page's bundle far more than the markup they make. Every piece
// of text in them comes from a model or the learner and is escaped.

use aula_render::escape_html as esc;
use wasm_bindgen::JsCast;

/// The `data-` attribute `name` of the element an event started in, or of its nearest ancestor
/// that has it.
fn event_data(ev: &leptos::ev::Event, name: &str) -> Option<String> {
    let target: web_sys::Element = ev.target()?.dyn_into().ok()?;
    let holder = target.closest(&format!("[data-{name}]")).ok()??;
    holder.get_attribute(&format!("data-{name}"))
}

/// The outline's scenes as they stream in.
#[component]
fn OutlinePreview(view: RwSignal<GenView>) -> impl IntoView {
    let i18n = use_i18n();
    let rows = Memo::new(move |_| {
        let mut html = String::new();
        view.with(|v| {
            for (kind, title) in &v.preview {
                html.push_str(&format!(
                    "<li><span class=\"scene-kind\">{}</span> {}</li>",
                    kind_label(i18n, kind),
                    esc(title)
                ));
            }
        });
        html.push_str("<li class=\"skeleton\" aria-hidden=\"true\"></li>");
        html
    });
    view! {
        <div class="outline-preview" aria-live="polite">
            <p class="muted">{t!(i18n, gen_outline_streaming)}</p>
            <ol data-testid="outline-preview" inner_html=move || rows.get()></ol>
        </div>
    }
}

/// The outline, editable before any scene is written.
#[component]
fn OutlineEditor(id: String, view: RwSignal<GenView>, problem: RwSignal<String>) -> impl IntoView {
    let i18n = use_i18n();
    let scenes = RwSignal::new(Vec::<SceneOutline>::new());
    let title = RwSignal::new(String::new());
    // The outline arrives after the page opens; take it once, then the learner's edits rule.
    let taken = StoredValue::new(false);
    Effect::new(move || {
        let outline = view.with(|v| {
            (v.status() == Status::Reviewing)
                .then(|| v.file.as_ref().and_then(|f| f.outline.clone()))
                .flatten()
        });
        if let (Some(outline), false) = (outline, taken.get_value()) {
            taken.set_value(true);
            title.set(outline.title.clone());
            scenes.set(outline.scenes);
        }
    });
    let busy = RwSignal::new(false);
    let write = move |_| {
        let Some(mut edited) =
            view.with_untracked(|v| v.file.as_ref().and_then(|f| f.outline.clone()))
        else {
            return;
        };
        edited.title = title.get_untracked();
        edited.scenes = scenes.get_untracked();
        let id = id.clone();
        busy.set(true);
        leptos::task::spawn_local(async move {
            if let Err(error) = generate::write_course(&id, edited).await {
                problem.set(error);
            }
            busy.set(false);
        });
    };
    let add = move |_| {
        scenes.update(|s| {
            s.push(SceneOutline {
                id: String::new(),
                kind: SceneKind::Slide,
                title: String::new(),
                goal: String::new(),
                key_points: Vec::new(),
                discussion: false,
            })
        })
    };
    // Typing changes the data only; moving, adding and removing draw the rows again.
    let rows = Memo::new(move |_| scenes.with(|list| outline_rows(i18n, list)));
    let index =
        |ev: &leptos::ev::Event| event_data(ev, "index").and_then(|i| i.parse::<usize>().ok());
    let on_input = move |ev: leptos::ev::Event| {
        if let (Some(i), Some("title")) = (index(&ev), event_data(&ev, "field").as_deref()) {
            let value = event_target_value(&ev);
            scenes.update_untracked(|s| {
                if let Some(scene) = s.get_mut(i) {
                    scene.title = value
                }
            });
        }
    };
    let on_change = move |ev: leptos::ev::Event| {
        if let (Some(i), Some("kind")) = (index(&ev), event_data(&ev, "field").as_deref()) {
            let kind = match event_target_value(&ev).as_str() {
                "quiz" => SceneKind::Quiz,
                "interactive" => SceneKind::Interactive,
                "pbl" => SceneKind::Pbl,
                _ => SceneKind::Slide,
            };
            scenes.update_untracked(|s| {
                if let Some(scene) = s.get_mut(i) {
                    scene.kind = kind
                }
            });
        }
    };
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let (Some(i), Some(action)) = (index(&ev), event_data(&ev, "move")) else {
            return;
        };
        scenes.update(|s| match action.as_str() {
            "up" if i > 0 && i < s.len() => s.swap(i, i - 1),
            "down" if i + 1 < s.len() => s.swap(i, i + 1),
            "delete" if i < s.len() => {
                s.remove(i);
            }
            _ => {}
        });
    };
    view! {
        <div class="outline-editor">
            <p class="muted">{t!(i18n, gen_review_hint)}</p>
            <label class="field">
                <span>{t!(i18n, gen_course_title)}</span>
                <input data-testid="outline-title" bind:value=title/>
            </label>
            <ol class="outline-rows" data-testid="outline-editor" inner_html=move || rows.get()
                on:input=on_input on:change=on_change on:click=on_click></ol>
            <div class="row-actions">
                <button data-testid="outline-add" on:click=add>{t!(i18n, gen_add_scene)}</button>
                <button class="primary" data-testid="outline-write" disabled=move || busy.get() on:click=write>
                    {t!(i18n, gen_write_course)}
                </button>
            </div>
        </div>
    }
}

fn outline_rows(i18n: I18n, scenes: &[SceneOutline]) -> String {
    let kinds = [
        SceneKind::Slide,
        SceneKind::Quiz,
        SceneKind::Interactive,
        SceneKind::Pbl,
    ];
    let mut html = String::new();
    let last = scenes.len().saturating_sub(1);
    for (i, scene) in scenes.iter().enumerate() {
        let options: String = kinds
            .iter()
            .map(|k| {
                let selected = if *k == scene.kind { " selected" } else { "" };
                format!(
                    "<option value=\"{}\"{selected}>{}</option>",
                    k.name(),
                    kind_label(i18n, k.name())
                )
            })
            .collect();
        let button = |action: &str, label: Key, glyph: &str, disabled: bool, testid: &str| {
            let label = i18n.text(label);
            let disabled = if disabled { " disabled" } else { "" };
            format!("<button type=\"button\" class=\"icon-button\" data-move=\"{action}\" data-testid=\"{testid}\" title=\"{label}\" aria-label=\"{label}\"{disabled}>{glyph}</button>")
        };
        html.push_str(&format!(
            "<li class=\"outline-row\" data-testid=\"outline-row\" data-index=\"{i}\">\
             <span class=\"scene-number\">{n}</span>\
             <select data-field=\"kind\" aria-label=\"{kind_label}\">{options}</select>\
             <input class=\"grow\" data-testid=\"outline-row-title\" data-field=\"title\" value=\"{title}\" aria-label=\"{title_label}\">\
             {up}{down}{delete}</li>",
            n = i + 1,
            kind_label = i18n.text(Key::gen_scene_kind),
            title = esc(&scene.title),
            title_label = i18n.text(Key::gen_scene_title),
            up = button("up", Key::gen_move_up, "↑", i == 0, "outline-row-up"),
            down = button("down", Key::gen_move_down, "↓", i == last, "outline-row-down"),
            delete = button("delete", Key::gen_delete_scene, "✕", false, "outline-row-delete"),
        ));
    }
    html
}

/// Every scene's state while the course is written, and after; a written scene's words can be
/// edited by hand below the list.
#[component]
fn SceneList(id: String, view: RwSignal<GenView>, problem: RwSignal<String>) -> impl IntoView {
    let i18n = use_i18n();
    let rows = Memo::new(move |_| view.with(|v| progress_rows(i18n, v)));
    let editing = RwSignal::new(None::<String>);
    let note = RwSignal::new(String::new());
    let retry_id = id.clone();
    let on_click = move |ev: leptos::ev::MouseEvent| {
        if let Some(scene) = event_data(&ev, "edit") {
            note.set(String::new());
            editing.set(Some(scene));
            return;
        }
        let Some(task) = event_data(&ev, "task") else {
            return;
        };
        let id = retry_id.clone();
        leptos::task::spawn_local(async move {
            if let Err(error) = generate::redo(&id, task).await {
                problem.set(error);
            }
        });
    };
    let panel = NodeRef::<leptos::html::Div>::new();
    let words_html = Memo::new(move |_| {
        let Some(scene) = editing.get() else {
            return String::new();
        };
        view.with(|v| {
            let file = v.file.as_ref()?;
            let title = file.outline.as_ref()?.scene(&scene)?.title.clone();
            let words = aula_generation::edit::scene_words(&file.record, &scene)?;
            Some(words_editor(i18n, &title, &words))
        })
        .unwrap_or_default()
    });
    let save = move |_| {
        let (Some(scene), Some(panel)) = (editing.get_untracked(), panel.get_untracked()) else {
            return;
        };
        let words = read_words(&panel);
        let id = id.clone();
        leptos::task::spawn_local(async move {
            match generate::edit_scene(&id, &scene, &words).await {
                Ok(()) => {
                    editing.set(None);
                    note.set(i18n.text(Key::gen_saved).to_string());
                }
                Err(error) => note.set(error),
            }
        });
    };
    view! {
        <ol class="scene-progress" data-testid="scene-progress" aria-live="polite"
            inner_html=move || rows.get() on:click=on_click></ol>
        <div class="words-editor" data-testid="words-editor" prop:hidden=dyn_flag(move || editing.with(Option::is_none))>
            <div node_ref=panel inner_html=move || words_html.get()></div>
            <div class="row-actions">
                <button data-testid="words-cancel" on:click=move |_| editing.set(None)>{t!(i18n, gen_cancel)}</button>
                <button class="primary" data-testid="words-save" on:click=save>{t!(i18n, gen_save)}</button>
            </div>
        </div>
        <p class="hint" role="status" data-testid="words-note">{note}</p>
    }
}

fn words_editor(i18n: I18n, title: &str, words: &aula_generation::edit::SceneWords) -> String {
    let mut html = format!(
        "<h2>{}</h2>",
        esc(&i18n.fill(Key::gen_edit_title, &[("title", title.to_string())]))
    );
    let mut section = |heading: Key, attr: &str, items: &[(String, String)]| {
        if items.is_empty() {
            return;
        }
        html.push_str(&format!("<h3>{}</h3>", i18n.text(heading)));
        for (id, text) in items {
            html.push_str(&format!(
                "<textarea rows=\"3\" data-{attr}=\"{}\" data-testid=\"edit-{attr}\" aria-label=\"{}\">{}</textarea>",
                esc(id),
                i18n.text(heading),
                esc(text)
            ));
        }
    };
    section(Key::gen_edit_speech, "speech", &words.speeches);
    section(Key::gen_edit_slide, "text", &words.slide_texts);
    html
}

/// The edited words, from the editor's text areas.
fn read_words(panel: &web_sys::HtmlDivElement) -> aula_generation::edit::SceneWords {
    let mut words = aula_generation::edit::SceneWords::default();
    let Ok(fields) = panel.query_selector_all("textarea") else {
        return words;
    };
    for i in 0..fields.length() {
        let Some(field) = fields
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        else {
            continue;
        };
        let value = js_sys::Reflect::get(&field, &"value".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        if let Some(id) = field.get_attribute("data-speech") {
            words.speeches.push((id, value));
        } else if let Some(id) = field.get_attribute("data-text") {
            words.slide_texts.push((id, value));
        }
    }
    words
}

fn progress_rows(i18n: I18n, v: &GenView) -> String {
    let Some(file) = v.file.as_ref() else {
        return String::new();
    };
    let Some(outline) = file.outline.as_ref() else {
        return String::new();
    };
    let idle = v.job.is_none();
    let mut html = String::new();
    for (i, scene) in outline.scenes.iter().enumerate() {
        let live = v.live_call(i);
        let state = v.scene_progress(i);
        let (content, actions) = (content_task(&scene.id), actions_task(&scene.id));
        // Time and tokens: the running call's so far, added to what the scene cost before.
        let spent = |task: &str| {
            file.record
                .stats
                .get(task)
                .map_or((0, 0), |s| (s.ms, s.tokens))
        };
        let (mut ms, mut tokens) = (
            spent(&content).0 + spent(&actions).0,
            spent(&content).1 + spent(&actions).1,
        );
        if let Some((_, _, live_tokens, live_ms)) = live {
            ms += live_ms;
            tokens += live_tokens;
        }
        let cost = if ms > 0 || tokens > 0 {
            let seconds = ms / 1000;
            format!(
                "<span class=\"scene-cost\" data-testid=\"scene-cost\">{}</span>",
                esc(&i18n.fill(
                    Key::gen_scene_cost,
                    &[
                        ("time", format!("{}:{:02}", seconds / 60, seconds % 60)),
                        ("tokens", tokens.to_string()),
                    ],
                ))
            )
        } else {
            String::new()
        };
        let failure = file
            .record
            .failed
            .get(&content)
            .map(|why| (&content, why))
            .or_else(|| file.record.failed.get(&actions).map(|why| (&actions, why)));
        let mut buttons = String::new();
        let button = |task: &str, testid: &str, label: Key| {
            format!(
                "<button type=\"button\" data-task=\"{}\" data-testid=\"{testid}\">{}</button>",
                esc(task),
                i18n.text(label)
            )
        };
        if let Some((task, _)) = failure {
            buttons.push_str(&button(task, "scene-retry", Key::gen_retry));
        } else if state == SceneProgress::Ready && idle {
            buttons.push_str(&format!(
                "<button type=\"button\" data-edit=\"{}\" data-testid=\"edit-words\">{}</button>",
                esc(&scene.id),
                i18n.text(Key::gen_edit_text)
            ));
            buttons.push_str(&button(
                &actions,
                "regenerate-script",
                Key::gen_regenerate_script,
            ));
            buttons.push_str(&button(
                &content,
                "regenerate-scene",
                Key::gen_regenerate_scene,
            ));
        }
        let why = failure
            .map(|(_, why)| {
                format!(
                    "<p class=\"error scene-error\" data-testid=\"scene-error\">{}</p>",
                    esc(why)
                )
            })
            .unwrap_or_default();
        html.push_str(&format!(
            "<li class=\"scene-row\" data-testid=\"scene-row\" data-state=\"{state}\">\
             <span class=\"scene-number\">{n}</span><span class=\"scene-kind\">{kind}</span>\
             <span class=\"grow\">{title}</span>{cost}\
             <span class=\"state-badge state-{state}\">{label}</span>{buttons}{why}</li>",
            n = i + 1,
            kind = kind_label(i18n, scene.kind.name()),
            title = esc(&scene.title),
            label = state_text(i18n, state),
            state = state.name(),
        ));
    }
    html
}

fn state_text(i18n: I18n, state: SceneProgress) -> &'static str {
    i18n.text(match state {
        SceneProgress::Thinking => Key::gen_state_thinking,
        SceneProgress::Writing => Key::gen_state_writing,
        SceneProgress::Scripting => Key::gen_state_scripting,
        SceneProgress::Ready => Key::gen_state_ready,
        SceneProgress::Failed => Key::gen_state_failed,
        SceneProgress::Waiting => Key::gen_state_waiting,
    })
}

/// The generation page, loaded on first use in a split build (see `shell::on_first_use`).
#[cfg_attr(aula_lazy, leptos::lazy)]
pub async fn generate_view(id: String) -> AnyView {
    view! { <GeneratePage id=id/> }.into_any()
}
