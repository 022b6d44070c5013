//! Course text as slide paragraphs. Markdown goes through the same renderer the classroom uses
//! (`aula_render::markdown_to_html`, so the slide reads exactly as the page does, raw HTML shown
//! as text), and its small, well-formed output is walked into paragraphs of styled runs. Also
//! here: a rough estimate of how tall text sets, to shrink text that would overflow its box.

use aula_render::{highlight_code, markdown_to_html};

use super::{Align, Bullet, Color, Paragraph, Run, RunStyle, Typeface};

/// How a block of course text looks before Markdown styles it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BaseStyle {
    pub size: u32,
    pub color: Option<Color>,
    pub align: Align,
    pub bold: bool,
}

/// Paragraphs of `markdown` (CommonMark as the classroom renders it).
pub(crate) fn markdown_paragraphs(markdown: &str, base: BaseStyle) -> Vec<Paragraph> {
    let html = markdown_to_html(markdown);
    let mut walker = Walker::new(base);
    for token in tokens(&html) {
        walker.token(token);
    }
    walker.finish()
}

enum Token<'a> {
    Open(&'a str, &'a str),
    Close(&'a str),
    Text(String),
}

/// The renderer's output as tags and decoded text. It only writes well-formed markup with
/// quoted attributes, but nothing here assumes it: an unclosed `<` ends as text.
fn tokens(html: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('<') {
            if let Some(end) = after.find('>') {
                let inside = after[..end].trim_end_matches('/').trim_end();
                if let Some(name) = inside.strip_prefix('/') {
                    out.push(Token::Close(name.trim()));
                } else {
                    let (name, attrs) = inside.split_once(' ').unwrap_or((inside, ""));
                    out.push(Token::Open(name, attrs));
                }
                rest = &after[end + 1..];
                continue;
            }
        }
        // Past the first character (which may be a `<` that opens no tag).
        let first = rest.chars().next().map_or(1, char::len_utf8);
        let end = rest[first..].find('<').map_or(rest.len(), |i| i + first);
        out.push(Token::Text(decode_entities(&rest[..end])));
        rest = &rest[end..];
    }
    out
}

use aula_text::markup::decode_entities;

fn attribute<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let at = attrs.find(&format!("{name}=\""))? + name.len() + 2;
    let end = attrs[at..].find('"')?;
    Some(&attrs[at..at + end])
}

struct List {
    ordered: bool,
    start: u32,
}

struct Walker {
    base: BaseStyle,
    paragraphs: Vec<Paragraph>,
    current: Option<Paragraph>,
    /// Whether the current paragraph is a list item that has not had its own `<p>` yet.
    fresh_item: bool,
    bold: u32,
    italic: u32,
    strike: u32,
    code: u32,
    heading: Option<u8>,
    pre: bool,
    lists: Vec<List>,
    cells_in_row: u32,
    header_cell: bool,
    image_alt: bool,
}

impl Walker {
    fn new(base: BaseStyle) -> Walker {
        Walker {
            base,
            paragraphs: Vec::new(),
            current: None,
            fresh_item: false,
            bold: 0,
            italic: 0,
            strike: 0,
            code: 0,
            heading: None,
            pre: false,
            lists: Vec::new(),
            cells_in_row: 0,
            header_cell: false,
            image_alt: false,
        }
    }

    fn style(&self) -> RunStyle {
        let scale = match self.heading {
            Some(1) => 2.2,
            Some(2) => 1.6,
            Some(3) => 1.25,
            _ => 1.0,
        };
        RunStyle {
            size: (self.base.size as f64 * scale).round() as u32,
            bold: self.base.bold || self.bold > 0 || self.heading.is_some() || self.header_cell,
            italic: self.italic > 0 || self.image_alt,
            strike: self.strike > 0,
            color: self.base.color,
            typeface: if self.code > 0 || self.pre {
                Typeface::Monospace
            } else {
                Typeface::Body
            },
        }
    }

    fn level(&self) -> u8 {
        self.lists.len().saturating_sub(1).min(8) as u8
    }

    fn start(&mut self, bullet: Bullet) {
        self.flush();
        let space_before = if self.paragraphs.is_empty() {
            0
        } else if matches!(bullet, Bullet::None) || self.lists.is_empty() {
            // The page's 0.4em between blocks.
            self.base.size * 2 / 5
        } else {
            self.base.size / 8
        };
        self.current = Some(Paragraph {
            runs: Vec::new(),
            align: self.base.align,
            bullet,
            level: self.level(),
            space_before,
        });
    }

