//! The classroom for one course. For now it finds the course in the library; the player and
//! the roundtable arrive with their issues.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use crate::i18n::*;
use crate::library::load_course_summary;

#[component]
pub fn ClassroomPage() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let course = LocalResource::new(move || {
        let id = params.read().get("id").unwrap_or_default();
        async move { load_course_summary(&id).await }
    });
    view! {
        <Suspense fallback=move || view! { <p class="muted">{t!(i18n, classroom_loading)}</p> }>
            {move || Suspend::new(async move {
                match course.await {
                    Ok(Some(course)) => view! {
                        <section class="classroom">
                            <h1>{course.title.clone()}</h1>
                            <p class="lead">{course.description.clone()}</p>
                        </section>
                    }
                    .into_any(),
                    Ok(None) => view! {
                        <section class="notice" data-testid="classroom-missing">
                            <h1>{t!(i18n, classroom_missing_title)}</h1>
                            <p>{t!(i18n, classroom_missing_body)}</p>
                            <A href="/" attr:class="button">{t!(i18n, back_to_library)}</A>
                        </section>
                    }
                    .into_any(),
                    Err(error) => view! {
                        <section class="notice">
                            <p class="error" role="alert">{error.to_string()}</p>
                        </section>
                    }
                    .into_any(),
                }
            })}
        </Suspense>
    }
}
