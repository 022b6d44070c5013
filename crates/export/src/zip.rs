//! Zip archives, written and read in memory: stored or deflate entries only, no zip64, no
//! encryption. The reader is built for files from anywhere: it checks every offset against the
//! archive's length, refuses unsafe entry paths and duplicate names, and stops a zip bomb by
//! bounding the entry count, each entry's size and the total *while* inflating (declared sizes
//! are not trusted), then checks each entry's CRC-32.

use std::collections::HashSet;

use thiserror::Error;

use crate::{shown, validate_entry_path, EntryPathError};

const LOCAL_HEADER: u32 = 0x0403_4b50;
const CENTRAL_HEADER: u32 = 0x0201_4b50;
const END_OF_CENTRAL: u32 = 0x0605_4b50;
const STORED: u16 = 0;
const DEFLATE: u16 = 8;
/// General-purpose flag bit 11: names are UTF-8.
const UTF8_NAMES: u16 = 1 << 11;
/// Entries smaller than this are stored: deflate's framing would not pay for itself.
const MIN_DEFLATE_BYTES: usize = 64;

/// How much a reader accepts. Exceeding any bound stops the read with [`ZipError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipLimits {
    pub max_entries: usize,
    pub max_entry_bytes: u64,
    pub max_total_bytes: u64,
}

impl ZipLimits {
    /// Limits for a course bundle: 2,000 files, 64 MB each, 256 MB in all once unpacked.
    pub const BUNDLE: ZipLimits = ZipLimits {
        max_entries: 2_000,
        max_entry_bytes: 64 * 1024 * 1024,
        max_total_bytes: 256 * 1024 * 1024,
    };
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ZipError {
    #[error("This is not a zip file (no zip directory at its end); it may be cut short or another kind of file.")]
    NotZip,
    #[error("The zip file is cut short or damaged ({0}).")]
    Truncated(&'static str),
    #[error("The zip file uses zip64 or spans several disks; Aula reads plain zip files only.")]
    Unsupported,
    #[error("\"{0}\" is encrypted; Aula cannot open encrypted zip entries.")]
    Encrypted(String),
    #[error(
        "\"{path}\" uses compression method {method}; Aula reads stored and deflate entries only."
    )]
    Method { path: String, method: u16 },
    #[error("{0}")]
    Path(#[from] EntryPathError),
    #[error("The zip file holds \"{0}\" twice.")]
    Duplicate(String),
    #[error("The zip file holds more than {0} files.")]
    TooManyEntries(usize),
    #[error("\"{path}\" unpacks to more than {limit} bytes, more than Aula accepts for one file.")]
    EntryTooLarge { path: String, limit: u64 },
    #[error("The zip file unpacks to more than {0} bytes in all, more than Aula accepts.")]
    TotalTooLarge(u64),
    #[error("\"{0}\" cannot be unpacked; its compressed data is damaged.")]
    Corrupt(String),
    #[error("\"{0}\" does not match its CRC-32; the zip file is damaged.")]
    Crc(String),
    #[error(
        "\"{0}\" unpacks to a different size than the zip file says; the zip file is damaged."
    )]
    SizeMismatch(String),
}

/// One unpacked file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipEntry {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// Builds a zip archive in memory. Every entry gets the same modification time, so the same
/// input always gives the same bytes.
pub struct ZipWriter {
    out: Vec<u8>,
    central: Vec<u8>,
    entries: u16,
    dos_time: u16,
    dos_date: u16,
}

impl ZipWriter {
    /// `modified_unix_ms`: the time written on every entry (clamped to zip's 1980–2107 range).
    pub fn new(modified_unix_ms: u64) -> ZipWriter {
        let (dos_date, dos_time) = dos_date_time(modified_unix_ms / 1000);
        ZipWriter {
            out: Vec::new(),
            central: Vec::new(),
            entries: 0,
            dos_time,
            dos_date,
        }
    }

    /// Adds a file, deflated when that makes it smaller. Callers pass only paths they built,
    /// which [`validate_entry_path`] accepts; at most 65,535 entries of under 4 GB each.
    pub fn add(&mut self, path: &str, bytes: &[u8]) {
        let deflated = (bytes.len() >= MIN_DEFLATE_BYTES)
            .then(|| miniz_oxide::deflate::compress_to_vec(bytes, 6))
            .filter(|d| d.len() < bytes.len());
        let (method, data) = match &deflated {
            Some(d) => (DEFLATE, d.as_slice()),
            None => (STORED, bytes),
        };
        self.add_raw(path, bytes, method, data);
    }

