//! Reading JSON out of a model's reply. The strict reading takes the reply as it is (after a code
//! fence, if the reply is only that). The tolerant reading is the one repair attempt a stage gets
//! before it asks the model again: it looks for the JSON in fences and in the first balanced span,
//! and mends the faults weak models make — prose around the JSON, trailing commas, raw line
//! breaks inside strings, lone backslashes (LaTeX), and a reply cut off mid-way (the incomplete
//! last item is dropped, the rest closed).

use serde_json::Value;

/// The reply as JSON, read strictly: the whole text, or the whole inside of one code fence.
pub fn strict(reply: &str) -> Result<Value, String> {
    let body = only_fence(reply.trim()).unwrap_or(reply.trim());
    serde_json::from_str(body).map_err(|e| format!("the reply is not valid JSON ({e})"))
}

/// The reply as JSON, read with every repair; `None` when nothing in it can be mended into JSON.
pub fn tolerant(reply: &str) -> Option<Value> {
    tolerant_values(reply).next()
}

/// Every JSON value the tolerant reading finds, best guess first: fenced blocks, then balanced
/// spans in order, then the reply from its first bracket on (cut off), then the whole reply.
pub fn tolerant_values(reply: &str) -> impl Iterator<Item = Value> + '_ {
    let mut candidates: Vec<&str> = fences(reply);
    candidates.extend(balanced_spans(reply).take(8));
    if let Some(start) = reply.find(['{', '[']) {
        candidates.push(&reply[start..]);
    }
    candidates.push(reply.trim());
    candidates.into_iter().filter_map(mend)
}

/// Tries one candidate as it is, then with each repair added in turn.
fn mend(candidate: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str(candidate) {
        return Some(value);
    }
    let cleaned = clean_strings(candidate);
    let cleaned = drop_trailing_commas(&cleaned);
    if let Ok(value) = serde_json::from_str(&cleaned) {
        return Some(value);
    }
    let closed = close_truncated(&cleaned)?;
    serde_json::from_str(&drop_trailing_commas(&closed)).ok()
}

/// When the reply is exactly one fenced block, its inside.
fn only_fence(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("```")?;
    let body_start = rest.find('\n')? + 1;
    let body = rest[body_start..].trim_end().strip_suffix("```")?;
    (!body.contains("```")).then_some(body)
}

/// The insides of every fenced block, in order (an unclosed last fence runs to the end).
fn fences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let Some(line_end) = after.find('\n') else {
            break;
        };
        let body = &after[line_end + 1..];
        match body.find("```") {
            Some(close) => {
                out.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => {
                out.push(body);
                break;
            }
        }
    }
    out
}

/// Each top-level `{…}` or `[…]` span whose brackets balance, brackets inside strings not counted.
fn balanced_spans(text: &str) -> impl Iterator<Item = &str> {
    let mut from = 0;
    std::iter::from_fn(move || {
        let start = from + text[from..].find(['{', '['])?;
        match balanced_at(&text[start..]) {
            Some(len) => {
                from = start + len;
                Some(&text[start..start + len])
            }
            None => {
                from = text.len();
                None
            }
        }
    })
}

/// Each character of `text` with its byte offset and whether it is JSON structure: outside every
/// string (a string's quotes and contents are not structure). The one string-aware scan the
/// readers below share.
fn structure(text: &str) -> impl Iterator<Item = (usize, char, bool)> + '_ {
    let mut in_string = false;
    let mut escaped = false;
    text.char_indices().map(move |(i, c)| {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            return (i, c, false);
        }
        if c == '"' {
            in_string = true;
            return (i, c, false);
        }
        (i, c, true)
    })
}

