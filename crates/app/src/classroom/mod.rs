//! The classroom: a course played by its teacher and classmates.

mod ask;
mod canvas;
mod class_log;
mod controls;
mod lecture;
mod quiz;
mod speech;
mod typeset;
mod voice_input;

use aula_course::{Course, SceneContent};
use aula_player::{Command, PlayState};
use aula_render::markdown_to_html;
use leptos::prelude::*;

use crate::i18n::*;
use crate::library::load_course;
use canvas::SlideCanvas;
use controls::{CaptionBar, ControlBar, Roundtable, SceneList};
pub use lecture::Lecture;
use quiz::QuizView;

#[component]
pub fn ClassroomPage(id: String) -> impl IntoView {
    let i18n = use_i18n();
    // Bumped to open the course again when a generation has added scenes to it.
    let version = RwSignal::new(0u32);
    let course = LocalResource::new(move || {
        let id = id.clone();
        version.track();
        async move { load_course(&id).await }
    });
    view! {
        <Suspense fallback=move || view! { <p class="muted">{t!(i18n, classroom_loading)}</p> }>
            {move || Suspend::new(async move {
                match course.await {
                    Ok(Some(course)) => view! { <Classroom course=course reload=version/> }.into_any(),
                    Ok(None) => view! {
                        <section class="notice" data-testid="classroom-missing">
                            <h1>{t!(i18n, classroom_missing_title)}</h1>
                            <p>{t!(i18n, classroom_missing_body)}</p>
                            <a href="/" class="button">{t!(i18n, back_to_library)}</a>
                        </section>
                    }
                    .into_any(),
                    Err(error) => view! {
                        <section class="notice" data-testid="classroom-error">
                            <p class="error" role="alert">{error}</p>
                            <a href="/" class="button">{t!(i18n, back_to_library)}</a>
                        </section>
                    }
                    .into_any(),
                }
            })}
        </Suspense>
    }
}

/// Another page shows the classroom (embed, SCORM, offline file): it gets the session's
/// progress under `rules`, through `bridge` (`embed.rs`, handed in so the page links it only
/// where it embeds).
#[derive(Clone, Copy)]
pub struct Host {
    pub rules: aula_player::progress::ProgressRules,
    pub bridge: fn(Lecture, aula_player::progress::ProgressRules) -> AnyView,
}

/// The classroom of a course. `host`: shown by another page, which gets the session's
/// progress; the library's links and the live class are left out there.
#[component]
pub fn Classroom(
    course: Course,
    reload: RwSignal<u32>,
    #[prop(default = None)] host: Option<Host>,
) -> impl IntoView {
    let i18n = use_i18n();
    let title = course.title.clone();
    let shown_scenes = course.scenes.len();
    let mut session = Lecture::new(course);
    session.hosted = host.is_some();
    session.start();
    // Embedded, the host decides where to resume (a SCORM bookmark, a `restore` command).
    if host.is_none() {
        session.restore_saved_position();
    }
    controls::bind_keyboard(session);
    let live = LiveClass::default();
    // The live class is a chunk of its own in a split build, fetched once the first slide has
    // been painted so that it never delays it; embedded, there is none.
    let painted = RwSignal::new(false);
    // A course written here shows how far its writing got (also a chunk of its own).
    let generated = RwSignal::new(false);
    if host.is_none() {
        crate::library::mark_opened(&session.course_id.get_value());
        crate::shell::after_first_paint(move || painted.set(true));
        let id = session.course_id.get_value();
        leptos::task::spawn_local(async move {
            if crate::library::has_generation(&id).await {
                generated.try_set(true);
            }
        });
    }

    let stage = session.stage;
    let scene_index = Memo::new(move |_| stage.with(|s| s.scene_index));
    let state = Memo::new(move |_| stage.with(|s| s.state));
    let stage_ref = NodeRef::<leptos::html::Div>::new();

    view! {
        <div class="classroom" data-testid="classroom">
            <SceneList session=session/>
            <section class="stage-column">
                <div class="classroom-head">
                    <h1 class="classroom-title">{title}</h1>
                    // A course written here keeps its tools (retry, continue, edit, rewrite) on its
                    // progress page, reachable from the classroom after the writing is done.
                    {move || generated.get().then(|| view! {
                        <a class="button" data-testid="edit-course" href=format!("/generate/{}", session.course_id.get_value())>
                            {t!(i18n, classroom_edit_course)}
                        </a>
                    })}
                </div>
                {match host {
                    Some(host) => (host.bridge)(session, host.rules),
                    None => view! {
                        {move || (painted.get() && generated.get()).then(|| crate::shell::on_first_use(generation_banner(session, shown_scenes, reload), None))}
                        <crate::files::ExportPanel course_id=session.course_id.get_value()/>
                    }
                    .into_any(),
                }}
                <div class="stage-shell" node_ref=stage_ref>
                    <div class="stage-frame" data-testid="stage" data-state=move || state.get().name()>
                        {move || {
                            let index = scene_index.get();
                            let kind = session.course(|c| c.scenes.get(index).map(|s| s.content.kind_name()));
                            match kind {
                                Some("slide") => view! { <SlideCanvas session=session scene_index=index/> }.into_any(),
                                Some("quiz") => view! { <div class="scene-page"><QuizView session=session scene_index=index/></div> }.into_any(),
                                Some("interactive") => view! { <InteractiveScene session=session scene_index=index/> }.into_any(),
                                Some(_) => view! { <ProjectScene session=session scene_index=index/> }.into_any(),
                                None => ().into_any(),
                            }
                        }}
                        <DiscussionCard session=session live=live/>
                        <CourseEnd session=session library=host.is_none()/>
                    </div>
                    <CaptionBar session=session/>
                </div>
                <ControlBar session=session stage_ref=stage_ref/>
                <Roundtable session=session/>
                {move || painted.get().then(|| crate::shell::on_first_use(ask::live_class(session, live), Some(Key::live_loading)))}
                <Notices session=session/>
            </section>
        </div>
    }
}

