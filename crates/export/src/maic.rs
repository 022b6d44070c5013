//! OpenMAIC classroom archives (`.maic.zip`, format 1), read into an Aula [`Course`] and written
//! from one.
//!
//! The archive is a zip with `manifest.json` (stage, agents, scenes with their actions, and a
//! media index), narration under `audio/` and generated media under `media/`, named after the
//! `gen_img_…`/`gen_vid_…` placeholder the slide element holds. Aula's model was designed after
//! OpenMAIC's, so most fields map one to one; what one side cannot hold is listed in plain
//! language (`dropped`), never silently lost and never a panic.
//!
//! Aula writes every field in OpenMAIC's own form. Where the OpenMAIC form cannot say all that
//! Aula knows (a speech's speaker, an image's alt text, a recorded discussion), the object also
//! carries the Aula original under an `"aula"` key, which OpenMAIC ignores. On import that
//! original is used only while the OpenMAIC fields are still exactly what Aula wrote for it, so
//! an edit made in OpenMAIC always wins over the stale copy.

mod action;
mod content;
mod element;
mod read;
mod text;
mod write;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use aula_course::{Course, ValidationIssue};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::zip::ZipError;
use crate::EntryPathError;

pub use read::import_maic;
pub use write::export_maic;

/// The classroom archive format this version reads and writes.
pub const MAIC_FORMAT_VERSION: u64 = 1;
pub const MAIC_EXTENSION: &str = ".maic.zip";
/// The key under which an object carries its Aula original.
const AULA_KEY: &str = "aula";

/// A classroom read from an OpenMAIC archive.
#[derive(Debug, Clone, PartialEq)]
pub struct MaicImport {
    /// Passes [`Course::validate`].
    pub course: Course,
    /// The media the course refers to, by their path in Aula's bundle (`media/…`, `audio/…`).
    pub media: Vec<(String, Vec<u8>)>,
    /// One plain-language line per thing that could not be carried over.
    pub dropped: Vec<String>,
}

/// A course written as an OpenMAIC archive.
#[derive(Debug, Clone, PartialEq)]
pub struct MaicExport {
    /// The `.maic.zip` bytes.
    pub archive: Vec<u8>,
    /// What is not in the archive at all (e.g. a media file the course names but that was not
    /// supplied).
    pub dropped: Vec<String>,
    /// What OpenMAIC will not show or use, though Aula reads it back (kept under `"aula"`).
    pub aula_only: Vec<String>,
}

#[derive(Debug, Error, PartialEq)]
pub enum MaicError {
    #[error("This file is not a zip archive, so it is not an OpenMAIC classroom (.maic.zip). It may be cut short or another kind of file.")]
    NotZip,
    #[error("The classroom archive cannot be read: {0}")]
    Zip(ZipError),
    #[error("This zip has no manifest.json at its top level, so it is not an OpenMAIC classroom export.{}", if *.aula_bundle { " It looks like an Aula course bundle (.aula.zip): open it with Import course instead." } else { "" })]
    NoManifest { aula_bundle: bool },
    #[error("manifest.json is not valid JSON: {detail} (line {line}, column {column}). The archive is damaged; export the classroom from OpenMAIC again.")]
    BadJson {
        detail: String,
        line: usize,
        column: usize,
    },
    #[error("manifest.json: `{path}` {problem}. The archive is damaged or not from OpenMAIC.")]
    BadManifest { path: String, problem: String },
    #[error("This classroom was exported by a newer OpenMAIC (archive format {found}); Aula reads format {supported}. Update Aula, or export the classroom from an OpenMAIC that writes format {supported}.")]
    NewerFormat { found: u64, supported: u64 },
    #[error(
        "manifest.json: `{path}` names an unsafe file path, so nothing was imported: {source}"
    )]
    UnsafePath {
        path: String,
        source: EntryPathError,
    },
    #[error("Nothing in this classroom could be imported: {0}")]
    NothingImportable(String),
    #[error("The imported classroom still has {} problem(s) Aula cannot repair; the first is {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Invalid(Vec<ValidationIssue>),
    #[error("The course media file \"{path}\" cannot be written into the archive: {source}")]
    UnsafeMediaPath {
        path: String,
        source: EntryPathError,
    },
}

impl From<ZipError> for MaicError {
    fn from(e: ZipError) -> Self {
        match e {
            ZipError::NotZip => MaicError::NotZip,
            other => MaicError::Zip(other),
        }
    }
}

type Obj = Map<String, Value>;

fn get_str<'a>(o: &'a Obj, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// A string field, empty when absent or not a string.
fn str_or_empty(o: &Obj, key: &str) -> String {
    get_str(o, key).unwrap_or_default().to_string()
}

