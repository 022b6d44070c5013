//! The sample courses bundled with the app under `/courses/`, and fetching a text file.
//! Their list is built into the page, so listing them or opening one costs no round trip for
//! the list; a course's file is fetched when it is opened.

use serde::Deserialize;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

const SAMPLE_INDEX: &str = include_str!("../../../public/courses/index.json");

/// One line of `public/courses/index.json`: enough to list a sample without loading it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SampleEntry {
    pub id: String,
    pub file: String,
    pub title: String,
    pub language: String,
    #[serde(default)]
    pub description: String,
    pub scenes: usize,
}

/// GETs `url` as text; the error says what a learner can do about it.
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let window = leptos::prelude::window();
    let response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|_| format!("Could not reach {url}. Check your connection and reload."))?;
    let response: web_sys::Response = response
        .dyn_into()
        .map_err(|_| format!("{url} did not answer like a web server."))?;
    if !response.ok() {
        return Err(format!(
            "{url} answered {} {}.",
            response.status(),
            response.status_text()
        ));
    }
    let text = response
        .text()
        .map_err(|_| format!("{url} has no readable body."))?;
    JsFuture::from(text)
        .await
        .ok()
        .and_then(|v| v.as_string())
        .ok_or_else(|| format!("{url} has no readable body."))
}

pub fn sample_index() -> Result<Vec<SampleEntry>, String> {
    serde_json::from_str(SAMPLE_INDEX)
        .map_err(|e| format!("The list of sample courses is damaged: {e}"))
}

/// The bundled sample with this id, if there is one.
pub fn sample_entry(id: &str) -> Option<SampleEntry> {
    sample_index().ok()?.into_iter().find(|e| e.id == id)
}

/// The sample's course file, as text.
pub async fn sample_text(entry: &SampleEntry) -> Result<String, String> {
    fetch_text(&format!("/courses/{}", entry.file)).await
}
