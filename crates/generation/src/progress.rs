//! A generation as the page keeps it: the stored [`GenerationFile`] (`jobs/<course id>`) and the
//! live [`GenView`] that the progress page and the classroom read, folded from the worker's
//! [`GenReport`]s by [`GenView::apply`]. Pure and host-tested: the page's `generate.rs` stores
//! what `apply` says to store and shows what the view holds.
//!
//! A scene's state on the progress page ([`SceneProgress`]) is its [`SceneState`] in the job
//! record, refined by what runs now: a task of it that is running is `Writing`, and one whose
//! call the model has not started answering (reading its prompt, or queued at a server with one
//! slot) is `Thinking`. The states follow from the outline and the record alone, so a progress
//! page reopened after a reload shows the same states as the page that wrote them.

use serde::{Deserialize, Serialize};

use crate::assemble::{scene_states, SceneState};
use crate::job::JobRecord;
use crate::outline::{CourseRequest, Outline};
use crate::run::CallPhase;
use crate::wire::{GenReport, ReportEvent};

/// Where a generation stands, as saved: its snake_case name, read through a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Status {
    /// The outline is being written.
    #[default]
    Outlining,
    /// The outline waits for the learner's edits.
    Reviewing,
    /// Scenes are being written.
    Writing,
    /// Nothing is running: every scene is ready, or some failed and wait for a retry.
    Settled,
    /// Stopped by the learner or by an error; it can go on from the record.
    Stopped,
}

impl Status {
    /// The status's name, as stored (for `data-status`).
    pub fn name(self) -> &'static str {
        match self {
            Status::Outlining => "outlining",
            Status::Reviewing => "reviewing",
            Status::Writing => "writing",
            Status::Settled => "settled",
            Status::Stopped => "stopped",
        }
    }
}

impl From<Status> for &'static str {
    fn from(status: Status) -> &'static str {
        status.name()
    }
}

impl TryFrom<String> for Status {
    type Error = String;

    fn try_from(name: String) -> Result<Status, String> {
        [
            Status::Outlining,
            Status::Reviewing,
            Status::Writing,
            Status::Settled,
            Status::Stopped,
        ]
        .into_iter()
        .find(|status| status.name() == name)
        .ok_or_else(|| format!("\"{name}\" is not a generation status this Aula knows"))
    }
}

/// A generation as stored in the `jobs` collection under its course's id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerationFile {
    pub course_id: String,
    pub request: CourseRequest,
    #[serde(default)]
    pub outline: Option<Outline>,
    #[serde(default)]
    pub record: JobRecord,
    /// Unix ms.
    pub created_at: u64,
    #[serde(default)]
    pub status: Status,
    /// Why it stopped, when an error stopped it.
    #[serde(default)]
    pub error: String,
    /// Time spent generating in earlier visits.
    #[serde(default)]
    pub elapsed_ms: f64,
    /// The learner wants to edit the outline before the scenes are written.
    #[serde(default)]
    pub review: bool,
}

impl GenerationFile {
    /// A new generation of `request`, its outline still to be written.
    pub fn new(course_id: String, request: CourseRequest, created_at: u64, review: bool) -> Self {
        GenerationFile {
            course_id,
            request,
            outline: None,
            record: JobRecord::default(),
            created_at,
            status: Status::Outlining,
            error: String::new(),
            elapsed_ms: 0.0,
            review,
        }
    }
}

/// A scene's state on the progress page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SceneProgress {
    Waiting,
    /// A call of it waits for the model's first token.
    Thinking,
    /// A task of it is running.
    Writing,
    /// Its content is written, its script is not, and nothing of it runs.
    Scripting,
    Ready,
    Failed,
}

impl SceneProgress {
    /// The name the page gives it (`data-state`, the badge's class).
    pub fn name(self) -> &'static str {
        match self {
            SceneProgress::Waiting => "waiting",
            SceneProgress::Thinking => "thinking",
            SceneProgress::Writing => "writing",
            SceneProgress::Scripting => "scripting",
            SceneProgress::Ready => "ready",
            SceneProgress::Failed => "failed",
        }
    }
}

/// A running task's call: its task, phase, tokens so far and ms since it was sent.
pub type LiveCall = (String, CallPhase, u64, u64);

/// What the progress page and the classroom show of one course's generation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenView {
    pub file: Option<GenerationFile>,
    /// Scenes seen while the outline streams: (kind, title).
    pub preview: Vec<(String, String)>,
    /// Each outline scene's state in the record, in order.
    pub states: Vec<SceneState>,
    /// Tasks running now.
    pub running: Vec<String>,
    /// How each running task's call is going.
    pub live: Vec<LiveCall>,
    pub tokens: u64,
    /// The worker's job, while one runs.
    pub job: Option<u32>,
    /// Page time when this visit's run started.
    pub run_started: Option<f64>,
    /// Bumped every time a new version of the course is stored.
    pub course_version: u32,
    pub loaded: bool,
}

