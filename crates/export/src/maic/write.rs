//! Writing a course as a `.maic.zip`: OpenMAIC's manifest, narration under `audio/`, slide media
//! under `media/` named after the placeholder each element points at.

use std::collections::{BTreeMap, HashMap, HashSet};

use aula_course::{Action, Course, SceneContent, SlideElement};
use serde_json::{json, Map, Value};

use super::action::openmaic_name;
use super::content::scene_to_archive;
use super::element::poster_key;
use super::text::{directive_for, iso_time, mime_of_extension};
use super::{scene_label, tally, Links, MaicError, MaicExport, AULA_KEY, MAIC_FORMAT_VERSION};
use crate::zip::ZipWriter;
use crate::{validate_entry_path, MANIFEST_PATH};

/// Writes `course` as an OpenMAIC classroom archive (format 1). `media` holds the course's files
/// by their path in Aula's bundle (`media/leaf.png`, `audio/s1-a02.mp3`); those the course refers
/// to are written into the archive.
pub fn export_maic(
    course: &Course,
    media: &[(String, Vec<u8>)],
    exported_at_ms: u64,
    app_version: &str,
) -> Result<MaicExport, MaicError> {
    let supplied: HashMap<&str, &[u8]> = media
        .iter()
        .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
        .collect();
    let mut dropped = Vec::new();
    let mut plan = MediaPlan::default();
    for (i, scene) in course.scenes.iter().enumerate() {
        let at = scene_label(i + 1, &scene.title);
        let mut missing = |what: String, path: &str| {
            if !is_address(path) {
                dropped.push(format!(
                    "{at}: {what}: its file \"{path}\" was not supplied, so the archive names it without holding it"
                ));
            }
        };
        if let SceneContent::Slide(slide) = &scene.content {
            for element in &slide.elements {
                match element {
                    SlideElement::Image(e) => {
                        let planned = plan.slide_media(&e.src, "gen_img_", &supplied)?;
                        if !planned {
                            missing(format!("image element \"{}\"", e.id), &e.src);
                        }
                    }
                    SlideElement::Video(e) => {
                        if !plan.slide_media(&e.src, "gen_vid_", &supplied)? {
                            missing(format!("video element \"{}\"", e.id), &e.src);
                        }
                        if let Some(poster) = &e.poster {
                            if !plan.poster(poster, &e.src, &supplied)? {
                                missing(
                                    format!("the poster of video element \"{}\"", e.id),
                                    poster,
                                );
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        for action in &scene.actions {
            if let Action::Speech(s) = action {
                if let Some(audio) = &s.audio_id {
                    if !plan.audio(audio, &supplied)? {
                        missing(format!("the narration of speech \"{}\"", s.id), audio);
                    }
                }
            }
        }
    }
    for (path, _) in media {
        if !plan.links.native_ref.contains_key(path) {
            dropped.push(format!(
                "The media file \"{path}\" is not used by any scene, so it was left out"
            ));
        }
    }

    let mut links = plan.links;
    for (i, agent) in course.agents.iter().enumerate() {
        links.agent_index.insert(agent.id.clone(), i);
        links
            .agent_renamed
            .insert(agent.id.clone(), agent.id.clone());
        links.agent_ids.push(agent.id.clone());
    }
    let agents: Vec<Value> = course
        .agents
        .iter()
        .map(|a| {
            let mut agent = json!({
                "id": a.id, "name": a.name, "role": a.role.as_str(), "persona": a.persona,
                "avatar": a.avatar, "color": a.color, "priority": a.priority,
                "allowedActions": a.allowed_actions.iter().map(|k| openmaic_name(*k)).collect::<Vec<_>>(),
            });
            if let Some(voice) = &a.voice {
                agent["voiceConfig"] = json!({"providerId": voice.provider, "voiceId": voice.voice});
            }
            agent
        })
        .collect();
    let mut aula_only = Vec::new();
    let scenes: Vec<Value> = course
        .scenes
        .iter()
        .enumerate()
        .map(|(i, scene)| {
            let at = scene_label(i + 1, &scene.title);
            scene_to_archive(scene, i + 1, &links, &mut aula_only, &at)
        })
        .collect();
    let mut media_index = Map::new();
    for (zip_path, file) in &plan.files {
        let ext = zip_path.rsplit_once('.').map_or("", |(_, e)| e);
        let mut entry = json!({
            "type": if zip_path.starts_with("audio/") { "audio" } else { "generated" },
            "mimeType": mime_of_extension(ext),
            "size": file.bytes.len(),
        });
        if zip_path.starts_with("audio/") {
            entry["format"] = json!(ext);
        }
        if file.bundle_path != *zip_path {
            entry[AULA_KEY] = json!({"path": file.bundle_path});
        }
        media_index.insert(zip_path.clone(), entry);
    }
    let manifest = json!({
        "formatVersion": MAIC_FORMAT_VERSION,
        "exportedAt": iso_time(exported_at_ms),
        "appVersion": app_version,
        "stage": {
            "name": course.title,
            "description": course.description,
            "language": directive_for(&course.language),
            "createdAt": course.created_at,
            "updatedAt": course.updated_at,
        },
        "agents": agents,
        "scenes": scenes,
        "mediaIndex": media_index,
    });
    // Plain data with string keys: serde_json has no way to fail here.
    let manifest = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    let mut zip = ZipWriter::new(exported_at_ms);
    zip.add(MANIFEST_PATH, &manifest);
    for (zip_path, file) in &plan.files {
        zip.add(zip_path, file.bytes);
    }
    Ok(MaicExport {
        archive: zip.finish(),
        dropped: tally(dropped),
        aula_only: tally(aula_only),
    })
}

/// Whether a source is a web or data address rather than a file of the bundle.
fn is_address(src: &str) -> bool {
    ["http://", "https://", "data:", "//"]
        .iter()
        .any(|p| src.starts_with(p))
}

struct PlannedFile<'a> {
    bundle_path: String,
    bytes: &'a [u8],
}

/// Which supplied files go where in the archive, and how the manifest refers to each.
#[derive(Default)]
struct MediaPlan<'a> {
    links: Links,
    files: BTreeMap<String, PlannedFile<'a>>,
    taken: HashSet<String>,
}

impl<'a> MediaPlan<'a> {
    fn supplied(
        path: &str,
        supplied: &HashMap<&str, &'a [u8]>,
    ) -> Result<Option<&'a [u8]>, MaicError> {
        let Some(bytes) = supplied.get(path) else {
            return Ok(None);
        };
        validate_entry_path(path).map_err(|source| MaicError::UnsafeMediaPath {
            path: path.to_string(),
            source,
        })?;
        Ok(Some(bytes))
    }

    /// A name made of `[A-Za-z0-9_-]` from the file name of `path`, unused so far.
    fn unique(&mut self, prefix: &str, path: &str) -> String {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        let clean: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(60)
            .collect();
        let mut candidate = format!("{prefix}{clean}");
        let mut n = 2;
        while !self.taken.insert(candidate.clone()) {
            candidate = format!("{prefix}{clean}-{n}");
            n += 1;
        }
        candidate
    }

    fn add(&mut self, bundle_path: &str, native: String, zip_path: String, bytes: &'a [u8]) {
        self.links
            .native_ref
            .insert(bundle_path.to_string(), native.clone());
        self.links.aula_path.insert(native, bundle_path.to_string());
        self.files.insert(
            zip_path,
            PlannedFile {
                bundle_path: bundle_path.to_string(),
                bytes,
            },
        );
    }

    /// Plans an image or video file; `false` when it was not supplied.
    fn slide_media(
        &mut self,
        path: &str,
        prefix: &str,
        supplied: &HashMap<&str, &'a [u8]>,
    ) -> Result<bool, MaicError> {
        if self.links.native_ref.contains_key(path) {
            return Ok(true);
        }
        let Some(bytes) = Self::supplied(path, supplied)? else {
            return Ok(false);
        };
        let placeholder = self.unique(prefix, path);
        let zip_path = format!("media/{placeholder}.{}", extension(path));
        self.add(path, placeholder, zip_path, bytes);
        Ok(true)
    }

    /// Plans a video's poster beside its video.
    fn poster(
        &mut self,
        path: &str,
        video: &str,
        supplied: &HashMap<&str, &'a [u8]>,
    ) -> Result<bool, MaicError> {
        if self.links.native_ref.contains_key(path) {
            return Ok(true);
        }
        let Some(bytes) = Self::supplied(path, supplied)? else {
            return Ok(false);
        };
        let Some(placeholder) = self.links.native_ref.get(video).cloned() else {
            // A poster for a video that is only an address: OpenMAIC keys posters by video.
            return Ok(false);
        };
        let zip_path = format!("media/{placeholder}.poster.{}", extension(path));
        self.links
            .native_ref
            .insert(path.to_string(), zip_path.clone());
        self.links
            .aula_path
            .insert(poster_key(&placeholder), path.to_string());
        self.files.insert(
            zip_path,
            PlannedFile {
                bundle_path: path.to_string(),
                bytes,
            },
        );
        Ok(true)
    }

    fn audio(&mut self, path: &str, supplied: &HashMap<&str, &'a [u8]>) -> Result<bool, MaicError> {
        if self.links.native_ref.contains_key(path) {
            return Ok(true);
        }
        let Some(bytes) = Self::supplied(path, supplied)? else {
            return Ok(false);
        };
        let zip_path = if path.starts_with("audio/") && self.taken.insert(path.to_string()) {
            path.to_string()
        } else {
            let name = self.unique("", path);
            format!("audio/{name}.{}", extension(path))
        };
        self.add(path, zip_path.clone(), zip_path, bytes);
        Ok(true)
    }
}

/// The lowercase extension of a file path, `bin` when it has none usable.
fn extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .filter(|e| !e.is_empty() && e.len() <= 5 && e.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or_else(|| "bin".into())
}
