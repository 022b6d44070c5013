//! The front door: the prompt box and the learner's library.

use leptos::prelude::*;

use crate::i18n::*;
use crate::library::{load_library, CourseSummary};
use crate::samples::{sample_index, SampleEntry};

#[component]
pub fn HomePage() -> impl IntoView {
    view! {
        <PromptBox/>
        <Library/>
        <Samples/>
    }
}

#[component]
fn PromptBox() -> impl IntoView {
    let i18n = use_i18n();
    let topic = RwSignal::new(String::new());
    view! {
        <section class="hero">
            <h1>{t!(i18n, home_title)}</h1>
            <p class="lead">{t!(i18n, home_subtitle)}</p>
            <form class="prompt-box" on:submit=|ev| ev.prevent_default()>
                <label class="visually-hidden" for="topic">{t!(i18n, prompt_label)}</label>
                <textarea
                    id="topic"
                    rows="3"
                    data-testid="prompt-input"
                    placeholder=move || t_string!(i18n, prompt_placeholder)
                    bind:value=topic
                ></textarea>
                <div class="prompt-actions">
                    <p class="hint" id="prompt-hint">{t!(i18n, prompt_needs_provider)}</p>
                    <button class="primary" type="submit" disabled=true aria-describedby="prompt-hint">
                        {t!(i18n, prompt_submit)}
                    </button>
                </div>
            </form>
        </section>
    }
}

#[component]
fn Library() -> impl IntoView {
    let i18n = use_i18n();
    let courses = LocalResource::new(load_library);
    view! {
        <section class="library" aria-labelledby="library-title">
            <h2 id="library-title">{t!(i18n, library_title)}</h2>
            <Suspense fallback=move || view! { <p class="muted">{t!(i18n, library_loading)}</p> }>
                {move || Suspend::new(async move {
                    match courses.await {
                        Ok(list) if list.is_empty() => view! { <EmptyLibrary/> }.into_any(),
                        Ok(list) => view! { <CourseList courses=list/> }.into_any(),
                        Err(error) => view! {
                            <p class="error" role="alert">
                                {t!(i18n, library_unavailable)} " " {error.to_string()}
                            </p>
                        }
                        .into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn EmptyLibrary() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <div class="empty-state" data-testid="library-empty">
            <div class="empty-illustration" aria-hidden="true">
                <span></span><span></span><span></span>
            </div>
            <h3>{t!(i18n, library_empty_title)}</h3>
            <p>{t!(i18n, library_empty_body)}</p>
        </div>
    }
}

/// One course in a grid: the library's and the samples' cards are the same view.
#[component]
fn CourseCard(
    href: String,
    title: String,
    description: String,
    scenes: usize,
    #[prop(optional)] badge: Option<String>,
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

#[component]
fn CourseList(courses: Vec<CourseSummary>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <ul class="course-grid" data-testid="library-list">
            {courses
                .into_iter()
                .map(|course| {
                    let title = if course.title.trim().is_empty() {
                        t_string!(i18n, course_untitled).to_string()
                    } else {
                        course.title.clone()
                    };
                    view! {
                        <CourseCard href=format!("/classroom/{}", course.id) title=title
                            description=course.description.clone() scenes=course.scene_count()/>
                    }
                })
                .collect_view()}
        </ul>
    }
}

/// The courses bundled with Aula: they play with no key and no provider.
#[component]
fn Samples() -> impl IntoView {
    let i18n = use_i18n();
    let samples = LocalResource::new(sample_index);
    view! {
        <section class="library" aria-labelledby="samples-title">
            <h2 id="samples-title">{t!(i18n, samples_title)}</h2>
            <p class="muted">{t!(i18n, samples_body)}</p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match samples.await {
                        Ok(list) => view! { <SampleList samples=list/> }.into_any(),
                        Err(error) => view! { <p class="error" role="alert">{error}</p> }.into_any(),
                    }
                })}
            </Suspense>
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
                        description=sample.description scenes=sample.scenes badge=sample.language/>
                })
                .collect_view()}
        </ul>
    }
}