    /// Adds a file without compressing it (zip containers such as EPUB want the first entry
    /// stored).
    pub fn add_stored(&mut self, path: &str, bytes: &[u8]) {
        self.add_raw(path, bytes, STORED, bytes);
    }

    fn add_raw(&mut self, path: &str, bytes: &[u8], method: u16, data: &[u8]) {
        let crc = crc32fast::hash(bytes);
        let offset = self.out.len() as u32;
        let name = path.as_bytes();
        let out = &mut self.out;
        put32(out, LOCAL_HEADER);
        put16(out, 20); // version needed: 2.0
        put16(out, UTF8_NAMES);
        put16(out, method);
        put16(out, self.dos_time);
        put16(out, self.dos_date);
        put32(out, crc);
        put32(out, data.len() as u32);
        put32(out, bytes.len() as u32);
        put16(out, name.len() as u16);
        put16(out, 0); // extra field length
        out.extend_from_slice(name);
        out.extend_from_slice(data);

        let c = &mut self.central;
        put32(c, CENTRAL_HEADER);
        put16(c, 0x031e); // made by: Unix, spec 3.0
        put16(c, 20);
        put16(c, UTF8_NAMES);
        put16(c, method);
        put16(c, self.dos_time);
        put16(c, self.dos_date);
        put32(c, crc);
        put32(c, data.len() as u32);
        put32(c, bytes.len() as u32);
        put16(c, name.len() as u16);
        put16(c, 0); // extra
        put16(c, 0); // comment
        put16(c, 0); // disk
        put16(c, 0); // internal attributes
        put32(c, 0o100644 << 16); // external: a regular file, rw-r--r--
        put32(c, offset);
        c.extend_from_slice(name);
        self.entries += 1;
    }

    pub fn finish(mut self) -> Vec<u8> {
        let central_offset = self.out.len() as u32;
        let central_size = self.central.len() as u32;
        self.out.append(&mut self.central);
        let out = &mut self.out;
        put32(out, END_OF_CENTRAL);
        put16(out, 0);
        put16(out, 0);
        put16(out, self.entries);
        put16(out, self.entries);
        put32(out, central_size);
        put32(out, central_offset);
        put16(out, 0); // comment length
        self.out
    }
}

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// MS-DOS date and time (2-second resolution) of a Unix time in UTC.
fn dos_date_time(unix_secs: u64) -> (u16, u16) {
    const MIN: u64 = 315_532_800; // 1980-01-01
    const MAX: u64 = 4_354_819_198; // 2107-12-31 23:59:58
    let secs = unix_secs.clamp(MIN, MAX);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let date = (((year - 1980) as u16) << 9) | ((month as u16) << 5) | day as u16;
    let time =
        (((rem / 3600) as u16) << 11) | (((rem % 3600 / 60) as u16) << 5) | (rem % 60 / 2) as u16;
    (date, time)
}

