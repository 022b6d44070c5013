//! Rendering: course content turned into markup strings that are safe to insert with
//! `inner_html`, shared by the player page and every export (offline HTML, SCORM, slide images).
//! Markdown, LaTeX (as MathML), charts (as SVG) and highlighted code all come from LLMs, so every
//! piece of text is escaped, raw HTML is shown as text, and only allow-listed URLs and colours
//! reach an attribute.
//!
//! Pure and small: it ships in the page, so it must never depend on a browser type (web-sys,
//! leptos, gloo, wasm-bindgen), and it avoids regex and large tables for the sake of code size.

mod chart;
mod code;
mod latex;
mod latex_text;
mod markdown;

#[cfg(test)]
mod markup_check;
#[cfg(test)]
mod safety_tests;

pub mod chart_scale;
pub use chart::{chart_svg, PALETTE as CHART_PALETTE};
pub use code::highlight_code;
pub use latex::{approx_width_em, latex_symbol, latex_to_mathml, LatexError};
pub use latex_text::latex_to_text;
pub use markdown::markdown_to_html;

/// Escapes text for an HTML (or XML) text node or a quoted attribute value (one escaper for
/// every layer: `aula_text::markup`).
pub use aula_text::markup::escape as escape_html;
pub(crate) use aula_text::markup::push_escaped;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_html_escapes_the_five_markup_characters() {
        assert_eq!(
            escape_html(r#"<a href="x" title='y'>Tom & Jerry</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;"
        );
    }

    #[test]
    fn escape_html_leaves_plain_and_non_ascii_text_alone() {
        assert_eq!(escape_html("café ∑ 数学"), "café ∑ 数学");
        assert_eq!(escape_html(""), "");
    }
}