    fn flush(&mut self) {
        self.fresh_item = false;
        if let Some(mut paragraph) = self.current.take() {
            if let Some(last) = paragraph.runs.last_mut() {
                let trimmed = last.text.trim_end_matches([' ', '\n']).len();
                last.text.truncate(trimmed);
            }
            paragraph.runs.retain(|r| !r.text.is_empty());
            if !paragraph.runs.is_empty() || paragraph.bullet != Bullet::None {
                self.paragraphs.push(paragraph);
            }
        }
    }

    fn push_text(&mut self, text: &str) {
        if self.current.is_none() {
            if text.trim().is_empty() {
                return;
            }
            self.start(Bullet::None);
        }
        let style = self.style();
        let pre = self.pre;
        let Some(paragraph) = self.current.as_mut() else {
            return;
        };
        let mut text = if pre {
            text.to_string()
        } else {
            text.replace(['\n', '\r'], " ")
        };
        let at_start = paragraph
            .runs
            .last()
            .is_none_or(|r| r.text.is_empty() || r.text.ends_with('\n'));
        if at_start && !pre {
            text = text.trim_start().to_string();
        }
        if text.is_empty() {
            return;
        }
        match paragraph.runs.last_mut() {
            Some(last) if last.style == style => last.text.push_str(&text),
            _ => paragraph.runs.push(Run { text, style }),
        }
    }

    fn token(&mut self, token: Token<'_>) {
        match token {
            Token::Text(text) => {
                if self.pre {
                    // Code blocks: one paragraph per line, as written.
                    let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
                    for (index, line) in text.split('\n').enumerate() {
                        if index > 0 {
                            self.start(Bullet::None);
                            if let Some(p) = self.current.as_mut() {
                                p.space_before = 0;
                            }
                        }
                        let line = line.replace('\t', "    ");
                        self.push_text(&line);
                    }
                } else {
                    self.push_text(&text);
                }
            }
            Token::Open(name, attrs) => self.open(name, attrs),
            Token::Close(name) => self.close(name),
        }
    }

    fn open(&mut self, name: &str, attrs: &str) {
        match name {
            "p" => {
                if self.fresh_item {
                    self.fresh_item = false;
                } else {
                    self.start(Bullet::None);
                }
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.heading = name[1..].parse().ok();
                self.start(Bullet::None);
            }
            "pre" => {
                self.start(Bullet::None);
                self.pre = true;
            }
            "ul" | "ol" => {
                self.flush();
                let start = attribute(attrs, "start")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1);
                self.lists.push(List {
                    ordered: name == "ol",
                    start,
                });
            }
            "li" => {
                let bullet = match self.lists.last() {
                    Some(list) if list.ordered => Bullet::Number(list.start),
                    _ => Bullet::Disc,
                };
                self.start(bullet);
                self.fresh_item = true;
            }
            "tr" => {
                self.start(Bullet::None);
                self.cells_in_row = 0;
            }
            "th" | "td" => {
                if self.cells_in_row > 0 {
                    self.push_text(" | ");
                }
                self.cells_in_row += 1;
                self.header_cell = name == "th";
            }
            "strong" => self.bold += 1,
            "em" => self.italic += 1,
            "del" => self.strike += 1,
            "code" => self.code += 1,
            "br" => {
                if let Some(last) = self.current.as_mut().and_then(|p| p.runs.last_mut()) {
                    last.text.push('\n');
                }
            }
            "img" => {
                let alt = attribute(attrs, "alt").map(decode_entities);
                if let Some(alt) = alt.filter(|a| !a.trim().is_empty()) {
                    self.image_alt = true;
                    self.push_text(&format!("[{alt}]"));
                    self.image_alt = false;
                }
            }
            _ => {}
        }
    }

    fn close(&mut self, name: &str) {
        match name {
            "p" | "li" | "tr" => self.flush(),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.flush();
                self.heading = None;
            }
            "pre" => {
                self.flush();
                self.pre = false;
            }
            "ul" | "ol" => {
                self.flush();
                self.lists.pop();
            }
            "th" | "td" => self.header_cell = false,
            "strong" => self.bold = self.bold.saturating_sub(1),
            "em" => self.italic = self.italic.saturating_sub(1),
            "del" => self.strike = self.strike.saturating_sub(1),
            "code" => self.code = self.code.saturating_sub(1),
            _ => {}
        }
    }

    fn finish(mut self) -> Vec<Paragraph> {
        self.flush();
        self.paragraphs
    }
}

