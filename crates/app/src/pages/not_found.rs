use leptos::prelude::*;

use crate::i18n::*;

#[component]
pub fn NotFoundPage() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <section class="notice" data-testid="not-found">
            <h1>{t!(i18n, not_found_title)}</h1>
            <p>{t!(i18n, not_found_body)}</p>
            <a href="/" class="button">{t!(i18n, back_to_library)}</a>
        </section>
    }
}
