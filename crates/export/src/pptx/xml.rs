//! XML text and attribute escaping. Course text comes from people and LLMs, so anything may be in
//! it: markup characters are escaped, and characters XML 1.0 cannot hold at all (most control
//! characters, U+FFFE, U+FFFF) are dropped rather than making the whole file unreadable.

/// Whether XML 1.0 allows `c` in a document.
pub(crate) fn is_xml_char(c: char) -> bool {
    matches!(c,
        '\u{9}' | '\u{A}' | '\u{D}'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

/// Appends `text` escaped for element content and for attribute values in double or single
/// quotes. Tabs and line breaks in attributes are written as references so a reader keeps them.
pub(crate) fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if is_xml_char(c) => out.push(c),
            _ => {}
        }
    }
}

pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_and_quotes_are_escaped() {
        assert_eq!(
            escape(r#"<b a="1" b='2'>&amp;</b>"#),
            "&lt;b a=&quot;1&quot; b=&apos;2&apos;&gt;&amp;amp;&lt;/b&gt;"
        );
    }

    #[test]
    fn characters_xml_cannot_hold_are_dropped_and_the_rest_kept() {
        assert_eq!(escape("a\u{0}b\u{1}c\u{8}d\u{B}e\u{C}f\u{1F}g"), "abcdefg");
        assert_eq!(escape("x\u{FFFE}\u{FFFF}y"), "xy");
        assert_eq!(escape("光合作用 𝛼 é"), "光合作用 𝛼 é");
        assert_eq!(escape("a\tb\nc"), "a&#9;b&#10;c");
    }
}
