//! `/generate/<course id>`: a course being written. The outline streams in; the learner may edit
//! it (rename, reorder, change a scene's kind, delete, add); then every scene shows its state as
//! the worker writes it, with the time and tokens spent, a retry for a scene that failed, a
//! regenerate for one that is done, and "Start learning" as soon as the first scene is ready.

use aula_generation::outline::{Outline, SceneKind, SceneOutline};
use aula_generation::{actions_task, content_task};
use leptos::prelude::*;

use crate::generate::{self, view_of, GenView, Status};
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
    // The clock on screen moves once a second while something runs.
    let now = RwSignal::new(crate::now_ms());
    let tick = set_interval_with_handle(move || now.set(crate::now_ms()), std::time::Duration::from_secs(1)).ok();
    on_cleanup(move || {
        if let Some(tick) = tick {
            tick.clear();
        }
    });
    let status = Memo::new(move |_| view.with(GenView::status));
    let title = move || {
        view.with(|v| {
            v.file
                .as_ref()
                .map(|f| match &f.outline {
                    Some(o) => o.title.clone(),
                    None => f.request.topic.clone(),
                })
                .unwrap_or_default()
        })
    };
    let elapsed = move || {
        let seconds = (view.with(|v| v.elapsed_ms(now.get())) / 1000.0) as u64;
        format!("{}:{:02}", seconds / 60, seconds % 60)
    };
    let href = format!("/classroom/{id}");
    let cancel_id = id.clone();
    let missing = move || view.with(|v| v.loaded && v.file.is_none());
    view! {
        <section class="generate" data-testid="generate" data-status=move || format!("{:?}", status.get()).to_lowercase()>
            <Show when=missing fallback=|| ()>
                <p class="error" role="alert">{t!(i18n, gen_missing)}</p>
            </Show>
            <header class="generate-head">
                <div>
                    <p class="eyebrow">{move || {
                        let failed = view.with(|v| v.states.iter().any(|s| s == "failed"));
                        if status.get() == Status::Settled && failed { i18n.text(Key::gen_status_partial).to_string() } else { status_text(i18n, status.get()) }
                    }}</p>
                    <h1 data-testid="generate-title">{title}</h1>
                    <p class="meta">
                        <span data-testid="gen-elapsed">{elapsed}</span>
                        " · "
                        <span data-testid="gen-tokens">{move || i18n.fill(Key::gen_tokens, &[("count", view.with(|v| v.tokens).to_string())])}</span>
                    </p>
                </div>
                <div class="generate-actions">
                    <Show when=move || view.with(|v| v.job.is_some()) fallback=|| ()>
                        <button data-testid="gen-cancel" on:click={
                            let id = cancel_id.clone();
                            move |_| generate::cancel(&id)
                        }>{t!(i18n, gen_stop)}</button>
                    </Show>
                    <a class="button primary" data-testid="start-learning" href=href.clone()
                        class:disabled=move || view.with(|v| v.course_version == 0)
                        aria-disabled=move || view.with(|v| v.course_version == 0).to_string()
                        on:click=move |ev| if view.with_untracked(|v| v.course_version == 0) { ev.prevent_default() }>
                        {t!(i18n, gen_start_learning)}
                    </a>
                </div>
            </header>
            <Show when=move || !problem.get().is_empty() || !view.with(|v| v.error().is_empty()) fallback=|| ()>
                <div class="error-box" role="alert" data-testid="gen-error">
                    <p>{move || { let p = problem.get(); if p.is_empty() { view.with(|v| v.error().to_string()) } else { p } }}</p>
                    <a href="/settings" class="button">{t!(i18n, gen_open_settings)}</a>
                </div>
            </Show>
            {
                let id = id.clone();
                move || match status.get() {
                    Status::Outlining => view! { <OutlinePreview view=view/> }.into_any(),
                    Status::Reviewing => view! { <OutlineEditor id=id.clone() view=view problem=problem/> }.into_any(),
                    _ => view! { <SceneProgress id=id.clone() view=view problem=problem/> }.into_any(),
                }
            }
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

/// The outline's scenes as they stream in.
#[component]
fn OutlinePreview(view: RwSignal<GenView>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <div class="outline-preview" aria-live="polite">
            <p class="muted">{t!(i18n, gen_outline_streaming)}</p>
            <ol data-testid="outline-preview">
                {move || view.with(|v| v.preview.iter().map(|(kind, title)| {
                    let kind = kind_label(i18n, kind);
                    view! { <li><span class="scene-kind">{kind}</span>" "{title.clone()}</li> }
                }).collect_view())}
                <li class="skeleton" aria-hidden="true"></li>
            </ol>
        </div>
    }
}

