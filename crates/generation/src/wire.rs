//! A generation as a job for the AI worker: the page sends a [`GenJob`] and gets flat
//! [`GenReport`]s back (one plain struct, cheap for the page's bundle). The worker runs the
//! outline (unless the job carries one) and then the scenes; after every finished task it sends
//! the job record and the course as far as it is written, which the page stores, so a reload
//! resumes from the record and the classroom plays what is ready.

use std::num::NonZeroUsize;

use aula_providers::{Endpoint, LearnerLimits, ModelLimits};
use serde::{Deserialize, Serialize};

use crate::assemble::assemble_json;
use crate::job::JobRecord;
use crate::outline::{CourseRequest, Outline};
use crate::run::{CallPhase, GenEvent, TaskProgress};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GenOp {
    /// Write the outline (when the job has none), then the scenes (unless `outline_only`).
    Generate,
    /// Do a task again in the running job with this id.
    Retry,
    /// Stop the running job with this id.
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenJob {
    pub op: GenOp,
    pub id: u32,
    #[serde(default)]
    pub endpoint: Option<Endpoint>,
    #[serde(default)]
    pub course_id: String,
    #[serde(default)]
    pub request: Option<CourseRequest>,
    #[serde(default)]
    pub outline: Option<Outline>,
    #[serde(default)]
    pub record: JobRecord,
    /// What the learner set for this provider (context, requests at once); the worker asks the
    /// server too and plans on [`aula_providers::ModelLimits::resolve`].
    #[serde(default)]
    pub limits: LearnerLimits,
    /// Stop after the outline, so the learner can edit it.
    #[serde(default)]
    pub outline_only: bool,
    /// Tasks to do again (with `op: retry`, the one task; with `generate`, a regeneration).
    #[serde(default)]
    pub redo: Vec<String>,
    /// When the course was first created (Unix ms), kept in every version of it.
    #[serde(default)]
    pub created_at: u64,
}

impl GenJob {
    /// How many scene tasks run at once under `limits`.
    pub fn concurrency(limits: &ModelLimits) -> NonZeroUsize {
        NonZeroUsize::new(limits.parallel.clamp(1, 8) as usize).unwrap_or(NonZeroUsize::MIN)
    }
}

/// What a [`GenReport`] says happened; on the wire its snake_case name, read through a string
/// (much less code in the page than serde's enum reader).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum ReportEvent {
    /// A scene of the outline streamed in (`index`, its kind in `task`, its title in `text`).
    OutlineScene,
    /// The outline is written (`outline`).
    Outline,
    Started,
    /// A running task's call (`phase`, `tokens`, `elapsed_ms`).
    Progress,
    /// A task is done (`record`, and `course` when a scene became ready).
    Finished,
    /// A task failed (`text`, `retry_at_ms`, `record`).
    Failed,
    /// Something the developer may want to know (`text`).
    #[default]
    Note,
    Tokens,
    /// The run is over (`record`; `text` says why it stopped, `cancelled` if the learner did).
    Settled,
}

impl ReportEvent {
    const ALL: [ReportEvent; 9] = [
        ReportEvent::OutlineScene,
        ReportEvent::Outline,
        ReportEvent::Started,
        ReportEvent::Progress,
        ReportEvent::Finished,
        ReportEvent::Failed,
        ReportEvent::Note,
        ReportEvent::Tokens,
        ReportEvent::Settled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReportEvent::OutlineScene => "outline_scene",
            ReportEvent::Outline => "outline",
            ReportEvent::Started => "started",
            ReportEvent::Progress => "progress",
            ReportEvent::Finished => "finished",
            ReportEvent::Failed => "failed",
            ReportEvent::Note => "note",
            ReportEvent::Tokens => "tokens",
            ReportEvent::Settled => "settled",
        }
    }
}

impl From<ReportEvent> for &'static str {
    fn from(event: ReportEvent) -> &'static str {
        event.name()
    }
}

impl TryFrom<String> for ReportEvent {
    type Error = String;

    fn try_from(name: String) -> Result<ReportEvent, String> {
        ReportEvent::ALL
            .into_iter()
            .find(|event| event.name() == name)
            .ok_or_else(|| format!("\"{name}\" is not a generation report this Aula knows"))
    }
}

