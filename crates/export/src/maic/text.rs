//! Small text conversions the classroom archive needs: OpenMAIC's rich text (HTML) to Aula's
//! Markdown, plain text inside shapes, `data:` URLs, ISO timestamps and language directives.

/// OpenMAIC text HTML (p, span, strong, em, u, h1–h6, lists, br) to Markdown. Tags Aula has no
/// Markdown for (underline, spans, fonts) keep their text and lose their styling; characters that
/// Markdown would read as formatting are escaped.
pub(super) fn html_to_markdown(html: &str) -> String {
    let mut out = String::new();
    let mut lists: Vec<Option<u32>> = Vec::new();
    let mut pending_space = false;
    for token in tokens(html) {
        match token {
            Token::Text(text) => {
                for (i, word) in text.split(char::is_whitespace).enumerate() {
                    if i > 0 {
                        pending_space = true;
                    }
                    if word.is_empty() {
                        continue;
                    }
                    if pending_space && !out.is_empty() && !out.ends_with(['\n', ' ']) {
                        out.push(' ');
                    }
                    pending_space = false;
                    push_markdown_escaped(&mut out, word);
                }
            }
            Token::Tag { name, closing } => {
                let inline = matches!(
                    name.as_str(),
                    "strong"
                        | "b"
                        | "em"
                        | "i"
                        | "s"
                        | "del"
                        | "strike"
                        | "code"
                        | "span"
                        | "u"
                        | "sub"
                        | "sup"
                        | "a"
                );
                // A space before an opening mark goes outside it: `a <em>b` is `a *b`.
                if inline
                    && !closing
                    && pending_space
                    && !out.is_empty()
                    && !out.ends_with(['\n', ' '])
                {
                    out.push(' ');
                    pending_space = false;
                }
                match (name.as_str(), closing) {
                    ("p" | "div", _) => block_break(&mut out, lists.is_empty()),
                    ("h1" | "h2" | "h3" | "h4" | "h5" | "h6", false) => {
                        block_break(&mut out, true);
                        let level = usize::from(name.as_bytes()[1] - b'0');
                        out.push_str(&"#".repeat(level));
                        out.push(' ');
                    }
                    ("h1" | "h2" | "h3" | "h4" | "h5" | "h6", true) => block_break(&mut out, true),
                    ("br", _) => out.push('\n'),
                    ("strong" | "b", _) => out.push_str("**"),
                    ("em" | "i", _) => out.push('*'),
                    ("s" | "del" | "strike", _) => out.push_str("~~"),
                    ("code", _) => out.push('`'),
                    ("ul", false) => {
                        block_break(&mut out, lists.is_empty());
                        lists.push(None);
                    }
                    ("ol", false) => {
                        block_break(&mut out, lists.is_empty());
                        lists.push(Some(1));
                    }
                    ("ul" | "ol", true) => {
                        lists.pop();
                        block_break(&mut out, lists.is_empty());
                    }
                    ("li", false) => {
                        if !out.is_empty() && !out.ends_with('\n') {
                            out.push('\n');
                        }
                        out.push_str(&"   ".repeat(lists.len().saturating_sub(1)));
                        match lists.last_mut() {
                            Some(Some(n)) => {
                                out.push_str(&format!("{n}. "));
                                *n += 1;
                            }
                            _ => out.push_str("- "),
                        }
                    }
                    _ => {}
                }
                if !inline {
                    pending_space = false;
                }
            }
        }
    }
    tidy_lines(&out)
}

/// The text of an HTML fragment, one line per paragraph.
pub(super) fn html_to_plain(html: &str) -> String {
    let mut out = String::new();
    for token in tokens(html) {
        match token {
            Token::Text(text) => {
                let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if text.starts_with(char::is_whitespace) && !out.ends_with(['\n', ' ']) {
                    out.push(' ');
                }
                out.push_str(&collapsed);
                if text.ends_with(char::is_whitespace) && !collapsed.is_empty() {
                    out.push(' ');
                }
            }
            Token::Tag { name, .. } => {
                if matches!(
                    name.as_str(),
                    "p" | "div" | "br" | "li" | "h1" | "h2" | "h3"
                ) {
                    out.push('\n');
                }
            }
        }
    }
    out.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Plain text as OpenMAIC paragraph HTML.
pub(super) fn plain_to_html(text: &str) -> String {
    text.split('\n')
        .map(|line| format!("<p>{}</p>", aula_render::escape_html(line)))
        .collect()
}

/// The first `name: value` of an inline style in `html`, e.g. `font-size`.
pub(super) fn style_value<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    let lower = html.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        // `font-size` inside `x-font-size` is not it.
        if at > 0
            && lower.as_bytes()[at - 1].is_ascii_alphanumeric() | (lower.as_bytes()[at - 1] == b'-')
        {
            continue;
        }
        let rest = html[from..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let end = rest.find([';', '"', '\'']).unwrap_or(rest.len());
        return Some(rest[..end].trim());
    }
    None
}

