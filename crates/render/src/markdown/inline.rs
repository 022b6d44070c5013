//! Inline Markdown: code spans, emphasis, strikethrough, links, images, autolinks, escapes,
//! entities and line breaks, in one left-to-right pass plus CommonMark's delimiter-stack
//! matching. The pass writes a flat list of pieces whose opening and closing tags are properly
//! nested by construction (emphasis inside a link is matched before the link closes), and every
//! search is bounded, so long hostile input stays linear.

use super::{browser_view_of_url, is_safe_url, push_text, push_url_attribute};
use crate::push_escaped;

/// Deepest parenthesis nesting in a link destination (CommonMark allows a limit; it keeps a
/// run of `](` from being rescanned to the end of the text).
const MAX_LINK_PARENS: usize = 32;

#[derive(Clone, Copy)]
enum Tag {
    Em,
    Strong,
    Del,
}

impl Tag {
    fn name(self) -> &'static str {
        match self {
            Tag::Em => "em",
            Tag::Strong => "strong",
            Tag::Del => "del",
        }
    }
}

/// A run of `*`, `_` or `~~`: whatever the matching leaves unused is literal text, written
/// between the tags it closes and the tags it opens.
struct Delimiter {
    ch: u8,
    left: usize,
    original: usize,
    can_open: bool,
    can_close: bool,
    closes: Vec<Tag>,
    /// Outermost first.
    opens: Vec<Tag>,
}

enum Piece {
    Text(String),
    Code(String),
    LineBreak,
    Delimiter(Delimiter),
    /// A `[` or `![` that has not (yet) become a link.
    Bracket {
        image: bool,
    },
    LinkOpen {
        /// The URL as the browser reads it; `None` if it is not allowed.
        url: Option<String>,
        title: String,
        image: bool,
    },
    LinkClose,
}

struct Bracket {
    piece: usize,
    image: bool,
    /// Delimiters at or above this index of the delimiter list are inside the brackets.
    delimiters: usize,
}

/// Writes the inline content of `text` (one paragraph, heading or table cell) as HTML.
pub(super) fn render(out: &mut String, text: &str) {
    let pieces = parse(text);
    write(out, &pieces);
}

fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    // The common non-ASCII punctuation and symbols, without Unicode's full tables: Latin-1
    // signs, general punctuation, arrows and math, CJK and full-width punctuation.
    matches!(c,
        '\u{a1}'..='\u{bf}' | '\u{d7}' | '\u{f7}' | '\u{2010}'..='\u{2027}'
        | '\u{2030}'..='\u{205e}' | '\u{2190}'..='\u{23ff}' | '\u{3000}'..='\u{303f}'
        | '\u{ff01}'..='\u{ff0f}' | '\u{ff1a}'..='\u{ff20}' | '\u{ff3b}'..='\u{ff40}'
        | '\u{ff5b}'..='\u{ff65}')
}

