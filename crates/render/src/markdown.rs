//! Markdown to HTML: CommonMark with tables and strikethrough, filtered so that nothing an LLM
//! writes becomes live markup. The filter sits between pulldown-cmark's parser and its HTML
//! writer: raw HTML turns into text, unsafe link and image URLs are dropped, and links are written
//! here with `rel` and `target`. After the filter, the only raw markup the writer receives is the
//! anchor tags built below.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

use crate::push_escaped;

/// Markdown (CommonMark + tables + strikethrough) to HTML.
///
/// Raw HTML in the input (block or inline) is shown as escaped text, never passed through.
/// Link and image URLs are kept only for `http:`, `https:`, `mailto:`, relative paths and
/// `#fragments`; anything else (`javascript:`, `data:`, `vbscript:`, …) is dropped and the link
/// text stays as plain text. Links get `rel="noopener noreferrer" target="_blank"`, except
/// `#fragment` links, which stay in the page.
pub fn markdown_to_html(markdown: &str) -> String {
    let parser = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    let mut html = String::with_capacity(markdown.len() + markdown.len() / 2);
    pulldown_cmark::html::push_html(&mut html, SafeEvents::new(parser));
    html
}

/// What became of an opened link or image, so its end is treated the same way.
enum Opened {
    /// Written here as `<a …>`; its end is written as `</a>`.
    Anchor,
    /// An image with a safe URL, left to the HTML writer (which turns its content into `alt`).
    Image,
    /// Removed: an unsafe URL, or a link inside an image's alt text.
    Dropped,
}

struct SafeEvents<I> {
    events: I,
    opened: Vec<Opened>,
}

impl<'a, I: Iterator<Item = Event<'a>>> SafeEvents<I> {
    fn new(events: I) -> Self {
        SafeEvents {
            events,
            opened: Vec::new(),
        }
    }

    fn inside_image(&self) -> bool {
        self.opened.iter().any(|o| matches!(o, Opened::Image))
    }

    /// The replacement for one event; `None` drops it.
    fn filter(&mut self, event: Event<'a>) -> Option<Event<'a>> {
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
            // An HTML block's text, now escaped, reads as a paragraph.
            Event::Start(Tag::HtmlBlock) => Some(Event::Start(Tag::Paragraph)),
            Event::End(TagEnd::HtmlBlock) => Some(Event::End(TagEnd::Paragraph)),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            }) => {
                let href = match link_type {
                    LinkType::Email => format!("mailto:{dest_url}"),
                    _ => dest_url.into_string(),
                };
                let href = browser_view_of_url(&href);
                if self.inside_image() || !is_safe_url(&href) {
                    self.opened.push(Opened::Dropped);
                    return None;
                }
                self.opened.push(Opened::Anchor);
                Some(Event::InlineHtml(anchor_open_tag(&href, &title).into()))
            }
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let src = browser_view_of_url(&dest_url);
                if !is_safe_url(&src) {
                    self.opened.push(Opened::Dropped);
                    return None;
                }
                self.opened.push(Opened::Image);
                Some(Event::Start(Tag::Image {
                    link_type,
                    dest_url: CowStr::from(src),
                    title,
                    id,
                }))
            }
            Event::End(end @ (TagEnd::Link | TagEnd::Image)) => match self.opened.pop()? {
                Opened::Anchor => Some(Event::InlineHtml(CowStr::Borrowed("</a>"))),
                Opened::Image => Some(Event::End(end)),
                Opened::Dropped => None,
            },
            other => Some(other),
        }
    }
}

impl<'a, I: Iterator<Item = Event<'a>>> Iterator for SafeEvents<I> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        loop {
            let event = self.events.next()?;
            if let Some(kept) = self.filter(event) {
                return Some(kept);
            }
        }
    }
}

fn anchor_open_tag(href: &str, title: &str) -> String {
    let mut tag = String::with_capacity(href.len() + title.len() + 64);
    tag.push_str("<a href=\"");
    push_url_attribute(&mut tag, href);
    tag.push('"');
    if !title.is_empty() {
        tag.push_str(" title=\"");
        push_escaped(&mut tag, title);
        tag.push('"');
    }
    if !href.starts_with('#') {
        tag.push_str(" rel=\"noopener noreferrer\" target=\"_blank\"");
    }
    tag.push('>');
    tag
}

