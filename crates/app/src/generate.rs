//! Course generation on the page: what the learner asked for and how far the job got, kept in
//! IndexedDB (`jobs/<course id>`, a [`GenerationFile`]) after every report, and a live view per
//! course that the progress page and the classroom both read. The work itself runs in the AI
//! worker (`aula_generation::run`), and what each report changes is decided by
//! `aula_generation::progress` (host-tested); this module starts the job, steers it, and stores
//! what that fold says to store:
//! the job record (so a reload resumes without redoing a finished task) and the course as far as
//! it is written (so the classroom plays the first scene while the rest are written).
//!
//! The home page's prompt (topic, language, who the learner is, the classmates, a PDF's text)
//! becomes a `CourseRequest`; it is stored, the job is posted, and the page shows
//! `/generate/<course id>`. Opening that page or the classroom after a reload carries on a job
//! that was cut off while writing, from the stored record ([`open`]). What the learner can do:
//!
//! - **Stop** cancels the running calls and keeps the record; **Continue writing** starts a run
//!   from it (also after an error the learner has fixed, such as a rejected key).
//! - **Retry**, **Rewrite script** and **Rewrite scene** are the same job with `redo`: the task
//!   and what depends on it are written again, in the running job or in a new run.
//! - **Edit text** changes a written scene's words by hand (`aula_generation::edit`, in the
//!   record); the course is assembled again and stored only if `Course::from_json` accepts it.
//!
//! The progress page shows a call still waiting for its first token as "Reading the prompt"
//! (the worker's `progress` reports, `run::CallPhase`), and each scene's time and tokens; the
//! elapsed time is banked in the stored file, so a reopened page keeps counting. The library
//! lists a generation with no written scene yet as "Being written" and opens its progress page.
//! The classroom shows how far the writing is and adds new scenes when the learner asks,
//! reopening the course at the same place.
//!
//! `tests/e2e/generation.test.mjs` drives all of this against mock-llm;
//! `tests/bench/generation.bench.mjs` (`cargo xtask bench`) times a 12-scene course.

use std::cell::RefCell;
use std::collections::HashMap;

use aula_generation::outline::{normalize, CourseRequest, Outline};
use aula_generation::progress::Applied;
pub use aula_generation::progress::{GenView, GenerationFile, SceneProgress, Status};
use aula_generation::wire::{GenJob, GenOp, GenReport, ReportEvent};
use aula_storage::{get_json, put_json, Collection, Store};
use leptos::prelude::*;

use crate::connection::{usable_connection, Role, Unusable};
use crate::library::open_store;
use crate::workers;

thread_local! {
    static VIEWS: RefCell<HashMap<String, RwSignal<GenView>>> = RefCell::new(HashMap::new());
    static ROOT: RefCell<Option<Owner>> = const { RefCell::new(None) };
}

/// Call once at the app's root: live views outlive the pages that show them.
pub fn provide_root() {
    ROOT.with(|r| *r.borrow_mut() = Owner::current());
}

/// The live view of a course's generation (empty until [`open`] reads it).
pub fn view_of(course_id: &str) -> RwSignal<GenView> {
    if let Some(view) = VIEWS.with(|v| v.borrow().get(course_id).copied()) {
        return view;
    }
    let make = || RwSignal::new(GenView::default());
    let view = match ROOT.with(|r| r.borrow().clone()) {
        Some(owner) => owner.with(make),
        None => make(),
    };
    VIEWS.with(|v| v.borrow_mut().insert(course_id.to_string(), view));
    view
}

pub async fn load_file(course_id: &str) -> Result<Option<GenerationFile>, String> {
    let store = open_store().await.map_err(|e| e.to_string())?;
    get_json(&store, Collection::Jobs, course_id)
        .await
        .map_err(|e| e.to_string())
}

/// Folds the time run so far into the stored file while a job runs, so a reload during a long
/// silent wait (a local model reading its prompt) keeps the clock where it was. What the clock
/// shows does not change, so nothing is notified.
pub fn checkpoint_clock(view: RwSignal<GenView>) {
    let mut file = None;
    view.update_untracked(|v| file = v.bank_clock(crate::now_ms()));
    if let Some(file) = file {
        save_file(file);
    }
}

fn save_file(file: GenerationFile) {
    crate::store::put_json_later(
        Collection::Jobs,
        file.course_id.clone(),
        file,
        "generation: progress was not saved",
    );
}