fn block_break(out: &mut String, blank_line: bool) {
    if out.is_empty() {
        return;
    }
    let want = if blank_line { "\n\n" } else { "\n" };
    while !out.ends_with(want) {
        if out.ends_with('\n') && !blank_line {
            return;
        }
        out.push('\n');
    }
}

/// Trims trailing spaces, drops empty emphasis pairs and collapses runs of blank lines.
fn tidy_lines(text: &str) -> String {
    let cleaned = text.replace("****", "").replace("~~~~", "");
    let mut out = String::new();
    let mut blank = 0;
    for line in cleaned.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

fn push_markdown_escaped(out: &mut String, word: &str) {
    for (i, c) in word.chars().enumerate() {
        let line_start = i == 0 && (out.is_empty() || out.ends_with('\n'));
        if matches!(c, '\\' | '*' | '_' | '`' | '~' | '[' | ']' | '<')
            || (line_start && matches!(c, '#' | '>' | '-' | '+'))
        {
            out.push('\\');
        }
        out.push(c);
    }
}

enum Token {
    Text(String),
    Tag { name: String, closing: bool },
}

/// Splits HTML into text (entities decoded) and tags (lowercase names, attributes ignored).
/// Comments, scripts and styles are skipped.
fn tokens(html: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            out.push(Token::Text(decode_entities(rest)));
            break;
        };
        if open > 0 {
            out.push(Token::Text(decode_entities(&rest[..open])));
        }
        rest = &rest[open..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let Some(close) = rest.find('>') else {
            out.push(Token::Text(decode_entities(rest)));
            break;
        };
        let inner = &rest[1..close];
        rest = &rest[close + 1..];
        let closing = inner.starts_with('/');
        let name: String = inner
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() {
            out.push(Token::Text(format!("<{inner}>")));
            continue;
        }
        if !closing && matches!(name.as_str(), "script" | "style") {
            let end_tag = format!("</{name}");
            let lower = rest.to_ascii_lowercase();
            rest = match lower.find(&end_tag) {
                Some(end) => rest[end..].find('>').map_or("", |gt| &rest[end + gt + 1..]),
                None => "",
            };
            continue;
        }
        out.push(Token::Tag { name, closing });
    }
    out
}

/// An OpenMAIC text's references decoded; its editor writes `&nbsp;` for plain spaces, so a
/// no-break space becomes one.
fn decode_entities(text: &str) -> String {
    aula_text::markup::decode_entities(text).replace('\u{a0}', " ")
}

/// A `data:<mime>;base64,<data>` URL's media type and bytes.
pub(super) fn data_url(url: &str) -> Option<(String, Vec<u8>)> {
    let rest = url.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    let mime = header.strip_suffix(";base64")?;
    Some((mime.to_ascii_lowercase(), crate::base64::decode(data)?))
}

/// The usual file extension of a media type.
pub(super) fn extension_of_mime(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/avif" => "avif",
        "video/mp4" => "mp4",
        "video/webm" => "webm",
        "audio/mpeg" => "mp3",
        "audio/wav" => "wav",
        "audio/ogg" => "ogg",
        _ => "png",
    }
}

/// The media type of a file extension, for the archive's media index.
pub(super) fn mime_of_extension(ext: &str) -> &'static str {
    match ext {
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "avif" => "image/avif",
        "mp4" | "m4v" => "video/mp4",
        "webm" => "video/webm",
        "mov" => "video/quicktime",
        "mp3" | "mpeg" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" | "opus" => "audio/ogg",
        "m4a" | "aac" => "audio/aac",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}

/// Unix milliseconds as `2026-01-01T00:00:00.000Z` (what OpenMAIC writes in `exportedAt`).
pub(super) fn iso_time(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), by 400-year eras.
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        unix_ms % 1000
    )
}