fn parse(text: &str) -> Vec<Piece> {
    let bytes = text.as_bytes();
    // Where the last backtick run of each length starts: an opener with no run of its length
    // after it fails at once, and one that has a closer only scans the span it then consumes.
    let mut last_run_of_len: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'`' {
            let len = run_length(bytes, at);
            if last_run_of_len.len() <= len {
                last_run_of_len.resize(len + 1, 0);
            }
            last_run_of_len[len] = at + 1;
            at += len;
        } else {
            at += 1;
        }
    }

    let mut pieces: Vec<Piece> = Vec::new();
    let mut buffer = String::new();
    let mut delimiters: Vec<usize> = Vec::new();
    let mut brackets: Vec<Bracket> = Vec::new();
    // Plain `[` brackets below this depth of `brackets` cannot become links: links do not nest.
    let mut links_allowed_from = 0;

    let flush = |buffer: &mut String, pieces: &mut Vec<Piece>| {
        if !buffer.is_empty() {
            pieces.push(Piece::Text(std::mem::take(buffer)));
        }
    };

    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            b'\\' => match bytes.get(at + 1) {
                Some(b'\n') => {
                    flush(&mut buffer, &mut pieces);
                    pieces.push(Piece::LineBreak);
                    at = skip_spaces(bytes, at + 2);
                }
                Some(&next) if next.is_ascii_punctuation() => {
                    buffer.push(char::from(next));
                    at += 2;
                }
                _ => {
                    buffer.push('\\');
                    at += 1;
                }
            },
            b'\n' => {
                let spaces = buffer.len() - buffer.trim_end_matches(' ').len();
                let hard = spaces >= 2;
                let kept = buffer.trim_end_matches([' ', '\t']).len();
                buffer.truncate(kept);
                if hard {
                    flush(&mut buffer, &mut pieces);
                    pieces.push(Piece::LineBreak);
                } else {
                    buffer.push(' ');
                }
                at = skip_spaces(bytes, at + 1);
            }
            b'`' => {
                let len = run_length(bytes, at);
                let end = at + len;
                let has_closer = last_run_of_len.get(len).is_some_and(|&last| last > at + 1);
                match has_closer.then(|| closing_run(bytes, end, len)).flatten() {
                    Some(close_at) => {
                        flush(&mut buffer, &mut pieces);
                        let code = text[end..close_at].replace('\n', " ");
                        let stripped = code
                            .strip_prefix(' ')
                            .and_then(|c| c.strip_suffix(' '))
                            .filter(|_| code.bytes().any(|b| b != b' '));
                        pieces.push(Piece::Code(stripped.unwrap_or(&code).to_owned()));
                        at = close_at + len;
                    }
                    None => {
                        buffer.push_str(&text[at..end]);
                        at = end;
                    }
                }
            }
            b'*' | b'_' | b'~' => {
                let len = run_length(bytes, at);
                let end = at + len;
                let before = text[..at].chars().next_back().unwrap_or(' ');
                let after = text[end..].chars().next().unwrap_or(' ');
                let left_flanking = !after.is_whitespace()
                    && (!is_punctuation(after) || before.is_whitespace() || is_punctuation(before));
                let right_flanking = !before.is_whitespace()
                    && (!is_punctuation(before) || after.is_whitespace() || is_punctuation(after));
                let (can_open, can_close) = match byte {
                    b'_' => (
                        left_flanking && (!right_flanking || is_punctuation(before)),
                        right_flanking && (!left_flanking || is_punctuation(after)),
                    ),
                    // Only `~~` strikes through; a lone `~` (as in "~5 min") is text.
                    b'~' if len != 2 => (false, false),
                    _ => (left_flanking, right_flanking),
                };
                if can_open || can_close {
                    flush(&mut buffer, &mut pieces);
                    delimiters.push(pieces.len());
                    pieces.push(Piece::Delimiter(Delimiter {
                        ch: byte,
                        left: len,
                        original: len,
                        can_open,
                        can_close,
                        closes: Vec::new(),
                        opens: Vec::new(),
                    }));
                } else {
                    buffer.push_str(&text[at..end]);
                }
                at = end;
            }
            b'!' | b'[' => {
                let image = byte == b'!';
                if image && bytes.get(at + 1) != Some(&b'[') {
                    buffer.push('!');
                    at += 1;
                    continue;
                }
                flush(&mut buffer, &mut pieces);
                brackets.push(Bracket {
                    piece: pieces.len(),
                    image,
                    delimiters: delimiters.len(),
                });
                pieces.push(Piece::Bracket { image });
                at += if image { 2 } else { 1 };
            }
            b']' => {
                let Some(opener) = brackets.pop() else {
                    buffer.push(']');
                    at += 1;
                    continue;
                };
                // The opener's depth; it is free again once popped.
                let depth = brackets.len();
                let allowed = opener.image || depth >= links_allowed_from;
                links_allowed_from = links_allowed_from.min(depth);
                match link_tail(text, at + 1).filter(|_| allowed) {
                    Some((destination, title, end)) => {
                        flush(&mut buffer, &mut pieces);
                        let url = browser_view_of_url(&destination);
                        pieces[opener.piece] = Piece::LinkOpen {
                            url: is_safe_url(&url).then_some(url),
                            title,
                            image: opener.image,
                        };
                        pieces.push(Piece::LinkClose);
                        match_delimiters(&mut pieces, &delimiters[opener.delimiters..]);
                        delimiters.truncate(opener.delimiters);
                        if !opener.image {
                            links_allowed_from = depth;
                        }
                        at = end;
                    }
                    None => {
                        buffer.push(']');
                        at += 1;
                    }
                }
            }
            b'<' => match autolink(text, at) {
                Some((url, shown, end)) => {
                    flush(&mut buffer, &mut pieces);
                    pieces.push(Piece::LinkOpen {
                        url: is_safe_url(&url).then_some(url),
                        title: String::new(),
                        image: false,
                    });
                    pieces.push(Piece::Text(shown.to_owned()));
                    pieces.push(Piece::LinkClose);
                    at = end;
                }
                None => {
                    buffer.push('<');
                    at += 1;
                }
            },
            b'&' => match entity(text, at) {
                Some((decoded, end)) => {
                    buffer.push(decoded);
                    at = end;
                }
                None => {
                    buffer.push('&');
                    at += 1;
                }
            },
            _ => {
                let end = text[at..]
                    .find(['\\', '\n', '`', '*', '_', '~', '!', '[', ']', '<', '&'])
                    .map_or(text.len(), |n| at + n);
                buffer.push_str(&text[at..end]);
                at = end;
            }
        }
    }
    flush(&mut buffer, &mut pieces);
    match_delimiters(&mut pieces, &delimiters);
    pieces
}

