//! The front door: the prompt box and the learner's library.

use leptos::prelude::*;

use crate::i18n::*;
use crate::samples::{sample_index, SampleEntry};

#[component]
pub fn HomePage() -> impl IntoView {
    view! {
        <PromptBox/>
        <super::library::Library/>
        <Samples/>
    }
}

/// Languages a course can be written in, as (tag, own name).
const COURSE_LANGUAGES: &[(&str, &str)] = &[
    ("en", "English"),
    ("zh-CN", "中文"),
    ("es", "Español"),
    ("fr", "Français"),
    ("de", "Deutsch"),
    ("ja", "日本語"),
];

/// The learner's document, read in the browser.
#[derive(Clone, PartialEq)]
struct Document {
    name: String,
    text: String,
    pages: u32,
}

/// The prompt box's state. The options (language, who the learner is, the classmates, a PDF)
/// and the writing itself are loaded on first use in a split build: the box is the page's, the
/// rest comes when the learner opens "More options" or asks for a course.
#[derive(Clone, Copy)]
struct PromptForm {
    topic: RwSignal<String>,
    learner: RwSignal<String>,
    review: RwSignal<bool>,
    language: RwSignal<String>,
    /// The cast shown under "More options"; `None` until they are opened (then the default cast
    /// for the course language is written).
    cast: RwSignal<Option<Vec<aula_course::AgentProfile>>>,
    included: RwSignal<Vec<bool>>,
    document: RwSignal<Option<Document>>,
    pdf_note: RwSignal<String>,
}

#[component]
fn PromptBox() -> impl IntoView {
    let i18n = use_i18n();
    let form = PromptForm {
        topic: RwSignal::new(String::new()),
        learner: RwSignal::new(String::new()),
        // One press from a topic to a course; checking the plan first is a choice.
        review: RwSignal::new(false),
        language: RwSignal::new(
            if untrack(|| i18n.get_locale()) == Locale::zh {
                "zh-CN"
            } else {
                "en"
            }
            .to_string(),
        ),
        cast: RwSignal::new(None),
        included: RwSignal::new(Vec::new()),
        document: RwSignal::new(None),
        pdf_note: RwSignal::new(String::new()),
    };
    let PromptForm { topic, review, .. } = form;
    let error = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let opened = RwSignal::new(false);
    let location = crate::router::use_location();

    let submit = move || {
        if busy.get_untracked() {
            return;
        }
        if topic.with_untracked(|t| t.trim().is_empty()) {
            error.set(t_string!(i18n, prompt_empty).to_string());
            return;
        }
        busy.set(true);
        error.set(String::new());
        leptos::task::spawn_local(async move {
            match write_course(form).await {
                Ok(id) => crate::router::go(location, &format!("/generate/{id}")),
                Err(why) => error.set(why),
            }
            busy.set(false);
        });
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
            ev.prevent_default();
            submit();
        }
    };
    view! {
        <section class="hero">
            <h1>{t!(i18n, home_title)}</h1>
            <p class="lead">{t!(i18n, home_subtitle)}</p>
            <form class="prompt-box" on:submit=move |ev| { ev.prevent_default(); submit(); }>
                <label class="visually-hidden" for="topic">{t!(i18n, prompt_label)}</label>
                <textarea
                    id="topic"
                    rows="3"
                    data-testid="prompt-input"
                    placeholder=move || t_string!(i18n, prompt_placeholder)
                    bind:value=topic
                    on:keydown=on_key
                ></textarea>
                <details class="prompt-options" on:toggle=move |_| opened.set(true)>
                    <summary>{t!(i18n, prompt_more)}</summary>
                    {move || opened.get().then(|| crate::shell::on_first_use(prompt_options(form), Some(Key::part_loading)))}
                </details>
                <div class="prompt-actions">
                    <label class="check">
                        <input type="checkbox" data-testid="prompt-review" bind:checked=review/>
                        {t!(i18n, prompt_review)}
                    </label>
                    <button class="primary" type="submit" data-testid="prompt-submit" prop:disabled=busy>
                        {dyn_text(move || if busy.get() { t_string!(i18n, prompt_working) } else { t_string!(i18n, prompt_submit) }.to_string())}
                    </button>
                </div>
                <p class="hint" id="prompt-hint">{t!(i18n, prompt_needs_provider)}</p>
                <p class="error" role="alert" data-testid="prompt-error" prop:hidden=dyn_flag(move || error.with(String::is_empty))>
                    {error} " " <a href="/settings">{t!(i18n, gen_open_settings)}</a>
                </p>
            </form>
        </section>
    }
}