/// Language tags Aula names in the directive it writes, and words that name them in a
/// directive written by someone else.
const LANGUAGES: &[(&str, &str, &[&str])] = &[
    ("en", "English", &["english", "英语", "英文"]),
    (
        "zh-CN",
        "Simplified Chinese",
        &["chinese", "中文", "汉语", "普通话"],
    ),
    (
        "zh-TW",
        "Traditional Chinese",
        &["traditional chinese", "繁體"],
    ),
    ("es", "Spanish", &["spanish", "español"]),
    ("fr", "French", &["french", "français"]),
    ("de", "German", &["german", "deutsch"]),
    ("ja", "Japanese", &["japanese", "日本語"]),
    ("ko", "Korean", &["korean", "한국어"]),
    ("pt", "Portuguese", &["portuguese", "português"]),
    ("ru", "Russian", &["russian", "русск"]),
    ("it", "Italian", &["italian", "italiano"]),
    ("ar", "Arabic", &["arabic", "العربية"]),
];

/// The language directive Aula writes for a course language.
pub(super) fn directive_for(tag: &str) -> String {
    match LANGUAGES
        .iter()
        .find(|(t, _, _)| t.eq_ignore_ascii_case(tag))
    {
        Some((_, name, _)) => format!("Teach in {name} ({tag})."),
        None => format!("Teach in the language with the tag {tag}."),
    }
}

/// The course language a directive asks for: the tag Aula wrote into it, else a language it
/// names (the later, more specific names win), else `None`.
pub(super) fn language_of_directive(directive: &str) -> Option<String> {
    let written = directive
        .rsplit_once('(')
        .and_then(|(_, tail)| tail.strip_suffix(").").map(str::to_string))
        .or_else(|| {
            directive
                .strip_prefix("Teach in the language with the tag ")
                .and_then(|t| t.strip_suffix('.'))
                .map(str::to_string)
        });
    if let Some(tag) = written.filter(|t| directive_for(t) == directive) {
        return Some(tag);
    }
    let lower = directive.to_lowercase();
    LANGUAGES
        .iter()
        .rev()
        .filter_map(|(tag, _, words)| {
            words
                .iter()
                .filter_map(|w| lower.find(w))
                .min()
                .map(|at| (at, *tag))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, tag)| tag.to_string())
}

/// Whether `text` has CJK ideographs, the hint left when a classroom names no language.
pub(super) fn has_cjk(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmaic_rich_text_becomes_markdown() {
        let html = r#"<p style="font-size: 24px;"><strong>Photosynthesis</strong> makes <em>sugar</em> &amp; O<sub>2</sub></p><ul><li>light</li><li>water</li></ul><h2>Next</h2>"#;
        assert_eq!(
            html_to_markdown(html),
            "**Photosynthesis** makes *sugar* & O2\n\n- light\n- water\n\n## Next"
        );
        assert_eq!(style_value(html, "font-size"), Some("24px"));
    }

    #[test]
    fn references_are_decoded_a_no_break_space_is_a_space_and_a_long_ampersand_run_is_text() {
        assert_eq!(
            html_to_plain("<p>a&nbsp;b &#x4E2D; &lt;c&gt;</p>"),
            "a b 中 <c>"
        );
        // A multi-byte character twelve bytes after an `&` once cut a string inside it.
        assert_eq!(html_to_plain("<p>&abcdefghij中文</p>"), "&abcdefghij中文");
    }

    #[test]
    fn markdown_characters_in_plain_text_are_escaped() {
        assert_eq!(html_to_markdown("<p>2*3 = 6_a</p>"), r"2\*3 = 6\_a");
        assert_eq!(html_to_markdown("<p>- not a list</p>"), r"\- not a list");
    }

    #[test]
    fn base64_and_data_urls_decode() {
        assert_eq!(crate::base64::decode("aGVsbG8=").unwrap(), b"hello");
        let (mime, bytes) = data_url("data:image/PNG;base64,iVBORw==").unwrap();
        assert_eq!((mime.as_str(), bytes.len()), ("image/png", 4));
        assert!(data_url("data:text/plain,hi").is_none());
    }

    #[test]
    fn iso_time_matches_the_calendar() {
        assert_eq!(iso_time(1_767_225_600_123), "2026-01-01T00:00:00.123Z");
        assert_eq!(iso_time(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn directives_name_their_language() {
        for tag in ["en", "zh-CN", "x-klingon"] {
            assert_eq!(
                language_of_directive(&directive_for(tag)).as_deref(),
                Some(tag)
            );
        }
        assert_eq!(
            language_of_directive("请用中文授课，专业术语保留英文。").as_deref(),
            Some("zh-CN")
        );
        assert_eq!(language_of_directive("Be nice."), None);
    }
}
