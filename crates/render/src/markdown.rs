//! Markdown to HTML with a small purpose-built parser: the constructs course authors and LLMs
//! write on slides (CommonMark's blocks and inlines without reference links, indented code or
//! setext headings, plus GFM tables and strikethrough), so that the page does not carry a full
//! CommonMark implementation and its Unicode tables. Nothing in the input becomes live markup:
//! raw HTML is text, unsafe link and image URLs are dropped, and every tag written here is
//! closed, whatever the input.
//!
//! Blocks are split line by line here; container blocks (quotes, list items) collect their lines,
//! strip their prefix and are parsed again one level down, up to [`MAX_DEPTH`] levels.
//! Paragraph, heading and table-cell text goes to [`inline`].

mod inline;

/// Quotes and lists nested deeper than this are read as text: bounds recursion and the cost of
/// re-collecting lines at every level.
const MAX_DEPTH: usize = 16;

/// Markdown (CommonMark + tables + strikethrough) to HTML.
///
/// Raw HTML in the input (block or inline) is shown as escaped text, never passed through.
/// Link and image URLs are kept only for `http:`, `https:`, `mailto:`, relative paths and
/// `#fragments`; anything else (`javascript:`, `data:`, `vbscript:`, …) is dropped and the link
/// text stays as plain text. Links get `rel="noopener noreferrer" target="_blank"`, except
/// `#fragment` links, which stay in the page.
pub fn markdown_to_html(markdown: &str) -> String {
    // Lines end at `\n`, `\r\n` or a lone `\r`; NUL reads as U+FFFD, as in browsers.
    let lines: Vec<String> = markdown
        .split('\n')
        .flat_map(|line| line.strip_suffix('\r').unwrap_or(line).split('\r'))
        .map(|line| line.replace('\0', "\u{FFFD}"))
        .collect();
    let mut html = String::with_capacity(markdown.len() + markdown.len() / 2);
    let (blocks, _) = parse_blocks(&lines, 0);
    render_blocks(&mut html, &blocks, 0, false);
    html
}

#[derive(Clone, Copy, PartialEq)]
enum Align {
    None,
    Left,
    Center,
    Right,
}

enum Block {
    Paragraph(String),
    Heading(usize, String),
    Rule,
    Code {
        language: String,
        text: String,
    },
    Quote(Vec<String>),
    List {
        /// `None` for a bullet list, else the start number.
        start: Option<u32>,
        items: Vec<Vec<String>>,
        blank_between_items: bool,
    },
    Table {
        aligns: Vec<Align>,
        header: Vec<String>,
        rows: Vec<Vec<String>>,
    },
}

/// A list item marker: `-`, `*`, `+`, or digits followed by `.` or `)`.
#[derive(Clone, Copy)]
struct Marker {
    /// The bullet character or the ordered delimiter, so siblings can be told from a new list.
    kind: u8,
    start: Option<u32>,
    /// Bytes of the marker itself (`-` or `12.`).
    width: usize,
    /// Whether anything follows the marker on its line.
    has_content: bool,
}

/// What a line (with its indentation removed) opens, if it opens a block other than a paragraph
/// or a table.
enum Start {
    Fence,
    Heading,
    Rule,
    Quote,
    Item(Marker),
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ' || b == b'\t')
}

/// Leading whitespace as (columns, bytes), tabs advancing to the next multiple of four.
fn indent(line: &str) -> (usize, usize) {
    let mut columns = 0;
    for (at, byte) in line.bytes().enumerate() {
        match byte {
            b' ' => columns += 1,
            b'\t' => columns += 4 - columns % 4,
            _ => return (columns, at),
        }
    }
    (columns, line.len())
}

/// The line without its first `columns` columns of indentation (a tab that straddles the cut
/// leaves the rest of its width as spaces).
fn strip_columns(line: &str, columns: usize) -> String {
    let mut seen = 0;
    for (at, byte) in line.bytes().enumerate() {
        if seen >= columns {
            return line[at..].to_owned();
        }
        match byte {
            b' ' => seen += 1,
            b'\t' => {
                seen += 4 - seen % 4;
                if seen > columns {
                    return " ".repeat(seen - columns) + &line[at + 1..];
                }
            }
            _ => return line[at..].to_owned(),
        }
    }
    String::new()
}

