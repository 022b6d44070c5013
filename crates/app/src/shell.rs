//! The frame around every page: providers of shared state, the header, and the routes.

use leptos::prelude::*;

use crate::i18n::*;
use crate::pages::{generate_view, settings_view, ClassroomPage, HomePage, NotFoundPage};
use crate::preferences::{self, Theme};
use crate::router::{provide_location, use_location, Page};

/// The theme the learner chose, shared by the header toggle and the settings page.
#[derive(Clone, Copy)]
pub struct ThemeChoice(pub RwSignal<Theme>);

#[component]
pub fn App() -> impl IntoView {
    provide_i18n(
        preferences::saved_locale()
            .as_deref()
            .and_then(Locale::from_str),
    );
    if let Some(setup) = crate::embed::player_setup() {
        return view! {
            <Preferences/>
            <main class="page player-only">
                {on_first_use(crate::embed::player_only(setup), Some(Key::classroom_loading))}
            </main>
        }
        .into_any();
    }
    crate::generate::provide_root();
    view! {
        <Preferences/>
        <Pages/>
    }
    .into_any()
}

/// The header and the page the address points at.
#[component]
fn Pages() -> impl IntoView {
    let location = provide_location();
    view! {
        <Header/>
        <main class="page">
            {move || match location.page() {
                Page::Home => view! { <HomePage/> }.into_any(),
                Page::Classroom(id) => view! { <ClassroomPage id=id/> }.into_any(),
                Page::Generate(id) => on_first_use(generate_view(id), Some(Key::screen_loading)).into_any(),
                Page::Settings => on_first_use(settings_view(), Some(Key::screen_loading)).into_any(),
                Page::NotFound => view! { <NotFoundPage/> }.into_any(),
            }}
        </main>
    }
}

/// Runs `then` once the frame being prepared has been drawn and the next one has begun: work
/// that must never hold back what is on the screen (fetching a chunk, instantiating it and
/// drawing again once it is there) waits here. A frame's callbacks run before it is drawn, so
/// one frame is not enough: the second's callback runs after the first was drawn.
pub fn after_first_paint(then: impl FnOnce() + 'static) {
    request_animation_frame(move || {
        request_animation_frame(move || set_timeout(then, std::time::Duration::ZERO))
    });
}

/// A screen (or a part of one) whose code, in a split build, is a wasm chunk fetched the first
/// time it is shown (`xtask/src/split.rs`): a status line (`loading`) says so until it is there.
/// In other builds the view is ready at once and the line never shows.
pub fn on_first_use(
    view: impl std::future::Future<Output = AnyView> + 'static,
    loading: Option<Key>,
) -> impl IntoView {
    let i18n = use_i18n();
    let view = send_wrapper::SendWrapper::new(view);
    view! {
        <Suspense fallback=move || loading.map(|key| view! {
            <p class="screen-loading" role="status" data-testid="screen-loading">{i18n.tr(key)}</p>
        })>
            {Suspend::new(view)}
        </Suspense>
    }
}

/// Restores the saved theme and keeps it and the language saved as they change.
#[component]
fn Preferences() -> impl IntoView {
    let theme = RwSignal::new(preferences::saved_theme());
    provide_context(ThemeChoice(theme));
    Effect::new(move || {
        let chosen = theme.get();
        preferences::apply_theme(chosen);
        preferences::save_theme(chosen);
    });

    let i18n = use_i18n();
    Effect::new(move || preferences::save_locale(i18n.get_locale().as_str()));
}

/// The language's own name, so a learner finds theirs whatever the current language is.
pub fn locale_name(locale: Locale) -> &'static str {
    match locale {
        Locale::en => "English",
        Locale::zh => "中文",
    }
}

#[component]
fn Header() -> impl IntoView {
    let i18n = use_i18n();
    let ThemeChoice(theme) = expect_context::<ThemeChoice>();
    let location = use_location();
    let toggle_theme = move |_| {
        let next = if theme.get_untracked().resolved_is_dark() {
            Theme::Light
        } else {
            Theme::Dark
        };
        theme.set(next);
    };
    view! {
        <header class="app-header">
            <a href="/" class="brand">
                <span class="brand-mark" aria-hidden="true">"A"</span>
                <span class="brand-name">{t!(i18n, app_name)}</span>
                <span class="brand-tagline">{t!(i18n, tagline)}</span>
            </a>
            <nav class="app-nav">
                <a href="/" aria-current=move || location.current("/")>{t!(i18n, nav_home)}</a>
                <a href="/settings" aria-current=move || location.current("/settings")>{t!(i18n, nav_settings)}</a>
                <LanguageSelect/>
                <button
                    class="icon-button"
                    data-testid="theme-toggle"
                    title=move || t_string!(i18n, theme_toggle)
                    aria-label=move || t_string!(i18n, theme_toggle)
                    on:click=toggle_theme
                >
                    <span class="theme-icon" aria-hidden="true"></span>
                </button>
            </nav>
        </header>
    }
}

#[component]
pub fn LanguageSelect() -> impl IntoView {
    let i18n = use_i18n();
    let on_change = move |ev| {
        if let Some(locale) = Locale::from_str(&event_target_value(&ev)) {
            i18n.set_locale(locale);
        }
    };
    view! {
        <label class="language-select">
            <span class="visually-hidden">{t!(i18n, language_label)}</span>
            <select data-testid="language-select" on:change=on_change>
                {Locale::get_all()
                    .iter()
                    .map(|&locale| {
                        view! {
                            <option
                                value=locale.as_str()
                                selected=move || i18n.get_locale() == locale
                            >
                                {locale_name(locale)}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </label>
    }
}
