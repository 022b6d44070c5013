//! LaTeX math to MathML Core with pulldown-latex: native MathML that Chromium lays out without
//! extra fonts or CSS. The whole formula is parsed before anything is written, so a formula with
//! an error gives an error (the caller shows the source as text) rather than half a formula.
//!
//! pulldown-latex does not escape everything it writes: `<` as an operator comes out as
//! `<mo><</mo>`, and the argument of `\operatorname{…}` or `\mathop{…}` is written verbatim, so
//! `\operatorname{<img src=x onerror=…>}` would be a live element. Its output therefore goes
//! through [`sanitize_mathml`], which keeps only MathML elements and attributes from an allow-list
//! in balanced, well-formed tags and escapes every other `<`, `>` and `&` as text.

use pulldown_latex::config::DisplayMode;
use pulldown_latex::{push_mathml, Parser, ParserError, RenderConfig, Storage};

use crate::escape_html;

/// Why a formula could not be turned into MathML; `message` is short and meant for a tooltip
/// beside the formula's source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("This formula could not be read: {message}.")]
pub struct LatexError {
    pub message: String,
}

impl LatexError {
    fn new(message: impl Into<String>) -> Self {
        LatexError {
            message: message.into(),
        }
    }

    /// The parser's own message without its multi-line source excerpt.
    fn from_parser(error: &ParserError) -> Self {
        let message = std::error::Error::source(error)
            .map(ToString::to_string)
            .unwrap_or_else(|| error.to_string());
        let first_line = message.lines().next().unwrap_or_default();
        LatexError::new(first_line.trim_start_matches("parsing error: "))
    }
}

/// LaTeX math (without `$` delimiters) to one `<math>` element, `display="block"` when `display`
/// is set. The LaTeX source is kept, escaped, as the formula's `application/x-tex` annotation, so
/// copying and screen readers have it.
pub fn latex_to_mathml(latex: &str, display: bool) -> Result<String, LatexError> {
    if latex.trim().is_empty() {
        return Err(LatexError::new("the formula is empty"));
    }
    let storage = Storage::new();
    let mut events = Vec::new();
    for event in Parser::new(latex, &storage) {
        events.push(event.map_err(|e| LatexError::from_parser(&e))?);
    }
    // pulldown-latex writes the annotation verbatim, so it gets the escaped source.
    let annotation = escape_html(latex);
    let config = RenderConfig {
        display_mode: if display {
            DisplayMode::Block
        } else {
            DisplayMode::Inline
        },
        annotation: Some(&annotation),
        ..RenderConfig::default()
    };
    let mut mathml = String::with_capacity(latex.len() * 8 + 64);
    push_mathml(
        &mut mathml,
        events.into_iter().map(Ok::<_, ParserError>),
        config,
    )
    .map_err(|_| LatexError::new("the formula could not be written as MathML"))?;
    Ok(sanitize_mathml(&mathml))
}

/// The elements pulldown-latex writes (and a few MathML Core relatives).
const MATHML_ELEMENTS: &[&str] = &[
    "math",
    "semantics",
    "annotation",
    "mrow",
    "mi",
    "mn",
    "mo",
    "ms",
    "mtext",
    "mspace",
    "mfrac",
    "msqrt",
    "mroot",
    "msub",
    "msup",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mmultiscripts",
    "mprescripts",
    "none",
    "mtable",
    "mtr",
    "mtd",
    "mstyle",
    "mpadded",
    "mphantom",
    "menclose",
    "merror",
];

/// Presentation attributes only: nothing that loads, links or runs.
const MATHML_ATTRIBUTES: &[&str] = &[
    "xmlns",
    "display",
    "class",
    "style",
    "mathvariant",
    "stretchy",
    "symmetric",
    "largeop",
    "movablelimits",
    "maxsize",
    "minsize",
    "lspace",
    "rspace",
    "form",
    "fence",
    "separator",
    "accent",
    "accentunder",
    "linethickness",
    "width",
    "height",
    "depth",
    "voffset",
    "displaystyle",
    "scriptlevel",
    "encoding",
    "columnalign",
    "rowalign",
    "columnspacing",
    "rowspacing",
    "columnlines",
    "rowlines",
    "frame",
    "notation",
    "mathcolor",
    "mathbackground",
];