fn fence_of(rest: &str) -> Option<(u8, usize)> {
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    // A backtick fence's info string cannot hold a backtick (that line is inline code).
    (len >= 3 && !(ch == b'`' && rest[len..].contains('`'))).then_some((ch, len))
}

fn heading_level(rest: &str) -> Option<usize> {
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    let after = rest.as_bytes().get(level);
    ((1..=6).contains(&level) && matches!(after, None | Some(b' ' | b'\t'))).then_some(level)
}

fn is_rule(rest: &str) -> bool {
    let Some(ch) = rest.bytes().next() else {
        return false;
    };
    matches!(ch, b'-' | b'*' | b'_')
        && rest.bytes().filter(|&b| b == ch).count() >= 3
        && rest.bytes().all(|b| b == ch || b == b' ' || b == b'\t')
}

fn marker_of(rest: &str) -> Option<Marker> {
    let bytes = rest.as_bytes();
    let (kind, start, width) = match *bytes.first()? {
        ch @ (b'-' | b'*' | b'+') => (ch, None, 1),
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            let delimiter = *bytes.get(digits)?;
            if digits > 9 || !matches!(delimiter, b'.' | b')') {
                return None;
            }
            (delimiter, rest[..digits].parse().ok(), digits + 1)
        }
        _ => return None,
    };
    match bytes.get(width) {
        None | Some(b' ' | b'\t') => Some(Marker {
            kind,
            start,
            width,
            has_content: !is_blank(&rest[width..]),
        }),
        _ => None,
    }
}

/// The block a line opens. With `interrupting`, only the starts that may cut a paragraph short
/// count (an empty item, or a numbered one not starting at 1, reads as paragraph text).
fn block_start(rest: &str, depth: usize, interrupting: bool) -> Option<Start> {
    if fence_of(rest).is_some() {
        return Some(Start::Fence);
    }
    if heading_level(rest).is_some() {
        return Some(Start::Heading);
    }
    if is_rule(rest) {
        return Some(Start::Rule);
    }
    if depth >= MAX_DEPTH {
        return None;
    }
    if rest.starts_with('>') {
        return Some(Start::Quote);
    }
    let marker = marker_of(rest)?;
    let interrupts = marker.has_content && marker.start.is_none_or(|n| n == 1);
    (!interrupting || interrupts).then_some(Start::Item(marker))
}

/// Table cells of a row: outer pipes dropped, split at pipes not escaped with a backslash.
fn table_cells(line: &str) -> Vec<String> {
    let mut row = line.trim();
    row = row.strip_prefix('|').unwrap_or(row);
    if row.ends_with('|') && !row.ends_with("\\|") {
        row = &row[..row.len() - 1];
    }
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = row.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('|') => cell.push('|'),
                Some(next) => {
                    cell.push('\\');
                    cell.push(next);
                }
                None => cell.push('\\'),
            },
            '|' => cells.push(std::mem::take(&mut cell).trim().to_owned()),
            c => cell.push(c),
        }
    }
    cells.push(cell.trim().to_owned());
    cells
}

/// The alignments of a delimiter row (`| :-- | :-: | --: |`), if `line` is one with `columns`
/// cells.
fn delimiter_row(line: &str, columns: usize) -> Option<Vec<Align>> {
    if !line.contains('|') || !line.contains('-') {
        return None;
    }
    let cells = table_cells(line);
    if cells.len() != columns {
        return None;
    }
    cells
        .iter()
        .map(|cell| {
            let left = cell.starts_with(':');
            let right = cell.ends_with(':');
            let dashes = cell.trim_matches(':');
            if dashes.is_empty() || !dashes.bytes().all(|b| b == b'-') {
                return None;
            }
            Some(match (left, right) {
                (true, true) => Align::Center,
                (true, false) => Align::Left,
                (false, true) => Align::Right,
                (false, false) => Align::None,
            })
        })
        .collect()
}

