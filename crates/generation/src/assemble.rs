//! From a job record to a playable course file: every scene whose content and script are both
//! done, in the outline's order. A course is playable as soon as its first scene is ready; the rest
//! join it as they finish.

use aula_course::FORMAT_VERSION;
use serde_json::{json, Value};

use crate::job::JobRecord;
use crate::outline::{CourseRequest, Outline};
use crate::{actions_task, content_task};

/// Where one scene of the outline stands in the job record (the progress page refines it with
/// what runs now: `progress::SceneProgress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SceneState {
    /// Nothing of it is written yet.
    Waiting,
    /// Its content is written; its script is not.
    Scripting,
    /// Content and script are done: it plays.
    Ready,
    /// A step of it gave up; it has a retry.
    Failed,
}

/// The state of every outline scene, in order.
pub fn scene_states(outline: &Outline, record: &JobRecord) -> Vec<SceneState> {
    outline
        .scenes
        .iter()
        .map(|scene| {
            let (content, actions) = (content_task(&scene.id), actions_task(&scene.id));
            if record.failed.contains_key(&content) || record.failed.contains_key(&actions) {
                SceneState::Failed
            } else if record.finished.contains_key(&actions)
                && record.finished.contains_key(&content)
            {
                SceneState::Ready
            } else if record.finished.contains_key(&content) {
                SceneState::Scripting
            } else {
                SceneState::Waiting
            }
        })
        .collect()
}

/// The course file as far as it is written: its ready scenes in outline order, as the JSON text
/// the page stores (built from the stored JSON of each stage, so nothing of the course model is
/// serialized again). `None` until the first scene is ready: a course without scenes is not a
/// course.
pub fn assemble_json(
    course_id: &str,
    request: &CourseRequest,
    outline: &Outline,
    record: &JobRecord,
    created_at: u64,
    now: u64,
) -> Option<String> {
    let scenes: Vec<Value> = outline
        .scenes
        .iter()
        .filter_map(|scene| {
            let content: Value = serde_json::from_str(record.finished.get(&content_task(&scene.id))?).ok()?;
            let actions: Value = serde_json::from_str(record.finished.get(&actions_task(&scene.id))?).ok()?;
            Some(json!({"id": scene.id, "title": scene.title, "content": content, "actions": actions}))
        })
        .collect();
    if scenes.is_empty() {
        return None;
    }
    // Through text rather than `to_value`: the page already has this serializer and the
    // `Value` reader, and a second serializer for the agents would only add to its bundle.
    let agents: Value = serde_json::from_str(&serde_json::to_string(&request.agents).ok()?).ok()?;
    Some(
        json!({
            "format_version": FORMAT_VERSION,
            "id": course_id,
            "title": outline.title,
            "language": request.language,
            "description": outline.description,
            "agents": agents,
            "scenes": scenes,
            "created_at": created_at,
            "updated_at": now.max(created_at),
        })
        .to_string(),
    )
}