fn get_f64(o: &Obj, key: &str) -> Option<f64> {
    o.get(key).and_then(Value::as_f64).filter(|v| v.is_finite())
}

fn get_bool(o: &Obj, key: &str) -> bool {
    o.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn get_obj<'a>(o: &'a Obj, key: &str) -> Option<&'a Obj> {
    o.get(key).and_then(Value::as_object)
}

fn get_array<'a>(o: &'a Obj, key: &str) -> &'a [Value] {
    o.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Whether two JSON values say the same, reading numbers by value (`1` and `1.0` are the same
/// number, as JavaScript writes it back).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// `native` without its `"aula"` key, and the Aula original stored there.
fn split_aula(native: &Obj) -> (Value, Option<&Value>) {
    let mut plain = native.clone();
    let original = native.get(AULA_KEY);
    plain.remove(AULA_KEY);
    (Value::Object(plain), original)
}

/// What a conversion needs to know about the rest of the classroom, in both directions.
///
/// Aula media paths are written as OpenMAIC references (a placeholder for slide media, the zip
/// path for narration); agents are referred to by their place in the manifest's list.
#[derive(Debug, Default)]
struct Links {
    /// Aula media path → OpenMAIC reference.
    native_ref: HashMap<String, String>,
    /// OpenMAIC reference → Aula media path.
    aula_path: HashMap<String, String>,
    /// Aula agent id → index in the manifest's agents.
    agent_index: HashMap<String, usize>,
    /// Index in the manifest's agents → Aula agent id.
    agent_ids: Vec<String>,
    /// Agent ids the manifest names (an `id` Aula writes beside each agent) → Aula agent id.
    agent_renamed: HashMap<String, String>,
}

impl Links {
    fn native_src(&self, aula_src: &str) -> String {
        self.native_ref
            .get(aula_src)
            .cloned()
            .unwrap_or_else(|| aula_src.to_string())
    }

    fn agent_by_index(&self, index: usize) -> Option<String> {
        self.agent_ids.get(index).cloned()
    }
}

/// Resolves what an OpenMAIC object points at while it is turned into Aula's form: media
/// references (carrying the files along on import) and agents.
trait Resolve {
    /// The Aula source for an element's `src`, or why there is none.
    fn media(&mut self, src: &str, element_id: &str) -> Result<String, String>;
    /// The Aula path of the poster stored beside the generated video `placeholder`.
    fn poster(&mut self, placeholder: &str) -> Option<String>;
    /// The Aula path of the narration file at `audio_ref`.
    fn audio(&mut self, audio_ref: &str) -> Option<String>;
    fn links(&self) -> &Links;
}

/// Resolves against [`Links`] alone: what an archive written from these links would read back as.
struct LinksOnly<'a>(&'a Links);

impl Resolve for LinksOnly<'_> {
    fn media(&mut self, src: &str, _element_id: &str) -> Result<String, String> {
        Ok(self
            .0
            .aula_path
            .get(src)
            .cloned()
            .unwrap_or_else(|| src.to_string()))
    }
    fn poster(&mut self, placeholder: &str) -> Option<String> {
        self.0
            .aula_path
            .get(&format!("{placeholder}{POSTER_SUFFIX}"))
            .cloned()
    }
    fn audio(&mut self, audio_ref: &str) -> Option<String> {
        self.0.aula_path.get(audio_ref).cloned()
    }
    fn links(&self) -> &Links {
        self.0
    }
}

/// How a video's poster is keyed in [`Links`]: its video's placeholder plus this.
const POSTER_SUFFIX: &str = "#poster";

/// Collects lines for `dropped`, each prefixed with where it happened.
struct Notes<'a> {
    at: String,
    out: &'a mut Vec<String>,
}

impl Notes<'_> {
    fn add(&mut self, what: impl AsRef<str>) {
        self.out.push(format!("{}: {}", self.at, what.as_ref()));
    }
}

/// Collapses repeated lines into one with a count, keeping first-seen order.
fn tally(lines: Vec<String>) -> Vec<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for line in lines {
        match counts.iter_mut().find(|(l, _)| *l == line) {
            Some((_, n)) => *n += 1,
            None => counts.push((line, 1)),
        }
    }
    counts
        .into_iter()
        .map(|(line, n)| {
            if n == 1 {
                line
            } else {
                format!("{line} (×{n})")
            }
        })
        .collect()
}

/// `Scene 3 "Photosynthesis game"`, as notes name a scene.
fn scene_label(number: usize, title: &str) -> String {
    format!("Scene {number} \"{title}\"")
}