/// A table's header cells and alignments when `lines[at]` and the next line open a table.
fn table_start(lines: &[String], at: usize) -> Option<(Vec<String>, Vec<Align>)> {
    let header = &lines[at];
    let next = lines.get(at + 1)?;
    if !header.contains('|') {
        return None;
    }
    let cells = table_cells(header);
    let aligns = delimiter_row(next, cells.len())?;
    Some((cells, aligns))
}

/// Splits lines into blocks; also says whether a blank line separates two of them (which makes
/// an enclosing list item loose).
fn parse_blocks(lines: &[String], depth: usize) -> (Vec<Block>, bool) {
    let mut blocks = Vec::new();
    let mut blank_between = false;
    let mut saw_blank = false;
    let mut at = 0;
    while at < lines.len() {
        let line = &lines[at];
        if is_blank(line) {
            saw_blank = true;
            at += 1;
            continue;
        }
        blank_between |= saw_blank && !blocks.is_empty();
        saw_blank = false;
        let (columns, offset) = indent(line);
        let rest = &line[offset..];
        let (block, next) = match block_start(rest, depth, false) {
            Some(Start::Fence) => fenced_code(lines, at, columns, rest),
            Some(Start::Heading) => (heading(rest), at + 1),
            Some(Start::Rule) => (Block::Rule, at + 1),
            Some(Start::Quote) => quote(lines, at, depth),
            Some(Start::Item(marker)) => list(lines, at, marker, depth),
            None => match table_start(lines, at) {
                Some((header, aligns)) => table(lines, at, header, aligns, depth),
                None => paragraph(lines, at, depth),
            },
        };
        blocks.push(block);
        at = next;
    }
    (blocks, blank_between)
}

fn heading(rest: &str) -> Block {
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    let mut text = rest[level..].trim();
    // A closing run of `#` goes, if a space (or nothing) precedes it.
    let without_closing = text.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) {
        text = without_closing.trim_end();
    }
    Block::Heading(level, text.to_owned())
}

fn fenced_code(lines: &[String], at: usize, columns: usize, rest: &str) -> (Block, usize) {
    let (ch, len) = fence_of(rest).unwrap_or((b'`', 3));
    let language: String = rest[len..]
        .split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .filter(|c| matches!(c, 'a'..='z' | '0'..='9' | '_' | '+' | '-'))
        .collect();
    let mut text = String::new();
    let mut next = at + 1;
    while let Some(line) = lines.get(next) {
        next += 1;
        let trimmed = line.trim_start();
        let run = trimmed.bytes().take_while(|&b| b == ch).count();
        if run >= len && is_blank(&trimmed[run..]) {
            break;
        }
        text.push_str(&strip_columns(line, columns));
        text.push('\n');
    }
    (Block::Code { language, text }, next)
}

fn quote(lines: &[String], at: usize, depth: usize) -> (Block, usize) {
    let mut inner: Vec<String> = Vec::new();
    let mut next = at;
    while let Some(line) = lines.get(next) {
        let rest = line.trim_start();
        if let Some(after) = rest.strip_prefix('>') {
            let after = after
                .strip_prefix(' ')
                .or_else(|| after.strip_prefix('\t'))
                .unwrap_or(after);
            inner.push(after.to_owned());
        } else if is_blank(line)
            || inner.last().is_none_or(|last| is_blank(last))
            || block_start(rest, depth, true).is_some()
        {
            break;
        } else {
            // A lazy continuation of the quoted paragraph.
            inner.push(rest.to_owned());
        }
        next += 1;
    }
    (Block::Quote(inner), next)
}

