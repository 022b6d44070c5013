//! Aula's user interface (Leptos 0.8, client-side rendered) and its browser adapters.
//!
//! Thin by design: pages and components wire signals to the core crates, and the adapters
//! (IndexedDB store, preferences in localStorage, Web Speech, the frame clock, the workers'
//! client) implement the core's ports. Decisions belong in the core crates, not here. Everything is wasm32-only, so
//! host builds of the workspace skip it.
#![cfg(target_arch = "wasm32")]

mod classroom;
mod connection;
mod embed;
mod files;
mod generate;
mod i18n;
mod library;
mod pages;
mod preferences;
mod router;
mod samples;
mod shell;
mod store;
mod vault;
mod workers;

/// The page's monotonic clock, in milliseconds.
pub(crate) fn now_ms() -> f64 {
    leptos::prelude::window()
        .performance()
        .map(|p| p.now())
        .unwrap_or_default()
}

/// Mounts the app into `<body>`; called once by the binary's `main`.
pub fn start() {
    console_error_panic_hook::set_once();
    // The learner's language is fetched before the first paint unless it is built in.
    let locale = preferences::saved_locale()
        .as_deref()
        .and_then(i18n::Locale::from_str)
        .unwrap_or_else(i18n::Locale::from_browser);
    wasm_bindgen_futures::spawn_local(async move {
        i18n::load_locale(locale).await;
        leptos::mount::mount_to_body(shell::App);
    });
}