/// The start of the first backtick run of exactly `len` at or after `from`.
fn closing_run(bytes: &[u8], mut from: usize, len: usize) -> Option<usize> {
    while from < bytes.len() {
        if bytes[from] == b'`' {
            let run = run_length(bytes, from);
            if run == len {
                return Some(from);
            }
            from += run;
        } else {
            from += 1;
        }
    }
    None
}

fn run_length(bytes: &[u8], at: usize) -> usize {
    bytes[at..].iter().take_while(|&&b| b == bytes[at]).count()
}

fn skip_spaces(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    at
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n')) {
        at += 1;
    }
    at
}

/// `(destination "title")` right after a `]`: the destination and title with escapes and
/// entities decoded, and the index after the `)`.
fn link_tail(text: &str, at: usize) -> Option<(String, String, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'(') {
        return None;
    }
    let mut at = skip_whitespace(bytes, at + 1);
    let destination;
    if bytes.get(at) == Some(&b'<') {
        let start = at + 1;
        at = start;
        loop {
            match *bytes.get(at)? {
                b'>' => break,
                b'\n' | b'<' => return None,
                b'\\' => at += 2,
                _ => at += 1,
            }
        }
        destination = text.get(start..at)?;
        at += 1;
    } else {
        let start = at;
        let mut depth = 0;
        while let Some(&byte) = bytes.get(at) {
            match byte {
                0..=b' ' | 0x7f => break,
                b'\\' if bytes.get(at + 1).is_some_and(u8::is_ascii_punctuation) => at += 1,
                b'(' => {
                    depth += 1;
                    if depth > MAX_LINK_PARENS {
                        return None;
                    }
                }
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                _ => {}
            }
            at += 1;
        }
        if depth != 0 {
            return None;
        }
        destination = &text[start..at];
    }
    let before_title = at;
    at = skip_whitespace(bytes, at);
    let mut title = "";
    if at > before_title || destination.is_empty() {
        if let Some(&open) = bytes.get(at).filter(|b| matches!(b, b'"' | b'\'' | b'(')) {
            let close = if open == b'(' { b')' } else { open };
            let start = at + 1;
            at = start;
            loop {
                match *bytes.get(at)? {
                    b if b == close => break,
                    b'(' if open == b'(' => return None,
                    b'\\' => at += 2,
                    _ => at += 1,
                }
            }
            title = text.get(start..at)?;
            at = skip_whitespace(bytes, at + 1);
        }
    }
    if bytes.get(at) != Some(&b')') {
        return None;
    }
    Some((decode(destination), decode(title), at + 1))
}

