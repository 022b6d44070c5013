//! Editing a written scene's words by hand: what the teacher says (each speech of the script)
//! and the text boxes of its slide, read from and written back to the job record, so the edit
//! survives a reload and the course file is assembled from it like any other version. Only text
//! changes; a scene's layout and actions stay as written.

use serde_json::Value;

use crate::job::JobRecord;
use crate::{actions_task, content_task};
use aula_course::limits::{MAX_SPEECH_CHARS, MAX_TEXT_CHARS};

/// The editable words of one scene, each with the id of the action or element it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SceneWords {
    pub speeches: Vec<(String, String)>,
    pub slide_texts: Vec<(String, String)>,
}

fn read(record: &JobRecord, task: &str) -> Option<Value> {
    serde_json::from_str(record.finished.get(task)?).ok()
}

/// The words of a written scene, in script and paint order; `None` until its script is written.
pub fn scene_words(record: &JobRecord, scene_id: &str) -> Option<SceneWords> {
    let content = read(record, &content_task(scene_id))?;
    let actions = read(record, &actions_task(scene_id))?;
    let pick = |items: Option<&Vec<Value>>, kind: &str, field: &str| -> Vec<(String, String)> {
        items
            .into_iter()
            .flatten()
            .filter(|item| item["type"] == kind)
            .filter_map(|item| {
                Some((
                    item["id"].as_str()?.to_string(),
                    item[field].as_str()?.to_string(),
                ))
            })
            .collect()
    };
    Some(SceneWords {
        speeches: pick(actions.as_array(), "speech", "text"),
        slide_texts: pick(content["elements"].as_array(), "text", "markdown"),
    })
}

/// Writes `words` into the scene's record entries. Ids the scene does not have are refused, as
/// are an empty speech or text that is too long; on any refusal the record is left as it was.
pub fn set_scene_words(
    record: &mut JobRecord,
    scene_id: &str,
    words: &SceneWords,
) -> Result<(), String> {
    let (content_id, actions_id) = (content_task(scene_id), actions_task(scene_id));
    let mut content = read(record, &content_id).ok_or("This scene is not written yet.")?;
    let mut actions = read(record, &actions_id).ok_or("This scene's script is not written yet.")?;
    for (id, text) in &words.speeches {
        let text = text.trim();
        if text.is_empty() {
            return Err("A line the teacher says cannot be empty.".into());
        }
        if text.chars().count() > MAX_SPEECH_CHARS {
            return Err(format!(
                "A line the teacher says is longer than {MAX_SPEECH_CHARS} characters."
            ));
        }
        let item = actions
            .as_array_mut()
            .and_then(|items| {
                items
                    .iter_mut()
                    .find(|a| a["type"] == "speech" && a["id"] == id.as_str())
            })
            .ok_or_else(|| format!("The script has no line \"{id}\"."))?;
        item["text"] = Value::String(text.to_string());
    }
    for (id, markdown) in &words.slide_texts {
        if markdown.chars().count() > MAX_TEXT_CHARS {
            return Err(format!(
                "A text on the slide is longer than {MAX_TEXT_CHARS} characters."
            ));
        }
        let element = content["elements"]
            .as_array_mut()
            .and_then(|items| {
                items
                    .iter_mut()
                    .find(|e| e["type"] == "text" && e["id"] == id.as_str())
            })
            .ok_or_else(|| format!("The slide has no text \"{id}\"."))?;
        element["markdown"] = Value::String(markdown.to_string());
    }
    record.finished.insert(content_id, content.to_string());
    record.finished.insert(actions_id, actions.to_string());
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record() -> JobRecord {
        let mut record = JobRecord::default();
        record.finished.insert(
            "s1/content".into(),
            json!({"type": "slide", "elements": [
                {"type": "text", "id": "title", "left": 40, "top": 20, "width": 900, "height": 60, "markdown": "Tides"},
                {"type": "shape", "id": "moon", "left": 40, "top": 120, "width": 90, "height": 90, "shape": "ellipse", "fill": "#cccccc"}
            ]})
            .to_string(),
        );
        record.finished.insert(
            "s1/actions".into(),
            json!([
                {"type": "spotlight", "id": "s1-a1", "element_id": "moon"},
                {"type": "speech", "id": "s1-a2", "text": "The moon pulls the sea."}
            ])
            .to_string(),
        );
        record
    }

    #[test]
    fn a_scenes_words_are_read_and_written_back_leaving_the_rest_alone() {
        let mut record = record();
        let mut words = scene_words(&record, "s1").unwrap();
        assert_eq!(
            words.speeches,
            [("s1-a2".to_string(), "The moon pulls the sea.".to_string())]
        );
        assert_eq!(
            words.slide_texts,
            [("title".to_string(), "Tides".to_string())]
        );
        words.speeches[0].1 = "The moon's gravity pulls the oceans.".into();
        words.slide_texts[0].1 = "**Tides**".into();
        set_scene_words(&mut record, "s1", &words).unwrap();
        assert_eq!(scene_words(&record, "s1").unwrap(), words);
        let actions: Value = serde_json::from_str(&record.finished["s1/actions"]).unwrap();
        assert_eq!(
            actions[0]["element_id"], "moon",
            "actions other than speech are untouched"
        );
    }

    #[test]
    fn bad_edits_are_refused_and_change_nothing() {
        let mut record = record();
        let before = record.clone();
        let empty = SceneWords {
            speeches: vec![("s1-a2".into(), "   ".into())],
            slide_texts: vec![],
        };
        assert!(set_scene_words(&mut record, "s1", &empty)
            .unwrap_err()
            .contains("empty"));
        let unknown = SceneWords {
            speeches: vec![],
            slide_texts: vec![("moon".into(), "not a text box".into())],
        };
        assert!(set_scene_words(&mut record, "s1", &unknown).is_err());
        assert!(set_scene_words(&mut record, "s9", &SceneWords::default()).is_err());
        assert_eq!(record, before);
    }
}