/// What the page does after [`GenView::apply`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    /// Store the view's file.
    pub save: bool,
    /// Store this course file (its JSON text) under the file's course id.
    pub course: Option<String>,
}

impl GenView {
    /// The view of a stored file, before anything runs.
    pub fn of_file(file: GenerationFile) -> GenView {
        let mut view = GenView {
            tokens: file.record.tokens_spent,
            file: Some(file),
            loaded: true,
            ..GenView::default()
        };
        view.refresh_states();
        view
    }

    /// Scenes ready to play.
    pub fn ready(&self) -> usize {
        self.states
            .iter()
            .filter(|s| **s == SceneState::Ready)
            .count()
    }

    /// Some scene gave up and waits for a retry.
    pub fn any_failed(&self) -> bool {
        self.states.contains(&SceneState::Failed)
    }

    pub fn status(&self) -> Status {
        self.file.as_ref().map(|f| f.status).unwrap_or_default()
    }

    pub fn error(&self) -> &str {
        self.file.as_ref().map(|f| f.error.as_str()).unwrap_or("")
    }

    fn scene_id(&self, i: usize) -> Option<&str> {
        let scene = self.file.as_ref()?.outline.as_ref()?.scenes.get(i)?;
        Some(&scene.id)
    }

    /// The state of scene `i` on the progress page.
    pub fn scene_progress(&self, i: usize) -> SceneProgress {
        let state = self.states.get(i).copied().unwrap_or(SceneState::Waiting);
        if state == SceneState::Ready {
            return SceneProgress::Ready;
        }
        if let Some((_, phase, ..)) = self.live_call(i) {
            return match phase {
                CallPhase::Waiting => SceneProgress::Thinking,
                CallPhase::Writing => SceneProgress::Writing,
            };
        }
        let prefix = self.scene_id(i).map(|id| format!("{id}/"));
        let running = prefix.is_some_and(|p| self.running.iter().any(|t| t.starts_with(&p)));
        match state {
            _ if running => SceneProgress::Writing,
            SceneState::Waiting => SceneProgress::Waiting,
            SceneState::Scripting => SceneProgress::Scripting,
            SceneState::Ready => SceneProgress::Ready,
            SceneState::Failed => SceneProgress::Failed,
        }
    }

    /// The running call of scene `i`, if one runs.
    pub fn live_call(&self, i: usize) -> Option<&LiveCall> {
        let prefix = format!("{}/", self.scene_id(i)?);
        self.live
            .iter()
            .find(|(task, ..)| task.starts_with(&prefix))
    }

    /// Time spent generating, this visit's run included (`now` in page ms).
    pub fn elapsed_ms(&self, now: f64) -> f64 {
        let before = self.file.as_ref().map(|f| f.elapsed_ms).unwrap_or(0.0);
        before + self.run_started.map(|s| now - s).unwrap_or(0.0)
    }

    /// Banks the time run so far in the file while a job runs, so a reload keeps the clock
    /// where it was; the file to store, if anything ran.
    pub fn bank_clock(&mut self, now: f64) -> Option<GenerationFile> {
        self.bank(now).then(|| self.file.clone()).flatten()
    }

    fn bank(&mut self, now: f64) -> bool {
        let (Some(_), Some(started), Some(file)) = (&self.job, self.run_started, &mut self.file)
        else {
            return false;
        };
        file.elapsed_ms += now - started;
        self.run_started = Some(now);
        true
    }

    fn refresh_states(&mut self) {
        self.states = match &self.file {
            Some(GenerationFile {
                outline: Some(outline),
                record,
                ..
            }) => scene_states(outline, record),
            _ => Vec::new(),
        };
    }