fn list(lines: &[String], at: usize, first: Marker, depth: usize) -> (Block, usize) {
    let mut items = Vec::new();
    let mut blank_between_items = false;
    let mut next = at;
    loop {
        let line = &lines[next];
        let (marker_columns, offset) = indent(line);
        let marker = match marker_of(&line[offset..]) {
            Some(marker) if marker.kind == first.kind => marker,
            _ => break,
        };
        let after = &line[offset + marker.width..];
        let (spaces, _) = indent(after);
        let content_columns =
            marker_columns + marker.width + if (1..=4).contains(&spaces) { spaces } else { 1 };
        // Children need two columns past the marker (or the content column, if nearer).
        let child_columns = content_columns.min(marker_columns + 2);
        let mut item = vec![after.trim_start().to_owned()];
        next += 1;
        let mut blanks = 0;
        while let Some(line) = lines.get(next) {
            if is_blank(line) {
                blanks += 1;
                next += 1;
                continue;
            }
            let (columns, offset) = indent(line);
            if columns >= child_columns {
                item.extend(std::iter::repeat_n(String::new(), blanks));
                item.push(strip_columns(line, columns.min(content_columns)));
            } else if blanks == 0
                && item.last().is_some_and(|last| !is_blank(last))
                && block_start(&line[offset..], depth + 1, true).is_none()
                && marker_of(&line[offset..]).is_none()
                && table_start(lines, next).is_none()
            {
                // A lazy continuation of the item's paragraph.
                item.push(line[offset..].to_owned());
            } else {
                break;
            }
            blanks = 0;
            next += 1;
        }
        // Trailing blank lines belong to whatever follows the item.
        next -= blanks;
        items.push(item);
        let sibling = lines.get(next + blanks).filter(|line| {
            let rest = line.trim_start();
            !is_rule(rest) && marker_of(rest).is_some_and(|m| m.kind == first.kind)
        });
        if sibling.is_none() {
            break;
        }
        blank_between_items |= blanks > 0;
        next += blanks;
    }
    let block = Block::List {
        start: first.start,
        items,
        blank_between_items,
    };
    (block, next)
}

fn table(
    lines: &[String],
    at: usize,
    header: Vec<String>,
    aligns: Vec<Align>,
    depth: usize,
) -> (Block, usize) {
    let mut rows = Vec::new();
    let mut next = at + 2;
    while let Some(line) = lines.get(next) {
        let rest = line.trim_start();
        if is_blank(line) || block_start(rest, depth, true).is_some() {
            break;
        }
        let mut cells = table_cells(line);
        cells.resize(header.len(), String::new());
        rows.push(cells);
        next += 1;
    }
    (
        Block::Table {
            aligns,
            header,
            rows,
        },
        next,
    )
}

fn paragraph(lines: &[String], at: usize, depth: usize) -> (Block, usize) {
    let mut text = lines[at].trim_start().to_owned();
    let mut next = at + 1;
    while let Some(line) = lines.get(next) {
        let rest = line.trim_start();
        if is_blank(line)
            || block_start(rest, depth, true).is_some()
            || table_start(lines, next).is_some()
        {
            break;
        }
        text.push('\n');
        text.push_str(rest);
        next += 1;
    }
    let kept = text.trim_end().len();
    text.truncate(kept);
    (Block::Paragraph(text), next)
}

fn render_blocks(out: &mut String, blocks: &[Block], depth: usize, tight: bool) {
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Paragraph(text) if tight => {
                inline::render(out, text);
                if index + 1 < blocks.len() {
                    out.push('\n');
                }
            }
            Block::Paragraph(text) => {
                out.push_str("<p>");
                inline::render(out, text);
                out.push_str("</p>\n");
            }
            Block::Heading(level, text) => {
                let digit = char::from(b'0' + *level as u8);
                out.push_str("<h");
                out.push(digit);
                out.push('>');
                inline::render(out, text);
                out.push_str("</h");
                out.push(digit);
                out.push_str(">\n");
            }
            Block::Rule => out.push_str("<hr />\n"),
            Block::Code { language, text } => {
                out.push_str("<pre><code");
                if !language.is_empty() {
                    out.push_str(" class=\"language-");
                    out.push_str(language);
                    out.push('"');
                }
                out.push('>');
                push_text(out, text);
                out.push_str("</code></pre>\n");
            }
            Block::Quote(lines) => {
                out.push_str("<blockquote>\n");
                let (inner, _) = parse_blocks(lines, depth + 1);
                render_blocks(out, &inner, depth + 1, false);
                out.push_str("</blockquote>\n");
            }
            Block::List {
                start,
                items,
                blank_between_items,
            } => {
                let parsed: Vec<(Vec<Block>, bool)> = items
                    .iter()
                    .map(|item| parse_blocks(item, depth + 1))
                    .collect();
                let loose = *blank_between_items || parsed.iter().any(|(_, gap)| *gap);
                let tag = match start {
                    None => "ul",
                    Some(_) => "ol",
                };
                out.push('<');
                out.push_str(tag);
                if let Some(n) = start.filter(|&n| n != 1) {
                    out.push_str(" start=\"");
                    out.push_str(&n.to_string());
                    out.push('"');
                }
                out.push_str(">\n");
                for (inner, _) in &parsed {
                    out.push_str("<li>");
                    render_blocks(out, inner, depth + 1, !loose);
                    out.push_str("</li>\n");
                }
                out.push_str("</");
                out.push_str(tag);
                out.push_str(">\n");
            }
            Block::Table {
                aligns,
                header,
                rows,
            } => render_table(out, aligns, header, rows),
        }
    }
}