/// The default cast for `language`: the English cast with that language's names; the worker
/// gives it that language's personas when it writes the course (`speak_course_language`), so
/// the page links no other language's personas.
fn default_cast(language: &str) -> Vec<aula_course::AgentProfile> {
    let mut cast = aula_course::default_agents();
    aula_course::rename_cast(&mut cast, "en", language);
    cast
}

/// The course the form asks for, stored and started (`generate::start_new`).
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn write_course(form: PromptForm) -> Result<String, String> {
    let language = form.language.get_untracked();
    let cast = form
        .cast
        .get_untracked()
        .unwrap_or_else(|| default_cast(&language));
    let included = form.included.get_untracked();
    let agents: Vec<_> = cast
        .into_iter()
        .enumerate()
        .filter(|(i, agent)| {
            included.get(*i).copied().unwrap_or(true)
                || agent.role == aula_course::AgentRole::Teacher
        })
        .map(|(_, agent)| agent)
        .collect();
    let request = aula_generation::outline::CourseRequest {
        topic: form.topic.get_untracked().trim().to_string(),
        language,
        document: form.document.get_untracked().map(|d| d.text),
        learner: form.learner.get_untracked().trim().to_string(),
        agents,
    };
    crate::generate::start_new(request, form.review.get_untracked()).await
}

/// "More options": the course language, who the learner is, the classmates, a PDF.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn prompt_options(form: PromptForm) -> AnyView {
    view! { <PromptOptions form=form/> }.into_any()
}

#[component]
fn PromptOptions(form: PromptForm) -> impl IntoView {
    let i18n = use_i18n();
    let PromptForm {
        learner,
        language,
        cast,
        included,
        document,
        pdf_note,
        ..
    } = form;
    if cast.with_untracked(Option::is_none) {
        let fresh = default_cast(&language.get_untracked());
        included.set(vec![true; fresh.len()]);
        cast.set(Some(fresh));
    }
    let on_pdf = move |ev: leptos::ev::Event| {
        use wasm_bindgen::JsCast;
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            document.set(None);
            pdf_note.set(String::new());
            return;
        };
        pdf_note.set(t_string!(i18n, prompt_pdf_reading).to_string());
        leptos::task::spawn_local(async move {
            match read_pdf(&file).await {
                Ok((doc, cut)) => {
                    let key = if cut {
                        Key::prompt_pdf_cut
                    } else {
                        Key::prompt_pdf_read
                    };
                    pdf_note.set(i18n.fill(
                        key,
                        &[
                            ("pages", doc.pages.to_string()),
                            ("chars", doc.text.chars().count().to_string()),
                            ("name", doc.name.clone()),
                        ],
                    ));
                    document.set(Some(doc));
                }
                Err(why) => {
                    document.set(None);
                    pdf_note.set(why);
                }
            }
        });
    };
    let classmates = cast.with_untracked(|c| {
        c.iter()
            .flatten()
            .enumerate()
            .filter(|(_, a)| a.role != aula_course::AgentRole::Teacher)
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    });
    let name_of = move |i: usize| {
        cast.with(|c| {
            c.as_ref()
                .and_then(|c| c.get(i))
                .map(|a| a.name.clone())
                .unwrap_or_default()
        })
    };
    view! {
        <label class="field">
            <span>{t!(i18n, prompt_language)}</span>
            <select data-testid="prompt-language" on:change=move |ev| {
                let tag = event_target_value(&ev);
                cast.update(|c| {
                    if let Some(c) = c {
                        aula_course::rename_cast(c, &language.get_untracked(), &tag);
                    }
                });
                language.set(tag);
            }>
                {COURSE_LANGUAGES.iter().map(|(tag, name)| view! {
                    <option value=*tag selected=move || language.get() == *tag>{*name}</option>
                }).collect_view()}
            </select>
        </label>
        <label class="field">
            <span>{t!(i18n, prompt_learner)}</span>
            <input data-testid="prompt-learner" bind:value=learner placeholder=move || t_string!(i18n, prompt_learner_placeholder)/>
        </label>
        <fieldset class="field">
            <legend>{t!(i18n, prompt_classmates)}</legend>
            {classmates.into_iter().map(|i| {
                // The name follows the course language (`rename_cast`) until the learner edits it.
                let name = dyn_text(move || name_of(i));
                view! {
                <label class="classmate">
                    <input type="checkbox" data-testid="prompt-classmate" prop:checked=move || included.with(|v| v.get(i).copied().unwrap_or(true))
                        on:change=move |ev| { let on = event_target_checked(&ev); included.update(|v| if let Some(v) = v.get_mut(i) { *v = on }) }/>
                    <input class="classmate-name" data-testid="prompt-classmate-name" prop:value=name aria-label=name
                        on:input=move |ev| { let name = event_target_value(&ev); cast.update(|c| if let Some(a) = c.as_mut().and_then(|c| c.get_mut(i)) { a.name = name }) }/>
                </label>
            }}).collect_view()}
        </fieldset>
        <label class="field">
            <span>{t!(i18n, prompt_pdf)}</span>
            <input type="file" accept="application/pdf,.pdf" data-testid="prompt-pdf" on:change=on_pdf/>
            <span class="hint" data-testid="prompt-pdf-note" aria-live="polite">{pdf_note}</span>
        </label>
    }
}