    /// Folds one report of the running job in (`now` in page ms). A job that stops after its
    /// outline (`outline_only`) leaves the file reviewing.
    pub fn apply(&mut self, report: &GenReport, outline_only: bool, now: f64) -> Applied {
        let mut applied = Applied::default();
        let Some(file) = self.file.as_mut() else {
            return applied;
        };
        // A part the worker wrote that does not read is left out; what was there stays.
        let mut changed = false;
        if !report.record.is_empty() {
            if let Ok(record) = serde_json::from_str::<JobRecord>(&report.record) {
                file.record = record;
                changed = true;
            }
        }
        match report.event {
            ReportEvent::OutlineScene => self
                .preview
                .push((report.task.clone(), report.text.clone())),
            ReportEvent::Outline => {
                if let Ok(outline) = serde_json::from_str::<Outline>(&report.outline) {
                    file.outline = Some(outline);
                    changed = true;
                    file.record.tokens_spent = report.tokens;
                    file.status = if outline_only {
                        Status::Reviewing
                    } else {
                        Status::Writing
                    };
                    applied.save = true;
                }
            }
            ReportEvent::Started => self.running.push(report.task.clone()),
            ReportEvent::Progress => {
                if let Some(phase) = report.phase {
                    self.live.retain(|(task, ..)| *task != report.task);
                    self.live
                        .push((report.task.clone(), phase, report.tokens, report.elapsed_ms));
                }
            }
            ReportEvent::Finished | ReportEvent::Failed => {
                self.running.retain(|t| *t != report.task);
                self.live.retain(|(task, ..)| *task != report.task);
                applied.save = true;
                if !report.course.is_empty() {
                    applied.course = Some(report.course.clone());
                }
            }
            ReportEvent::Note | ReportEvent::Tokens => {}
            ReportEvent::Settled => {
                self.running.clear();
                self.live.clear();
                self.job = None;
                file.elapsed_ms += self.run_started.take().map(|s| now - s).unwrap_or(0.0);
                if !report.text.is_empty() {
                    file.status = Status::Stopped;
                    file.error = report.text.clone();
                } else if report.cancelled {
                    file.status = Status::Stopped;
                } else if file.status != Status::Reviewing {
                    file.status = Status::Settled;
                    file.error.clear();
                }
                applied.save = true;
            }
        }
        if report.tokens > 0 && report.event != ReportEvent::Progress {
            self.tokens = report.tokens;
        }
        // The time so far goes into the file with every save, so the clock carries on from
        // there after a reload instead of starting again.
        if applied.save {
            self.bank(now);
        }
        // The states follow from the outline and the record: a call's progress changes neither.
        if changed {
            self.refresh_states();
        }
        applied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{actions_task, content_task};

    fn request() -> CourseRequest {
        serde_json::from_value(
            serde_json::json!({"topic": "Tides", "language": "en", "agents": []}),
        )
        .unwrap()
    }

    fn outline() -> Outline {
        serde_json::from_value(serde_json::json!({
            "title": "Tides",
            "scenes": [
                {"id": "s1", "kind": "slide", "title": "Why the sea rises"},
                {"id": "s2", "kind": "quiz", "title": "Check"}
            ]
        }))
        .unwrap()
    }

    fn running_view() -> GenView {
        let mut view = GenView::of_file(GenerationFile::new("gen-1".into(), request(), 5, false));
        view.job = Some(7);
        view.run_started = Some(1_000.0);
        view
    }

    fn report(event: ReportEvent) -> GenReport {
        GenReport {
            event,
            ..GenReport::new(7, ReportEvent::Note)
        }
    }

    fn record_with(finished: &[&str], failed: &[&str]) -> String {
        let mut record = JobRecord::default();
        for task in finished {
            record.finished.insert((*task).to_owned(), "{}".into());
        }
        for task in failed {
            record
                .failed
                .insert((*task).to_owned(), "rate limited".into());
        }
        serde_json::to_string(&record).unwrap()
    }

    #[test]
    fn the_outline_sets_every_scene_waiting_and_is_saved_with_the_time_so_far() {
        let mut view = running_view();
        let applied = view.apply(
            &GenReport {
                outline: serde_json::to_string(&outline()).unwrap(),
                tokens: 120,
                ..report(ReportEvent::Outline)
            },
            false,
            4_000.0,
        );
        assert!(applied.save && applied.course.is_none());
        assert_eq!(view.states, [SceneState::Waiting, SceneState::Waiting]);
        assert_eq!(view.status(), Status::Writing);
        assert_eq!(view.tokens, 120);
        let file = view.file.as_ref().unwrap();
        assert_eq!(file.elapsed_ms, 3_000.0);
        assert_eq!(view.run_started, Some(4_000.0));

        let mut reviewing = running_view();
        reviewing.apply(
            &GenReport {
                outline: serde_json::to_string(&outline()).unwrap(),
                ..report(ReportEvent::Outline)
            },
            true,
            2_000.0,
        );
        assert_eq!(reviewing.status(), Status::Reviewing);
    }

    #[test]
    fn a_scene_is_thinking_then_writing_then_scripting_then_ready() {
        let mut view = running_view();
        view.file.as_mut().unwrap().outline = Some(outline());
        let content = content_task("s1");
        let actions = actions_task("s1");
        view.apply(
            &GenReport {
                task: content.clone(),
                ..report(ReportEvent::Started)
            },
            false,
            1.0,
        );
        assert_eq!(view.scene_progress(0), SceneProgress::Writing);
        assert_eq!(view.scene_progress(1), SceneProgress::Waiting);
        view.apply(
            &GenReport {
                task: content.clone(),
                phase: Some(CallPhase::Waiting),
                tokens: 0,
                elapsed_ms: 900,
                ..report(ReportEvent::Progress)
            },
            false,
            1.0,
        );
        assert_eq!(view.scene_progress(0), SceneProgress::Thinking);
        assert_eq!(view.live_call(0).map(|c| c.3), Some(900));
        view.apply(
            &GenReport {
                task: content.clone(),
                record: record_with(&[&content], &[]),
                ..report(ReportEvent::Finished)
            },
            false,
            1.0,
        );
        assert_eq!(view.scene_progress(0), SceneProgress::Scripting);
        assert!(view.live.is_empty() && view.running.is_empty());
        let applied = view.apply(
            &GenReport {
                task: actions.clone(),
                record: record_with(&[&content, &actions], &[]),
                course: "{\"id\":\"gen-1\"}".into(),
                ..report(ReportEvent::Finished)
            },
            false,
            1.0,
        );
        assert_eq!(applied.course.as_deref(), Some("{\"id\":\"gen-1\"}"));
        assert_eq!(view.scene_progress(0), SceneProgress::Ready);
        assert_eq!(view.ready(), 1);
        assert!(!view.any_failed());
    }

    #[test]
    fn settling_says_how_the_run_ended() {
        let failed = content_task("s2");
        let mut view = running_view();
        view.file.as_mut().unwrap().outline = Some(outline());
        view.apply(
            &GenReport {
                task: failed.clone(),
                record: record_with(&[], &[&failed]),
                ..report(ReportEvent::Failed)
            },
            false,
            1.0,
        );
        assert!(view.any_failed());
        assert_eq!(view.scene_progress(1), SceneProgress::Failed);
        let applied = view.apply(&report(ReportEvent::Settled), false, 3_000.0);
        assert!(applied.save);
        assert_eq!(view.status(), Status::Settled);
        assert_eq!(view.job, None);
        assert_eq!(view.elapsed_ms(9_999.0), 2_000.0, "the clock stopped");

        let mut stopped = running_view();
        stopped.apply(
            &GenReport {
                text: "The provider rejected the key.".into(),
                ..report(ReportEvent::Settled)
            },
            false,
            1.0,
        );
        assert_eq!(stopped.status(), Status::Stopped);
        assert_eq!(stopped.error(), "The provider rejected the key.");

        let mut cancelled = running_view();
        cancelled.apply(
            &GenReport {
                cancelled: true,
                ..report(ReportEvent::Settled)
            },
            false,
            1.0,
        );
        assert_eq!(cancelled.status(), Status::Stopped);
    }

    #[test]
    fn a_reopened_file_shows_the_states_its_record_says() {
        let mut file = GenerationFile::new("gen-1".into(), request(), 5, false);
        file.outline = Some(outline());
        file.record = serde_json::from_str(&record_with(
            &[&content_task("s1"), &actions_task("s1")],
            &[],
        ))
        .unwrap();
        file.status = Status::Settled;
        let view = GenView::of_file(file);
        assert_eq!(view.ready(), 1);
        assert_eq!(view.scene_progress(0), SceneProgress::Ready);
        assert_eq!(view.scene_progress(1), SceneProgress::Waiting);
    }

    #[test]
    fn statuses_and_report_events_are_stored_by_name() {
        for status in [
            Status::Outlining,
            Status::Reviewing,
            Status::Writing,
            Status::Settled,
            Status::Stopped,
        ] {
            let text = serde_json::to_string(&status).unwrap();
            assert_eq!(text, format!("\"{}\"", status.name()));
            assert_eq!(serde_json::from_str::<Status>(&text).unwrap(), status);
        }
        assert!(serde_json::from_str::<Status>("\"paused\"").is_err());
        let report = GenReport::new(3, ReportEvent::OutlineScene);
        let text = serde_json::to_string(&report).unwrap();
        assert!(text.contains("\"event\":\"outline_scene\""), "{text}");
        assert_eq!(serde_json::from_str::<GenReport>(&text).unwrap(), report);
        let unknown = text.replace("outline_scene", "telepathy");
        assert!(serde_json::from_str::<GenReport>(&unknown).is_err());
    }

    #[test]
    fn a_report_that_does_not_read_changes_nothing_it_carried() {
        let mut view = running_view();
        let applied = view.apply(
            &GenReport {
                outline: "{not json".into(),
                record: "[1".into(),
                ..report(ReportEvent::Outline)
            },
            false,
            1.0,
        );
        assert!(!applied.save);
        assert!(view.file.as_ref().unwrap().outline.is_none());
        assert_eq!(view.status(), Status::Outlining);
    }
}