/// The URL as a browser reads it before looking for a scheme: leading and trailing spaces and
/// control characters removed, tabs and newlines removed everywhere (so `java\tscript:` is
/// recognised as `javascript:`). The safety check and the written attribute both use this form.
pub(crate) fn browser_view_of_url(url: &str) -> String {
    url.trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect()
}

/// Whether a URL (in [`browser_view_of_url`] form) may appear in `href` or `src`: http, https and
/// mailto, or no scheme at all (a relative path, a `?query` or a `#fragment`).
pub(crate) fn is_safe_url(url: &str) -> bool {
    match url.find([':', '/', '?', '#']) {
        Some(at) if url.as_bytes()[at] == b':' => {
            let scheme = &url[..at];
            ["http", "https", "mailto"]
                .iter()
                .any(|allowed| scheme.eq_ignore_ascii_case(allowed))
        }
        _ => true,
    }
}

/// Writes a URL into a double-quoted attribute: quotes, angle brackets, spaces and controls are
/// percent-encoded (the URL keeps its meaning), `&` and `'` become entities.
fn push_url_attribute(out: &mut String, url: &str) {
    for c in url.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#39;"),
            '"' | '<' | '>' | '`' | ' ' | '\u{0}'..='\u{1f}' | '\u{7f}' => {
                let mut buf = [0u8; 4];
                for byte in c.encode_utf8(&mut buf).bytes() {
                    const HEX: &[u8; 16] = b"0123456789ABCDEF";
                    out.push('%');
                    out.push(HEX[usize::from(byte >> 4)] as char);
                    out.push(HEX[usize::from(byte & 0xf)] as char);
                }
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup_check::{assert_safe_markup, parse_markup};

    #[test]
    fn script_tags_are_shown_as_text() {
        let html = markdown_to_html("Hello <script>alert(1)</script> world");
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert_safe_markup(&html);
    }

    #[test]
    fn html_blocks_are_shown_as_escaped_paragraph_text() {
        let html = markdown_to_html(
            "<div onclick=\"steal()\">\n<script>alert(1)</script>\n</div>\n\nafter",
        );
        assert!(!html.contains("<div"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;div onclick=\"steal()\"&gt;"), "{html}");
        assert!(html.contains("<p>after</p>"), "{html}");
        assert_safe_markup(&html);
    }

    #[test]
    fn img_with_onerror_is_not_an_element() {
        let html = markdown_to_html("look: <img src=x onerror=alert(1)> here");
        let parsed = parse_markup(&html).unwrap();
        assert!(parsed.elements.iter().all(|e| e.name != "img"), "{html}");
        assert!(
            parsed.text.contains("<img src=x onerror=alert(1)>"),
            "{html}"
        );
        assert_safe_markup(&html);
    }

    #[test]
    fn javascript_links_are_dropped_but_their_text_stays() {
        for source in [
            "[click me](javascript:alert(1))",
            "[click me](JavaScript:alert(1))",
            "[click me](  javascript:alert(1))",
            "[click me](java&#09;script:alert(1))",
            "[click me](javascript&#58;alert(1))",
            "[click me](<java\tscript:alert(1)>)",
            "[click me](vbscript:msgbox)",
            "[click me](data:text/html;base64,PHNjcmlwdD4=)",
        ] {
            let html = markdown_to_html(source);
            assert!(!html.contains("<a"), "{source} -> {html}");
            assert!(
                !html.to_ascii_lowercase().contains("script:"),
                "{source} -> {html}"
            );
            assert!(html.contains("click me"), "{source} -> {html}");
            assert_safe_markup(&html);
        }
    }

    #[test]
    fn javascript_autolinks_are_dropped() {
        let html = markdown_to_html("<javascript:alert(1)>");
        assert!(!html.contains("<a"), "{html}");
        assert_safe_markup(&html);
    }

    #[test]
    fn data_images_are_dropped_and_their_alt_text_stays() {
        let html = markdown_to_html("![a cat](data:image/svg+xml;base64,PHN2Zz4=)");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(html.contains("a cat"), "{html}");
    }

    #[test]
    fn https_images_keep_their_source_and_alt() {
        let html = markdown_to_html("![a \"cat\"](https://example.org/cat.png \"Title\")");
        assert!(
            html.contains(
                r#"<img src="https://example.org/cat.png" alt="a &quot;cat&quot;" title="Title" />"#
            ),
            "{html}"
        );
    }

    #[test]
    fn safe_links_open_in_a_new_tab_without_an_opener() {
        let html = markdown_to_html("[docs](https://example.org/a?b=1&c=2 \"The <docs>\")");
        assert_eq!(
            html,
            "<p><a href=\"https://example.org/a?b=1&amp;c=2\" title=\"The &lt;docs&gt;\" \
             rel=\"noopener noreferrer\" target=\"_blank\">docs</a></p>\n"
        );
    }

    #[test]
    fn relative_mailto_and_fragment_links_are_kept() {
        let html = markdown_to_html(
            "[a](notes/ch1.md) [b](mailto:t@example.org) [c](#part-2) <t@example.org>",
        );
        assert!(
            html.contains(
                r#"<a href="notes/ch1.md" rel="noopener noreferrer" target="_blank">a</a>"#
            ),
            "{html}"
        );
        assert!(html.contains(r#"<a href="mailto:t@example.org""#), "{html}");
        assert!(html.contains(r##"<a href="#part-2">c</a>"##), "{html}");
        assert_eq!(html.matches("mailto:t@example.org").count(), 2, "{html}");
    }

    #[test]
    fn quotes_in_urls_cannot_break_out_of_the_attribute() {
        let html = markdown_to_html("[x](<https://e.org/\" onmouseover=\"alert(1)>)");
        assert!(
            html.contains("href=\"https://e.org/%22%20onmouseover=%22alert(1)\""),
            "{html}"
        );
        assert_safe_markup(&html);
    }

    #[test]
    fn html_entities_decode_to_text_and_are_escaped_again() {
        let html =
            markdown_to_html("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &copy; &#60;b&#62;");
        assert_eq!(
            html,
            "<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; © &lt;b&gt;</p>\n"
        );
    }

    #[test]
    fn nested_emphasis_renders_as_nested_elements() {
        let html = markdown_to_html("***both*** and **bold with *italic* inside** ~~gone~~");
        assert!(html.contains("<em><strong>both</strong></em>"), "{html}");
        assert!(
            html.contains("<strong>bold with <em>italic</em> inside</strong>"),
            "{html}"
        );
        assert!(html.contains("<del>gone</del>"), "{html}");
        assert_safe_markup(&html);
    }

    #[test]
    fn tables_render_with_header_body_and_alignment() {
        let html =
            markdown_to_html("| Planet | Moons |\n|:--|--:|\n| Mars | 2 |\n| <b>Earth</b> | 1 |\n");
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("<thead>"), "{html}");
        assert!(
            html.contains("<th style=\"text-align: left\">Planet</th>"),
            "{html}"
        );
        assert!(
            html.contains("<td style=\"text-align: right\">2</td>"),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;Earth&lt;/b&gt;"), "{html}");
        assert_safe_markup(&html);
    }

    #[test]
    fn code_blocks_escape_their_content_and_language() {
        let html = markdown_to_html("```js\"><script>\nif (a < b) {}\n```\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("if (a &lt; b) {}"), "{html}");
        assert_safe_markup(&html);
    }

    #[test]
    fn links_inside_image_alt_text_do_not_leak_markup() {
        let html = markdown_to_html("![see [here](https://e.org)](https://e.org/i.png)");
        assert!(
            html.contains("<img src=\"https://e.org/i.png\" alt=\"see here\" />"),
            "{html}"
        );
        assert_safe_markup(&html);
    }

    #[test]
    fn url_scheme_check_allows_only_the_listed_schemes() {
        for safe in [
            "http://a",
            "HTTPS://a",
            "mailto:x@y",
            "a/b:c",
            "./x",
            "?q=a:b",
            "#f:g",
            "",
            "//e.org",
        ] {
            assert!(is_safe_url(safe), "{safe}");
        }
        for unsafe_url in [
            "javascript:x",
            "data:x",
            "vbscript:x",
            "file:///etc",
            "blob:x",
            " JaVaScRiPt:x",
        ] {
            assert!(!is_safe_url(unsafe_url), "{unsafe_url}");
        }
    }
}