/// Backslash escapes and entities decoded, as in a link destination or title.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if bytes.get(at + 1).is_some_and(u8::is_ascii_punctuation) => {
                out.push(char::from(bytes[at + 1]));
                at += 2;
            }
            b'&' => match entity(text, at) {
                Some((decoded, end)) => {
                    out.push(decoded);
                    at = end;
                }
                None => {
                    out.push('&');
                    at += 1;
                }
            },
            _ => {
                let next = at + text[at..].chars().next().map_or(1, char::len_utf8);
                let end = text[next..]
                    .find(['\\', '&'])
                    .map_or(text.len(), |n| next + n);
                out.push_str(&text[at..end]);
                at = end;
            }
        }
    }
    out
}

/// `<https://…>` or `<name@example.org>` at `at`: the URL, the text shown, and the index after
/// the `>`.
fn autolink(text: &str, at: usize) -> Option<(String, &str, usize)> {
    let rest = &text[at + 1..];
    let end = rest.find(|c: char| c == '>' || c == '<' || c <= ' ')?;
    if rest.as_bytes()[end] != b'>' {
        return None;
    }
    let inner = &rest[..end];
    let after = at + 1 + end + 1;
    if let Some((scheme, _)) = inner.split_once(':') {
        let is_scheme = (2..=32).contains(&scheme.len())
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'));
        return is_scheme.then(|| (browser_view_of_url(inner), inner, after));
    }
    let (local, domain) = inner.split_once('@')?;
    let local_ok = !local.is_empty()
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&b));
    let domain_ok = domain.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    });
    (local_ok && domain_ok).then(|| (format!("mailto:{inner}"), inner, after))
}

/// The common named entities (not HTML's full table, which would outweigh this whole module).
const ENTITIES: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("copy", '©'),
    ("reg", '®'),
    ("trade", '™'),
    ("mdash", '—'),
    ("ndash", '–'),
    ("hellip", '…'),
    ("times", '×'),
    ("divide", '÷'),
    ("plusmn", '±'),
    ("minus", '−'),
    ("middot", '·'),
    ("bull", '•'),
    ("deg", '°'),
    ("micro", 'µ'),
    ("para", '¶'),
    ("sect", '§'),
    ("laquo", '«'),
    ("raquo", '»'),
    ("lsquo", '‘'),
    ("rsquo", '’'),
    ("ldquo", '“'),
    ("rdquo", '”'),
    ("prime", '′'),
    ("Prime", '″'),
    ("dagger", '†'),
    ("euro", '€'),
    ("pound", '£'),
    ("yen", '¥'),
    ("cent", '¢'),
    ("frac12", '½'),
    ("frac14", '¼'),
    ("frac34", '¾'),
    ("sup2", '²'),
    ("sup3", '³'),
    ("rarr", '→'),
    ("larr", '←'),
    ("uarr", '↑'),
    ("darr", '↓'),
    ("harr", '↔'),
    ("rArr", '⇒'),
    ("lArr", '⇐'),
    ("hArr", '⇔'),
    ("le", '≤'),
    ("ge", '≥'),
    ("ne", '≠'),
    ("asymp", '≈'),
    ("equiv", '≡'),
    ("infin", '∞'),
    ("sum", '∑'),
    ("prod", '∏'),
    ("radic", '√'),
    ("int", '∫'),
    ("part", '∂'),
    ("nabla", '∇'),
    ("isin", '∈'),
    ("forall", '∀'),
    ("exist", '∃'),
    ("empty", '∅'),
    ("cap", '∩'),
    ("cup", '∪'),
    ("and", '∧'),
    ("or", '∨'),
    ("not", '¬'),
    ("alpha", 'α'),
    ("beta", 'β'),
    ("gamma", 'γ'),
    ("delta", 'δ'),
    ("epsilon", 'ε'),
    ("theta", 'θ'),
    ("lambda", 'λ'),
    ("mu", 'μ'),
    ("pi", 'π'),
    ("sigma", 'σ'),
    ("tau", 'τ'),
    ("phi", 'φ'),
    ("omega", 'ω'),
    ("Delta", 'Δ'),
    ("Sigma", 'Σ'),
    ("Omega", 'Ω'),
    ("check", '✓'),
    ("ensp", '\u{2002}'),
    ("emsp", '\u{2003}'),
    ("thinsp", '\u{2009}'),
    ("zwj", '\u{200d}'),
    ("zwnj", '\u{200c}'),
    ("shy", '\u{ad}'),
];

