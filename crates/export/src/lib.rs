//! Courses as files, both ways. The modules:
//!
//! - [`zip`]: stored and deflate archives, read with every offset checked and the entry, size
//!   and count limits enforced while inflating;
//! - [`bundle`]: the `.aula.zip` (manifest, course, media), read whole or refused;
//! - [`maic`]: OpenMAIC classroom archives both ways, listing what cannot be carried over;
//! - [`player`]: SCORM 1.2 / 2004 packages and the single offline `.html` page, which carry the
//!   player itself (the page's own files, listed by the build in `app-shell.json`);
//! - [`pptx`]: a PowerPoint deck with speaker notes, by a swappable `DeckWriter`;
//! - [`wire`]: the files worker's job and report, and import: a bundle, an OpenMAIC archive or
//!   a bare course `.json` (a course already in the library comes in as a copy).
//!
//! This file owns the bundle's manifest (which files it holds, their sizes and SHA-256
//! checksums) and the rule for safe entry paths, so that unpacking an archive from anywhere can
//! never write outside its folder or be silently altered.
//!
//! The writing and reading run in the files worker (`crates/files`), loaded on the first export
//! or import; the page uses only the wire types and the player's `PackageConfig`, so neither it
//! nor the AI worker carries the zip, PowerPoint or SCORM code. An import is checked whole in
//! the worker and the page saves the course in one IndexedDB write, so the library never holds
//! half a course.
//!
//! Pure code over bytes and strings: it must never depend on a browser type, a file system, the
//! network or an async runtime.

pub mod base64;
pub mod bundle;
pub mod maic;
pub mod package;
pub mod pptx;
pub mod wire;
pub mod zip;

use std::collections::HashSet;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// The bundle format this version writes and the newest it reads.
pub const BUNDLE_FORMAT_VERSION: u32 = 1;
pub const BUNDLE_EXTENSION: &str = ".aula.zip";
/// The manifest's own path inside the bundle; it is not listed in itself.
pub const MANIFEST_PATH: &str = "manifest.json";
/// The course document's path inside the bundle.
pub const COURSE_PATH: &str = "course.json";
/// Entry paths are short enough for every file system and zip tool.
pub const MAX_ENTRY_PATH_BYTES: usize = 240;
pub const MAX_SEGMENT_BYTES: usize = 120;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EntryPathError {
    #[error("A file in the bundle has an empty name.")]
    Empty,
    #[error("The bundle entry \"{0}\" starts with \"/\"; entries must be relative paths.")]
    Absolute(String),
    #[error("The bundle entry \"{0}\" names a drive; entries must be relative paths.")]
    DriveLetter(String),
    #[error("The bundle entry \"{0}\" uses \"\\\"; entries separate folders with \"/\".")]
    Backslash(String),
    #[error("The bundle entry \"{0}\" climbs out of its folder with \"..\".")]
    ParentSegment(String),
    #[error("The bundle entry \"{0}\" has a \".\" folder; write the path without it.")]
    CurrentSegment(String),
    #[error("The bundle entry \"{0}\" has an empty folder name (\"//\" or a trailing \"/\").")]
    EmptySegment(String),
    #[error("The bundle entry \"{0}\" contains a control character or \":\".")]
    ForbiddenCharacter(String),
    #[error("The bundle entry \"{path}\" is {bytes} bytes long; the limit is {limit}.")]
    TooLong {
        path: String,
        bytes: usize,
        limit: usize,
    },
    #[error("A folder or file name in \"{path}\" is longer than {limit} bytes.")]
    SegmentTooLong { path: String, limit: usize },
}

/// A path as shown in a message: long or hostile ones are cut.
fn shown(path: &str) -> String {
    const MAX: usize = 80;
    let clean: String = path
        .chars()
        .map(|c| if c.is_control() { '�' } else { c })
        .collect();
    if clean.chars().count() > MAX {
        clean.chars().take(MAX).collect::<String>() + "…"
    } else {
        clean
    }
}

/// Accepts only plain relative paths like `audio/s1-a02.mp3`: no absolute paths, drive letters,
/// backslashes, `..` or `.` segments, empty segments, control characters or colons, and nothing
/// over-long.
pub fn validate_entry_path(path: &str) -> Result<(), EntryPathError> {
    if path.is_empty() {
        return Err(EntryPathError::Empty);
    }
    let p = || shown(path);
    if path.len() > MAX_ENTRY_PATH_BYTES {
        return Err(EntryPathError::TooLong {
            path: p(),
            bytes: path.len(),
            limit: MAX_ENTRY_PATH_BYTES,
        });
    }
    if path.starts_with('/') {
        return Err(EntryPathError::Absolute(p()));
    }
    if path.contains('\\') {
        return Err(EntryPathError::Backslash(p()));
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(EntryPathError::DriveLetter(p()));
    }
    if path.chars().any(|c| c.is_control() || c == ':') {
        return Err(EntryPathError::ForbiddenCharacter(p()));
    }
    for segment in path.split('/') {
        match segment {
            "" => return Err(EntryPathError::EmptySegment(p())),
            "." => return Err(EntryPathError::CurrentSegment(p())),
            ".." => return Err(EntryPathError::ParentSegment(p())),
            s if s.len() > MAX_SEGMENT_BYTES => {
                return Err(EntryPathError::SegmentTooLong {
                    path: p(),
                    limit: MAX_SEGMENT_BYTES,
                })
            }
            _ => {}
        }
    }
    Ok(())
}

/// The SHA-256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestEntry {
    pub path: String,
    pub size: u64,
    /// Lowercase hex.
    pub sha256: String,
}

