//! Properties over arbitrary input: whatever an LLM writes, the markup that comes out is well
//! formed and inert (no script element, no event attribute, no unsafe URL).

use proptest::prelude::*;

use aula_course::action::{ChartData, ChartKind};

use crate::markup_check::{assert_safe_markup, parse_markup};
use crate::{chart_svg, highlight_code, latex_to_mathml, markdown_to_html};

/// Text assembled from the pieces attacks are made of, so the search spends its time near them.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<script>alert(1)</script>".to_string()),
        Just("<img src=x onerror=alert(1)>".to_string()),
        Just("<a href=\"javascript:alert(1)\">".to_string()),
        Just("<svg onload=alert(1)>".to_string()),
        Just("[x](javascript:alert(1))".to_string()),
        Just("![y](data:text/html,<script>)".to_string()),
        Just("<javascript:alert(1)>".to_string()),
        Just(" onclick=".to_string()),
        Just("&#60;script&#62;".to_string()),
        Just("&lt;".to_string()),
        Just("\"'`".to_string()),
        Just("\n\n".to_string()),
        Just("\n".to_string()),
        Just("| a | b |\n|---|---|\n".to_string()),
        Just("```\n".to_string()),
        Just("**".to_string()),
        Just("](".to_string()),
        Just(")".to_string()),
        Just("/* ".to_string()),
        Just("# ".to_string()),
        Just("\r\n".to_string()),
        "[a-z ]{0,6}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![hostile_text(), any::<String>()]
}

const LANGUAGES: &[&str] = &[
    "rust", "python", "js", "ts", "cpp", "java", "go", "sql", "bash", "html", "ruby", "lua", "",
    "klingon",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn markdown_output_is_well_formed_and_inert(source in any_text()) {
        let html = markdown_to_html(&source);
        assert_safe_markup(&html);
    }

    #[test]
    fn highlighted_code_is_inert_keeps_every_line_and_its_text(
        language in prop::sample::select(LANGUAGES),
        code in any_text(),
    ) {
        let lines = highlight_code(language, &code);
        let normalized = code.replace("\r\n", "\n");
        let expected: Vec<&str> = normalized.split('\n').collect();
        prop_assert_eq!(lines.len(), expected.len());
        for (line, source) in lines.iter().zip(expected) {
            assert_safe_markup(line);
            let parsed = parse_markup(line).map_err(TestCaseError::fail)?;
            prop_assert!(parsed.elements.iter().all(|e| e.name == "span"), "{}", line);
            // Characters no markup can hold (most control characters) are dropped.
            let kept: String = source.chars().filter(|c| aula_text::markup::is_xml_char(*c)).collect();
            prop_assert_eq!(parsed.text, kept);
        }
    }

    #[test]
    fn latex_never_panics_and_its_mathml_is_inert(
        source in prop_oneof![
            any_text(),
            prop::collection::vec(
                prop::sample::select(&[
                    "\\frac", "\\sqrt", "{", "}", "^", "_", "x", "2", "\\text{", "<", ">", "&",
                    "\\left(", "\\right)", "\\begin{matrix}", "\\end{matrix}", "&", "\\\\",
                    "\\color{red}", "\\mathbb{R}", "\\sum", "\\int", "\\alpha", " ",
                    "\\operatorname{", "\\def\\a{b}", "\\a", "$", "#", "\\", "\\begin{cases}",
                    "\\end{cases}", "\\hspace{1em}", "\\over", "'",
                ][..]),
                0..20,
            ).prop_map(|pieces| pieces.concat()),
        ],
        display in any::<bool>(),
    ) {
        if let Ok(mathml) = latex_to_mathml(&source, display) {
            assert_safe_markup(&mathml);
        }
    }

    #[test]
    fn charts_of_any_data_are_well_formed_without_nan(
        kind in prop::sample::select(&[
            ChartKind::Bar, ChartKind::Column, ChartKind::Line, ChartKind::Area,
            ChartKind::Pie, ChartKind::Ring, ChartKind::Radar, ChartKind::Scatter,
        ][..]),
        labels in prop::collection::vec(any_text(), 0..8),
        legends in prop::collection::vec(any_text(), 0..4),
        series in prop::collection::vec(prop::collection::vec(
            prop_oneof![
                -1e6..1e6f64,
                Just(0.0),
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(-1e300),
                Just(1e-300),
                any::<f64>(),
            ],
            0..10,
        ), 0..4),
        colors in prop::collection::vec("#?[0-9a-fA-Fxz\" ]{0,9}", 0..4),
        width in prop_oneof![1.0..2000.0f64, any::<f64>()],
        height in prop_oneof![1.0..2000.0f64, any::<f64>()],
    ) {
        let data = ChartData { labels, legends, series };
        let svg = chart_svg(kind, &data, &colors, width, height);
        assert_safe_markup(&svg);
        let parsed = parse_markup(&svg).map_err(TestCaseError::fail)?;
        for element in &parsed.elements {
            for (name, value) in &element.attributes {
                prop_assert!(
                    !value.contains("NaN") && !value.contains("inf"),
                    "{}={:?} in {}", name, value, svg
                );
            }
        }
    }
}
