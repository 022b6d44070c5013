//! The OpenMAIC importer, `aula_export::maic::import_maic`.
//!
//! An input that starts with `PK` is opened as a `.maic.zip` as it is. Any other input is
//! `manifest.json\0file path\0file bytes…`, packed into an archive first, so the manifest's JSON
//! is fuzzed without the zip in the way. A classroom that imports must be a valid course, and it
//! must export as a classroom again that imports again.
#![no_main]

use std::collections::HashSet;

use aula_export::maic::{export_maic, import_maic};
use aula_export::validate_entry_path;
use aula_export::zip::{ZipLimits, ZipWriter};
use aula_export::MANIFEST_PATH;
use aula_fuzz::{fields, is_zip};
use libfuzzer_sys::fuzz_target;

fn packed(data: &[u8]) -> Vec<u8> {
    let fields = fields(data);
    let mut zip = ZipWriter::new(0);
    zip.add(MANIFEST_PATH, fields[0]);
    let mut names = HashSet::from([MANIFEST_PATH.to_string()]);
    for pair in fields[1..].chunks(2) {
        let path = String::from_utf8_lossy(pair[0]).into_owned();
        if validate_entry_path(&path).is_ok() && names.insert(path.to_lowercase()) {
            zip.add(&path, pair.get(1).copied().unwrap_or_default());
        }
    }
    zip.finish()
}

fuzz_target!(|data: &[u8]| {
    let limits = ZipLimits::BUNDLE;
    let archive = if is_zip(data) {
        data.to_vec()
    } else {
        packed(data)
    };
    let Ok(imported) = import_maic(&archive, "fuzz-classroom", &limits) else {
        return;
    };
    imported
        .course
        .validate()
        .expect("an imported classroom is a valid course");
    let exported = export_maic(&imported.course, &imported.media, 0, "fuzz")
        .expect("an imported classroom exports again");
    let again = import_maic(&exported.archive, "fuzz-classroom-2", &limits)
        .expect("an exported classroom imports again");
    again
        .course
        .validate()
        .expect("a re-imported classroom is a valid course");
});