/// The length of the balanced span `text` starts with, if it closes.
fn balanced_at(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c, _) in structure(text).filter(|(_, _, outside)| *outside) {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Inside strings: raw line breaks and tabs become escapes, other control characters go, and a
/// backslash that does not start a JSON escape is doubled (`\sqrt` is LaTeX, not an escape).
fn clean_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !in_string {
            if c == '"' {
                in_string = true;
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => {
                in_string = false;
                out.push(c);
            }
            '\\' => match chars.peek().copied() {
                Some('u') => {
                    let hex: String = chars.clone().skip(1).take(4).collect();
                    if hex.len() == 4 && hex.chars().all(|h| h.is_ascii_hexdigit()) {
                        out.push('\\');
                    } else {
                        out.push_str("\\\\");
                    }
                }
                Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => {
                    out.push('\\');
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                _ => out.push_str("\\\\"),
            },
            '\n' => out.push_str("\\n"),
            '\r' => {}
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Removes a comma that only a closing bracket follows (outside strings).
fn drop_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // A comma outside strings, and the blanks after it, held until the next character says
    // whether the comma stays.
    let mut held: Option<String> = None;
    for (_, c, outside) in structure(text) {
        if let Some(pending) = held.as_mut() {
            if outside && c.is_whitespace() {
                pending.push(c);
                continue;
            }
            let pending = held.take().unwrap_or_default();
            let closes = outside && (c == '}' || c == ']');
            out.push_str(if closes { &pending[1..] } else { &pending });
        }
        if outside && c == ',' {
            held = Some(String::from(","));
        } else {
            out.push(c);
        }
    }
    out.push_str(held.as_deref().unwrap_or(""));
    out
}

/// A reply cut off mid-way: keeps everything up to the last complete value inside the outermost
/// bracket, drops the incomplete rest, and closes what is still open.
fn close_truncated(text: &str) -> Option<String> {
    let start = text.find(['{', '['])?;
    let body = &text[start..];
    let mut stack: Vec<char> = Vec::new();
    // (byte end, open brackets then) after each complete nested value.
    let mut last_complete: Option<(usize, Vec<char>)> = None;
    for (i, c, _) in structure(body).filter(|(_, _, outside)| *outside) {
        match c {
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                if stack.pop() != Some(c) {
                    return None;
                }
                if stack.is_empty() {
                    // Complete after all: nothing to close.
                    return None;
                }
                last_complete = Some((i + c.len_utf8(), stack.clone()));
            }
            _ => {}
        }
    }
    let (end, open) = last_complete?;
    let mut out = body[..end].to_string();
    for closer in open.iter().rev() {
        out.push(*closer);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strict_reading_takes_plain_json_and_a_lone_fence_only() {
        assert_eq!(strict("  {\"a\": 1} ").unwrap(), json!({"a": 1}));
        assert_eq!(strict("```json\n[1, 2]\n```").unwrap(), json!([1, 2]));
        assert!(strict("Here you go: {\"a\": 1}").is_err());
        assert!(strict("{\"a\": 1,}").is_err());
    }

    #[test]
    fn prose_around_the_json_is_skipped() {
        let reply =
            "Sure! Here is the outline:\n{\"title\": \"Light\", \"n\": [1, 2]}\nHope it helps.";
        assert_eq!(
            tolerant(reply).unwrap(),
            json!({"title": "Light", "n": [1, 2]})
        );
    }

    #[test]
    fn a_fenced_block_among_prose_is_found() {
        let reply = "Thinking about it [1]...\n```json\n{\"ok\": true}\n```\nDone.";
        assert_eq!(tolerant(reply).unwrap(), json!({"ok": true}));
    }

    #[test]
    fn trailing_commas_are_dropped_but_commas_in_strings_are_kept() {
        let reply = "{\"a\": [1, 2, ], \"b\": \"x, ]\",\n}";
        assert_eq!(tolerant(reply).unwrap(), json!({"a": [1, 2], "b": "x, ]"}));
    }

    #[test]
    fn latex_backslashes_and_raw_line_breaks_are_mended() {
        let reply = "{\"latex\": \"\\sqrt{d_k} \\cdot x\", \"text\": \"line one\nline two\"}";
        assert_eq!(
            tolerant(reply).unwrap(),
            json!({"latex": "\\sqrt{d_k} \\cdot x", "text": "line one\nline two"})
        );
    }

    #[test]
    fn a_cut_off_reply_keeps_its_complete_items() {
        let reply =
            "[{\"type\": \"text\", \"content\": \"One.\"}, {\"type\": \"text\", \"content\": \"Tw";
        assert_eq!(
            tolerant(reply).unwrap(),
            json!([{"type": "text", "content": "One."}])
        );
        let nested =
            "{\"scenes\": [{\"title\": \"A\", \"points\": [\"x\"]}, {\"title\": \"B\", \"po";
        assert_eq!(
            tolerant(nested).unwrap(),
            json!({"scenes": [{"title": "A", "points": ["x"]}]})
        );
    }

    #[test]
    fn nothing_to_mend_gives_none() {
        assert_eq!(tolerant("I cannot help with that."), None);
        assert_eq!(tolerant("{\"a\": "), None);
    }

    proptest::proptest! {
        /// Whatever the reply, reading it never panics.
        #[test]
        fn tolerant_reading_never_panics(reply in "\\PC{0,200}") {
            let _ = tolerant(&reply);
            let _ = strict(&reply);
        }

        /// Valid JSON inside any prose comes out as it went in.
        #[test]
        fn json_inside_prose_is_recovered(before in "[a-z .:]{0,30}", after in "[a-z .]{0,30}",
                                           n in 0i64..1000, s in "[a-z ]{0,20}") {
            let value = json!({"n": n, "s": s, "list": [n, n + 1]});
            let reply = format!("{before}{value}{after}");
            proptest::prop_assert_eq!(tolerant(&reply), Some(value));
        }
    }
}