/// An entity (`&copy;`, `&#169;`, `&#xA9;`) at `at`: the character and the index after `;`.
pub(super) fn entity(text: &str, at: usize) -> Option<(char, usize)> {
    let rest = text.get(at + 1..)?;
    let semicolon = rest.bytes().take(33).position(|b| b == b';')?;
    let name = &rest[..semicolon];
    let end = at + 1 + semicolon + 1;
    let numeric = |digits: &str, radix: u32, max_len: usize| {
        let valid =
            (1..=max_len).contains(&digits.len()) && digits.chars().all(|c| c.is_digit(radix));
        valid.then(|| {
            let code = u32::from_str_radix(digits, radix).unwrap_or(0);
            // NUL, surrogates and out-of-range code points read as U+FFFD, as in browsers.
            char::from_u32(code)
                .filter(|&c| c != '\0')
                .unwrap_or('\u{FFFD}')
        })
    };
    let decoded = if let Some(hex) = name.strip_prefix("#x").or(name.strip_prefix("#X")) {
        numeric(hex, 16, 6)
    } else if let Some(decimal) = name.strip_prefix('#') {
        numeric(decimal, 10, 7)
    } else {
        ENTITIES.iter().find(|(n, _)| *n == name).map(|&(_, c)| c)
    };
    Some((decoded?, end))
}

/// CommonMark's "process emphasis" over the delimiters at `delimiters` (indices into `pieces`,
/// in order). Each closer looks down a stack of openers; the lowest stack position worth
/// searching is remembered per kind of closer, so no opener is looked at twice in vain.
fn match_delimiters(pieces: &mut [Piece], delimiters: &[usize]) {
    let mut openers: Vec<usize> = Vec::new();
    // Indexed by character (3) × can-open (2) × original length mod 3 (3).
    let mut bottoms = [0usize; 18];
    for &closer in delimiters {
        let Piece::Delimiter(c) = &pieces[closer] else {
            continue;
        };
        let (ch, can_open, can_close, original) = (c.ch, c.can_open, c.can_close, c.original);
        if can_close {
            let slot = match ch {
                b'*' => 0,
                b'_' => 6,
                _ => 12,
            } + usize::from(can_open) * 3
                + original % 3;
            while let Piece::Delimiter(c) = &pieces[closer] {
                if c.left == 0 {
                    break;
                }
                let found = (bottoms[slot]..openers.len())
                    .rev()
                    .find(|&k| can_match(&pieces[openers[k]], &pieces[closer]));
                let Some(k) = found else {
                    bottoms[slot] = openers.len();
                    break;
                };
                let opener = openers[k];
                let used = match &pieces[opener] {
                    Piece::Delimiter(o) if ch == b'~' || (o.left >= 2 && c.left >= 2) => 2,
                    _ => 1,
                };
                let tag = match (ch, used) {
                    (b'~', _) => Tag::Del,
                    (_, 2) => Tag::Strong,
                    _ => Tag::Em,
                };
                let mut opener_done = false;
                if let Piece::Delimiter(o) = &mut pieces[opener] {
                    o.left -= used;
                    o.opens.insert(0, tag);
                    opener_done = o.left == 0;
                }
                if let Piece::Delimiter(c) = &mut pieces[closer] {
                    c.left -= used;
                    c.closes.push(tag);
                }
                openers.truncate(k + 1);
                if opener_done {
                    openers.pop();
                }
                for bottom in &mut bottoms {
                    *bottom = (*bottom).min(openers.len());
                }
            }
        }
        let left = match &pieces[closer] {
            Piece::Delimiter(c) => c.left,
            _ => 0,
        };
        if can_open && left > 0 {
            openers.push(closer);
        }
    }
}