fn save_course(course_id: String, json: String, view: RwSignal<GenView>) {
    leptos::task::spawn_local(async move {
        let saved = match open_store().await {
            Ok(store) => store.put(Collection::Courses, &course_id, json).await,
            Err(error) => Err(error),
        };
        match saved {
            Ok(()) => {
                view.update(|v| v.course_version += 1);
                crate::library::keep_persistently();
            }
            Err(error) => leptos::logging::warn!("generation: the course was not saved: {error}"),
        }
    });
}

/// Why a generation cannot start, for the learner.
pub fn unusable_reason(why: Unusable) -> String {
    match why {
        Unusable::NotSetUp => "Connect an AI provider in Settings first: Aula writes courses with your own provider and key.".into(),
        Unusable::Locked => "Your AI key is locked with a passphrase. Unlock it in Settings, then try again.".into(),
        Unusable::Unreadable(error) => format!("Your AI provider settings could not be read: {error}"),
    }
}

/// Saves a new generation and starts writing its outline. Returns the new course's id.
pub async fn start_new(request: CourseRequest, review: bool) -> Result<String, String> {
    let endpoint = generation_endpoint().await?;
    let now = js_sys::Date::now() as u64;
    let file = GenerationFile::new(format!("gen-{now}"), request, now, review);
    let store = open_store().await.map_err(|e| e.to_string())?;
    put_json(&store, Collection::Jobs, &file.course_id, &file)
        .await
        .map_err(|e| e.to_string())?;
    let id = file.course_id.clone();
    launch(file, endpoint, Vec::new());
    Ok(id)
}

/// Reads a course's generation into its live view, and carries on with it if it was cut off
/// (a reload, a closed tab) while writing. Does nothing while it is running in this page.
pub async fn open(course_id: &str) -> Result<(), String> {
    let view = view_of(course_id);
    if view.with_untracked(|v| v.job.is_some()) {
        return Ok(());
    }
    // A course stored before this visit (its writing finished, or got far enough) counts as a
    // version seen: it can be opened from here. Read before the record, so that nothing is
    // awaited between reading the record and deciding on it.
    let stored = match open_store().await {
        Ok(store) => matches!(store.get(Collection::Courses, course_id).await, Ok(Some(_))),
        Err(_) => false,
    };
    let Some(file) = load_file(course_id).await? else {
        view.update(|v| v.loaded = true);
        return Ok(());
    };
    let carry_on = matches!(file.status, Status::Outlining | Status::Writing);
    view.update(|v| {
        // The page's own parts of the view (a course version seen) stay.
        *v = GenView {
            course_version: v.course_version.max(u32::from(stored)),
            ..GenView::of_file(file.clone())
        };
    });
    if carry_on && view.with_untracked(|v| v.job.is_none()) {
        let endpoint = generation_endpoint().await?;
        launch(file, endpoint, Vec::new());
    }
    Ok(())
}

/// After the learner edited the outline (or skipped editing): write the scenes.
pub async fn write_course(course_id: &str, mut outline: Outline) -> Result<(), String> {
    let view = view_of(course_id);
    let Some(mut file) = view.with_untracked(|v| v.file.clone()) else {
        return Err("This course's generation could not be found.".into());
    };
    if outline.scenes.is_empty() {
        return Err("Keep at least one scene.".into());
    }
    normalize(&mut outline, &file.request);
    file.outline = Some(outline);
    file.status = Status::Writing;
    save_file(file.clone());
    let endpoint = generation_endpoint().await?;
    launch(file, endpoint, Vec::new());
    Ok(())
}

/// Carries on a generation that was stopped (by the learner, or by an error they have since
/// fixed, such as a rejected key): from the outline if it has none, else from the record.
pub async fn carry_on(course_id: &str) -> Result<(), String> {
    let view = view_of(course_id);
    if view.with_untracked(|v| v.job.is_some()) {
        return Ok(());
    }
    let Some(mut file) = view.with_untracked(|v| v.file.clone()) else {
        return Err("This course's generation could not be found.".into());
    };
    let endpoint = generation_endpoint().await?;
    file.error.clear();
    file.status = if file.outline.is_some() {
        Status::Writing
    } else {
        Status::Outlining
    };
    save_file(file.clone());
    launch(file, endpoint, Vec::new());
    Ok(())
}

/// Stops the running generation; finished scenes stay.
pub fn cancel(course_id: &str) {
    if let Some(job) = view_of(course_id).with_untracked(|v| v.job) {
        workers::steer_generation(job, GenOp::Cancel, Vec::new());
    }
}