/// What the worker tells the page about a generation: one flat struct, its fields filled as the
/// event needs (see [`ReportEvent`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenReport {
    /// Always `"gen"`: tells these apart from the worker's other reports.
    pub kind: String,
    pub id: u32,
    pub event: ReportEvent,
    #[serde(default)]
    pub task: String,
    /// A scene's title, an error or a note.
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub tokens: u64,
    /// When a failed task goes again (Unix ms); 0 when it gave up.
    #[serde(default)]
    pub retry_at_ms: f64,
    /// The outline, as JSON (`outline`, and with every record).
    #[serde(default)]
    pub outline: String,
    /// The job record, as JSON (`finished`, `failed`, `settled`).
    #[serde(default)]
    pub record: String,
    /// The course as far as it is written, as its file's JSON (`finished` of a scene's last
    /// task); empty when no scene is ready yet.
    #[serde(default)]
    pub course: String,
    /// `settled`: stopped by the learner.
    #[serde(default)]
    pub cancelled: bool,
    /// `progress`: where the task's call stands, and for how long (ms) it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<CallPhase>,
    #[serde(default)]
    pub elapsed_ms: u64,
}

impl GenReport {
    pub fn new(id: u32, event: ReportEvent) -> GenReport {
        GenReport {
            kind: "gen".into(),
            id,
            event,
            ..GenReport::default()
        }
    }
}

/// The report of a running task's progress (no record needed: nothing is stored for it).
pub fn progress_report(id: u32, progress: &TaskProgress) -> GenReport {
    GenReport {
        task: progress.task.clone(),
        tokens: progress.tokens,
        phase: Some(progress.phase),
        elapsed_ms: progress.elapsed_ms,
        ..GenReport::new(id, ReportEvent::Progress)
    }
}

/// Turns a [`GenEvent`] into its report; `record` and the job's inputs fill what the page
/// stores. `now` is Unix ms.
pub fn report(
    job: &GenJob,
    request: &CourseRequest,
    outline: Option<&Outline>,
    event: &GenEvent,
    record: &JobRecord,
    now: u64,
) -> GenReport {
    let id = job.id;
    let with_record = |mut r: GenReport| {
        r.record = serde_json::to_string(record).unwrap_or_default();
        r.tokens = record.tokens_spent;
        r
    };
    match event {
        GenEvent::OutlineScene(scene) => GenReport {
            index: scene.index as u32,
            task: scene.kind.name().into(),
            text: scene.title.clone(),
            ..GenReport::new(id, ReportEvent::OutlineScene)
        },
        GenEvent::Outline(outline) => GenReport {
            outline: serde_json::to_string(outline).unwrap_or_default(),
            tokens: record.tokens_spent,
            ..GenReport::new(id, ReportEvent::Outline)
        },
        GenEvent::Started { task } => GenReport {
            task: task.clone(),
            ..GenReport::new(id, ReportEvent::Started)
        },
        GenEvent::Finished { task } => {
            let mut r = with_record(GenReport {
                task: task.clone(),
                ..GenReport::new(id, ReportEvent::Finished)
            });
            if let Some(outline) = outline {
                r.course = assemble_json(
                    &job.course_id,
                    request,
                    outline,
                    record,
                    job.created_at,
                    now,
                )
                .unwrap_or_default();
            }
            r
        }
        GenEvent::Failed {
            task,
            error,
            retry_at_ms,
        } => with_record(GenReport {
            task: task.clone(),
            text: error.clone(),
            retry_at_ms: retry_at_ms.unwrap_or(0.0),
            ..GenReport::new(id, ReportEvent::Failed)
        }),
        GenEvent::Note { task, note } => GenReport {
            task: task.clone(),
            text: note.clone(),
            ..GenReport::new(id, ReportEvent::Note)
        },
        GenEvent::Progress(progress) => progress_report(id, progress),
        GenEvent::Tokens(tokens) => GenReport {
            tokens: *tokens,
            ..GenReport::new(id, ReportEvent::Tokens)
        },
        GenEvent::Settled { cancelled, fatal } => with_record(GenReport {
            text: fatal.clone().unwrap_or_default(),
            cancelled: *cancelled,
            ..GenReport::new(id, ReportEvent::Settled)
        }),
    }
}