fn can_match(opener: &Piece, closer: &Piece) -> bool {
    let (Piece::Delimiter(o), Piece::Delimiter(c)) = (opener, closer) else {
        return false;
    };
    if o.ch != c.ch {
        return false;
    }
    if o.ch == b'~' {
        return true;
    }
    // CommonMark's "rule of three", so `*a**b*` reads as one emphasis.
    let sum = o.original + c.original;
    !((o.can_close || c.can_open) && sum % 3 == 0 && !(o.original % 3 == 0 && c.original % 3 == 0))
}

/// What an opened link or image became, so its close is written to match.
enum Opened {
    Anchor,
    Image {
        src: String,
        title: String,
    },
    /// An unsafe URL, or a link inside an image's alt text: only its text remains.
    Dropped,
}

fn write(out: &mut String, pieces: &[Piece]) {
    let mut opened: Vec<Opened> = Vec::new();
    // While an image is open, its content goes here as plain text (its `alt`).
    let mut alt: Option<String> = None;
    for piece in pieces {
        if let Some(alt) = alt.as_mut() {
            match piece {
                Piece::Text(text) | Piece::Code(text) => alt.push_str(text),
                Piece::LineBreak => alt.push(' '),
                Piece::Delimiter(d) => {
                    alt.extend(std::iter::repeat_n(char::from(d.ch), d.left));
                }
                Piece::Bracket { image } => alt.push_str(if *image { "![" } else { "[" }),
                Piece::LinkOpen { .. } => opened.push(Opened::Dropped),
                Piece::LinkClose => {}
            }
            if !matches!(piece, Piece::LinkClose) {
                continue;
            }
        }
        match piece {
            Piece::Text(text) => push_text(out, text),
            Piece::Code(code) => {
                out.push_str("<code>");
                push_text(out, code);
                out.push_str("</code>");
            }
            Piece::LineBreak => out.push_str("<br />\n"),
            Piece::Delimiter(d) => {
                for tag in &d.closes {
                    out.push_str("</");
                    out.push_str(tag.name());
                    out.push('>');
                }
                out.extend(std::iter::repeat_n(char::from(d.ch), d.left));
                for tag in &d.opens {
                    out.push('<');
                    out.push_str(tag.name());
                    out.push('>');
                }
            }
            Piece::Bracket { image } => out.push_str(if *image { "![" } else { "[" }),
            Piece::LinkOpen { url, title, image } => match url {
                Some(url) if *image => {
                    alt = Some(String::new());
                    opened.push(Opened::Image {
                        src: url.clone(),
                        title: title.clone(),
                    });
                }
                Some(url) => {
                    push_anchor_open_tag(out, url, title);
                    opened.push(Opened::Anchor);
                }
                None => opened.push(Opened::Dropped),
            },
            Piece::LinkClose => match opened.pop() {
                Some(Opened::Anchor) => out.push_str("</a>"),
                Some(Opened::Image { src, title }) => {
                    out.push_str("<img src=\"");
                    push_url_attribute(out, &src);
                    out.push_str("\" alt=\"");
                    push_escaped(out, &alt.take().unwrap_or_default());
                    out.push('"');
                    if !title.is_empty() {
                        out.push_str(" title=\"");
                        push_escaped(out, &title);
                        out.push('"');
                    }
                    out.push_str(" />");
                }
                Some(Opened::Dropped) | None => {}
            },
        }
    }
}

fn push_anchor_open_tag(out: &mut String, href: &str, title: &str) {
    out.push_str("<a href=\"");
    push_url_attribute(out, href);
    out.push('"');
    if !title.is_empty() {
        out.push_str(" title=\"");
        push_escaped(out, title);
        out.push('"');
    }
    if !href.starts_with('#') {
        out.push_str(" rel=\"noopener noreferrer\" target=\"_blank\"");
    }
    out.push('>');
}
