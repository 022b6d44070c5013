//! Text in markup, both ways: escaping it for HTML and XML (the page's rendering, the PowerPoint
//! writer, the offline player and the SCORM manifests), and decoding the character references
//! that imported HTML and XML carry. Course text comes from people and LLMs, so anything may be
//! in it: markup characters are escaped, and characters XML 1.0 cannot hold at all (most control
//! characters, U+FFFE, U+FFFF) are dropped rather than making a whole file unreadable. What is
//! valid in XML is valid in HTML, so one escaper serves both.

/// Whether XML 1.0 allows `c` in a document.
pub fn is_xml_char(c: char) -> bool {
    matches!(c,
        '\u{9}' | '\u{A}' | '\u{D}'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

/// `text` escaped for element content and for attribute values in double or single quotes:
/// `&`, `<`, `>`, `"` and `'` (as `&#39;`, which HTML 4 also reads).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    push_escaped(&mut out, text);
    out
}

/// [`escape`] appending to `out`, so builders avoid a temporary string per piece of text.
pub fn push_escaped(out: &mut String, text: &str) {
    push(out, text, false);
}

/// [`push_escaped`] for an XML attribute value: tabs and line breaks are written as references
/// too, since an XML reader turns literal ones into spaces.
pub fn push_escaped_attribute(out: &mut String, text: &str) {
    push(out, text, true);
}

fn push(out: &mut String, text: &str, attribute: bool) {
    let special = |c: char| {
        matches!(c, '&' | '<' | '>' | '"' | '\'')
            || !is_xml_char(c)
            || attribute && matches!(c, '\t' | '\n' | '\r')
    };
    let mut start = 0;
    for (at, c) in text.char_indices().filter(|&(_, c)| special(c)) {
        out.push_str(&text[start..at]);
        out.push_str(match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&#39;",
            '\t' => "&#9;",
            '\n' => "&#10;",
            '\r' => "&#13;",
            _ => "", // a character XML cannot hold
        });
        start = at + c.len_utf8();
    }
    out.push_str(&text[start..]);
}

/// `text` with its character references decoded: the five XML entities, `&nbsp;` (as U+00A0),
/// and decimal and hexadecimal references to any character. A reference that is none of these,
/// or a bare `&`, is kept as written.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // The longest reference read is `&#x10FFFF;`; bytes, so no character is cut.
        let end = rest.bytes().take(12).position(|b| b == b';');
        let decoded = end.and_then(|end| {
            let c = match &rest[1..end] {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => '\u{a0}',
                name => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_markup_characters_are_escaped_and_other_text_is_left_alone() {
        assert_eq!(
            escape(r#"<b a="1" b='2'>&amp;</b>"#),
            "&lt;b a=&quot;1&quot; b=&#39;2&#39;&gt;&amp;amp;&lt;/b&gt;"
        );
        let plain = "Photosynthesis 光合作用 — ç, ∑, 😀\nnext\tline";
        assert_eq!(escape(plain), plain);
    }

    #[test]
    fn characters_xml_cannot_hold_are_dropped() {
        assert_eq!(escape("a\u{0}b\u{1b}c\u{fffe}d\u{ffff}e"), "abcde");
    }

    #[test]
    fn an_attribute_keeps_its_tabs_and_line_breaks_as_references() {
        let mut out = String::new();
        push_escaped_attribute(&mut out, "a\tb\nc\r'd'");
        assert_eq!(out, "a&#9;b&#10;c&#13;&#39;d&#39;");
    }

    #[test]
    fn references_are_decoded_and_anything_else_is_kept_as_written() {
        assert_eq!(
            decode_entities("&lt;p&gt; &amp; &quot;x&quot; &apos;y&#39; a&nbsp;b &#x4E2D;&#25991;"),
            "<p> & \"x\" 'y' a\u{a0}b 中文"
        );
        assert_eq!(
            decode_entities("AT&T &unknown; &#xZZ; &#1114112; & end &"),
            "AT&T &unknown; &#xZZ; &#1114112; & end &"
        );
        // A multi-byte character where a long reference would end.
        assert_eq!(decode_entities("&abcdefghij中文;"), "&abcdefghij中文;");
    }

    #[test]
    fn decoding_undoes_escaping() {
        let text = "if a < b && c > \"d\" then 'e' — 中文";
        assert_eq!(decode_entities(&escape(text)), text);
    }
}
