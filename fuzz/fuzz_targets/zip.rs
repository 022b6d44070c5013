//! `aula_export::zip::read_zip`, the reader every imported archive goes through.
//!
//! An input that starts with `PK` is read as an archive; whatever it unpacks to must survive
//! being written with `ZipWriter` and read again. Any other input is a list of files
//! (`name\0bytes\0name\0bytes…`): the names the reader would accept are written with
//! `ZipWriter`, and reading that archive must give back exactly those files.
#![no_main]

use std::collections::HashSet;

use aula_export::validate_entry_path;
use aula_export::zip::{read_zip, ZipEntry, ZipLimits, ZipWriter};
use aula_fuzz::{fields, is_zip};
use libfuzzer_sys::fuzz_target;

fn written(entries: &[ZipEntry]) -> Vec<u8> {
    let mut writer = ZipWriter::new(1_764_633_600_000);
    for entry in entries {
        writer.add(&entry.path, &entry.bytes);
    }
    writer.finish()
}

fuzz_target!(|data: &[u8]| {
    let limits = ZipLimits::BUNDLE;
    if is_zip(data) {
        if let Ok(entries) = read_zip(data, &limits) {
            let again = read_zip(&written(&entries), &limits)
                .expect("what read_zip unpacked can be written and read again");
            assert_eq!(again, entries);
        }
        return;
    }
    let mut names = HashSet::new();
    let entries: Vec<ZipEntry> = fields(data)
        .chunks(2)
        .filter_map(|pair| {
            let path = String::from_utf8_lossy(pair[0]).into_owned();
            let bytes = pair.get(1).copied().unwrap_or_default().to_vec();
            let fresh = validate_entry_path(&path).is_ok() && names.insert(path.to_lowercase());
            fresh.then_some(ZipEntry { path, bytes })
        })
        .collect();
    let read = read_zip(&written(&entries), &limits)
        .expect("an archive of safe, distinct names is read back");
    assert_eq!(read, entries);
});
