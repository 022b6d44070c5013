//! The `.aula.zip` course bundle: `manifest.json`, `course.json` and the course's media, written
//! and read whole. Reading checks everything before anything is returned (the zip's limits and
//! paths, the manifest, every file's size and checksum, the course's format and validation), so an
//! import either yields a complete course or one clear error, and the library is never
//! half-written.

use aula_course::{Course, CourseLoadError, ValidationIssue};
use thiserror::Error;

use crate::zip::{read_zip, ZipError, ZipLimits, ZipWriter};
use crate::{BundleError, BundleManifest, COURSE_PATH, MANIFEST_PATH};

/// Folders a bundle's media may live in.
pub const MEDIA_FOLDERS: [&str; 2] = ["media/", "audio/"];

/// A course with its media, as kept in the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CourseFiles {
    /// The course file's text exactly as stored.
    pub course_json: String,
    /// Media files by bundle path (`media/…`, `audio/…`).
    pub media: Vec<(String, Vec<u8>)>,
}

/// Why a bundle could not be written or opened; each message says what to do.
#[derive(Debug, Error)]
pub enum ImportError {
    #[error("{0}")]
    Zip(#[from] ZipError),
    #[error("{0}")]
    Bundle(#[from] BundleError),
    #[error("This zip file has no manifest.json, so it is not an Aula course bundle.")]
    NoManifest,
    #[error("\"{0}\" is not in a media folder (media/ or audio/); Aula does not import it.")]
    Unexpected(String),
    #[error(
        "The manifest lists \"{0}\", but the bundle does not hold it; the bundle is incomplete."
    )]
    Missing(String),
    #[error("{0} is not text (UTF-8); the bundle is damaged.")]
    NotText(&'static str),
    #[error("The course in the bundle cannot be read: {0}")]
    Course(#[from] CourseLoadError),
    #[error("The course in the bundle is not valid: {0}")]
    Invalid(String),
    /// An OpenMAIC classroom that could not be read (its own message).
    #[error("{0}")]
    Classroom(String),
}

fn invalid(issues: &[ValidationIssue]) -> ImportError {
    let mut lines: Vec<String> = issues.iter().take(3).map(|i| i.to_string()).collect();
    if issues.len() > 3 {
        lines.push(format!("and {} more", issues.len() - 3));
    }
    ImportError::Invalid(lines.join("; "))
}

/// Checks a course file's text the way an import does: format version, size, validation.
pub fn check_course(course_json: &str) -> Result<Course, ImportError> {
    let course = Course::from_json(course_json)?;
    course.validate().map_err(|issues| invalid(&issues))?;
    Ok(course)
}

/// Writes the bundle of a course. The course must be valid: a bundle Aula cannot open again is
/// never written.
pub fn write_bundle(
    files: &CourseFiles,
    exported_at_ms: u64,
    app_version: &str,
) -> Result<Vec<u8>, ImportError> {
    let course = check_course(&files.course_json)?;
    let mut manifest = BundleManifest::new(&course.id, exported_at_ms, app_version);
    manifest.add_entry(COURSE_PATH, files.course_json.as_bytes())?;
    for (path, bytes) in &files.media {
        if !MEDIA_FOLDERS.iter().any(|f| path.starts_with(f)) {
            return Err(ImportError::Unexpected(crate::shown(path)));
        }
        manifest.add_entry(path, bytes)?;
    }
    let mut zip = ZipWriter::new(exported_at_ms);
    zip.add(MANIFEST_PATH, manifest.to_json().as_bytes());
    zip.add(COURSE_PATH, files.course_json.as_bytes());
    for (path, bytes) in &files.media {
        zip.add(path, bytes);
    }
    Ok(zip.finish())
}

/// Opens a bundle: everything checked, nothing partial.
pub fn read_bundle(archive: &[u8], limits: &ZipLimits) -> Result<CourseFiles, ImportError> {
    let entries = read_zip(archive, limits)?;
    let manifest = entries
        .iter()
        .find(|e| e.path == MANIFEST_PATH)
        .ok_or(ImportError::NoManifest)?;
    let manifest =
        std::str::from_utf8(&manifest.bytes).map_err(|_| ImportError::NotText(MANIFEST_PATH))?;
    let manifest = BundleManifest::from_json(manifest)?;

    let mut course_json = None;
    let mut media = Vec::new();
    for entry in entries.into_iter().filter(|e| e.path != MANIFEST_PATH) {
        manifest.verify_entry(&entry.path, &entry.bytes)?;
        if entry.path == COURSE_PATH {
            let text =
                String::from_utf8(entry.bytes).map_err(|_| ImportError::NotText(COURSE_PATH))?;
            course_json = Some(text);
        } else if MEDIA_FOLDERS.iter().any(|f| entry.path.starts_with(f)) {
            media.push((entry.path, entry.bytes));
        } else {
            return Err(ImportError::Unexpected(crate::shown(&entry.path)));
        }
    }
    for listed in &manifest.entries {
        let present = listed.path == COURSE_PATH && course_json.is_some()
            || media.iter().any(|(p, _)| *p == listed.path);
        if !present {
            return Err(ImportError::Missing(crate::shown(&listed.path)));
        }
    }
    let course_json = course_json.ok_or(BundleError::MissingCourse)?;
    check_course(&course_json)?;
    Ok(CourseFiles { course_json, media })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zip::ZipEntry;

    /// Every scene kind, slide element kind and action kind (the course crate's own fixture).
    const EVERY_KIND: &str = include_str!("../../course/tests/fixtures/photosynthesis.json");
    const EXPORTED_AT: u64 = 1_764_633_600_000;

    fn files() -> CourseFiles {
        CourseFiles {
            course_json: EVERY_KIND.to_string(),
            media: vec![
                (
                    "media/leaf.png".into(),
                    b"\x89PNG\r\n\x1a\nnot really a leaf".to_vec(),
                ),
                ("audio/s1-a01.mp3".into(), vec![7u8; 3000]),
            ],
        }
    }

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = ZipWriter::new(0);
        for (path, bytes) in entries {
            zip.add(path, bytes);
        }
        zip.finish()
    }

    fn unpacked(bundle: &[u8]) -> Vec<ZipEntry> {
        read_zip(bundle, &ZipLimits::BUNDLE).unwrap()
    }

    /// Rebuilds a bundle with one file replaced (the manifest left as it was).
    fn with_file(bundle: &[u8], path: &str, bytes: &[u8]) -> Vec<u8> {
        let mut zip = ZipWriter::new(0);
        for e in unpacked(bundle) {
            zip.add(&e.path, if e.path == path { bytes } else { &e.bytes });
        }
        zip.finish()
    }

    #[test]
    fn export_then_import_gives_the_identical_course_and_media() {
        let original = files();
        let bundle = write_bundle(&original, EXPORTED_AT, "0.1.0").unwrap();
        let back = read_bundle(&bundle, &ZipLimits::BUNDLE).unwrap();
        assert_eq!(back, original);
        // The same course, not just the same text: every scene and action kind survived.
        let a = Course::from_json(EVERY_KIND).unwrap();
        let b = Course::from_json(&back.course_json).unwrap();
        assert_eq!(a, b);
        let kinds: std::collections::BTreeSet<_> =
            b.scenes.iter().map(|s| s.content.kind_name()).collect();
        assert_eq!(
            kinds.len(),
            4,
            "the fixture has all four scene kinds: {kinds:?}"
        );
    }

    #[test]
    fn the_bundle_lists_every_file_with_its_checksum() {
        let bundle = write_bundle(&files(), EXPORTED_AT, "0.1.0").unwrap();
        let entries = unpacked(&bundle);
        let manifest = std::str::from_utf8(&entries[0].bytes).unwrap();
        let manifest = BundleManifest::from_json(manifest).unwrap();
        assert_eq!(
            manifest.course_id,
            Course::from_json(EVERY_KIND).unwrap().id
        );
        let listed: Vec<&str> = manifest.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            listed,
            ["course.json", "media/leaf.png", "audio/s1-a01.mp3"]
        );
    }