/// The banner, loaded on first use in a split build.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn generation_banner(session: Lecture, shown: usize, reload: RwSignal<u32>) -> AnyView {
    view! { <GenerationBanner session=session shown=shown reload=reload/> }.into_any()
}

/// While the course is still being written: how far it got, and the scenes written since the
/// classroom opened, added when the learner asks (reopening the course at the same place).
/// Opening the classroom also carries on a generation a reload cut off.
#[component]
fn GenerationBanner(session: Lecture, shown: usize, reload: RwSignal<u32>) -> impl IntoView {
    let i18n = use_i18n();
    let id = session.course_id.get_value();
    let view = crate::generate::view_of(&id);
    {
        let id = id.clone();
        leptos::task::spawn_local(async move {
            if let Err(error) = crate::generate::open(&id).await {
                leptos::logging::warn!(
                    "classroom: the course's generation did not resume: {error}"
                );
            }
        });
    }
    let total = move || {
        view.with(|v| {
            v.file
                .as_ref()
                .and_then(|f| f.outline.as_ref())
                .map(|o| o.scenes.len())
                .unwrap_or(0)
        })
    };
    let writing = move || view.with(|v| v.job.is_some());
    let more = move || view.with(|v| v.ready() > shown && v.course_version > 0);
    let add = move |_| {
        session.save_position();
        reload.update(|n| *n += 1);
    };
    let quiet = dyn_flag(move || !writing() && !more());
    let nothing_new = dyn_flag(move || !more());
    let text = dyn_text(move || {
        let key = if writing() {
            Key::class_writing
        } else {
            Key::class_all_ready
        };
        i18n.fill(
            key,
            &[
                (
                    "ready",
                    view.with(crate::generate::GenView::ready).to_string(),
                ),
                ("total", total().to_string()),
            ],
        )
    });
    view! {
        <div class="generation-banner" role="status" data-testid="generation-banner" prop:hidden=quiet>
            <span>{text}</span>
            <button class="primary" data-testid="add-new-scenes" prop:hidden=nothing_new on:click=add>{t!(i18n, class_more_ready)}</button>
            <a href=format!("/generate/{id}")>{t!(i18n, class_progress)}</a>
        </div>
    }
}

