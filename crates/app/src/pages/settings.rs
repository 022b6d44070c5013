//! Settings: appearance, language, and the AI provider connection.

use leptos::prelude::*;

use super::providers::ProviderSettings;
use crate::i18n::*;
use crate::preferences::Theme;
use crate::shell::{LanguageSelect, ThemeChoice};

#[component]
pub fn SettingsPage() -> impl IntoView {
    let i18n = use_i18n();
    let ThemeChoice(theme) = expect_context::<ThemeChoice>();
    let theme_label = move |t: Theme| match t {
        Theme::System => t_string!(i18n, theme_system),
        Theme::Light => t_string!(i18n, theme_light),
        Theme::Dark => t_string!(i18n, theme_dark),
    };
    view! {
        <section class="settings">
            <h1>{t!(i18n, settings_title)}</h1>
            <div class="card">
                <h2>{t!(i18n, settings_appearance)}</h2>
                <fieldset class="segmented" data-testid="theme-choice">
                    <legend>{t!(i18n, theme_label)}</legend>
                    {Theme::ALL
                        .into_iter()
                        .map(|choice| {
                            view! {
                                <label class:selected=move || theme.get() == choice>
                                    <input
                                        type="radio"
                                        name="theme"
                                        value=choice.as_str()
                                        prop:checked=move || theme.get() == choice
                                        on:change=move |_| theme.set(choice)
                                    />
                                    {move || theme_label(choice)}
                                </label>
                            }
                        })
                        .collect_view()}
                </fieldset>
                <div class="field">
                    <span class="field-label">{t!(i18n, language_label)}</span>
                    <LanguageSelect/>
                    <p class="hint">{t!(i18n, settings_language_hint)}</p>
                </div>
            </div>
            <ProviderSettings/>
            <StorageUse/>
            <div class="card">
                <h2>{t!(i18n, settings_privacy)}</h2>
                <p>{t!(i18n, settings_privacy_body)}</p>
            </div>
        </section>
    }
}

/// What Aula keeps in this browser, and whether the browser keeps it under storage pressure.
#[component]
fn StorageUse() -> impl IntoView {
    let i18n = use_i18n();
    let text = RwSignal::new(String::new());
    leptos::task::spawn_local(async move {
        let Some((used, quota, persisted)) = crate::library::storage_use().await else {
            text.try_set(t_string!(i18n, storage_unknown).to_string());
            return;
        };
        let mb = |bytes: f64| format!("{:.1} MB", bytes / 1_048_576.0);
        let key = if persisted {
            Key::storage_use_kept
        } else {
            Key::storage_use
        };
        text.try_set(i18n.fill(key, &[("used", mb(used)), ("quota", mb(quota))]));
    });
    view! {
        <div class="card">
            <h2>{t!(i18n, storage_title)}</h2>
            <p data-testid="storage-use">{text}</p>
            <a class="button" href="/#free-space" data-testid="free-up-space">{t!(i18n, storage_free_up)}</a>
        </div>
    }
}

/// The settings page, loaded on first use in a split build (see `shell::on_first_use`).
#[cfg_attr(aula_lazy, leptos::lazy)]
pub async fn settings_view() -> AnyView {
    view! { <SettingsPage/> }.into_any()
}
