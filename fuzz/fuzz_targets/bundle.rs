//! The bundle importer: `aula_export::bundle::read_bundle` and `aula_export::wire::import_file`
//! (which also takes a bare course `.json`).
//!
//! An input that starts with `PK` is opened as an `.aula.zip` as it is. Any other input is
//! `course.json\0media path\0media bytes…`: it is imported as a bare course file (again under
//! a clash with its own id, which must give a valid copy), and packed into a bundle with a correct
//! manifest, which must open exactly when the course passes `check_course`, giving back the same
//! files; `write_bundle` must agree.
#![no_main]

use aula_export::bundle::{check_course, read_bundle, write_bundle, CourseFiles, MEDIA_FOLDERS};
use aula_export::wire::import_file;
use aula_export::zip::{ZipLimits, ZipWriter};
use aula_export::{BundleManifest, COURSE_PATH, MANIFEST_PATH};
use aula_fuzz::{fields, is_zip};
use libfuzzer_sys::fuzz_target;

/// The bundle `write_bundle` would write, without its check of the course.
fn packed(files: &CourseFiles) -> Vec<u8> {
    let mut manifest = BundleManifest::new("fuzz", 0, "fuzz");
    let mut zip = ZipWriter::new(0);
    manifest
        .add_entry(COURSE_PATH, files.course_json.as_bytes())
        .expect("course.json is a safe path");
    for (path, bytes) in &files.media {
        manifest
            .add_entry(path, bytes)
            .expect("only accepted media paths are packed");
    }
    zip.add(MANIFEST_PATH, manifest.to_json().as_bytes());
    zip.add(COURSE_PATH, files.course_json.as_bytes());
    for (path, bytes) in &files.media {
        zip.add(path, bytes);
    }
    zip.finish()
}

fuzz_target!(|data: &[u8]| {
    let limits = ZipLimits::BUNDLE;
    if is_zip(data) {
        let _ = read_bundle(data, &limits);
        let _ = import_file(data, &[], &limits);
        return;
    }
    let fields = fields(data);
    let Ok(course_json) = std::str::from_utf8(fields[0]) else {
        assert!(import_file(data, &[], &limits).is_err());
        return;
    };

    let checked = check_course(course_json);
    let imported = import_file(course_json.as_bytes(), &[], &limits);
    assert_eq!(
        imported.is_ok(),
        check_course(course_json.trim_start_matches('\u{feff}')).is_ok(),
        "a bare course file imports exactly when it checks (after a byte-order mark)"
    );
    if let Ok(course) = &checked {
        let copy = import_file(course_json.as_bytes(), &[course.id.clone()], &limits)
            .expect("a course whose id is taken comes in as a copy");
        assert!(copy.copied && copy.course.id != course.id);
        check_course(&copy.course_json).expect("the copy's file is a valid course");
    }

    let mut probe = BundleManifest::new("fuzz", 0, "fuzz");
    probe
        .add_entry(COURSE_PATH, b"")
        .expect("course.json is safe");
    let media: Vec<(String, Vec<u8>)> = fields[1..]
        .chunks(2)
        .filter_map(|pair| {
            let path = String::from_utf8_lossy(pair[0]).into_owned();
            let bytes = pair.get(1).copied().unwrap_or_default().to_vec();
            let in_folder = MEDIA_FOLDERS.iter().any(|f| path.starts_with(f));
            (in_folder && probe.add_entry(&path, &bytes).is_ok()).then_some((path, bytes))
        })
        .collect();
    let files = CourseFiles {
        course_json: course_json.to_string(),
        media,
    };
    let opened = read_bundle(&packed(&files), &limits);
    match (&checked, opened) {
        (Ok(_), Ok(opened)) => assert_eq!(opened, files),
        (Err(_), Err(_)) => {}
        (checked, opened) => panic!(
            "check_course says {:?} but the bundle opens as {:?}",
            checked.as_ref().map(|_| ()),
            opened.map(|_| ())
        ),
    }
    let written = write_bundle(&files, 0, "fuzz");
    assert_eq!(written.is_ok(), checked.is_ok());
    if let Ok(archive) = written {
        assert_eq!(
            read_bundle(&archive, &limits).expect("a written bundle opens"),
            files
        );
    }
});
