//! File jobs: exporting a course to a file and opening a file to import. The page posts
//! `{kind: "file", id, job, bytes?}` (the job as JSON, a file's bytes as a `Uint8Array`) and gets
//! one `{kind: "file", id, report, bytes?}` back. What to write and how to read it is decided by
//! `aula_export`; this module fetches the player's own files and moves bytes.

use aula_export::bundle::{write_bundle, CourseFiles, ImportError};
use aula_export::package::{offline_html, scorm_package, AppShell, PlayerFiles, ScormVersion};
use aula_export::wire::{file_stem, import_file, ExportFormat, FileJob, FileReport};
use aula_export::zip::ZipLimits;
use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{RequestInit, Response};

use crate::global_fetch;

/// A posted job: its id, the job (or why it could not be read) and the file's bytes.
pub struct Posted {
    pub id: u32,
    pub job: Result<FileJob, String>,
    pub bytes: Option<Vec<u8>>,
}

/// Reads a file job from a posted object; `None` when the message is something else.
pub fn job_of(data: &JsValue) -> Option<Posted> {
    let get = |name: &str| Reflect::get(data, &JsValue::from_str(name)).ok();
    if get("kind")?.as_string()? != "file" {
        return None;
    }
    let id = get("id")?.as_f64()? as u32;
    let job = get("job")
        .and_then(|j| j.as_string())
        .ok_or_else(|| "no job".to_string())
        .and_then(|j| serde_json::from_str::<FileJob>(&j).map_err(|e| e.to_string()));
    let bytes = get("bytes")
        .filter(|b| b.is_instance_of::<Uint8Array>())
        .map(|b| Uint8Array::from(b).to_vec());
    Some(Posted { id, job, bytes })
}

/// The reply object, with the file's bytes (transferred, not copied).
pub fn reply(id: u32, report: &FileReport, bytes: Option<Vec<u8>>) -> (JsValue, Option<JsValue>) {
    let object = Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = Reflect::set(&object, &JsValue::from_str(k), v);
    };
    set("kind", &JsValue::from_str("file"));
    set("id", &JsValue::from_f64(f64::from(id)));
    set(
        "report",
        &JsValue::from_str(&serde_json::to_string(report).unwrap_or_default()),
    );
    let mut transfer = None;
    if let Some(bytes) = bytes {
        let array = Uint8Array::from(bytes.as_slice());
        transfer = Some(array.buffer().into());
        set("bytes", &array);
    }
    (object.into(), transfer)
}

async fn fetch_bytes(path: &str) -> Result<Vec<u8>, String> {
    let url = format!("/{path}");
    let failed =
        || format!("Aula's file {url} could not be loaded; check the connection and try again.");
    let response: Response = JsFuture::from(global_fetch(&url, &RequestInit::new()))
        .await
        .map_err(|_| failed())?
        .dyn_into()
        .map_err(|_| failed())?;
    if !response.ok() {
        return Err(failed());
    }
    let buffer = JsFuture::from(response.array_buffer().map_err(|_| failed())?)
        .await
        .map_err(|_| failed())?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

async fn player_files() -> Result<PlayerFiles, String> {
    let shell = fetch_bytes("app-shell.json").await?;
    let shell = AppShell::from_json(&String::from_utf8_lossy(&shell)).map_err(|e| e.to_string())?;
    let paths = shell.player_paths().map_err(|e| e.to_string())?;
    Ok(PlayerFiles {
        js: fetch_bytes(&paths.js).await?,
        wasm: fetch_bytes(&paths.wasm).await?,
        css: fetch_bytes(&paths.css).await?,
        paths,
    })
}

/// Runs one job to its report.
pub async fn run(job: FileJob, bytes: Option<Vec<u8>>) -> (FileReport, Option<Vec<u8>>) {
    match job {
        FileJob::Import { existing } => {
            let Some(bytes) = bytes else {
                return (FileReport::failed("No file was given to import."), None);
            };
            match import_file(&bytes, &existing, &ZipLimits::BUNDLE) {
                Ok(imported) => {
                    let mut dropped = imported.dropped;
                    if !imported.media.is_empty() {
                        dropped.push(format!(
                            "{} media files in the bundle were not kept; this version of Aula keeps a course's images inside its course file.",
                            imported.media.len()
                        ));
                    }
                    (
                        FileReport {
                            course: Some(imported.course_json),
                            course_id: imported.course.id,
                            title: imported.course.title,
                            dropped,
                            copied: imported.copied,
                            ..FileReport::default()
                        },
                        None,
                    )
                }
                Err(error) => (FileReport::failed(error.to_string()), None),
            }
        }
        FileJob::Export {
            format,
            course,
            rules,
            exported_at,
            app_version,
        } => {
            let files = CourseFiles {
                course_json: course,
                media: Vec::new(),
            };
            let title = match aula_export::bundle::check_course(&files.course_json) {
                Ok(c) => c.title,
                Err(error) => return (FileReport::failed(error.to_string()), None),
            };
            let player = if format.needs_player() {
                match player_files().await {
                    Ok(player) => Some(player),
                    Err(message) => return (FileReport::failed(message), None),
                }
            } else {
                None
            };
            let mut dropped = Vec::new();
            let written: Result<Vec<u8>, ImportError> = match (format, &player) {
                (ExportFormat::Bundle, _) => write_bundle(&files, exported_at, &app_version),
                (ExportFormat::Scorm12, Some(p)) => {
                    scorm_package(&files, p, ScormVersion::Scorm12, rules, exported_at)
                }
                (ExportFormat::Scorm2004, Some(p)) => {
                    scorm_package(&files, p, ScormVersion::Scorm2004, rules, exported_at)
                }
                (ExportFormat::Html, Some(p)) => {
                    offline_html(&files.course_json, p).map(String::into_bytes)
                }
                (ExportFormat::Pptx, _) => match aula_course::Course::from_json(&files.course_json)
                {
                    Ok(course) => Ok(aula_export::pptx::course_to_pptx(&course, exported_at)),
                    Err(error) => return (FileReport::failed(error.to_string()), None),
                },
                (ExportFormat::Maic, _) => {
                    let course = match aula_course::Course::from_json(&files.course_json) {
                        Ok(course) => course,
                        Err(error) => return (FileReport::failed(error.to_string()), None),
                    };
                    match aula_export::maic::export_maic(
                        &course,
                        &files.media,
                        exported_at,
                        &app_version,
                    ) {
                        Ok(maic) => {
                            dropped = maic.dropped;
                            Ok(maic.archive)
                        }
                        Err(error) => return (FileReport::failed(error.to_string()), None),
                    }
                }
                _ => {
                    return (
                        FileReport::failed("This export is not available in this version of Aula."),
                        None,
                    )
                }
            };
            match written {
                Ok(bytes) => (
                    FileReport {
                        file_name: format!("{}{}", file_stem(&title), format.extension()),
                        mime: format.mime().into(),
                        title,
                        dropped,
                        ..FileReport::default()
                    },
                    Some(bytes),
                ),
                Err(error) => (FileReport::failed(error.to_string()), None),
            }
        }
    }
}