/// A bounds-checked little-endian view of the archive.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(&self, at: usize, len: usize, what: &'static str) -> Result<&'a [u8], ZipError> {
        at.checked_add(len)
            .and_then(|end| self.0.get(at..end))
            .ok_or(ZipError::Truncated(what))
    }
    fn u16(&self, at: usize, what: &'static str) -> Result<u16, ZipError> {
        let b = self.slice(at, 2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, at: usize, what: &'static str) -> Result<u32, ZipError> {
        let b = self.slice(at, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Unpacks every file of `archive` (folder entries are skipped), in the archive's order.
pub fn read_zip(archive: &[u8], limits: &ZipLimits) -> Result<Vec<ZipEntry>, ZipError> {
    let bytes = Bytes(archive);
    let end = find_end_of_central(archive)?;
    let disk = bytes.u16(end + 4, "directory end")?;
    let count = bytes.u16(end + 10, "directory end")? as usize;
    let total_count = bytes.u16(end + 8, "directory end")? as usize;
    let central_size = bytes.u32(end + 12, "directory end")? as usize;
    let central_offset = bytes.u32(end + 16, "directory end")?;
    if disk != 0 || count != total_count || central_offset == u32::MAX || count == 0xffff {
        return Err(ZipError::Unsupported);
    }
    if count > limits.max_entries {
        return Err(ZipError::TooManyEntries(limits.max_entries));
    }
    let central_offset = central_offset as usize;
    bytes.slice(central_offset, central_size, "directory")?;

    let mut entries = Vec::with_capacity(count);
    let mut names: HashSet<String> = HashSet::new();
    let mut total: u64 = 0;
    let mut at = central_offset;
    for _ in 0..count {
        if bytes.u32(at, "directory")? != CENTRAL_HEADER {
            return Err(ZipError::Truncated("directory"));
        }
        let flags = bytes.u16(at + 8, "directory")?;
        let method = bytes.u16(at + 10, "directory")?;
        let crc = bytes.u32(at + 16, "directory")?;
        let packed = bytes.u32(at + 20, "directory")?;
        let size = bytes.u32(at + 24, "directory")?;
        let name_len = bytes.u16(at + 28, "directory")? as usize;
        let extra_len = bytes.u16(at + 30, "directory")? as usize;
        let comment_len = bytes.u16(at + 32, "directory")? as usize;
        let local = bytes.u32(at + 42, "directory")?;
        let name = bytes.slice(at + 46, name_len, "directory")?;
        at += 46 + name_len + extra_len + comment_len;

        if packed == u32::MAX || size == u32::MAX || local == u32::MAX {
            return Err(ZipError::Unsupported);
        }
        let path = String::from_utf8_lossy(name).into_owned();
        if path.ends_with('/') && size == 0 {
            continue; // a folder
        }
        validate_entry_path(&path)?;
        if flags & 1 != 0 {
            return Err(ZipError::Encrypted(shown(&path)));
        }
        if method != STORED && method != DEFLATE {
            return Err(ZipError::Method {
                path: shown(&path),
                method,
            });
        }
        if !names.insert(path.to_lowercase()) {
            return Err(ZipError::Duplicate(shown(&path)));
        }
        let size = u64::from(size);
        if size > limits.max_entry_bytes {
            return Err(ZipError::EntryTooLarge {
                path: shown(&path),
                limit: limits.max_entry_bytes,
            });
        }

        let local = local as usize;
        if bytes.u32(local, "file header")? != LOCAL_HEADER {
            return Err(ZipError::Truncated("file header"));
        }
        let local_name = bytes.u16(local + 26, "file header")? as usize;
        let local_extra = bytes.u16(local + 28, "file header")? as usize;
        let data = bytes.slice(
            local + 30 + local_name + local_extra,
            packed as usize,
            "file data",
        )?;

        let room = limits
            .max_entry_bytes
            .min(limits.max_total_bytes.saturating_sub(total));
        let unpacked = match method {
            STORED => data.to_vec(),
            _ => miniz_oxide::inflate::decompress_to_vec_with_limit(data, room as usize + 1)
                .map_err(|e| match e.status {
                    miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
                        oversized(&path, total, limits)
                    }
                    _ => ZipError::Corrupt(shown(&path)),
                })?,
        };
        if unpacked.len() as u64 > room {
            return Err(oversized(&path, total, limits));
        }
        if unpacked.len() as u64 != size {
            return Err(ZipError::SizeMismatch(shown(&path)));
        }
        if crc32fast::hash(&unpacked) != crc {
            return Err(ZipError::Crc(shown(&path)));
        }
        total += size;
        entries.push(ZipEntry {
            path,
            bytes: unpacked,
        });
    }
    Ok(entries)
}

fn oversized(path: &str, total: u64, limits: &ZipLimits) -> ZipError {
    if limits.max_total_bytes.saturating_sub(total) < limits.max_entry_bytes {
        ZipError::TotalTooLarge(limits.max_total_bytes)
    } else {
        ZipError::EntryTooLarge {
            path: shown(path),
            limit: limits.max_entry_bytes,
        }
    }
}

/// The end-of-central-directory record: the last 22 bytes plus a comment of up to 64 KB.
fn find_end_of_central(archive: &[u8]) -> Result<usize, ZipError> {
    if archive.len() < 22 {
        return Err(ZipError::NotZip);
    }
    let lowest = archive.len().saturating_sub(22 + 0xffff);
    let mut at = archive.len() - 22;
    loop {
        if archive[at..at + 4] == END_OF_CENTRAL.to_le_bytes() {
            let comment = u16::from_le_bytes([archive[at + 20], archive[at + 21]]) as usize;
            if at + 22 + comment == archive.len() {
                return Ok(at);
            }
        }
        if at == lowest {
            return Err(ZipError::NotZip);
        }
        at -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut w = ZipWriter::new(1_764_633_600_000);
        w.add("course.json", br#"{"format_version":1}"#);
        w.add("media/notes.txt", "leaf ".repeat(400).as_bytes());
        w.add_stored("mimetype", b"application/x-aula");
        w.finish()
    }

    #[test]
    fn written_archives_read_back_identically() {
        let entries = read_zip(&sample(), &ZipLimits::BUNDLE).unwrap();
        let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["course.json", "media/notes.txt", "mimetype"]);
        assert_eq!(entries[1].bytes, "leaf ".repeat(400).as_bytes());
        assert_eq!(entries[2].bytes, b"application/x-aula");
    }

    #[test]
    fn repetitive_files_are_deflated_and_tiny_ones_stored() {
        let zip = sample();
        assert!(
            zip.len() < 600,
            "2,000 bytes of text should deflate: {} bytes",
            zip.len()
        );
        // The local header's method field of the first (tiny) entry.
        assert_eq!(u16::from_le_bytes([zip[8], zip[9]]), STORED);
    }

    #[test]
    fn the_same_input_gives_the_same_bytes() {
        assert_eq!(sample(), sample());
    }

    #[test]
    fn dos_dates_are_civil_dates() {
        // 2025-12-02 00:00:00 UTC.
        let (date, time) = dos_date_time(1_764_633_600);
        assert_eq!((date >> 9) + 1980, 2025);
        assert_eq!((date >> 5) & 0xf, 12);
        assert_eq!(date & 0x1f, 2);
        assert_eq!(time, 0);
        assert_eq!(dos_date_time(0), dos_date_time(315_532_800));
    }

    #[test]
    fn every_truncation_is_a_clear_error_not_a_panic() {
        let zip = sample();
        for cut in 0..zip.len() {
            assert!(
                read_zip(&zip[..cut], &ZipLimits::BUNDLE).is_err(),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn every_flipped_byte_is_caught_or_harmless() {
        let zip = sample();
        for i in 0..zip.len() {
            let mut bad = zip.clone();
            bad[i] ^= 0x55;
            // Must not panic; when it reads, what it reads passed the CRC.
            if let Ok(entries) = read_zip(&bad, &ZipLimits::BUNDLE) {
                for e in entries {
                    validate_entry_path(&e.path).unwrap();
                }
            }
        }
    }

    #[test]
    fn a_zip_bomb_stops_at_the_limit_while_inflating() {
        let mut w = ZipWriter::new(0);
        w.add("media/zeros.bin", &vec![0u8; 4 * 1024 * 1024]);
        let zip = w.finish();
        assert!(zip.len() < 20_000);
        let small = ZipLimits {
            max_entries: 10,
            max_entry_bytes: 1024 * 1024,
            max_total_bytes: 8 * 1024 * 1024,
        };
        assert!(matches!(
            read_zip(&zip, &small),
            Err(ZipError::EntryTooLarge { .. })
        ));

        // A header that lies about the size is caught while inflating, not trusted.
        let mut lying = zip.clone();
        let central = lying.len() - 22 - 46 - "media/zeros.bin".len();
        lying[central + 24..central + 28].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(
            read_zip(&lying, &small),
            Err(ZipError::EntryTooLarge { .. })
        ));

        let total = ZipLimits {
            max_entries: 10,
            max_entry_bytes: 8 * 1024 * 1024,
            max_total_bytes: 2 * 1024 * 1024,
        };
        assert!(matches!(
            read_zip(&zip, &total),
            Err(ZipError::TotalTooLarge(_))
        ));
    }

    #[test]
    fn unsafe_names_and_duplicates_are_refused() {
        let mut w = ZipWriter::new(0);
        w.add("../evil.sh", b"rm -rf");
        assert!(matches!(
            read_zip(&w.finish(), &ZipLimits::BUNDLE),
            Err(ZipError::Path(EntryPathError::ParentSegment(_)))
        ));
        let mut w = ZipWriter::new(0);
        w.add("Course.json", b"1");
        w.add("course.json", b"2");
        assert!(matches!(
            read_zip(&w.finish(), &ZipLimits::BUNDLE),
            Err(ZipError::Duplicate(_))
        ));
    }

    #[test]
    fn too_many_entries_are_refused_before_unpacking() {
        let mut w = ZipWriter::new(0);
        for i in 0..5 {
            w.add(&format!("f{i}"), b"x");
        }
        let limits = ZipLimits {
            max_entries: 4,
            ..ZipLimits::BUNDLE
        };
        assert_eq!(
            read_zip(&w.finish(), &limits),
            Err(ZipError::TooManyEntries(4))
        );
    }

    #[test]
    fn not_a_zip_says_so() {
        assert_eq!(
            read_zip(b"{\"course\": true}", &ZipLimits::BUNDLE),
            Err(ZipError::NotZip)
        );
        assert_eq!(read_zip(&[], &ZipLimits::BUNDLE), Err(ZipError::NotZip));
    }
}