impl ManifestEntry {
    /// Describes the file `bytes` stored at `path`.
    pub fn describe(path: &str, bytes: &[u8]) -> Result<ManifestEntry, EntryPathError> {
        validate_entry_path(path)?;
        Ok(ManifestEntry {
            path: path.to_string(),
            size: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BundleError {
    #[error("{0}")]
    InvalidPath(#[from] EntryPathError),
    #[error("The bundle lists \"{0}\" twice (names differing only in case count as the same).")]
    DuplicateEntry(String),
    #[error("The bundle has no {COURSE_PATH}, so there is no course in it.")]
    MissingCourse,
    #[error("\"{0}\" is in the bundle but not in its manifest; the bundle may have been altered.")]
    NotListed(String),
    #[error("\"{path}\" should be {expected} bytes but is {actual}; the bundle is damaged or incomplete.")]
    SizeMismatch {
        path: String,
        expected: u64,
        actual: u64,
    },
    #[error("\"{0}\" does not match its checksum; the bundle is damaged or was altered.")]
    ChecksumMismatch(String),
    #[error("The manifest's checksum for \"{0}\" is not a SHA-256 in hex.")]
    MalformedChecksum(String),
    #[error(
        "This bundle was made by a newer Aula (bundle format {found}); this version reads up to \
         format {supported}. Update Aula to open it."
    )]
    NewerFormat { found: u32, supported: u32 },
    #[error("The bundle's manifest cannot be read: {0}")]
    UnreadableManifest(String),
}

/// `manifest.json`: what the bundle holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleManifest {
    pub format_version: u32,
    /// The course file format of `course.json`.
    pub course_format_version: u32,
    pub course_id: String,
    /// Unix time in milliseconds.
    pub exported_at: u64,
    /// The Aula version that wrote the bundle.
    pub app_version: String,
    pub entries: Vec<ManifestEntry>,
}

impl BundleManifest {
    pub fn new(course_id: &str, exported_at: u64, app_version: &str) -> BundleManifest {
        BundleManifest {
            format_version: BUNDLE_FORMAT_VERSION,
            course_format_version: aula_course::FORMAT_VERSION,
            course_id: course_id.to_string(),
            exported_at,
            app_version: app_version.to_string(),
            entries: Vec::new(),
        }
    }

    /// Lists the file `bytes` at `path`.
    pub fn add_entry(&mut self, path: &str, bytes: &[u8]) -> Result<(), BundleError> {
        let entry = ManifestEntry::describe(path, bytes)?;
        if path == MANIFEST_PATH || self.find(path).is_some() {
            return Err(BundleError::DuplicateEntry(shown(path)));
        }
        self.entries.push(entry);
        Ok(())
    }

    /// The entry at `path`, compared case-insensitively (bundles get unpacked on file systems
    /// that ignore case).
    fn find(&self, path: &str) -> Option<&ManifestEntry> {
        let wanted = path.to_lowercase();
        self.entries
            .iter()
            .find(|e| e.path.to_lowercase() == wanted)
    }

    /// Checks the manifest read from a bundle: a format this version reads, safe and unique
    /// paths, well-formed checksums, and a course.
    pub fn validate(&self) -> Result<(), BundleError> {
        if self.format_version > BUNDLE_FORMAT_VERSION {
            return Err(BundleError::NewerFormat {
                found: self.format_version,
                supported: BUNDLE_FORMAT_VERSION,
            });
        }
        let mut seen: HashSet<String> = HashSet::new();
        for entry in &self.entries {
            validate_entry_path(&entry.path)?;
            if entry.path == MANIFEST_PATH || !seen.insert(entry.path.to_lowercase()) {
                return Err(BundleError::DuplicateEntry(shown(&entry.path)));
            }
            if !is_sha256_hex(&entry.sha256) {
                return Err(BundleError::MalformedChecksum(shown(&entry.path)));
            }
        }
        if !self.entries.iter().any(|e| e.path == COURSE_PATH) {
            return Err(BundleError::MissingCourse);
        }
        Ok(())
    }

    /// Checks one unpacked file against the manifest: listed, of the right size and checksum.
    pub fn verify_entry(&self, path: &str, bytes: &[u8]) -> Result<(), BundleError> {
        let entry = self
            .entries
            .iter()
            .find(|e| e.path == path)
            .ok_or_else(|| BundleError::NotListed(shown(path)))?;
        if entry.size != bytes.len() as u64 {
            return Err(BundleError::SizeMismatch {
                path: shown(path),
                expected: entry.size,
                actual: bytes.len() as u64,
            });
        }
        if entry.sha256 != sha256_hex(bytes) {
            return Err(BundleError::ChecksumMismatch(shown(path)));
        }
        Ok(())
    }

    /// Reads and validates `manifest.json`.
    pub fn from_json(text: &str) -> Result<BundleManifest, BundleError> {
        #[derive(Deserialize)]
        struct VersionOnly {
            format_version: Option<u32>,
        }
        let unreadable = |e: serde_json::Error| BundleError::UnreadableManifest(e.to_string());
        let version: VersionOnly = serde_json::from_str(text).map_err(unreadable)?;
        if let Some(found) = version
            .format_version
            .filter(|&v| v > BUNDLE_FORMAT_VERSION)
        {
            return Err(BundleError::NewerFormat {
                found,
                supported: BUNDLE_FORMAT_VERSION,
            });
        }
        let manifest: BundleManifest = serde_json::from_str(text).map_err(unreadable)?;
        manifest.validate()?;
        Ok(manifest)
    }

    pub fn to_json(&self) -> String {
        // Plain data with string keys: serde_json has no way to fail here.
        serde_json::to_string_pretty(self).expect("a manifest always serializes")
    }
}

#[cfg(test)]
mod tests;