/// Code as one monospace paragraph per line, coloured like the classroom's highlighting
/// (`aula_render::highlight_code`, whose spans name the token kinds).
pub(crate) fn code_paragraphs(language: &str, code: &str, size: u32) -> Vec<Paragraph> {
    highlight_code(language, code)
        .iter()
        .map(|line| {
            let mut runs: Vec<Run> = Vec::new();
            let mut kind: Option<String> = None;
            for token in tokens(line) {
                match token {
                    Token::Open("span", attrs) => {
                        kind = attribute(attrs, "class").map(String::from)
                    }
                    Token::Close("span") => kind = None,
                    Token::Text(text) => {
                        let (color, italic) = match kind.as_deref() {
                            Some("tok-kw") => (0xc792ea, false),
                            Some("tok-str") => (0xc3e88d, false),
                            Some("tok-num") => (0xf78c6c, false),
                            Some("tok-com") => (0x7f85a3, true),
                            Some("tok-fn") => (0x82aaff, false),
                            _ => (0xe4e4f0, false),
                        };
                        let mut style = RunStyle::sized(size);
                        style.typeface = Typeface::Monospace;
                        style.italic = italic;
                        style.color = Some(Color::rgb(
                            (color >> 16) as u8,
                            (color >> 8 & 0xff) as u8,
                            (color & 0xff) as u8,
                        ));
                        let text = text.replace('\t', "    ");
                        match runs.last_mut() {
                            Some(last) if last.style == style => last.text.push_str(&text),
                            _ => runs.push(Run { text, style }),
                        }
                    }
                    _ => {}
                }
            }
            if runs.is_empty() {
                // An empty line keeps its height.
                let mut style = RunStyle::sized(size);
                style.typeface = Typeface::Monospace;
                runs.push(Run {
                    text: " ".into(),
                    style,
                });
            }
            Paragraph {
                runs,
                align: Align::Left,
                bullet: Bullet::None,
                level: 0,
                space_before: 0,
            }
        })
        .collect()
}

/// Whether `c` sets about one em wide (CJK ideographs, kana, hangul, full-width forms).
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x3FFFD)
}

/// Roughly how wide `text` sets, in ems. Errs wide: the font a viewer substitutes may be wider
/// than the one named.
pub(crate) fn width_em(text: &str, typeface: Typeface, bold: bool) -> f64 {
    text.chars()
        .map(|c| match c {
            c if is_wide(c) => 1.0,
            _ if typeface == Typeface::Monospace => 0.61,
            ' ' => 0.32,
            'i' | 'l' | 'j' | 't' | 'f' | 'r' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.33,
            'm' | 'w' | 'M' | 'W' => 0.86,
            c if c.is_ascii_uppercase() => 0.68,
            _ if bold => 0.62,
            _ => 0.57,
        })
        .sum()
}

/// How tall `paragraphs` set in a box `width` wide (both in points), with 1.2 line spacing.
pub(crate) fn height_points(paragraphs: &[Paragraph], width: f64, wrap: bool) -> f64 {
    let mut total = 0.0;
    for paragraph in paragraphs {
        let size = paragraph
            .runs
            .iter()
            .map(|r| r.style.size)
            .max()
            .unwrap_or(1800) as f64
            / 100.0;
        let indent = if paragraph.bullet == Bullet::None {
            0.0
        } else {
            size * 1.3 + paragraph.level as f64 * size * 1.3
        };
        let available = (width - indent).max(size);
        // Each forced line break starts a line; each line wraps on its own.
        let mut lines = 0.0;
        let mut line_width = 0.0;
        let close_line = |line_width: f64| {
            if wrap {
                (line_width / available).ceil().max(1.0)
            } else {
                1.0
            }
        };
        for run in &paragraph.runs {
            let em = run.style.size as f64 / 100.0;
            let mut parts = run.text.split('\n').peekable();
            while let Some(part) = parts.next() {
                line_width += width_em(part, run.style.typeface, run.style.bold) * em;
                if parts.peek().is_some() {
                    lines += close_line(line_width);
                    line_width = 0.0;
                }
            }
        }
        lines += close_line(line_width);
        // Word wrapping leaves ragged line ends: about one more line in four.
        if wrap && lines > 1.0 {
            lines += (lines / 4.0).floor();
        }
        total += lines * size * 1.2 + paragraph.space_before as f64 / 100.0;
    }
    total
}