/// Rewrites pulldown-latex's output as well-formed, inert markup (see the module doc). Tags from
/// the allow-lists are copied as written; any other `<`, `>` or stray `&` becomes text, a closing
/// tag that does not match the open element becomes text, and open elements are closed at the end.
fn sanitize_mathml(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 16);
    let mut open: Vec<&str> = Vec::new();
    let mut rest = raw;
    while let Some(c) = rest.chars().next() {
        let mut taken = c.len_utf8();
        match c {
            '<' => match read_tag(rest) {
                Some((Tag::Open(name), len)) => {
                    open.push(name);
                    out.push_str(&rest[..len]);
                    taken = len;
                }
                Some((Tag::Empty, len)) => {
                    out.push_str(&rest[..len]);
                    taken = len;
                }
                Some((Tag::Close(name), len)) if open.last() == Some(&name) => {
                    open.pop();
                    out.push_str(&rest[..len]);
                    taken = len;
                }
                _ => out.push_str("&lt;"),
            },
            '&' => match entity_len(rest) {
                0 => out.push_str("&amp;"),
                len => {
                    out.push_str(&rest[..len]);
                    taken = len;
                }
            },
            '>' => out.push_str("&gt;"),
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
        rest = &rest[taken..];
    }
    while let Some(name) = open.pop() {
        out.push_str("</");
        out.push_str(name);
        out.push('>');
    }
    out
}

