//! The app's four pages and the browser history, without a router framework: the path is one
//! signal, links are plain `<a href>` that a single click listener turns into history pushes, and
//! Back/Forward come in through `popstate`.
//!
//! The paths are `/`, `/classroom/<id>`, `/generate/<id>` and `/settings`; anything else is the
//! not-found page. They are real paths, not `#` fragments, so a static host must answer an
//! unknown path with `index.html` (Trunk's dev server and the e2e test server do). Only a plain
//! left click on an `<a href="/…">` is taken over; a modifier key, `target`, `download` or any
//! other `href` is left to the browser. leptos_router was measured at about 41 KB gzip for three
//! routes, more than the pages it routed, so this module does the little that is needed by hand.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// What the address bar points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    Home,
    Classroom(String),
    Generate(String),
    Settings,
    NotFound,
}

impl Page {
    /// The page of a path such as `/classroom/abc`; a trailing slash is ignored.
    pub fn from_path(path: &str) -> Page {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let trimmed = path.trim_end_matches('/');
        match trimmed {
            "" => Page::Home,
            "/settings" => Page::Settings,
            _ => {
                let segment = |prefix: &str| {
                    trimmed
                        .strip_prefix(prefix)
                        .filter(|id| !id.is_empty() && !id.contains('/'))
                        .map(decode_segment)
                };
                if let Some(id) = segment("/classroom/") {
                    Page::Classroom(id)
                } else if let Some(id) = segment("/generate/") {
                    Page::Generate(id)
                } else {
                    Page::NotFound
                }
            }
        }
    }
}

/// Percent-decodes one path segment (course ids are plain ASCII, but a pasted link may be encoded).
fn decode_segment(segment: &str) -> String {
    js_sys::decode_uri_component(segment)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| segment.to_owned())
}

fn current_path() -> String {
    window()
        .location()
        .pathname()
        .unwrap_or_else(|_| "/".into())
}

/// The current page, shared through context.
#[derive(Clone, Copy)]
pub struct Location {
    path: RwSignal<String>,
    page: Memo<Page>,
}

impl Location {
    pub fn page(&self) -> Page {
        self.page.get()
    }

    /// `Some("page")` when `href` is the current path: for the nav links' `aria-current`.
    pub fn current(&self, href: &'static str) -> Option<&'static str> {
        self.path
            .with(|p| p.trim_end_matches('/') == href.trim_end_matches('/'))
            .then_some("page")
    }
}

pub fn use_location() -> Location {
    expect_context::<Location>()
}

/// Goes to `href` (a same-origin path) and records it in the history; for code that is not
/// a link (after an async step, so `location` is taken from context beforehand).
pub fn go(location: Location, href: &str) {
    push(location, href);
}

fn push(location: Location, href: &str) {
    if let Ok(history) = window().history() {
        let _ = history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(href));
    }
    location.path.set(current_path());
    window().scroll_to_with_x_and_y(0.0, 0.0);
}

/// Installs the history listeners and provides [`Location`]; call once, at the root.
pub fn provide_location() -> Location {
    let path = RwSignal::new(current_path());
    let page = Memo::new(move |_| path.with(|p| Page::from_path(p)));
    let location = Location { path, page };
    provide_context(location);

    let back_or_forward = window_event_listener(ev::popstate, move |_| path.set(current_path()));
    let clicks = window_event_listener(ev::click, move |event| {
        if let Some(href) = internal_link(&event) {
            event.prevent_default();
            if path.with_untracked(|p| *p != href) {
                push(location, &href);
            }
        }
    });
    on_cleanup(move || {
        back_or_forward.remove();
        clicks.remove();
    });
    location
}

/// The path of a plain left click on a same-origin `<a href="/…">` that opens in this tab.
fn internal_link(event: &web_sys::MouseEvent) -> Option<String> {
    if event.default_prevented()
        || event.button() != 0
        || event.ctrl_key()
        || event.meta_key()
        || event.shift_key()
        || event.alt_key()
    {
        return None;
    }
    let target: web_sys::Element = event.target()?.dyn_into().ok()?;
    let anchor = target.closest("a[href]").ok()??;
    if anchor.has_attribute("target") || anchor.has_attribute("download") {
        return None;
    }
    let href = anchor.get_attribute("href")?;
    (href.starts_with('/') && !href.starts_with("//")).then_some(href)
}

#[cfg(test)]
mod tests {
    use super::Page;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen_test]
    fn paths_map_to_pages() {
        assert_eq!(Page::from_path("/"), Page::Home);
        assert_eq!(Page::from_path(""), Page::Home);
        assert_eq!(Page::from_path("/settings"), Page::Settings);
        assert_eq!(Page::from_path("/settings/"), Page::Settings);
        assert_eq!(
            Page::from_path("/classroom/sample-transformer-en"),
            Page::Classroom("sample-transformer-en".into())
        );
        assert_eq!(
            Page::from_path("/classroom/a%20b?x=1"),
            Page::Classroom("a b".into())
        );
        assert_eq!(Page::from_path("/classroom/"), Page::NotFound);
        assert_eq!(Page::from_path("/classroom/a/b"), Page::NotFound);
        assert_eq!(Page::from_path("/nowhere"), Page::NotFound);
        assert_eq!(
            Page::from_path("/generate/gen-1"),
            Page::Generate("gen-1".into())
        );
    }
}
