//! The learner's library: the courses saved in this browser, and finding a course by id.

use aula_course::Course;
use aula_storage::{Collection, Store, StoreError};
use serde::Deserialize;

use crate::samples;

/// What the library list needs of a course. Lenient on purpose: a course saved by a newer
/// Aula still lists, and one that cannot be read at all is skipped rather than hiding the rest.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CourseSummary {
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub language: String,
    #[serde(default)]
    scenes: Vec<SceneGlance>,
    /// A course still being planned, with no scene written yet: it opens on its progress page.
    #[serde(skip)]
    pub writing: bool,
    /// How it came to be.
    #[serde(skip)]
    pub made: Made,
    /// When the learner last opened it (ms since the epoch).
    #[serde(skip)]
    pub opened_ms: Option<u64>,
    /// What it takes in the store, with everything it owns (its sessions, its job record).
    #[serde(skip)]
    pub bytes: usize,
    /// The scene (by index) where its lecture stopped, if the learner began it.
    #[serde(skip)]
    pub stopped_at: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct SceneGlance {
    #[serde(default)]
    id: String,
}

/// How a course in the library came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Made {
    /// Written here (it has a generation record).
    Here,
    /// Imported from a file (or saved by an older Aula, which kept no record of it).
    #[default]
    Imported,
    /// A copy of another course.
    Copy,
}

/// What `made:<course id>` holds for a copy.
pub const MADE_COPY: &str = "copy";

impl CourseSummary {
    pub fn scene_count(&self) -> usize {
        self.scenes.len()
    }
}

/// The course's other records, read into its summary: its size, when it was last opened, where
/// its lecture stopped, and how it came to be.
fn glance_records(
    summary: &mut CourseSummary,
    records: &[aula_director::session::StoredRecord],
    has_job: bool,
) {
    use aula_director::session::{made_key, opened_key, resume_key};
    #[derive(Deserialize)]
    struct PositionGlance {
        scene_id: String,
    }
    let find = |key: String| {
        records
            .iter()
            .find(|r| r.collection == Collection::Sessions && r.key == key)
            .map(|r| r.text.as_str())
    };
    summary.bytes = records.iter().map(|r| r.key.len() + r.text.len()).sum();
    summary.opened_ms = find(opened_key(&summary.id)).and_then(|t| serde_json::from_str(t).ok());
    summary.stopped_at = find(resume_key(&summary.id))
        .and_then(|t| serde_json::from_str::<PositionGlance>(t).ok())
        .and_then(|p| summary.scenes.iter().position(|s| s.id == p.scene_id));
    summary.made = match find(made_key(&summary.id)) {
        Some(text) if serde_json::from_str::<String>(text).is_ok_and(|m| m == MADE_COPY) => {
            Made::Copy
        }
        _ if has_job => Made::Here,
        _ => Made::Imported,
    };
}

/// Notes that the learner opened the course now (the library sorts by it).
pub fn mark_opened(course_id: &str) {
    crate::store::put_json_later(
        Collection::Sessions,
        aula_director::session::opened_key(course_id),
        js_sys::Date::now() as u64,
        "library: could not note when a course was opened",
    );
}

pub use crate::store::open_store;

/// What the library list needs of a generation's record (`generate::GenerationFile`), so the
/// page does not link the reading of the whole record.
#[derive(Deserialize)]
struct JobGlance {
    course_id: String,
    request: RequestGlance,
    #[serde(default)]
    outline: Option<OutlineGlance>,
}

#[derive(Deserialize)]
struct RequestGlance {
    #[serde(default)]
    topic: String,
}

#[derive(Deserialize)]
struct OutlineGlance {
    #[serde(default)]
    title: String,
    #[serde(default)]
    scenes: Vec<serde::de::IgnoredAny>,
}

/// Whether the course has a generation record (it was written here).
pub async fn has_generation(id: &str) -> bool {
    match open_store().await {
        Ok(store) => matches!(store.get(Collection::Jobs, id).await, Ok(Some(_))),
        Err(_) => false,
    }
}

pub async fn load_library() -> Result<Vec<CourseSummary>, StoreError> {
    let store = open_store().await?;
    let jobs = store.keys(Collection::Jobs).await?;
    let mut courses = Vec::new();
    for key in store.keys(Collection::Courses).await? {
        let records = aula_director::session::course_records(&store, &key).await?;
        let Some(course) = records
            .last()
            .filter(|r| r.collection == Collection::Courses)
        else {
            continue;
        };
        match serde_json::from_str::<CourseSummary>(&course.text) {
            Ok(mut summary) => {
                summary.id = key.clone();
                glance_records(&mut summary, &records, jobs.contains(&key));
                courses.push(summary);
            }
            Err(error) => {
                leptos::logging::warn!("library: skipped unreadable course {key:?}: {error}")
            }
        }
    }
    // Generations that have no course yet (still planning, or the plan waits for the learner),
    // so leaving their page never loses them.
    for key in store.keys(Collection::Jobs).await? {
        if courses.iter().any(|c| c.id == key) {
            continue;
        }
        let Ok(Some(file)) =
            aula_storage::get_json::<_, JobGlance>(&store, Collection::Jobs, &key).await
        else {
            continue;
        };
        let (title, scenes) = match &file.outline {
            Some(outline) => (outline.title.clone(), outline.scenes.len()),
            None => (file.request.topic.clone(), 0),
        };
        courses.push(CourseSummary {
            id: file.course_id,
            title,
            description: String::new(),
            language: String::new(),
            scenes: vec![SceneGlance { id: String::new() }; scenes],
            writing: true,
            made: Made::Here,
            opened_ms: None,
            bytes: 0,
            stopped_at: None,
        });
    }
    Ok(courses)
}