/// Does `task` again (and what depends on it): in the running job, or in a new run.
pub async fn redo(course_id: &str, task: String) -> Result<(), String> {
    let view = view_of(course_id);
    if let Some(job) = view.with_untracked(|v| v.job) {
        workers::steer_generation(job, GenOp::Retry, vec![task]);
        return Ok(());
    }
    let Some(mut file) = view.with_untracked(|v| v.file.clone()) else {
        return Err("This course's generation could not be found.".into());
    };
    let endpoint = generation_endpoint().await?;
    file.status = Status::Writing;
    file.error.clear();
    launch(file, endpoint, vec![task]);
    Ok(())
}

/// Replaces a written scene's words (what the teacher says, the slide's text boxes) in the
/// record and the stored course. The edited course is checked whole before anything is stored.
pub async fn edit_scene(
    course_id: &str,
    scene_id: &str,
    words: &aula_generation::edit::SceneWords,
) -> Result<(), String> {
    let view = view_of(course_id);
    if view.with_untracked(|v| v.job.is_some()) {
        return Err("Wait until the course is written, then edit it.".into());
    }
    let Some(mut file) = view.with_untracked(|v| v.file.clone()) else {
        return Err("This course's generation could not be found.".into());
    };
    aula_generation::edit::set_scene_words(&mut file.record, scene_id, words)?;
    let outline = file
        .outline
        .as_ref()
        .ok_or("This course has no outline yet.")?;
    let now = js_sys::Date::now() as u64;
    let json = aula_generation::assemble::assemble_json(
        course_id,
        &file.request,
        outline,
        &file.record,
        file.created_at,
        now,
    )
    .ok_or("This course has no written scene yet.")?;
    aula_course::Course::from_json(&json).map_err(|e| format!("The edit was not saved: {e}"))?;
    let store = open_store().await.map_err(|e| e.to_string())?;
    put_json(&store, Collection::Jobs, course_id, &file)
        .await
        .map_err(|e| e.to_string())?;
    store
        .put(Collection::Courses, course_id, json)
        .await
        .map_err(|e| e.to_string())?;
    view.update(|v| {
        v.file = Some(file);
        v.course_version += 1;
    });
    Ok(())
}

/// Where courses are written: the endpoint and the learner's limits for it.
type Writer = (aula_providers::Endpoint, aula_providers::LearnerLimits);

/// The endpoint courses are written with, or why there is none, for the learner.
async fn generation_endpoint() -> Result<Writer, String> {
    usable_connection()
        .await
        .map(|c| (c.endpoint(Role::Generation), c.limits()))
        .map_err(unusable_reason)
}

/// Starts a run in the worker from `file` and keeps the view and the stored file up to date.
/// A file without an outline whose learner wants to review the plan stops after the outline.
fn launch(file: GenerationFile, (endpoint, limits): Writer, redo: Vec<String>) {
    let outline_only = file.review && file.outline.is_none();
    let course_id = file.course_id.clone();
    let view = view_of(&course_id);
    let job = GenJob {
        op: GenOp::Generate,
        id: 0,
        endpoint: Some(endpoint),
        course_id: course_id.clone(),
        request: Some(file.request.clone()),
        outline: file.outline.clone(),
        record: file.record.clone(),
        limits,
        outline_only,
        redo,
        created_at: file.created_at,
    };
    let started = crate::now_ms();
    view.update(|v| {
        v.file = Some(file);
        v.run_started = Some(started);
        v.running.clear();
        v.loaded = true;
        if v.file.as_ref().is_some_and(|f| f.outline.is_none()) {
            v.preview.clear();
        }
    });
    let id = workers::generate(job, move |report| on_report(view, outline_only, report));
    view.update(|v| v.job = Some(id));
}

fn on_report(view: RwSignal<GenView>, outline_only: bool, report: GenReport) {
    if report.event == ReportEvent::Note {
        leptos::logging::log!("generation: {}", report.text);
    }
    let mut applied = Default::default();
    view.update(|v| applied = v.apply(&report, outline_only, crate::now_ms()));
    let Applied { save, course } = applied;
    // Most reports (a call's progress) store nothing: the file is copied only to be saved.
    if save {
        if let Some(file) = view.with_untracked(|v| v.file.clone()) {
            save_file(file);
        }
    }
    if let Some(json) = course {
        if let Some(course_id) =
            view.with_untracked(|v| v.file.as_ref().map(|f| f.course_id.clone()))
        {
            save_course(course_id, json, view);
        }
    }
}
