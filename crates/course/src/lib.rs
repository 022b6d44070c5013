//! The course: Aula's data and its file format. A [`Course`] holds its agents and its scenes
//! (slide, quiz, interactive, project); each scene has a script of [`Action`]s. This crate owns
//! the versioned JSON format, its validation, the one definition of which actions block
//! ([`Action::is_fire_and_forget`]), the one table of playback durations ([`durations`]), which
//! script a language writes in ([`language`]) and the message contract with interactive pages
//! ([`widget`]).
//!
//! It is plain data with serde and must never depend on a browser type (web-sys, leptos, gloo,
//! wasm-bindgen), an async runtime, or any other Aula crate: every other crate depends on it.

pub mod action;
pub mod agent;
pub mod durations;
mod fields;
pub mod language;
pub mod quiz;
pub mod scene;
mod validate;
pub mod widget;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use action::{Action, ActionKind, RecordedTurn};
pub use agent::{
    default_agents, default_agents_for, recast, rename_cast, speak_course_language, AgentProfile,
    AgentRole, AgentVoice,
};
pub use language::{writes_in, writes_in_all, LanguageCheck, Script};
pub use scene::{
    Frame, ProjectAgent, ProjectBriefing, ProjectConfig, ProjectIssue, Scene, SceneContent,
    SlideElement, CANVAS_HEIGHT, CANVAS_WIDTH,
};
pub use validate::{is_color, limits, ValidationIssue, NAMED_COLORS};
pub use widget::{FromWidget, ToWidget, WidgetKind, WidgetMessageError};

/// The course file format this version writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// The largest course file [`Course::from_json`] opens. Media lives beside the course, not in it.
pub const MAX_COURSE_JSON_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Course {
    pub format_version: u32,
    pub id: String,
    pub title: String,
    /// The teaching language, as a language tag such as `en` or `zh-CN`.
    pub language: String,
    #[serde(default)]
    pub description: String,
    pub agents: Vec<AgentProfile>,
    pub scenes: Vec<Scene>,
    /// Unix time in milliseconds.
    pub created_at: u64,
    /// Unix time in milliseconds.
    pub updated_at: u64,
}

/// Why a course file could not be opened.
#[derive(Debug, Error, PartialEq)]
pub enum CourseLoadError {
    #[error("This course file is {bytes} bytes; Aula opens course files up to {limit} bytes.")]
    TooLarge { bytes: usize, limit: usize },
    #[error("This is not a readable course file: {detail} (line {line}, column {column}).")]
    Unreadable {
        detail: String,
        line: usize,
        column: usize,
    },
    #[error("This file has no \"format_version\", so it is not an Aula course.")]
    MissingFormatVersion,
    #[error(
        "This course was saved by a newer Aula (format {found}); this version reads up to \
         format {supported}. Update Aula to open it."
    )]
    NewerFormat { found: u32, supported: u32 },
    #[error("The course has {} problem(s); the first is {}", .0.len(), first_issue(.0))]
    Invalid(Vec<ValidationIssue>),
}

fn first_issue(issues: &[ValidationIssue]) -> String {
    issues.first().map(ToString::to_string).unwrap_or_default()
}

fn unreadable(e: serde_json::Error) -> CourseLoadError {
    // serde_json appends " at line L column C"; the position is reported separately.
    let text = e.to_string();
    let detail = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(head, _)| head)
        .to_string();
    CourseLoadError::Unreadable {
        detail,
        line: e.line(),
        column: e.column(),
    }
}

impl Course {
    /// Parses a course file strictly (unknown fields and unknown slide element types are errors;
    /// unknown action types are kept) and validates it.
    pub fn from_json(text: &str) -> Result<Course, CourseLoadError> {
        if text.len() > MAX_COURSE_JSON_BYTES {
            return Err(CourseLoadError::TooLarge {
                bytes: text.len(),
                limit: MAX_COURSE_JSON_BYTES,
            });
        }
        // Read the version first, so a file from a newer Aula gets "update" instead of a
        // complaint about a field this version has never heard of.
        #[derive(Deserialize)]
        struct VersionOnly {
            format_version: Option<u32>,
        }
        let version: VersionOnly = serde_json::from_str(text).map_err(unreadable)?;
        match version.format_version {
            None => return Err(CourseLoadError::MissingFormatVersion),
            Some(found) if found > FORMAT_VERSION => {
                return Err(CourseLoadError::NewerFormat {
                    found,
                    supported: FORMAT_VERSION,
                })
            }
            Some(_) => {}
        }
        let course: Course = serde_json::from_str(text).map_err(unreadable)?;
        course.validate().map_err(CourseLoadError::Invalid)?;
        Ok(course)
    }

    /// The course file, pretty-printed.
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serde_json has no way to fail here.
        serde_json::to_string_pretty(self).expect("a course always serializes")
    }

    /// Every problem with this course, each with the path of the field it is about.
    pub fn validate(&self) -> Result<(), Vec<ValidationIssue>> {
        validate::validate_course(self)
    }

    pub fn agent(&self, id: &str) -> Option<&AgentProfile> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// The lead teacher, who speaks when a speech names no speaker.
    pub fn teacher(&self) -> Option<&AgentProfile> {
        self.agents.iter().find(|a| a.role == AgentRole::Teacher)
    }
}

#[cfg(test)]
mod tests;