/// Shrinks every run of `paragraphs` (down to `floor` of its size) until the text is estimated to
/// fit `width` × `height` points; what the classroom would clip is kept, just smaller.
pub(crate) fn shrink_to_fit(
    paragraphs: &mut [Paragraph],
    width: f64,
    height: f64,
    wrap: bool,
    floor: f64,
) {
    if height_points(paragraphs, width, wrap) <= height {
        return;
    }
    let original: Vec<Vec<u32>> = paragraphs
        .iter()
        .map(|p| p.runs.iter().map(|r| r.style.size).collect())
        .collect();
    let mut scale = 1.0;
    while scale > floor {
        scale = (scale - 0.05_f64).max(floor);
        for (paragraph, sizes) in paragraphs.iter_mut().zip(&original) {
            for (run, size) in paragraph.runs.iter_mut().zip(sizes) {
                run.style.size = ((*size as f64 * scale).round() as u32).max(100);
            }
            paragraph.space_before = (paragraph.space_before as f64 * scale) as u32;
        }
        if height_points(paragraphs, width, wrap) <= height {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> BaseStyle {
        BaseStyle {
            size: 2000,
            color: None,
            align: Align::Left,
            bold: false,
        }
    }

    fn texts(paragraphs: &[Paragraph]) -> Vec<String> {
        paragraphs.iter().map(Paragraph::text).collect()
    }

    #[test]
    fn emphasis_becomes_bold_and_italic_runs() {
        let p = markdown_paragraphs("Plain **bold** and *it* ***both***", base());
        assert_eq!(texts(&p), ["Plain bold and it both"]);
        let runs: Vec<(&str, bool, bool)> = p[0]
            .runs
            .iter()
            .map(|r| (r.text.as_str(), r.style.bold, r.style.italic))
            .collect();
        assert_eq!(
            runs,
            [
                ("Plain ", false, false),
                ("bold", true, false),
                (" and ", false, false),
                ("it", false, true),
                (" ", false, false),
                ("both", true, true)
            ]
        );
    }

    #[test]
    fn lists_become_bulleted_and_numbered_paragraphs() {
        let p = markdown_paragraphs("Intro:\n1. **one**\n2. two\n\n- a\n  - nested", base());
        assert_eq!(texts(&p), ["Intro:", "one", "two", "a", "nested"]);
        assert_eq!(p[1].bullet, Bullet::Number(1));
        assert_eq!(
            p[2].bullet,
            Bullet::Number(1),
            "the list's start, not the item's"
        );
        assert_eq!(p[3].bullet, Bullet::Disc);
        assert_eq!((p[4].bullet, p[4].level), (Bullet::Disc, 1));
    }

    #[test]
    fn underscores_inside_words_stay_text_and_raw_html_is_shown_as_written() {
        let p = markdown_paragraphs("d_model and h_t <b>x</b> &amp; 1 < 2", base());
        assert_eq!(texts(&p), ["d_model and h_t <b>x</b> & 1 < 2"]);
    }

    #[test]
    fn headings_are_bold_and_larger_and_code_blocks_keep_their_lines() {
        let p = markdown_paragraphs("# Title\n\n```\nfn main() {\n\tgo();\n}\n```", base());
        assert_eq!(texts(&p), ["Title", "fn main() {", "    go();", "}"]);
        assert!(p[0].runs[0].style.bold && p[0].runs[0].style.size == 4400);
        assert_eq!(p[2].runs[0].style.typeface, Typeface::Monospace);
    }

    #[test]
    fn long_text_is_shrunk_until_it_fits_and_short_text_is_left_alone() {
        let mut short = markdown_paragraphs("Short", base());
        shrink_to_fit(&mut short, 300.0, 40.0, true, 0.5);
        assert_eq!(short[0].runs[0].style.size, 2000);
        let mut long = markdown_paragraphs(&"many words here ".repeat(40), base());
        shrink_to_fit(&mut long, 300.0, 120.0, true, 0.5);
        let size = long[0].runs[0].style.size;
        assert!((1000..2000).contains(&size), "{size}");
    }
}
