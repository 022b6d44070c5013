//! The learner's interface preferences (theme, language, captions only, playback speed), kept
//! in localStorage.
//!
//! Theme and language are read before the first paint (index.html applies the theme before the
//! wasm loads), and captions and speed every time a course plays, so all four live in
//! synchronous localStorage rather than IndexedDB with the rest.

use leptos::prelude::*;

const THEME_KEY: &str = "aula.theme";
const LOCALE_KEY: &str = "aula.locale";
const CAPTIONS_ONLY_KEY: &str = "aula.captions_only";
const SPEED_KEY: &str = "aula.speed";

/// Playback speeds the player offers; the player accepts 0.5–2×.
pub const SPEEDS: [f64; 6] = [0.5, 0.75, 1.0, 1.25, 1.5, 2.0];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    System,
    Light,
    Dark,
}

impl Theme {
    pub const ALL: [Theme; 3] = [Theme::System, Theme::Light, Theme::Dark];

    pub fn as_str(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn parse(text: &str) -> Option<Theme> {
        Theme::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// What the page shows: `System` resolved through the browser's colour-scheme preference.
    pub fn resolved_is_dark(self) -> bool {
        match self {
            Theme::Dark => true,
            Theme::Light => false,
            Theme::System => window()
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten()
                .is_some_and(|q| q.matches()),
        }
    }
}

fn local_storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

fn read(key: &str) -> Option<String> {
    local_storage()?.get_item(key).ok().flatten()
}

/// Best effort: where storage is blocked the preference lasts until the page closes.
fn write(key: &str, value: &str) {
    if let Some(storage) = local_storage() {
        let _ = storage.set_item(key, value);
    }
}

pub fn saved_theme() -> Theme {
    read(THEME_KEY)
        .as_deref()
        .and_then(Theme::parse)
        .unwrap_or(Theme::System)
}

pub fn save_theme(theme: Theme) {
    write(THEME_KEY, theme.as_str());
}

/// Shows `theme` on the page: `<html data-theme="light|dark">`.
pub fn apply_theme(theme: Theme) {
    if let Some(root) = document().document_element() {
        let shown = if theme.resolved_is_dark() {
            "dark"
        } else {
            "light"
        };
        let _ = root.set_attribute("data-theme", shown);
    }
}

pub fn saved_locale() -> Option<String> {
    read(LOCALE_KEY)
}

pub fn save_locale(locale: &str) {
    write(LOCALE_KEY, locale);
}

/// Narration as captions only, without a voice.
pub fn saved_captions_only() -> bool {
    read(CAPTIONS_ONLY_KEY).as_deref() == Some("true")
}

pub fn save_captions_only(on: bool) {
    write(CAPTIONS_ONLY_KEY, if on { "true" } else { "false" });
}

pub fn saved_speed() -> f64 {
    // Matched as written rather than parsed: the page links no float parser (its tables are
    // about 20 KB).
    read(SPEED_KEY)
        .and_then(|s| SPEEDS.iter().copied().find(|speed| speed.to_string() == s))
        .unwrap_or(1.0)
}

pub fn save_speed(speed: f64) {
    write(SPEED_KEY, &speed.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen_test]
    fn theme_choice_is_kept_in_local_storage_and_shown_on_the_page() {
        save_theme(Theme::Dark);
        assert_eq!(saved_theme(), Theme::Dark);
        apply_theme(saved_theme());
        let shown = document()
            .document_element()
            .and_then(|e| e.get_attribute("data-theme"));
        assert_eq!(shown.as_deref(), Some("dark"));
        save_theme(Theme::Light);
        apply_theme(saved_theme());
        let shown = document()
            .document_element()
            .and_then(|e| e.get_attribute("data-theme"));
        assert_eq!(shown.as_deref(), Some("light"));
    }

    #[wasm_bindgen_test]
    fn unknown_saved_theme_falls_back_to_system() {
        write(THEME_KEY, "sepia");
        assert_eq!(saved_theme(), Theme::System);
    }

    #[wasm_bindgen_test]
    fn speed_outside_the_offered_list_falls_back_to_normal() {
        save_speed(1.5);
        assert_eq!(saved_speed(), 1.5);
        write(SPEED_KEY, "9");
        assert_eq!(saved_speed(), 1.0);
        write(SPEED_KEY, "fast");
        assert_eq!(saved_speed(), 1.0);
    }

    #[wasm_bindgen_test]
    fn captions_only_choice_round_trips() {
        save_captions_only(true);
        assert!(saved_captions_only());
        save_captions_only(false);
        assert!(!saved_captions_only());
    }

    #[wasm_bindgen_test]
    fn locale_choice_round_trips() {
        save_locale("zh");
        assert_eq!(saved_locale().as_deref(), Some("zh"));
        assert_eq!(
            crate::i18n::Locale::from_str("zh"),
            Some(crate::i18n::Locale::zh)
        );
        assert!(crate::i18n::Locale::from_str("fr").is_none());
    }
}
