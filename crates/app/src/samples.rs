//! The sample courses bundled with the app under `/courses/`, and fetching a text file.

use serde::Deserialize;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

const SAMPLE_INDEX: &str = "/courses/index.json";

/// One line of `/courses/index.json`: enough to list a sample without loading it.
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

pub async fn sample_index() -> Result<Vec<SampleEntry>, String> {
    let text = fetch_text(SAMPLE_INDEX).await?;
    serde_json::from_str(&text).map_err(|e| format!("The list of sample courses is damaged: {e}"))
}

/// The bundled course file with this id, as text, and its title; `Ok(None)` when no sample has it.
pub async fn sample_text(id: &str) -> Result<Option<(String, String)>, String> {
    let Some(entry) = sample_index().await?.into_iter().find(|e| e.id == id) else {
        return Ok(None);
    };
    let text = fetch_text(&format!("/courses/{}", entry.file)).await?;
    Ok(Some((text, entry.title)))
}
