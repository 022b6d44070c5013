//! What the page and the worker say about files: a [`FileJob`] (export a course to a format, or
//! open a file to import) travels as JSON beside the file's bytes, and one [`FileReport`] comes
//! back. The work itself is here too ([`import_file`], the export's file name), so the worker
//! only fetches the player's files and moves bytes.

use aula_course::Course;
use aula_player::progress::ProgressRules;
use serde::{Deserialize, Serialize};

use crate::bundle::{check_course, read_bundle, CourseFiles, ImportError};
use crate::zip::{read_zip, ZipLimits};
use crate::BUNDLE_EXTENSION;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// `.aula.zip`: the course and its media, for moving it to another browser.
    Bundle,
    Scorm12,
    Scorm2004,
    /// One `.html` file that plays from disk.
    Html,
    Pptx,
    /// OpenMAIC's classroom zip.
    Maic,
}

impl ExportFormat {
    /// Whether the export carries the player (its files are fetched first).
    pub fn needs_player(self) -> bool {
        matches!(
            self,
            ExportFormat::Scorm12 | ExportFormat::Scorm2004 | ExportFormat::Html
        )
    }

    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Bundle => BUNDLE_EXTENSION,
            ExportFormat::Scorm12 => ".scorm12.zip",
            ExportFormat::Scorm2004 => ".scorm2004.zip",
            ExportFormat::Html => ".html",
            ExportFormat::Pptx => ".pptx",
            ExportFormat::Maic => ".maic.zip",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ExportFormat::Html => "text/html",
            ExportFormat::Pptx => {
                "application/vnd.openxmlformats-officedocument.presentationml.presentation"
            }
            _ => "application/zip",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum FileJob {
    Export {
        format: ExportFormat,
        /// The course file's text.
        course: String,
        #[serde(default)]
        rules: ProgressRules,
        exported_at: u64,
        app_version: String,
    },
    /// The file's bytes travel beside the job.
    Import {
        /// The ids already in the library: a clash imports a copy under a new id.
        existing: Vec<String>,
    },
}

/// The one answer to a [`FileJob`]; an export's bytes travel beside it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileReport {
    /// Set when the job failed: a message for the learner.
    pub error: Option<String>,
    /// The export's suggested file name.
    pub file_name: String,
    pub mime: String,
    /// The imported course file's text.
    pub course: Option<String>,
    pub course_id: String,
    pub title: String,
    /// What could not be carried over, one line each.
    pub dropped: Vec<String>,
    /// The import took a new id because the library already had the course's.
    pub copied: bool,
}

impl FileReport {
    pub fn failed(message: impl Into<String>) -> FileReport {
        FileReport {
            error: Some(message.into()),
            ..FileReport::default()
        }
    }
}

/// A file name from a course title: letters, digits and dashes, never empty.
pub fn file_stem(title: &str) -> String {
    let mut stem = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            stem.extend(c.to_lowercase());
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
        if stem.chars().count() >= 60 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() {
        "course".into()
    } else {
        stem.into()
    }
}

/// What an import yields, ready to be saved.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub course: Course,
    /// The text to store: the file's own text unless the id had to change.
    pub course_json: String,
    pub media: Vec<(String, Vec<u8>)>,
    pub dropped: Vec<String>,
    pub copied: bool,
}

