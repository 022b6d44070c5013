//! Courses as files: exporting a course (bundle, SCORM, offline page, slides, OpenMAIC) and
//! importing one. The worker writes and reads the files (`aula_export`); this module asks it,
//! saves what it imported in one write, and hands exports to the browser as downloads.
//!
//! Each export or import is one job for the files worker (`crates/files`), started on first use
//! by the same client as the AI worker (`crate::workers::file_job`, awaited): the job as JSON with the file's
//! bytes, one report back with the export's bytes. An import is checked whole in the worker, so
//! the page stores a course only when all of it is good, and the library never holds half a
//! course.

use aula_export::wire::{ExportFormat, FileJob, FileReport};
use aula_player::progress::{CompletionRule, ProgressRules};
use aula_storage::{Collection, Store};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::i18n::*;
use crate::library::{course_text, open_store};

/// The version written into exports.
const APP_VERSION: &str = env!("CARGO_PKG_VERSION");

fn unix_ms() -> u64 {
    js_sys::Date::now() as u64
}

/// Offers `bytes` as a download named `name`.
fn download(bytes: &[u8], name: &str, mime: &str) -> Result<(), String> {
    let failed = |_| "The browser did not accept the download.".to_string();
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob =
        web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(failed)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(failed)?;
    let document = leptos::prelude::document();
    let link: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(failed)?
        .unchecked_into();
    link.set_href(&url);
    link.set_download(name);
    link.click();
    // The click has started the download; the URL can go once it has been read.
    let revoke = wasm_bindgen::closure::Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    let _ = leptos::prelude::window()
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 60_000);
    Ok(())
}

/// The formats offered, in the menu's order, with their label keys.
const FORMATS: [(ExportFormat, &str, Key); 6] = [
    (ExportFormat::Bundle, "bundle", Key::export_bundle),
    (ExportFormat::Html, "html", Key::export_html),
    (ExportFormat::Scorm12, "scorm12", Key::export_scorm12),
    (ExportFormat::Scorm2004, "scorm2004", Key::export_scorm2004),
    (ExportFormat::Pptx, "pptx", Key::export_pptx),
    (ExportFormat::Maic, "maic", Key::export_maic),
];

/// "Export": a format, SCORM's reporting options, and a download; what is inside loads when the
/// panel is first opened.
#[component]
pub fn ExportPanel(course_id: String) -> impl IntoView {
    let i18n = use_i18n();
    let opened = RwSignal::new(false);
    let course_id = StoredValue::new(course_id);
    view! {
        <details class="export-panel" data-testid="export-panel" on:toggle=move |_| opened.set(true)>
            <summary>{t!(i18n, export_title)}</summary>
            {move || opened.get().then(|| crate::shell::on_first_use(export_body(course_id.get_value()), Some(Key::part_loading)))}
        </details>
    }
}

/// The export panel's inside, loaded on first use in a split build.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn export_body(course_id: String) -> AnyView {
    view! { <ExportBody course_id=course_id/> }.into_any()
}

#[component]
fn ExportBody(course_id: String) -> impl IntoView {
    let i18n = use_i18n();
    let format = RwSignal::new("bundle".to_string());
    let completion = RwSignal::new("all_scenes".to_string());
    let passing = RwSignal::new("80".to_string());
    let busy = RwSignal::new(false);
    let status = RwSignal::new(String::new());
    let failed = RwSignal::new(false);
    let course_id = StoredValue::new(course_id);
    let scorm = dyn_flag(move || !format.with(|f| f.starts_with("scorm")));

    let export = move |_| {
        let Some(chosen) = FORMATS
            .iter()
            .find(|f| format.with_untracked(|v| v == f.1))
            .map(|f| f.0)
        else {
            return;
        };
        let rules = ProgressRules {
            completion: if completion.get_untracked() == "quiz_passed" {
                CompletionRule::QuizPassed
            } else {
                CompletionRule::AllScenes
            },
            passing_percent: passing
                .get_untracked()
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|p| (1..=100).contains(p)),
        };
        busy.set(true);
        failed.set(false);
        status.set(t_string!(i18n, export_working).to_string());
        leptos::task::spawn_local(async move {
            let outcome = export_course(course_id.get_value(), chosen, rules, i18n).await;
            failed.try_set(outcome.is_err());
            status.try_set(outcome.unwrap_or_else(|e| e));
            busy.try_set(false);
        });
    };

    view! {
            <div class="export-body">
                <label>
                    <span>{t!(i18n, export_format)}</span>
                    <select data-testid="export-format" on:change=move |ev| format.set(event_target_value(&ev))>
                        {FORMATS.iter().map(|&(_, value, key)| view! { <option value=value>{i18n.tr(key)}</option> }).collect_view()}
                    </select>
                </label>
                <div class="export-scorm" prop:hidden=scorm>
                    <label>
                        <span>{t!(i18n, export_completion)}</span>
                        <select data-testid="export-completion" on:change=move |ev| completion.set(event_target_value(&ev))>
                            <option value="all_scenes">{t!(i18n, export_completion_scenes)}</option>
                            <option value="quiz_passed">{t!(i18n, export_completion_quiz)}</option>
                        </select>
                    </label>
                    <label>
                        <span>{t!(i18n, export_passing)}</span>
                        <input type="number" min="1" max="100" data-testid="export-passing" bind:value=passing/>
                    </label>
                </div>
                <button class="primary" data-testid="export-button" prop:disabled=busy on:click=export>{t!(i18n, export_button)}</button>
                <p data-testid="export-status" role="status" class:error=failed>{status}</p>
            </div>
    }
}

