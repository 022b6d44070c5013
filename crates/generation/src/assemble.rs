//! From a job record to a playable course: every scene whose content and script are both done,
//! in the outline's order. A course is playable as soon as its first scene is ready; the rest
//! join it as they finish.

use aula_course::{Action, Course, Scene, SceneContent, FORMAT_VERSION};
use serde::{Deserialize, Serialize};

use crate::job::JobRecord;
use crate::outline::{CourseRequest, Outline};
use crate::{actions_task, content_task};

/// Where one scene of the outline stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// One ready scene, read back from the record.
pub fn ready_scene(outline: &Outline, record: &JobRecord, scene_id: &str) -> Option<Scene> {
    let outline_scene = outline.scene(scene_id)?;
    let content: SceneContent =
        serde_json::from_str(record.finished.get(&content_task(scene_id))?).ok()?;
    let actions: Vec<Action> =
        serde_json::from_str(record.finished.get(&actions_task(scene_id))?).ok()?;
    Some(Scene {
        id: outline_scene.id.clone(),
        title: outline_scene.title.clone(),
        content,
        actions,
    })
}

/// The course as far as it is written: its ready scenes in outline order. `None` until the
/// first one is ready (a course without scenes is not a course).
pub fn assemble(
    course_id: &str,
    request: &CourseRequest,
    outline: &Outline,
    record: &JobRecord,
    created_at: u64,
    now: u64,
) -> Option<Course> {
    let scenes: Vec<Scene> = outline
        .scenes
        .iter()
        .filter_map(|s| ready_scene(outline, record, &s.id))
        .collect();
    if scenes.is_empty() {
        return None;
    }
    Some(Course {
        format_version: FORMAT_VERSION,
        id: course_id.to_string(),
        title: outline.title.clone(),
        language: request.language.clone(),
        description: outline.description.clone(),
        agents: request.agents.clone(),
        scenes,
        created_at,
        updated_at: now.max(created_at),
    })
}