/// Opens an `.aula.zip` bundle or a bare course `.json`. A course whose id is already in the
/// library comes in as a copy with a fresh id.
pub fn import_file(
    bytes: &[u8],
    existing: &[String],
    limits: &ZipLimits,
) -> Result<Imported, ImportError> {
    let mut dropped = Vec::new();
    let files = if bytes.starts_with(b"PK") {
        let entries = read_zip(bytes, limits)?;
        let Some(manifest) = entries.iter().find(|e| e.path == crate::MANIFEST_PATH) else {
            return Err(ImportError::NoManifest);
        };
        // OpenMAIC's manifest names its format `formatVersion`; ours, `format_version`.
        let is_maic = serde_json::from_slice::<serde_json::Value>(&manifest.bytes)
            .is_ok_and(|m| m.get("formatVersion").is_some() || m.get("stage").is_some());
        if is_maic {
            let id = format!("maic-{}", &crate::sha256_hex(bytes)[..12]);
            let imported = crate::maic::import_maic(bytes, &id, limits)
                .map_err(|e| ImportError::Classroom(e.to_string()))?;
            dropped = imported.dropped;
            CourseFiles {
                course_json: imported.course.to_json(),
                media: imported.media,
            }
        } else {
            read_bundle(bytes, limits)?
        }
    } else {
        let text = std::str::from_utf8(bytes).map_err(|_| ImportError::NotText("The file"))?;
        CourseFiles {
            course_json: text.trim_start_matches('\u{feff}').to_string(),
            media: Vec::new(),
        }
    };
    let mut course = check_course(&files.course_json)?;
    let mut course_json = files.course_json;
    let copied = existing.contains(&course.id);
    if copied {
        let base = course.id.clone();
        let fresh = (2..)
            .map(|n| format!("{base}-copy-{n}"))
            .find(|id| !existing.contains(id))
            .unwrap_or(base);
        course.id = fresh;
        course_json = course.to_json();
    }
    Ok(Imported {
        course,
        course_json,
        media: files.media,
        dropped,
        copied,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::write_bundle;

    const COURSE: &str = include_str!("../../course/tests/fixtures/photosynthesis.json");

    #[test]
    fn a_bundle_and_a_bare_course_file_both_import() {
        let files = CourseFiles {
            course_json: COURSE.into(),
            media: vec![],
        };
        let bundle = write_bundle(&files, 0, "t").unwrap();
        let a = import_file(&bundle, &[], &ZipLimits::BUNDLE).unwrap();
        let b = import_file(COURSE.as_bytes(), &[], &ZipLimits::BUNDLE).unwrap();
        assert_eq!(a.course_json, COURSE);
        assert_eq!(a.course, b.course);
        assert!(!a.copied);
    }

    #[test]
    fn a_course_already_in_the_library_comes_in_as_a_copy() {
        let id = Course::from_json(COURSE).unwrap().id;
        let existing = vec![id.clone(), format!("{id}-copy-2")];
        let imported = import_file(COURSE.as_bytes(), &existing, &ZipLimits::BUNDLE).unwrap();
        assert!(imported.copied);
        assert_eq!(imported.course.id, format!("{id}-copy-3"));
        let stored = Course::from_json(&imported.course_json).unwrap();
        assert_eq!(stored.id, imported.course.id);
        assert_eq!(stored.scenes, Course::from_json(COURSE).unwrap().scenes);
    }

    #[test]
    fn other_files_are_refused_with_what_they_are() {
        let word = {
            let mut zip = crate::zip::ZipWriter::new(0);
            zip.add("word/document.xml", b"<w/>");
            zip.finish()
        };
        let message = import_file(&word, &[], &ZipLimits::BUNDLE)
            .unwrap_err()
            .to_string();
        assert!(message.contains("not an Aula course bundle"), "{message}");
        let message = import_file(b"\xff\xfe\x00", &[], &ZipLimits::BUNDLE)
            .unwrap_err()
            .to_string();
        assert!(message.contains("not text"), "{message}");
        let message = import_file(b"{\"id\": 3}", &[], &ZipLimits::BUNDLE)
            .unwrap_err()
            .to_string();
        assert!(message.contains("cannot be read"), "{message}");
    }

    #[test]
    fn an_openmaic_classroom_imports_with_what_was_left_out() {
        let course = Course::from_json(COURSE).unwrap();
        let maic = crate::maic::export_maic(&course, &[], 0, "t").unwrap();
        let imported = import_file(&maic.archive, &[], &ZipLimits::BUNDLE).unwrap();
        assert!(imported.course.id.starts_with("maic-"));
        assert_eq!(imported.course.title, course.title);
        assert_eq!(imported.course.scenes.len(), course.scenes.len());
        let again = import_file(
            &maic.archive,
            std::slice::from_ref(&imported.course.id),
            &ZipLimits::BUNDLE,
        )
        .unwrap();
        assert!(
            again.copied,
            "the same classroom twice is a copy the second time"
        );
    }

    #[test]
    fn file_names_come_from_titles() {
        assert_eq!(
            file_stem("Photosynthesis: how leaves eat light!"),
            "photosynthesis-how-leaves-eat-light"
        );
        assert_eq!(file_stem("光合作用 入门"), "光合作用-入门");
        assert_eq!(file_stem("../../"), "course");
        assert_eq!(file_stem(""), "course");
    }
}