/// Put in front of an interactive page's HTML. The page is LLM-written: its frame is
/// `sandbox="allow-scripts allow-forms"`, never `allow-same-origin` (an opaque origin: no storage,
/// keys or DOM of Aula), and without top navigation or popups it can only change itself.
/// `allow-forms`, because without it the browser drops a submission before the `submit` event:
/// the page's own handlers never ran and its Submit did nothing. The script keeps a submission or
/// a link from reloading or blanking the frame (a srcdoc page has nowhere to go): it cancels them
/// in the capture phase, so the page's handlers still run; runs `javascript:` URLs, which
/// Chromium drops in an opaque-origin frame; makes `form.submit()` fire `submit` like a button;
/// shows `alert()`, which the sandbox blocks, as a note in the page; and scrolls what a click
/// changed (the answer under a Submit) into the frame's view. A convenience, not a wall: a page
/// that undoes it only breaks itself. The styles keep radio buttons and checkboxes beside their
/// labels against generic rules (`input { width: 100% }`, `label { display: block }`); the
/// page's rules by class, id or type still win. A srcdoc page is never in quirks mode, so coming
/// before its doctype changes nothing.
const FRAME_PRELUDE: &str = concat!(
    "<script>(function(){var t,o=new MutationObserver(function(l){",
    // `scrollBy`, not `scrollIntoView`, which would scroll the classroom around the frame too.
    r#"for(var i=0;i<l.length;i++){var n=l[i].target,r;n=n.nodeType==1?n:n.parentElement;"#,
    r#"if(n&&n!=document.body&&n!=document.documentElement&&(r=n.getBoundingClientRect()).height){o.disconnect();"#,
    r#"scrollBy(0,r.bottom>innerHeight?Math.min(r.bottom-innerHeight+8,r.top):Math.min(r.top,0));return}}});"#,
    r#"function w(){o.observe(document,{childList:!0,subtree:!0,characterData:!0});clearTimeout(t);t=setTimeout(function(){o.disconnect()},1e3)}"#,
    r#"function j(u){var m=/^\s*javascript:([\s\S]*)/i.exec(u||"");m&&setTimeout(function(){var c=m[1];try{c=decodeURIComponent(c)}catch(x){}(0,eval)(c)})}"#,
    r#"addEventListener("submit",function(e){var f=e.target,b=e.submitter;w();if((b&&b.formMethod||f.method)!="dialog"){e.preventDefault();j(b&&b.getAttribute("formaction")||f.getAttribute("action"))}},!0);"#,
    r#"addEventListener("click",function(e){var a=e.target.closest&&e.target.closest("a[href]"),h=a&&a.getAttribute("href");w();if(h&&!/^#/.test(h)){e.preventDefault();j(h)}},!0);"#,
    r#"HTMLFormElement.prototype.submit=function(){this.requestSubmit()};"#,
    r#"alert=function(t){var d=document.createElement("p");d.textContent=t;d.setAttribute("role","status");d.onclick=d.remove;"#,
    r#"d.style.cssText="position:fixed;left:8px;right:8px;bottom:8px;z-index:2147483647;margin:0;padding:10px 14px;border-radius:8px;background:#111322;color:#fff;font:16px/1.4 system-ui,sans-serif";"#,
    r#"document.documentElement.append(d);setTimeout(function(){d.remove()},6e3)}"#,
    "})()</script><style>",
    "input:is([type=radio],[type=checkbox]){display:inline-block;width:auto;height:auto;margin:.25em .5em .25em 0;vertical-align:middle}",
    "html body :where(input[type=radio],input[type=checkbox])+label{display:inline-block;box-sizing:border-box;width:calc(100% - 2em);vertical-align:middle}",
    "</style>",
);

/// The sandboxed frame for an interactive page's HTML (`srcdoc`), as markup.
fn frame_markup(html: &str, title: &str) -> String {
    format!(
        r#"<iframe class="interactive-frame" sandbox="allow-scripts allow-forms" referrerpolicy="no-referrer" title="{}" srcdoc="{}"></iframe>"#,
        aula_render::escape_html(title),
        aula_render::escape_html(html)
    )
}

/// An interactive page: LLM-written HTML in a sandboxed frame (see [`FRAME_PRELUDE`]).
#[component]
fn InteractiveScene(session: Lecture, scene_index: usize) -> impl IntoView {
    let i18n = use_i18n();
    let html = session.course(|c| match c.scenes.get(scene_index).map(|s| &s.content) {
        Some(SceneContent::Interactive(page)) => format!("{FRAME_PRELUDE}{}", page.html),
        _ => String::new(),
    });
    view! {
        <div class="scene-page interactive">
            // Written as markup, so each interactive page gets a fresh frame element (no history,
            // state or running script carried over from the page before) instead of the same
            // frame navigated to new content. The page's HTML is escaped into the attribute.
            <div class="frame-slot" inner_html=frame_markup(&html, t_string!(i18n, interactive_title))></div>
            <button class="primary continue" on:click=move |_| session.send(Command::FinishScene)>{t!(i18n, continue_button)}</button>
        </div>
    }
}

#[component]
fn ProjectScene(session: Lecture, scene_index: usize) -> impl IntoView {
    let i18n = use_i18n();
    let (title, project) = session.course(|c| match c.scenes.get(scene_index) {
        Some(scene) => (
            scene.title.clone(),
            match &scene.content {
                SceneContent::Pbl(project) => Some(project.clone()),
                _ => None,
            },
        ),
        None => (String::new(), None),
    });
    let project = project.unwrap_or_else(|| aula_course::scene::ProjectBriefing {
        briefing: String::new(),
        objectives: Vec::new(),
        project: None,
    });
    let issues = project
        .project
        .as_ref()
        .map(|p| p.issues.clone())
        .unwrap_or_default();
    let team = project
        .project
        .as_ref()
        .map(|p| p.agents.clone())
        .unwrap_or_default();
    view! {
        <div class="scene-page project">
            <h2>{title}</h2>
            <div class="briefing" inner_html=markdown_to_html(&project.briefing)></div>
            {(!project.objectives.is_empty()).then(|| view! {
                <ul class="objectives">{project.objectives.iter().map(|o| view! { <li>{o.clone()}</li> }).collect_view()}</ul>
            })}
            {(!team.is_empty()).then(|| view! {
                <ul class="project-team">{team.iter().map(|a| view! { <li><strong>{a.name.clone()}</strong>" · "{a.role.clone()}</li> }).collect_view()}</ul>
            })}
            {(!issues.is_empty()).then(|| view! {
                <ol class="project-issues">
                    {issues.iter().map(|issue| view! {
                        <li class:done=issue.done><strong>{issue.title.clone()}</strong>" — "{issue.description.clone()}</li>
                    }).collect_view()}
                </ol>
            })}
            <button class="primary continue" on:click=move |_| session.send(Command::FinishScene)>{t!(i18n, continue_button)}</button>
        </div>
    }
}