/// Has the worker write the course as `format` and offers the file as a download. Loaded on
/// first use in a split build, with the workers' client.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn export_course(
    id: String,
    format: ExportFormat,
    rules: ProgressRules,
    i18n: I18n,
) -> Result<String, String> {
    let Some(course) = course_text(&id).await? else {
        return Err(t_string!(i18n, classroom_missing_title).to_string());
    };
    let job = FileJob::Export {
        format,
        course,
        rules,
        exported_at: unix_ms(),
        app_version: APP_VERSION.into(),
    };
    let (report, bytes) = crate::workers::file_job(&job, None)
        .await
        .ok_or("The export stopped before it finished.")?;
    match (report.error.clone(), bytes) {
        (Some(error), _) => Err(error),
        (None, Some(bytes)) => download(&bytes, &report.file_name, &report.mime).map(|()| {
            i18n.fill(Key::export_done, &[("file", report.file_name.clone())])
                + &dropped_lines(&report)
        }),
        (None, None) => Err("The export came back empty.".into()),
    }
}

fn dropped_lines(report: &FileReport) -> String {
    report
        .dropped
        .iter()
        .map(|line| format!("\n• {line}"))
        .collect()
}

/// Reads the chosen file, has the worker check it, and saves the course in one write. Loaded on
/// first use in a split build, with the workers' client.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn import(file: web_sys::File, i18n: I18n) -> Result<String, String> {
    let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
        .await
        .map_err(|_| "The file could not be read.".to_string())?;
    let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
    let store = open_store().await.map_err(|e| e.to_string())?;
    let existing = store
        .keys(Collection::Courses)
        .await
        .map_err(|e| e.to_string())?;
    let (report, _) = crate::workers::file_job(&FileJob::Import { existing }, Some(&bytes))
        .await
        .ok_or("The import stopped before it finished.")?;
    if let Some(error) = report.error.clone() {
        return Err(error);
    }
    let Some(course) = report.course.clone() else {
        return Err("The import came back empty.".into());
    };
    store
        .put(Collection::Courses, &report.course_id, course)
        .await
        .map_err(|e| e.to_string())?;
    crate::library::keep_persistently();
    let key = if report.copied {
        Key::import_done_copy
    } else {
        Key::import_done
    };
    Ok(i18n.fill(key, &[("title", report.title.clone())]) + &dropped_lines(&report))
}

/// "Import a course": an `.aula.zip` bundle or a course `.json`.
#[component]
pub fn ImportButton(on_imported: impl Fn() + Copy + 'static) -> impl IntoView {
    let i18n = use_i18n();
    let status = RwSignal::new(String::new());
    let failed = RwSignal::new(false);
    let on_change = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        input.set_value("");
        status.set(t_string!(i18n, import_working).to_string());
        failed.set(false);
        leptos::task::spawn_local(async move {
            let outcome = import(file, i18n).await;
            failed.try_set(outcome.is_err());
            if outcome.is_ok() {
                on_imported();
            }
            status.try_set(outcome.unwrap_or_else(|e| e));
        });
    };
    view! {
        <div class="import">
            <label class="button secondary">
                {t!(i18n, import_button)}
                <input type="file" class="visually-hidden" accept=".zip,.json,application/zip,application/json" data-testid="import-file" on:change=on_change/>
            </label>
            <p data-testid="import-status" role="status" class:error=failed>{status}</p>
        </div>
    }
}
