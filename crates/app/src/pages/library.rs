//! The learner's library on the home page: their courses, found by a search, a language and an
//! order, each with its tools (rename, duplicate, export, delete with a moment to undo). In a
//! split build the list is a part of its own, fetched once the page has been drawn, and the
//! tools another, fetched when a card's tools are opened.

use aula_director::session::StoredRecord;
use leptos::prelude::*;

use crate::files::ImportButton;
use crate::i18n::*;
use crate::library::{load_library, CourseSummary, Made};

/// How long a deleted course can be brought back.
const UNDO_MS: u64 = 10_000;

/// The library's shared state, handed to every card's tools.
#[derive(Clone, Copy)]
struct Shelf {
    /// Reads the list again (after a change).
    reload: Callback<()>,
    /// The course just deleted: its title and everything it owned, until the undo expires.
    deleted: RwSignal<Option<(String, StoredValue<Vec<StoredRecord>>)>>,
    /// What the last action said (an error), for the library's status line.
    said: RwSignal<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    Opened,
    Title,
    Size,
}

impl Order {
    /// Which of two courses comes first (one comparison, so the page links one sort).
    fn compare(self, a: &CourseSummary, b: &CourseSummary) -> std::cmp::Ordering {
        match self {
            Order::Opened => b.opened_ms.cmp(&a.opened_ms),
            Order::Title => lower(&a.title).cmp(&lower(&b.title)),
            Order::Size => b.bytes.cmp(&a.bytes),
        }
    }

    fn parse(value: &str) -> Order {
        match value {
            "title" => Order::Title,
            "size" => Order::Size,
            _ => Order::Opened,
        }
    }
}

/// The library's frame: its heading and the import button are the page's; the list and its
/// tools are a part of their own in a split build, fetched once the page has been drawn.
#[component]
pub fn Library() -> impl IntoView {
    let i18n = use_i18n();
    // Bumped to read the list again (an import added a course).
    let version = RwSignal::new(0u32);
    let shown = RwSignal::new(false);
    // "Free up space" (Settings) opens the library with the largest courses first.
    let free_space = window().location().hash().is_ok_and(|h| h == "#free-space");
    let section = NodeRef::<leptos::html::Section>::new();
    crate::shell::after_first_paint(move || {
        shown.set(true);
        if let Some(section) = section.get_untracked().filter(|_| free_space) {
            section.scroll_into_view();
        }
    });
    view! {
        <section class="library" id="free-space" aria-labelledby="library-title" node_ref=section>
            <div class="library-head">
                <h2 id="library-title">{t!(i18n, library_title)}</h2>
                <ImportButton on_imported=move || version.update(|v| *v += 1)/>
            </div>
            {move || shown.get().then(|| crate::shell::on_first_use(
                library_body(version, free_space),
                Some(Key::library_loading),
            ))}
        </section>
    }
}

/// The list and everything it does, loaded on first use in a split build.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn library_body(version: RwSignal<u32>, free_space: bool) -> AnyView {
    view! { <LibraryBody version=version free_space=free_space/> }.into_any()
}