/// Reads a PDF's text through `window.aulaPdfText` (pdf.js, loaded on first use), and whether
/// it was cut at [`aula_generation::outline::MAX_DOCUMENT_CHARS`].
async fn read_pdf(file: &web_sys::File) -> Result<(Document, bool), String> {
    use wasm_bindgen::JsCast;
    let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
        .await
        .map_err(|_| "The file could not be read.".to_string())?;
    let window = leptos::prelude::window();
    let hook = js_sys::Reflect::get(&window, &"aulaPdfText".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or("This page cannot read PDFs.")?;
    let max = wasm_bindgen::JsValue::from_f64(aula_generation::outline::MAX_DOCUMENT_CHARS as f64);
    let promise = hook
        .call2(&wasm_bindgen::JsValue::NULL, &buffer, &max)
        .map_err(|_| "This page cannot read PDFs.".to_string())?;
    let result = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise))
        .await
        .map_err(|e| {
            js_sys::Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
                .unwrap_or_else(|| "The PDF could not be read.".into())
        })?;
    let text = js_sys::Reflect::get(&result, &"text".into())
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_default();
    let pages = js_sys::Reflect::get(&result, &"pages".into())
        .ok()
        .and_then(|p| p.as_f64())
        .unwrap_or(0.0) as u32;
    let cut = js_sys::Reflect::get(&result, &"truncated".into())
        .ok()
        .and_then(|c| c.as_bool())
        .unwrap_or(false);
    let doc = Document {
        name: file.name(),
        text,
        pages,
    };
    Ok((doc, cut))
}

/// A sample in the grid.
#[component]
fn CourseCard(
    href: String,
    title: String,
    description: String,
    scenes: usize,
    #[prop(default = None)] badge: Option<String>,
) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <li class="course-card">
            <a href=href>
                {badge.map(|b| view! { <span class="badge">{b}</span> })}
                <h3>{title}</h3>
                <p class="muted">{description}</p>
                <p class="meta">{t!(i18n, scene_count, count = move || scenes)}</p>
            </a>
        </li>
    }
}

/// The courses bundled with Aula: they play with no key and no provider.
#[component]
fn Samples() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <section class="library" aria-labelledby="samples-title">
            <h2 id="samples-title">{t!(i18n, samples_title)}</h2>
            <p class="muted">{t!(i18n, samples_body)}</p>
            {match sample_index() {
                Ok(list) => view! { <SampleList samples=list/> }.into_any(),
                Err(error) => view! { <p class="error" role="alert">{error}</p> }.into_any(),
            }}
        </section>
    }
}

#[component]
fn SampleList(samples: Vec<SampleEntry>) -> impl IntoView {
    view! {
        <ul class="course-grid" data-testid="sample-list">
            {samples
                .into_iter()
                .map(|sample| view! {
                    <CourseCard href=format!("/classroom/{}", sample.id) title=sample.title
                        description=sample.description scenes=sample.scenes badge=Some(sample.language)/>
                })
                .collect_view()}
        </ul>
    }
}