/// The outline, editable before any scene is written.
#[component]
fn OutlineEditor(id: String, view: RwSignal<GenView>, problem: RwSignal<String>) -> impl IntoView {
    let i18n = use_i18n();
    let outline: Outline = view.with_untracked(|v| v.file.as_ref().and_then(|f| f.outline.clone())).unwrap_or(Outline {
        title: String::new(),
        description: String::new(),
        language_directive: String::new(),
        scenes: Vec::new(),
    });
    let scenes = RwSignal::new(outline.scenes.clone());
    let title = RwSignal::new(outline.title.clone());
    let busy = RwSignal::new(false);
    let write = move |_| {
        let mut edited = outline.clone();
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
    view! {
        <div class="outline-editor">
            <p class="muted">{t!(i18n, gen_review_hint)}</p>
            <label class="field">
                <span>{t!(i18n, gen_course_title)}</span>
                <input data-testid="outline-title" bind:value=title/>
            </label>
            <ol class="outline-rows" data-testid="outline-editor">
                {move || {
                    let count = scenes.with(Vec::len);
                    (0..count).map(|i| view! { <OutlineRow index=i count=count scenes=scenes/> }).collect_view()
                }}
            </ol>
            <div class="row-actions">
                <button data-testid="outline-add" on:click=add>{t!(i18n, gen_add_scene)}</button>
                <button class="primary" data-testid="outline-write" disabled=move || busy.get() on:click=write>
                    {t!(i18n, gen_write_course)}
                </button>
            </div>
        </div>
    }
}

#[component]
fn OutlineRow(index: usize, count: usize, scenes: RwSignal<Vec<SceneOutline>>) -> impl IntoView {
    let i18n = use_i18n();
    let scene = scenes.with_untracked(|s| s[index].clone());
    let kinds = [SceneKind::Slide, SceneKind::Quiz, SceneKind::Interactive, SceneKind::Pbl];
    let set_title = move |ev| {
        let value = event_target_value(&ev);
        scenes.update_untracked(|s| s[index].title = value);
    };
    let set_kind = move |ev| {
        let kind = match event_target_value(&ev).as_str() {
            "quiz" => SceneKind::Quiz,
            "interactive" => SceneKind::Interactive,
            "pbl" => SceneKind::Pbl,
            _ => SceneKind::Slide,
        };
        scenes.update_untracked(|s| s[index].kind = kind);
    };
    let swap = move |with: usize| scenes.update(|s| s.swap(index, with));
    view! {
        <li class="outline-row" data-testid="outline-row">
            <span class="scene-number">{index + 1}</span>
            <select aria-label=move || t_string!(i18n, gen_scene_kind) on:change=set_kind>
                {kinds.iter().map(|k| view! {
                    <option value=k.name() selected=*k == scene.kind>{kind_label(i18n, k.name())}</option>
                }).collect_view()}
            </select>
            <input class="grow" data-testid="outline-row-title" value=scene.title.clone()
                aria-label=move || t_string!(i18n, gen_scene_title) on:input=set_title/>
            <button class="icon-button" title=move || t_string!(i18n, gen_move_up) aria-label=move || t_string!(i18n, gen_move_up)
                disabled=index == 0 on:click=move |_| swap(index - 1)>"↑"</button>
            <button class="icon-button" title=move || t_string!(i18n, gen_move_down) aria-label=move || t_string!(i18n, gen_move_down)
                disabled=index + 1 == count on:click=move |_| swap(index + 1)>"↓"</button>
            <button class="icon-button" data-testid="outline-row-delete" title=move || t_string!(i18n, gen_delete_scene)
                aria-label=move || t_string!(i18n, gen_delete_scene)
                on:click=move |_| scenes.update(|s| { s.remove(index); })>"✕"</button>
        </li>
    }
}

/// Every scene's state while the course is written, and after.
#[component]
fn SceneProgress(id: String, view: RwSignal<GenView>, problem: RwSignal<String>) -> impl IntoView {
    let i18n = use_i18n();
    let scenes = Memo::new(move |_| {
        view.with(|v| {
            v.file
                .as_ref()
                .and_then(|f| f.outline.as_ref())
                .map(|o| o.scenes.iter().map(|s| (s.id.clone(), s.kind.name(), s.title.clone())).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    });
    let redo = move |id: String, task: String| {
        leptos::task::spawn_local(async move {
            if let Err(error) = generate::redo(&id, task).await {
                problem.set(error);
            }
        });
    };
    view! {
        <ol class="scene-progress" data-testid="scene-progress" aria-live="polite">
            {move || scenes.get().into_iter().enumerate().map(|(i, (scene_id, kind, title))| {
                let state = Memo::new(move |_| view.with(|v| v.scene_state(i)));
                let failure = Memo::new({
                    let scene_id = scene_id.clone();
                    move |_| view.with(|v| v.file.as_ref().and_then(|f| {
                        f.record.failed.get(&content_task(&scene_id)).or_else(|| f.record.failed.get(&actions_task(&scene_id))).cloned()
                    }))
                });
                let idle = move || view.with(|v| v.job.is_none());
                let (id_a, id_b, id_c) = (id.clone(), id.clone(), id.clone());
                let (s_a, s_b, s_c) = (scene_id.clone(), scene_id.clone(), scene_id.clone());
                view! {
                    <li class="scene-row" data-testid="scene-row" data-state=move || state.get()>
                        <span class="scene-number">{i + 1}</span>
                        <span class="scene-kind">{kind_label(i18n, kind)}</span>
                        <span class="grow">{title}</span>
                        <span class=move || format!("state-badge state-{}", state.get())>{move || state_text(i18n, &state.get())}</span>
                        <Show when=move || state.get() == "failed" fallback=|| ()>
                            <button data-testid="scene-retry" on:click={
                                let (id, scene) = (id_a.clone(), s_a.clone());
                                move |_| {
                                    let task = if view.with_untracked(|v| v.file.as_ref().is_some_and(|f| f.record.failed.contains_key(&content_task(&scene)))) {
                                        content_task(&scene)
                                    } else {
                                        actions_task(&scene)
                                    };
                                    redo(id.clone(), task)
                                }
                            }>{t!(i18n, gen_retry)}</button>
                        </Show>
                        <Show when=move || state.get() == "ready" && idle() fallback=|| ()>
                            <button data-testid="regenerate-script" on:click={
                                let (id, scene) = (id_b.clone(), s_b.clone());
                                move |_| redo(id.clone(), actions_task(&scene))
                            }>{t!(i18n, gen_regenerate_script)}</button>
                            <button data-testid="regenerate-scene" on:click={
                                let (id, scene) = (id_c.clone(), s_c.clone());
                                move |_| redo(id.clone(), content_task(&scene))
                            }>{t!(i18n, gen_regenerate_scene)}</button>
                        </Show>
                        {move || failure.get().map(|why| view! { <p class="error scene-error" data-testid="scene-error">{why}</p> })}
                    </li>
                }
            }).collect_view()}
        </ol>
    }
}

fn state_text(i18n: I18n, state: &str) -> &'static str {
    i18n.text(match state {
        "writing" => Key::gen_state_writing,
        "scripting" => Key::gen_state_scripting,
        "ready" => Key::gen_state_ready,
        "failed" => Key::gen_state_failed,
        _ => Key::gen_state_waiting,
    })
}