/// What the classroom knows of the live class (`ask`), which fills it in once its code is there.
#[derive(Clone, Copy)]
pub struct LiveClass {
    /// An AI provider is usable: discussions run live.
    pub live: RwSignal<bool>,
    /// Runs a scene's discussion live (the player has already stopped for it).
    pub join: StoredValue<Option<Callback<aula_player::DiscussionCue>>>,
}

impl Default for LiveClass {
    fn default() -> LiveClass {
        LiveClass {
            live: RwSignal::new(false),
            join: StoredValue::new(None),
        }
    }
}

/// A classmate offers a discussion: with an AI provider the class discusses it live, otherwise
/// the course's recording can play.
#[component]
fn DiscussionCard(session: Lecture, live: LiveClass) -> impl IntoView {
    let i18n = use_i18n();
    let stage = session.stage;
    let cue = Memo::new(move |_| {
        stage.with(|s| {
            if s.state == PlayState::DiscussionOffered {
                s.discussion.clone()
            } else {
                None
            }
        })
    });
    move || {
        cue.get().map(|cue| {
            let who = cue
                .agent_id
                .as_deref()
                .and_then(|id| session.course(|c| c.agent(id).map(|a| a.name.clone())))
                .unwrap_or_else(|| t_string!(i18n, a_classmate).to_string());
            let join = live.join.get_value();
            let live = live.live.get_untracked() && join.is_some();
            let topic = cue.topic.clone();
            let has_recording = cue.has_recording;
            let join = move |_| {
                session.send(Command::AcceptDiscussion);
                if let Some(join) = join {
                    join.run(cue.clone());
                }
            };
            view! {
                <div class="overlay-card" role="dialog" aria-labelledby="discussion-topic" data-testid="discussion-card">
                    <p class="eyebrow">{t!(i18n, discussion_offer, name = move || who.clone())}</p>
                    <h2 id="discussion-topic">{topic}</h2>
                    <div class="overlay-actions">
                        {live.then(|| view! {
                            <button class="primary" data-testid="discussion-join" on:click=join>
                                {t!(i18n, discussion_join)}
                            </button>
                        })}
                        {(!live && has_recording).then(|| view! {
                            <button class="primary" data-testid="discussion-accept" on:click=move |_| session.send(Command::AcceptDiscussion)>
                                {t!(i18n, discussion_listen)}
                            </button>
                        })}
                        <button class="secondary" data-testid="discussion-skip" on:click=move |_| session.send(Command::SkipDiscussion)>{t!(i18n, skip)}</button>
                    </div>
                </div>
            }
        })
    }
}

#[component]
fn CourseEnd(session: Lecture, library: bool) -> impl IntoView {
    let i18n = use_i18n();
    let stage = session.stage;
    let ended = Memo::new(move |_| stage.with(|s| s.state == PlayState::Ended));
    view! {
        <Show when=move || ended.get()>
            <div class="overlay-card" role="dialog" data-testid="course-end">
                <p class="eyebrow">{t!(i18n, course_complete)}</p>
                <h2>{session.course(|c| c.title.clone())}</h2>
                <p>{t!(i18n, course_complete_body)}</p>
                <div class="overlay-actions">
                    <button class="secondary" on:click=move |_| session.send(Command::SeekScene { scene: 0, ms: 0.0 })>{t!(i18n, start_again)}</button>
                    {library.then(|| view! { <a href="/" class="button">{t!(i18n, back_to_library)}</a> })}
                </div>
            </div>
        </Show>
    }
}

#[component]
fn Notices(session: Lecture) -> impl IntoView {
    let stage = session.stage;
    let notices = Memo::new(move |_| stage.with(|s| s.notices.clone()));
    view! {
        <ul class="notices" aria-live="polite" data-testid="notices">
            {move || notices.get().into_iter().rev().take(3).map(|n| view! { <li>{n}</li> }).collect_view()}
        </ul>
    }
}