/// Where a course's file was found.
enum CourseFile {
    Saved(String),
    Sample { text: String, title: String },
}

/// The learner's saved copy first, then a bundled sample; `Ok(None)` when neither has it. A
/// sample's file is fetched while the store is read (on a first visit, opening the store is a
/// round trip of its own); a saved copy still wins.
async fn course_file(id: &str) -> Result<Option<CourseFile>, String> {
    let saved = async {
        let store = open_store().await.ok()?;
        match store.get(Collection::Courses, id).await {
            Ok(text) => text,
            Err(error) => {
                leptos::logging::warn!("library: could not read course {id:?}: {error}");
                None
            }
        }
    };
    let sample = samples::sample_entry(id);
    let fetched = async {
        match &sample {
            Some(entry) => Some(samples::sample_text(entry).await),
            None => None,
        }
    };
    let (saved, fetched) = futures_util::future::join(saved, fetched).await;
    if let Some(text) = saved {
        return Ok(Some(CourseFile::Saved(text)));
    }
    match (sample, fetched) {
        (Some(entry), Some(text)) => Ok(Some(CourseFile::Sample {
            text: text?,
            title: entry.title,
        })),
        _ => Ok(None),
    }
}

/// The course file's text, as stored (for the AI worker, which reads the course itself).
pub async fn course_text(id: &str) -> Result<Option<String>, String> {
    Ok(course_file(id).await?.map(|file| match file {
        CourseFile::Saved(text) | CourseFile::Sample { text, .. } => text,
    }))
}

/// The course to open in the classroom, validated; `Ok(None)` when there is none with this id.
pub async fn load_course(id: &str) -> Result<Option<Course>, String> {
    match course_file(id).await? {
        None => Ok(None),
        Some(CourseFile::Saved(text)) => Course::from_json(&text)
            .map(Some)
            .map_err(|e| format!("This saved course could not be opened: {e}")),
        Some(CourseFile::Sample { text, title }) => Course::from_json(&text)
            .map(Some)
            .map_err(|e| format!("The sample course \"{title}\" could not be opened: {e}")),
    }
}

/// Asks the browser to keep Aula's data under storage pressure, once a course has been saved
/// (Firefox asks the learner; Chromium decides by itself). Asked once per browser.
pub fn keep_persistently() {
    const ASKED: &str = "aula.persist_asked";
    let window = leptos::prelude::window();
    let Ok(Some(local)) = window.local_storage() else {
        return;
    };
    if local.get_item(ASKED).ok().flatten().is_some() {
        return;
    }
    let _ = local.set_item(ASKED, "1");
    if let Ok(promise) = window.navigator().storage().persist() {
        leptos::task::spawn_local(async move {
            let granted = wasm_bindgen_futures::JsFuture::from(promise).await;
            leptos::logging::log!("library: persistent storage granted: {granted:?}");
        });
    }
}

/// How much the browser holds for Aula, and whether it is kept persistently:
/// `(used bytes, quota bytes, persisted)`.
pub async fn storage_use() -> Option<(f64, f64, bool)> {
    use wasm_bindgen::JsCast;
    let storage = leptos::prelude::window().navigator().storage();
    let estimate = wasm_bindgen_futures::JsFuture::from(storage.estimate().ok()?)
        .await
        .ok()?;
    let estimate: web_sys::StorageEstimate = estimate.unchecked_into();
    let persisted = match storage.persisted() {
        Ok(p) => wasm_bindgen_futures::JsFuture::from(p)
            .await
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        Err(_) => false,
    };
    Some((
        estimate.get_usage().unwrap_or(0.0),
        estimate.get_quota().unwrap_or(0.0),
        persisted,
    ))
}

/// Whether this page is served by Aula's service worker, so the library opens and its courses
/// play with the network cut.
pub fn works_offline() -> bool {
    leptos::prelude::window()
        .navigator()
        .service_worker()
        .controller()
        .is_some()
}

#[cfg(test)]
mod tests {
    use aula_storage::put_json;
    use wasm_bindgen_test::*;

    use super::*;
    use crate::generate::GenerationFile;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen_test]
    async fn the_library_lists_saved_courses_and_generations_with_no_scene_yet() {
        let memory = crate::store::use_memory_store();
        memory
            .put(
                Collection::Courses,
                "c1",
                r#"{"id":"c1","title":"Tides","scenes":[{},{}],"future_field":1}"#.into(),
            )
            .await
            .unwrap();
        memory
            .put(Collection::Courses, "broken", "{not json".into())
            .await
            .unwrap();
        let request = serde_json::from_value(serde_json::json!({
            "topic": "Volcanoes", "language": "en", "agents": []
        }))
        .unwrap();
        let planning = GenerationFile::new("gen-2".into(), request, 5, true);
        put_json(&*memory, Collection::Jobs, "gen-2", &planning)
            .await
            .unwrap();
        let courses = load_library().await.unwrap();
        let listed: Vec<(&str, &str, usize, bool)> = courses
            .iter()
            .map(|c| (c.id.as_str(), c.title.as_str(), c.scene_count(), c.writing))
            .collect();
        assert_eq!(
            listed,
            [("c1", "Tides", 2, false), ("gen-2", "Volcanoes", 0, true)]
        );
    }
}
