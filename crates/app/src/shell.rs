//! The frame around every page: providers of shared state, the header, and the routes.

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::path;

use crate::i18n::*;
use crate::pages::{ClassroomPage, HomePage, NotFoundPage, SettingsPage};
use crate::preferences::{self, Theme};

/// The theme the learner chose, shared by the header toggle and the settings page.
#[derive(Clone, Copy)]
pub struct ThemeChoice(pub RwSignal<Theme>);

#[component]
pub fn App() -> impl IntoView {
    view! {
        <I18nContextProvider enable_cookie=false>
            <Preferences/>
            <Router>
                <Header/>
                <main class="page">
                    <Routes fallback=NotFoundPage>
                        <Route path=path!("/") view=HomePage/>
                        <Route path=path!("/classroom/:id") view=ClassroomPage/>
                        <Route path=path!("/settings") view=SettingsPage/>
                    </Routes>
                </main>
            </Router>
        </I18nContextProvider>
    }
}

/// Restores the saved theme and language and keeps them saved as they change.
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
    let saved = preferences::saved_locale()
        .as_deref()
        .and_then(parse_locale);
    // An effect, not a direct call: the i18n provider's own first effect sets the browser's
    // language, and effects run in creation order, so this one runs after it and wins.
    Effect::new(move || {
        if let Some(saved) = saved {
            i18n.set_locale(saved);
        }
    });
    Effect::new(move || preferences::save_locale(i18n.get_locale().as_str()));
}

pub fn parse_locale(text: &str) -> Option<Locale> {
    Locale::get_all()
        .iter()
        .copied()
        .find(|l| l.as_str() == text)
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
            <A href="/" attr:class="brand">
                <span class="brand-mark" aria-hidden="true">"A"</span>
                <span class="brand-name">{t!(i18n, app_name)}</span>
                <span class="brand-tagline">{t!(i18n, tagline)}</span>
            </A>
            <nav class="app-nav">
                <A href="/">{t!(i18n, nav_home)}</A>
                <A href="/settings">{t!(i18n, nav_settings)}</A>
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
        if let Some(locale) = parse_locale(&event_target_value(&ev)) {
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
