//! XML text and attribute escaping for the PowerPoint parts: `aula_text::markup`'s escaper in
//! its attribute form everywhere (tabs and line breaks as references), so the same helper is
//! right in element content and in attribute values.

pub(crate) use aula_text::markup::push_escaped_attribute as push_escaped;

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
            "&lt;b a=&quot;1&quot; b=&#39;2&#39;&gt;&amp;amp;&lt;/b&gt;"
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