enum Tag<'a> {
    Open(&'a str),
    /// Self-closing, like `<mspace width="1em" />`.
    Empty,
    Close(&'a str),
}

/// The allow-listed tag at the start of `s` and its length in bytes, if there is one.
fn read_tag(s: &str) -> Option<(Tag<'_>, usize)> {
    let element_name = |s: &str| {
        let len = s
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(s.len());
        MATHML_ELEMENTS.contains(&&s[..len]).then_some(len)
    };
    if let Some(after) = s.strip_prefix("</") {
        let len = element_name(after)?;
        return after[len..]
            .starts_with('>')
            .then(|| (Tag::Close(&after[..len]), 2 + len + 1));
    }
    let after = s.strip_prefix('<')?;
    let name_len = element_name(after)?;
    let mut at = 1 + name_len;
    loop {
        let trimmed = s[at..].trim_start_matches(' ');
        let spaced = trimmed.len() < s.len() - at;
        at = s.len() - trimmed.len();
        if trimmed.starts_with('>') {
            return Some((Tag::Open(&after[..name_len]), at + 1));
        }
        if trimmed.starts_with("/>") {
            return Some((Tag::Empty, at + 2));
        }
        let attr_len = trimmed.find(|c: char| !(c.is_ascii_alphabetic() || c == '-'))?;
        let attribute = &trimmed[..attr_len];
        let value = trimmed[attr_len..].strip_prefix("=\"")?;
        let value_len = value.find('"')?;
        if !spaced
            || !MATHML_ATTRIBUTES.contains(&attribute)
            || !is_inert_attribute_value(attribute, &value[..value_len])
        {
            return None;
        }
        at += attr_len + 2 + value_len + 1;
    }
}

fn is_inert_attribute_value(attribute: &str, value: &str) -> bool {
    let well_formed = value.char_indices().all(|(i, c)| match c {
        '<' | '>' | '`' => false,
        '&' => entity_len(&value[i..]) > 0,
        c => !c.is_control(),
    });
    let lower = value.to_ascii_lowercase();
    well_formed
        && (attribute != "style"
            || !(lower.contains("url(") || lower.contains("expression") || lower.contains('\\')))
}

/// The length of the XML entity reference at the start of `s` (`&amp;`, `&#60;`, `&#x3c;`, …),
/// or 0 when `s` does not start with one.
fn entity_len(s: &str) -> usize {
    let Some(body_len) = s.get(1..).and_then(|b| b.find(';')) else {
        return 0;
    };
    let body = &s[1..1 + body_len];
    let valid = match body.strip_prefix('#') {
        Some(number) => match number.strip_prefix(['x', 'X']) {
            Some(hex) => (1..=6).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            None => (1..=7).contains(&number.len()) && number.bytes().all(|b| b.is_ascii_digit()),
        },
        None => matches!(body, "amp" | "lt" | "gt" | "quot" | "apos"),
    };
    if valid {
        body_len + 2
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup_check::{assert_safe_markup, parse_markup};

    fn element_names(mathml: &str) -> Vec<String> {
        parse_markup(mathml)
            .unwrap_or_else(|e| panic!("{e}: {mathml}"))
            .elements
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn quadratic_formula_becomes_mathml_with_a_fraction_and_a_root() {
        let mathml = latex_to_mathml(r"x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}", true).unwrap();
        assert!(mathml.starts_with("<math"), "{mathml}");
        assert!(mathml.contains("display=\"block\""), "{mathml}");
        let names = element_names(&mathml);
        for needed in ["math", "mfrac", "msqrt", "msup"] {
            assert!(
                names.iter().any(|n| n == needed),
                "no <{needed}> in {mathml}"
            );
        }
        assert_safe_markup(&mathml);
    }

    #[test]
    fn inline_fraction_has_an_mfrac_and_no_block_display() {
        let mathml = latex_to_mathml(r"\frac{1}{2}", false).unwrap();
        assert!(
            element_names(&mathml).iter().any(|n| n == "mfrac"),
            "{mathml}"
        );
        assert!(!mathml.contains("display=\"block\""), "{mathml}");
    }

    #[test]
    fn text_with_markup_is_escaped() {
        let mathml = latex_to_mathml(r"\text{<script>alert(1)</script>} + 1", false).unwrap();
        assert!(!mathml.contains("<script"), "{mathml}");
        assert!(mathml.contains("&lt;script&gt;"), "{mathml}");
        assert_safe_markup(&mathml);
    }

    #[test]
    fn annotation_keeps_the_source_escaped() {
        let mathml = latex_to_mathml(r"a < b \text{</annotation><img>}", false).unwrap();
        assert!(mathml.contains("a &lt; b"), "{mathml}");
        assert!(!mathml.contains("<img"), "{mathml}");
        assert_safe_markup(&mathml);
    }

    #[test]
    fn verbatim_operator_names_cannot_open_elements() {
        for source in [
            r"\operatorname{<img src=x onerror=alert(1)>}",
            r#"\operatorname{<mi onclick="alert(1)">}"#,
            r#"\mathop{<mi style="background:url(https://t.example/x)">}"#,
            r"\operatorname{</math><img src=x>}",
            r"\mathop{<x>} \& < >",
            r"\operatorname{&nbsp;&#60;&}",
        ] {
            let Ok(mathml) = latex_to_mathml(source, false) else {
                continue;
            };
            assert_safe_markup(&mathml);
            let names = element_names(&mathml);
            assert!(
                names.iter().all(|n| MATHML_ELEMENTS.contains(&n.as_str())),
                "{mathml}"
            );
            assert!(!mathml.contains("<img"), "{mathml}");
        }
    }

    #[test]
    fn less_than_operator_is_escaped_text() {
        let mathml = latex_to_mathml("a < b", false).unwrap();
        assert!(mathml.contains("<mo>&lt;</mo>"), "{mathml}");
        assert_safe_markup(&mathml);
    }

    #[test]
    fn sanitizer_keeps_allowed_tags_and_escapes_the_rest() {
        assert_eq!(
            sanitize_mathml(
                r#"<math display="block"><mi><x onclick="y"></mi><mspace width="1em" /><mo>&</mo></math></mi>"#
            ),
            r#"<math display="block"><mi>&lt;x onclick="y"&gt;</mi><mspace width="1em" /><mo>&amp;</mo></math>&lt;/mi&gt;"#
        );
        assert_eq!(sanitize_mathml("<mrow><mi>a"), "<mrow><mi>a</mi></mrow>");
        assert_eq!(
            sanitize_mathml("<mi onclick=\"x\">a</mi>"),
            "&lt;mi onclick=\"x\"&gt;a&lt;/mi&gt;"
        );
    }

    #[test]
    fn garbage_gives_a_short_error() {
        for garbage in [
            r"\frac{1}{",
            r"\notacommand",
            r"x^^2",
            "}",
            r"\begin{nothing} x",
        ] {
            let error = latex_to_mathml(garbage, false).expect_err(garbage);
            assert!(!error.message.is_empty(), "{garbage}");
            assert!(
                !error.message.contains('\n'),
                "{garbage}: {:?}",
                error.message
            );
            assert!(error.message.len() < 120, "{garbage}: {:?}", error.message);
        }
    }

    #[test]
    fn empty_formula_is_an_error() {
        assert!(latex_to_mathml("  ", true).is_err());
    }
}