#[component]
fn LibraryBody(version: RwSignal<u32>, free_space: bool) -> impl IntoView {
    let i18n = use_i18n();
    let courses = LocalResource::new(move || {
        version.track();
        load_library()
    });
    // Kept here, so that reading the list again (after a change) keeps the search.
    let order = RwSignal::new(if free_space {
        Order::Size
    } else {
        Order::Opened
    });
    let query = RwSignal::new(String::new());
    let language = RwSignal::new(String::new());
    let shelf = Shelf {
        reload: Callback::new(move |()| courses.refetch()),
        deleted: RwSignal::new(None),
        said: RwSignal::new(String::new()),
    };
    view! {
        <UndoBar shelf=shelf/>
        <p class="error" role="alert" data-testid="library-error" prop:hidden=dyn_flag(move || shelf.said.with(String::is_empty))>
            {move || shelf.said.get()}
        </p>
        <Suspense fallback=move || view! { <p class="muted">{t!(i18n, library_loading)}</p> }>
            {move || Suspend::new(async move {
                match courses.await {
                    Ok(list) if list.is_empty() => view! { <EmptyLibrary/> }.into_any(),
                    Ok(list) => view! { <Shelves courses=list query=query language=language order=order shelf=shelf/> }.into_any(),
                    Err(error) => view! {
                        <p class="error" role="alert">
                            {t!(i18n, library_unavailable)} " " {error.to_string()}
                        </p>
                    }
                    .into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn EmptyLibrary() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <div class="empty-state" data-testid="library-empty">
            <div class="empty-illustration" aria-hidden="true">
                <span></span><span></span><span></span>
            </div>
            <h3>{t!(i18n, library_empty_title)}</h3>
            <p>{t!(i18n, library_empty_body)}</p>
        </div>
    }
}

/// The browser's lower case (Rust's would link its Unicode tables into the page).
fn lower(text: &str) -> String {
    String::from(js_sys::JsString::from(text).to_lower_case())
}

/// The search, language and order bar, and the courses it lets through.
#[component]
fn Shelves(
    courses: Vec<CourseSummary>,
    query: RwSignal<String>,
    language: RwSignal<String>,
    order: RwSignal<Order>,
    shelf: Shelf,
) -> impl IntoView {
    let i18n = use_i18n();
    let mut languages: Vec<String> = courses
        .iter()
        .map(|c| c.language.clone())
        .filter(|l| !l.is_empty())
        .collect();
    languages.sort();
    languages.dedup();
    let courses = StoredValue::new(courses);
    let shown = Memo::new(move |_| {
        let words = lower(query.get().trim());
        let language = language.get();
        let mut shown: Vec<CourseSummary> = courses.with_value(|all| {
            all.iter()
                .filter(|c| language.is_empty() || c.language == language)
                .filter(|c| {
                    words.is_empty()
                        || lower(&format!("{} {}", c.title, c.description)).contains(&words)
                })
                .cloned()
                .collect()
        });
        let order = order.get();
        shown.sort_by(|a, b| order.compare(a, b));
        shown
    });
    view! {
        <div class="library-filters">
            <input type="search" data-testid="library-search" aria-label=move || t_string!(i18n, library_search)
                placeholder=move || t_string!(i18n, library_search) bind:value=query/>
            <label>
                {t!(i18n, language_label)} " "
                <select data-testid="library-language" on:change=move |ev| language.set(event_target_value(&ev))>
                    <option value="">{t!(i18n, library_language_all)}</option>
                    {languages.into_iter().map(|l| {
                        let chosen = l.clone();
                        view! { <option value=l.clone() selected=move || language.with(|c| *c == chosen)>{l.clone()}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label>
                {t!(i18n, library_sort)} " "
                <select data-testid="library-sort" on:change=move |ev| order.set(Order::parse(&event_target_value(&ev)))>
                    <option value="opened" selected=move || order.get() == Order::Opened>{t!(i18n, library_sort_opened)}</option>
                    <option value="title" selected=move || order.get() == Order::Title>{t!(i18n, library_sort_title)}</option>
                    <option value="size" selected=move || order.get() == Order::Size>{t!(i18n, library_sort_size)}</option>
                </select>
            </label>
        </div>
        <p class="muted" data-testid="library-no-match" prop:hidden=dyn_flag(move || shown.with(|s| !s.is_empty()))>
            {t!(i18n, library_no_match)}
        </p>
        <ul class="course-grid" data-testid="library-list">
            <For each=move || shown.get() key=|c| (c.id.clone(), c.title.clone()) let:course>
                <LibraryCard course=course shelf=shelf/>
            </For>
        </ul>
    }
}

/// A size as a learner reads it.
fn size_text(bytes: usize) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{} KB", bytes.div_ceil(1_000)),
        _ => format!("{}.{} MB", bytes / 1_000_000, bytes % 1_000_000 / 100_000),
    }
}

#[component]
fn LibraryCard(course: CourseSummary, shelf: Shelf) -> impl IntoView {
    let i18n = use_i18n();
    // Saved courses live in IndexedDB; with the page's own files cached they play offline.
    let offline = crate::library::works_offline();
    let title = if course.title.trim().is_empty() {
        t_string!(i18n, course_untitled).to_string()
    } else {
        course.title.clone()
    };
    let (page, badge) = if course.writing {
        (
            "generate",
            Some(t_string!(i18n, library_writing).to_string()),
        )
    } else {
        (
            "classroom",
            offline.then(|| t_string!(i18n, library_offline).to_string()),
        )
    };
    let scenes = course.scene_count();
    let made = match course.made {
        Made::Here => t_string!(i18n, library_made_here),
        Made::Imported => t_string!(i18n, library_made_imported),
        Made::Copy => t_string!(i18n, library_made_copy),
    };
    let progress = match course.stopped_at {
        Some(at) => i18n.fill(
            Key::library_stopped_at,
            &[
                ("scene", (at + 1).to_string()),
                ("count", scenes.to_string()),
            ],
        ),
        None => t_string!(i18n, library_not_started).to_string(),
    };
    let opened = RwSignal::new(false);
    let id = StoredValue::new(course.id.clone());
    let shown_title = StoredValue::new(title.clone());
    let writing = course.writing;
    view! {
        <li class="course-card" data-testid="library-card" data-course=course.id.clone()>
            <a href=format!("/{page}/{}", course.id)>
                {badge.map(|b| view! { <span class="badge">{b}</span> })}
                <h3>{title.clone()}</h3>
                <p class="muted">{course.description.clone()}</p>
                <p class="meta">
                    {t!(i18n, scene_count, count = move || scenes)} " · " {made}
                    {(!writing).then(|| view! { " · " <span data-testid="card-size">{size_text(course.bytes)}</span> })}
                </p>
                {(!writing).then(|| view! { <p class="card-progress" data-testid="card-progress">{progress}</p> })}
            </a>
            <details class="card-tools" on:toggle=move |_| opened.set(true)>
                <summary data-testid="card-tools" aria-label=move || format!("{} — {}", t_string!(i18n, library_tools), shown_title.get_value())>
                    {t!(i18n, library_tools)}
                </summary>
                {move || opened.get().then(|| crate::shell::on_first_use(
                    course_tools(id.get_value(), shown_title.get_value(), writing, shelf),
                    Some(Key::part_loading),
                ))}
            </details>
        </li>
    }
}

/// A card's tools, loaded on first use in a split build.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn course_tools(id: String, title: String, writing: bool, shelf: Shelf) -> AnyView {
    view! { <CourseTools id=id title=title writing=writing shelf=shelf/> }.into_any()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tool {
    Menu,
    Rename,
    ConfirmDelete,
}

#[component]
fn CourseTools(id: String, title: String, writing: bool, shelf: Shelf) -> impl IntoView {
    let i18n = use_i18n();
    let tool = RwSignal::new(Tool::Menu);
    let busy = RwSignal::new(false);
    let new_title = RwSignal::new(title.clone());
    let id = StoredValue::new(id);
    let title = StoredValue::new(title);
    let run =
        move |job: std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>>>>| {
            busy.set(true);
            shelf.said.set(String::new());
            leptos::task::spawn_local(async move {
                let done = job.await;
                busy.try_set(false);
                match done {
                    Ok(()) => shelf.reload.run(()),
                    Err(error) => shelf.said.set(error),
                }
            });
        };
    let rename = move || {
        let chosen = new_title.get_untracked().trim().to_string();
        if chosen.is_empty() {
            shelf
                .said
                .set(t_string!(i18n, library_title_empty).to_string());
            return;
        }
        run(Box::pin(async move {
            tools::rename(&id.get_value(), &chosen).await
        }));
    };
    let duplicate = move |_| {
        let copy_title = i18n.fill(Key::library_copy_title, &[("title", title.get_value())]);
        run(Box::pin(async move {
            tools::duplicate(&id.get_value(), &copy_title).await
        }));
    };
    let delete = move |_| {
        run(Box::pin(async move {
            let records = tools::delete(&id.get_value()).await?;
            let title = title.get_value();
            let records = StoredValue::new(records);
            shelf.deleted.set(Some((title, records)));
            // The undo goes with the time, unless another deletion took its place.
            set_timeout(
                move || {
                    if shelf
                        .deleted
                        .with_untracked(|d| d.as_ref().is_some_and(|(_, r)| *r == records))
                    {
                        shelf.deleted.set(None);
                    }
                },
                std::time::Duration::from_millis(UNDO_MS),
            );
            Ok(())
        }));
    };
    view! {
        <div class="card-tools-body" data-testid="card-tools-body">
            {move || match tool.get() {
                Tool::Menu => view! {
                    <div class="tool-row">
                        {(!writing).then(|| view! {
                            <button type="button" class="secondary" data-testid="card-rename" on:click=move |_| tool.set(Tool::Rename)>{t!(i18n, library_rename)}</button>
                            <button type="button" class="secondary" data-testid="card-duplicate" prop:disabled=busy on:click=duplicate>{t!(i18n, library_duplicate)}</button>
                        })}
                        <button type="button" class="secondary danger" data-testid="card-delete" on:click=move |_| tool.set(Tool::ConfirmDelete)>{t!(i18n, library_delete)}</button>
                    </div>
                    {(!writing).then(|| view! { <crate::files::ExportPanel course_id=id.get_value()/> })}
                }
                .into_any(),
                Tool::Rename => view! {
                    <form class="tool-row" on:submit=move |ev| { ev.prevent_default(); rename(); }>
                        <label class="visually-hidden" for=format!("rename-{}", id.get_value())>{t!(i18n, library_rename_label)}</label>
                        <input id=format!("rename-{}", id.get_value()) data-testid="card-rename-input" bind:value=new_title autofocus/>
                        <button type="submit" class="primary" data-testid="card-rename-save" prop:disabled=busy>{t!(i18n, library_save)}</button>
                        <button type="button" class="secondary" on:click=move |_| tool.set(Tool::Menu)>{t!(i18n, library_cancel)}</button>
                    </form>
                }
                .into_any(),
                Tool::ConfirmDelete => view! {
                    <div class="tool-row" role="group" aria-label=move || t_string!(i18n, library_delete)>
                        <p>{t!(i18n, library_delete_confirm, title = move || title.get_value())}</p>
                        <button type="button" class="primary danger" data-testid="card-delete-confirm" prop:disabled=busy on:click=delete>{t!(i18n, library_delete_yes)}</button>
                        <button type="button" class="secondary" data-testid="card-delete-cancel" on:click=move |_| tool.set(Tool::Menu)>{t!(i18n, library_cancel)}</button>
                    </div>
                }
                .into_any(),
            }}
        </div>
    }
}

/// "Deleted — Undo" for a few seconds after a deletion.
#[component]
fn UndoBar(shelf: Shelf) -> impl IntoView {
    let i18n = use_i18n();
    let undo = move |_| {
        let Some((_, records)) = shelf.deleted.get_untracked() else {
            return;
        };
        shelf.deleted.set(None);
        leptos::task::spawn_local(async move {
            match tools::restore(&records.get_value()).await {
                Ok(()) => shelf.reload.run(()),
                Err(error) => shelf.said.set(error),
            }
        });
    };
    view! {
        <div class="undo-bar" role="status" data-testid="undo-bar" prop:hidden=dyn_flag(move || shelf.deleted.with(Option::is_none))>
            {move || shelf.deleted.with(|d| d.as_ref().map(|(title, _)| {
                let title = title.clone();
                view! { <span>{t!(i18n, library_deleted, title = move || title.clone())}</span> }
            }))}
            " "
            <button type="button" class="secondary" data-testid="undo-delete" on:click=undo>{t!(i18n, library_undo)}</button>
        </div>
    }
}

/// What the tools do to the store.
mod tools {
    use aula_director::session::{self, made_key, StoredRecord};
    use aula_storage::{put_json, Collection, Store};

    use crate::library::{open_store, MADE_COPY};

    /// Gives the course a new title.
    pub async fn rename(id: &str, title: &str) -> Result<(), String> {
        let store = open_store().await.map_err(|e| e.to_string())?;
        let mut course = read(&store, id).await?;
        course["title"] = title.into();
        store
            .put(Collection::Courses, id, course.to_string())
            .await
            .map_err(|e| e.to_string())
    }

    /// Saves a copy of the course under a new id (its conversations and progress stay with the
    /// original).
    pub async fn duplicate(id: &str, title: &str) -> Result<(), String> {
        let store = open_store().await.map_err(|e| e.to_string())?;
        let mut course = read(&store, id).await?;
        let keys = store
            .keys(Collection::Courses)
            .await
            .map_err(|e| e.to_string())?;
        let copy = (1..)
            .map(|n| format!("{id}-copy{n}"))
            .find(|k| !keys.contains(k))
            .unwrap_or_default();
        course["id"] = copy.as_str().into();
        course["title"] = title.into();
        put_json(&store, Collection::Sessions, &made_key(&copy), &MADE_COPY)
            .await
            .map_err(|e| e.to_string())?;
        store
            .put(Collection::Courses, &copy, course.to_string())
            .await
            .map_err(|e| e.to_string())
    }

    /// Deletes the course with everything it owns; what it deleted, for an undo.
    pub async fn delete(id: &str) -> Result<Vec<StoredRecord>, String> {
        let store = open_store().await.map_err(|e| e.to_string())?;
        session::delete_course(&store, id)
            .await
            .map_err(|e| e.to_string())
    }

    pub async fn restore(records: &[StoredRecord]) -> Result<(), String> {
        let store = open_store().await.map_err(|e| e.to_string())?;
        session::restore_records(&store, records)
            .await
            .map_err(|e| e.to_string())
    }

    /// The saved course as JSON, to change a field of and write back whole (fields this Aula
    /// does not know are kept).
    async fn read<S: Store>(store: &S, id: &str) -> Result<serde_json::Value, String> {
        let text = store
            .get(Collection::Courses, id)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("The course \"{id}\" is no longer in this browser."))?;
        serde_json::from_str(&text).map_err(|e| format!("The course could not be read: {e}"))
    }
}