fn render_table(out: &mut String, aligns: &[Align], header: &[String], rows: &[Vec<String>]) {
    let row = |out: &mut String, cells: &[String], tag: &str| {
        out.push_str("<tr>");
        for (cell, align) in cells.iter().zip(aligns) {
            out.push('<');
            out.push_str(tag);
            out.push_str(match align {
                Align::None => "",
                Align::Left => " style=\"text-align: left\"",
                Align::Center => " style=\"text-align: center\"",
                Align::Right => " style=\"text-align: right\"",
            });
            out.push('>');
            inline::render(out, cell);
            out.push_str("</");
            out.push_str(tag);
            out.push('>');
        }
        out.push_str("</tr>\n");
    };
    out.push_str("<table>\n<thead>\n");
    row(out, header, "th");
    out.push_str("</thead>\n");
    if !rows.is_empty() {
        out.push_str("<tbody>\n");
        for cells in rows {
            row(out, cells, "td");
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table>\n");
}

/// Escapes text for a text node: `&`, `<` and `>` (quotes need no escaping outside attributes).
fn push_text(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(at) = rest.find(['&', '<', '>']) {
        out.push_str(&rest[..at]);
        out.push_str(match rest.as_bytes()[at] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            _ => "&gt;",
        });
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
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

    fn md(source: &str) -> String {
        let html = markdown_to_html(source);
        assert_safe_markup(&html);
        html
    }

    #[test]
    fn blank_lines_separate_paragraphs() {
        assert_eq!(md("one\n\n\ntwo"), "<p>one</p>\n<p>two</p>\n");
    }

    #[test]
    fn a_single_newline_inside_a_paragraph_is_a_space() {
        assert_eq!(md("one\ntwo  \t\n   three"), "<p>one two three</p>\n");
    }

    #[test]
    fn two_trailing_spaces_make_a_hard_break() {
        assert_eq!(md("one  \ntwo"), "<p>one<br />\ntwo</p>\n");
    }

    #[test]
    fn a_trailing_backslash_makes_a_hard_break() {
        assert_eq!(md("one\\\ntwo"), "<p>one<br />\ntwo</p>\n");
    }

    #[test]
    fn crlf_line_endings_read_like_newlines() {
        assert_eq!(md("# T\r\n\r\na\r\nb"), "<h1>T</h1>\n<p>a b</p>\n");
    }

    #[test]
    fn atx_headings_have_six_levels() {
        assert_eq!(
            md("# One\n###### Six\n####### Seven"),
            "<h1>One</h1>\n<h6>Six</h6>\n<p>####### Seven</p>\n"
        );
    }

    #[test]
    fn a_hash_without_a_space_is_not_a_heading() {
        assert_eq!(md("#hashtag"), "<p>#hashtag</p>\n");
    }

    #[test]
    fn closing_hashes_of_a_heading_are_dropped() {
        assert_eq!(md("## Title ##"), "<h2>Title</h2>\n");
        assert_eq!(md("## C#"), "<h2>C#</h2>\n");
    }

    #[test]
    fn underscores_make_emphasis_and_strong() {
        assert_eq!(
            md("_em_ and __strong__"),
            "<p><em>em</em> and <strong>strong</strong></p>\n"
        );
    }

    #[test]
    fn underscores_inside_words_stay_literal() {
        assert_eq!(md("snake_case_name"), "<p>snake_case_name</p>\n");
    }

    #[test]
    fn double_tildes_strike_through_but_a_single_tilde_is_text() {
        assert_eq!(
            md("~~old~~ takes ~5 min"),
            "<p><del>old</del> takes ~5 min</p>\n"
        );
    }

    #[test]
    fn strong_emphasis_can_hold_strikethrough_and_code() {
        assert_eq!(
            md("**a ~~b `c`~~**"),
            "<p><strong>a <del>b <code>c</code></del></strong></p>\n"
        );
    }

    #[test]
    fn unterminated_emphasis_stays_literal() {
        assert_eq!(md("**bold *and more"), "<p>**bold *and more</p>\n");
        assert_eq!(md("a ***b** c"), "<p>a *<strong>b</strong> c</p>\n");
    }

    #[test]
    fn inline_code_keeps_markdown_and_html_literal() {
        assert_eq!(
            md("`*a* <b> &amp;`"),
            "<p><code>*a* &lt;b&gt; &amp;amp;</code></p>\n"
        );
    }

    #[test]
    fn double_backtick_code_can_hold_a_backtick() {
        assert_eq!(md("``a ` b``"), "<p><code>a ` b</code></p>\n");
        assert_eq!(md("`` `x` ``"), "<p><code>`x`</code></p>\n");
    }

    #[test]
    fn an_unmatched_backtick_is_text() {
        assert_eq!(md("it`s"), "<p>it`s</p>\n");
    }

    #[test]
    fn fenced_code_keeps_its_lines_and_language() {
        assert_eq!(
            md("```rust\nfn main() {\n    let x = 1;\n}\n```\nafter"),
            "<pre><code class=\"language-rust\">fn main() {\n    let x = 1;\n}\n</code></pre>\n\
             <p>after</p>\n"
        );
    }

    #[test]
    fn tilde_fences_work_like_backtick_fences() {
        assert_eq!(md("~~~\n```\n~~~"), "<pre><code>```\n</code></pre>\n");
    }

    #[test]
    fn the_fence_language_is_sanitised() {
        let html = md("```C++\" onclick=\"x\nx\n```");
        assert!(
            html.starts_with("<pre><code class=\"language-c++\">"),
            "{html}"
        );
        let html = md("```js\"><script>\nx\n```");
        assert!(
            html.starts_with("<pre><code class=\"language-jsscript\">"),
            "{html}"
        );
    }

    #[test]
    fn an_unterminated_fence_runs_to_the_end() {
        assert_eq!(
            md("```\n# not a heading\n\n*x*"),
            "<pre><code># not a heading\n\n*x*\n</code></pre>\n"
        );
    }

    #[test]
    fn bullet_lists_accept_dash_star_and_plus() {
        for marker in ["-", "*", "+"] {
            assert_eq!(
                md(&format!("{marker} a\n{marker} b")),
                "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"
            );
        }
    }

    #[test]
    fn a_different_bullet_starts_a_new_list() {
        assert_eq!(
            md("- a\n+ b"),
            "<ul>\n<li>a</li>\n</ul>\n<ul>\n<li>b</li>\n</ul>\n"
        );
    }

    #[test]
    fn ordered_list_keeps_its_start_number() {
        assert_eq!(
            md("3. three\n4. four"),
            "<ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>\n"
        );
    }

    #[test]
    fn ordered_lists_accept_a_parenthesis() {
        assert_eq!(
            md("1) one\n2) two"),
            "<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n"
        );
    }

    #[test]
    fn a_list_can_follow_a_paragraph_line_directly() {
        assert_eq!(
            md("Steps:\n1. mix\n2. bake"),
            "<p>Steps:</p>\n<ol>\n<li>mix</li>\n<li>bake</li>\n</ol>\n"
        );
    }

    #[test]
    fn a_number_inside_a_paragraph_does_not_start_a_list() {
        assert_eq!(
            md("in the year\n2024. it rained"),
            "<p>in the year 2024. it rained</p>\n"
        );
    }

    #[test]
    fn lists_nest_by_two_space_indentation() {
        assert_eq!(
            md("- a\n  - b\n    - c\n- d"),
            "<ul>\n<li>a\n<ul>\n<li>b\n<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n</li>\n<li>d</li>\n</ul>\n"
        );
    }

    #[test]
    fn a_bullet_list_nests_inside_a_numbered_item() {
        assert_eq!(
            md("1. a\n   - b\n2. c"),
            "<ol>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n<li>c</li>\n</ol>\n"
        );
    }

    #[test]
    fn a_lazy_line_continues_the_list_item() {
        assert_eq!(
            md("- one\ntwo\n- three"),
            "<ul>\n<li>one two</li>\n<li>three</li>\n</ul>\n"
        );
    }

    #[test]
    fn blank_lines_between_items_make_a_loose_list() {
        assert_eq!(
            md("- a\n\n- b"),
            "<ul>\n<li><p>a</p>\n</li>\n<li><p>b</p>\n</li>\n</ul>\n"
        );
    }

    #[test]
    fn a_blank_line_inside_a_nested_list_leaves_the_outer_list_tight() {
        let html = md("- a\n  - b\n\n  - c\n- d");
        assert!(
            html.starts_with("<ul>\n<li>a\n<ul>\n<li><p>b</p>"),
            "{html}"
        );
        assert!(html.contains("<li>d</li>"), "{html}");
    }

    #[test]
    fn an_indented_paragraph_after_a_blank_stays_in_the_item() {
        assert_eq!(
            md("- a\n\n  more\n\nout"),
            "<ul>\n<li><p>a</p>\n<p>more</p>\n</li>\n</ul>\n<p>out</p>\n"
        );
    }

    #[test]
    fn block_quotes_hold_blocks_and_lazy_lines() {
        assert_eq!(
            md("> # Q\n> one\ntwo\n\nafter"),
            "<blockquote>\n<h1>Q</h1>\n<p>one two</p>\n</blockquote>\n<p>after</p>\n"
        );
    }

    #[test]
    fn block_quotes_nest() {
        assert_eq!(
            md("> a\n>> b"),
            "<blockquote>\n<p>a</p>\n<blockquote>\n<p>b</p>\n</blockquote>\n</blockquote>\n"
        );
    }

    #[test]
    fn quotes_nested_past_the_limit_are_text() {
        let html = md(&">".repeat(10_000));
        assert_eq!(html.matches("<blockquote>").count(), MAX_DEPTH, "{html}");
    }

    #[test]
    fn thematic_breaks_of_dashes_stars_and_underscores() {
        assert_eq!(
            md("a\n---\n* * *\n___"),
            "<p>a</p>\n<hr />\n<hr />\n<hr />\n"
        );
    }

    #[test]
    fn https_autolinks_become_links() {
        assert_eq!(
            md("<https://example.org/a?b=1&c=2>"),
            "<p><a href=\"https://example.org/a?b=1&amp;c=2\" rel=\"noopener noreferrer\" \
             target=\"_blank\">https://example.org/a?b=1&amp;c=2</a></p>\n"
        );
    }

    #[test]
    fn links_hold_emphasis_and_code() {
        assert_eq!(
            md("[*a* `b`](#x)"),
            "<p><a href=\"#x\"><em>a</em> <code>b</code></a></p>\n"
        );
    }

    #[test]
    fn link_urls_may_hold_balanced_parentheses_and_escapes() {
        let html = md("[w](https://en.wikipedia.org/wiki/Foo_(bar)) [e](a\\)b)");
        assert!(
            html.contains("href=\"https://en.wikipedia.org/wiki/Foo_(bar)\""),
            "{html}"
        );
        assert!(html.contains("href=\"a)b\""), "{html}");
    }

    #[test]
    fn links_do_not_nest() {
        assert_eq!(
            md("[a [b](#b)](#a)"),
            "<p>[a <a href=\"#b\">b</a>](#a)</p>\n"
        );
    }

    #[test]
    fn brackets_without_a_destination_stay_text() {
        assert_eq!(md("[x] and [y](z"), "<p>[x] and [y](z</p>\n");
    }

    #[test]
    fn a_link_with_an_unsafe_entity_encoded_scheme_in_an_image_is_dropped() {
        let html = md("![pic](javascript&#58;alert(1))");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("pic"), "{html}");
    }

    #[test]
    fn pipe_tables_need_no_outer_pipes() {
        assert_eq!(
            md("a | b\n--- | :-:\n1 | 2"),
            "<table>\n<thead>\n<tr><th>a</th><th style=\"text-align: center\">b</th></tr>\n\
             </thead>\n<tbody>\n<tr><td>1</td><td style=\"text-align: center\">2</td></tr>\n\
             </tbody>\n</table>\n"
        );
    }

    #[test]
    fn ragged_table_rows_are_padded_to_the_header() {
        let html = md("| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 |");
        assert!(
            html.contains("<tr><td>1</td><td></td><td></td></tr>"),
            "{html}"
        );
        assert!(
            html.contains("<tr><td>1</td><td>2</td><td>3</td></tr>"),
            "{html}"
        );
        assert!(!html.contains('4'), "{html}");
    }

    #[test]
    fn escaped_pipes_stay_inside_their_cell() {
        let html = md("| expr |\n|---|\n| `a \\| b` |");
        assert!(html.contains("<td><code>a | b</code></td>"), "{html}");
    }

    #[test]
    fn a_table_can_follow_a_paragraph_line() {
        let html = md("Planets:\n| a |\n|---|\n| b |\nnext row");
        assert!(html.starts_with("<p>Planets:</p>\n<table>"), "{html}");
        assert!(html.contains("<td>next row</td>"), "{html}");
    }

    #[test]
    fn a_header_without_a_matching_delimiter_row_is_a_paragraph() {
        assert_eq!(md("| a | b |\n|---|"), "<p>| a | b | |---|</p>\n");
    }

    #[test]
    fn backslash_escapes_make_punctuation_literal() {
        assert_eq!(
            md("\\*not em\\* \\[x\\](y) \\# \\<b\\> \\\\"),
            "<p>*not em* [x](y) # &lt;b&gt; \\</p>\n"
        );
    }

    #[test]
    fn a_backslash_before_a_letter_stays() {
        assert_eq!(md("C:\\path\\n"), "<p>C:\\path\\n</p>\n");
    }

    #[test]
    fn common_named_entities_decode() {
        assert_eq!(
            md("&nbsp;&mdash;&ndash;&hellip;&times;&rarr;&larr;&quot;&#39;&euro;"),
            "<p>\u{a0}—–…×→←\"'€</p>\n"
        );
    }

    #[test]
    fn numeric_entities_decode_and_invalid_ones_become_the_replacement_character() {
        assert_eq!(md("&#x41;&#66;&#0;&#xD800;"), "<p>AB\u{FFFD}\u{FFFD}</p>\n");
    }

    #[test]
    fn unknown_entities_stay_literal() {
        assert_eq!(md("&bogus; & &amp"), "<p>&amp;bogus; &amp; &amp;amp</p>\n");
    }

    #[test]
    fn dollar_signs_are_plain_text() {
        assert_eq!(md("$x^2$ costs $5"), "<p>$x^2$ costs $5</p>\n");
    }

    #[test]
    fn long_runs_of_nested_delimiters_and_brackets_finish() {
        let mut source = String::new();
        for i in 0..100_000 {
            source.push_str(["*", "[", "**a", "](", "_"][i % 5]);
        }
        source.push_str(&"[a](".repeat(10_000));
        source.push_str(&"`".repeat(1000));
        source.push_str(&"<a".repeat(10_000));
        assert!(source.len() > 200_000);
        md(&source);
        let nested = "*[".repeat(50_000) + &"]*".repeat(50_000);
        md(&nested);
        let code_runs: String = (1..2000).map(|n| "`".repeat(n % 50) + "x").collect();
        md(&code_runs);
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
