//! A small strict reader of the markup this crate writes, for tests: tags must balance,
//! attributes must be quoted, `<` never appears in text, and every `&` starts a known entity. It
//! returns the elements and the decoded text, so tests can assert on what a browser would see.

#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
}

impl Element {
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Default)]
pub struct Parsed {
    /// Every element, in document order.
    pub elements: Vec<Element>,
    /// All text content, entities decoded.
    pub text: String,
}

pub fn parse_markup(markup: &str) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    let mut open: Vec<String> = Vec::new();
    let mut rest = markup;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("</") {
            let end = after.find('>').ok_or("unterminated closing tag")?;
            let name = &after[..end];
            match open.pop() {
                Some(top) if top == name => {}
                top => return Err(format!("</{name}> closes {top:?}")),
            }
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix('<') {
            rest = read_tag(after, &mut parsed, &mut open)?;
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            decode_text(&rest[..end], &mut parsed.text)?;
            rest = &rest[end..];
        }
    }
    if let Some(unclosed) = open.pop() {
        return Err(format!("<{unclosed}> is never closed"));
    }
    Ok(parsed)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '_')
}

fn read_tag<'a>(
    after_lt: &'a str,
    parsed: &mut Parsed,
    open: &mut Vec<String>,
) -> Result<&'a str, String> {
    let name_len = after_lt
        .find(|c| !is_name_char(c))
        .unwrap_or(after_lt.len());
    if name_len == 0 || !after_lt.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("a raw `<` in text before {:?}", head(after_lt)));
    }
    let mut element = Element {
        name: after_lt[..name_len].to_owned(),
        attributes: Vec::new(),
    };
    let mut rest = &after_lt[name_len..];
    loop {
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix("/>") {
            parsed.elements.push(element);
            return Ok(after);
        }
        if let Some(after) = trimmed.strip_prefix('>') {
            open.push(element.name.clone());
            parsed.elements.push(element);
            return Ok(after);
        }
        if trimmed.len() == rest.len() {
            return Err(format!("no space before an attribute at {:?}", head(rest)));
        }
        let attr_len = trimmed.find(|c| !is_name_char(c)).unwrap_or(trimmed.len());
        if attr_len == 0 {
            return Err(format!("bad attribute at {:?}", head(trimmed)));
        }
        let attr_name = trimmed[..attr_len].to_owned();
        let value = trimmed[attr_len..]
            .strip_prefix("=\"")
            .ok_or_else(|| format!("attribute {attr_name} is not `=\"…\"`"))?;
        let close = value.find('"').ok_or("unterminated attribute value")?;
        let mut decoded = String::new();
        decode_text(&value[..close], &mut decoded)?;
        if value[..close].contains('<') {
            return Err(format!("`<` inside attribute {attr_name}"));
        }
        element.attributes.push((attr_name, decoded));
        rest = &value[close + 1..];
    }
}

fn decode_text(text: &str, out: &mut String) -> Result<(), String> {
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let entity_end = rest[at..].find(';').ok_or("`&` without `;`")? + at;
        let entity = &rest[at + 1..entity_end];
        let decoded = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code =
                    if let Some(hex) = entity.strip_prefix("#x").or(entity.strip_prefix("#X")) {
                        u32::from_str_radix(hex, 16).ok()
                    } else if let Some(dec) = entity.strip_prefix('#') {
                        dec.parse().ok()
                    } else {
                        None
                    };
                code.and_then(char::from_u32)
                    .ok_or_else(|| format!("unknown entity &{entity};"))?
            }
        };
        out.push(decoded);
        rest = &rest[entity_end + 1..];
    }
    out.push_str(rest);
    Ok(())
}

fn head(s: &str) -> &str {
    let end = s.char_indices().nth(30).map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// Elements that run script, load documents or restyle the page.
const FORBIDDEN_ELEMENTS: &[&str] = &[
    "script",
    "iframe",
    "frame",
    "object",
    "embed",
    "style",
    "link",
    "meta",
    "base",
    "form",
    "foreignobject",
    "animate",
    "set",
    "use",
    "svg:script",
    "template",
    "noscript",
    "input",
];

/// Panics unless `markup` is well formed and has no script, event handler, or URL outside
/// http / https / mailto / relative.
pub fn assert_safe_markup(markup: &str) {
    let parsed = match parse_markup(markup) {
        Ok(parsed) => parsed,
        Err(problem) => panic!("malformed markup ({problem}):\n{markup}"),
    };
    assert!(
        !markup.to_ascii_lowercase().contains("<script"),
        "a script tag in:\n{markup}"
    );
    for element in &parsed.elements {
        let name = element.name.to_ascii_lowercase();
        assert!(
            !FORBIDDEN_ELEMENTS.contains(&name.as_str()),
            "a <{name}> in:\n{markup}"
        );
        for (attribute, value) in &element.attributes {
            let attribute = attribute.to_ascii_lowercase();
            assert!(
                !attribute.starts_with("on"),
                "an event attribute {attribute} in:\n{markup}"
            );
            if matches!(attribute.as_str(), "href" | "src" | "xlink:href" | "action") {
                let url = crate::markdown::browser_view_of_url(value);
                assert!(
                    crate::markdown::is_safe_url(&url),
                    "an unsafe URL {value:?} in:\n{markup}"
                );
            }
            if attribute == "style" {
                let lower = value.to_ascii_lowercase();
                assert!(
                    !lower.contains("url(") && !lower.contains("expression"),
                    "a style that loads or runs something in:\n{markup}"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checker_accepts_balanced_markup_and_decodes_text() {
        let parsed = parse_markup("<p class=\"a\">x &amp; <b>y</b><br />&#60;&#x3e;</p>").unwrap();
        assert_eq!(parsed.elements.len(), 3);
        assert_eq!(parsed.elements[0].attribute("class"), Some("a"));
        assert_eq!(parsed.text, "x & y<>");
    }

    #[test]
    fn checker_rejects_malformed_markup() {
        for bad in [
            "<p>",
            "<p></b>",
            "a < b",
            "<a href=x>",
            "<a href=\"x\"title=\"y\">",
            "&nbsp",
            "&bogus;",
            "<p a=\"<\"></p>",
        ] {
            assert!(parse_markup(bad).is_err(), "{bad}");
        }
    }

    #[test]
    #[should_panic(expected = "event attribute")]
    fn checker_catches_event_handlers() {
        assert_safe_markup("<img src=\"x\" onerror=\"alert(1)\" />");
    }

    #[test]
    #[should_panic(expected = "unsafe URL")]
    fn checker_catches_javascript_urls() {
        assert_safe_markup("<a href=\"javascript:alert(1)\">x</a>");
    }
}