    #[test]
    fn an_invalid_course_is_never_exported() {
        let mut broken = files();
        broken.course_json = broken.course_json.replacen("\"title\"", "\"titel\"", 1);
        assert!(write_bundle(&broken, EXPORTED_AT, "0.1.0").is_err());
    }

    #[test]
    fn malformed_bundles_are_refused_with_a_clear_message() {
        let good = write_bundle(&files(), EXPORTED_AT, "0.1.0").unwrap();
        let read = |bytes: &[u8]| {
            read_bundle(bytes, &ZipLimits::BUNDLE)
                .unwrap_err()
                .to_string()
        };

        // Truncated.
        assert!(
            read(&good[..good.len() / 2]).contains("not a zip file"),
            "{}",
            read(&good[..good.len() / 2])
        );
        // Not a zip at all.
        assert!(read(EVERY_KIND.as_bytes()).contains("not a zip file"));
        // Bad JSON in the course (the manifest's checksum is fixed up so only the JSON is wrong).
        let bad_course = b"{\"format_version\": 1, \"id\": ";
        let mut m = BundleManifest::new("x", 0, "t");
        m.add_entry(COURSE_PATH, bad_course).unwrap();
        let message = read(&zip_of(&[
            (MANIFEST_PATH, m.to_json().as_bytes()),
            (COURSE_PATH, bad_course),
        ]));
        assert!(
            message.starts_with("The course in the bundle cannot be read"),
            "{message}"
        );
        // A newer bundle format.
        let newer = m
            .to_json()
            .replace("\"format_version\": 1", "\"format_version\": 99");
        let message = read(&zip_of(&[
            (MANIFEST_PATH, newer.as_bytes()),
            (COURSE_PATH, bad_course),
        ]));
        assert!(message.contains("newer Aula"), "{message}");
        // A newer course format.
        let future = EVERY_KIND.replacen("\"format_version\": 1", "\"format_version\": 7", 1);
        let mut m = BundleManifest::new("x", 0, "t");
        m.add_entry(COURSE_PATH, future.as_bytes()).unwrap();
        let message = read(&zip_of(&[
            (MANIFEST_PATH, m.to_json().as_bytes()),
            (COURSE_PATH, future.as_bytes()),
        ]));
        assert!(message.contains("newer"), "{message}");
        // A traversal path.
        let message = read(&zip_of(&[
            (MANIFEST_PATH, b"{}"),
            ("../../etc/cron.d/x", b"boom"),
        ]));
        assert!(message.contains("climbs out of its folder"), "{message}");
        // A file changed after export.
        let altered = with_file(
            &good,
            "media/leaf.png",
            b"\x89PNG\r\n\x1a\nnot really a leaf!",
        );
        assert!(read(&altered).contains("should be"));
        let same_size = with_file(
            &good,
            "media/leaf.png",
            b"\x89PNG\r\n\x1a\nnot really a lea!",
        );
        assert!(read(&same_size).contains("checksum"));
        // A file the manifest does not list, and a listed file that is missing.
        let extra = {
            let mut zip = ZipWriter::new(0);
            for e in unpacked(&good) {
                zip.add(&e.path, &e.bytes);
            }
            zip.add("media/extra.png", b"x");
            zip.finish()
        };
        assert!(read(&extra).contains("not in its manifest"));
        let missing = {
            let mut zip = ZipWriter::new(0);
            for e in unpacked(&good)
                .into_iter()
                .filter(|e| e.path != "audio/s1-a01.mp3")
            {
                zip.add(&e.path, &e.bytes);
            }
            zip.finish()
        };
        assert!(read(&missing).contains("does not hold it"));
        // No manifest: some other zip.
        assert!(read(&zip_of(&[("word/document.xml", b"<w/>")])).contains("no manifest.json"));
        // Oversized once unpacked.
        let small = ZipLimits {
            max_entries: 10,
            max_entry_bytes: 1000,
            max_total_bytes: 10_000,
        };
        assert!(read_bundle(&good, &small)
            .unwrap_err()
            .to_string()
            .contains("more than 1000 bytes"));
    }
}
