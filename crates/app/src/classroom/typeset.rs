//! Formulas, charts and code on the stage, typeset by aula-render's heavier parts (the LaTeX
//! parser and its symbol table, the chart layout, the code highlighter). A split build loads
//! them on first use: the first slide or board item that has one shows a plain stand-in (the
//! formula's source, the code without colours, an empty chart frame) for the moment the chunk
//! takes, and is written again when it is there. Every later one is typeset at once. The player
//! that exports carry is one module, so there they are never missing.

use std::cell::{Cell, OnceCell};

use aula_course::action::{ChartData, ChartKind};
use aula_render::escape_html;
use leptos::prelude::*;

/// The typesetting functions, handed over by their chunk.
#[derive(Clone, Copy)]
struct Typesetter {
    latex: fn(&str, bool) -> String,
    chart: fn(ChartKind, &ChartData, &[String], f64, f64) -> String,
    code: fn(&str, &str) -> String,
}

thread_local! {
    static LOADED: OnceCell<Typesetter> = const { OnceCell::new() };
    /// Notified once they have arrived: whatever was written with a stand-in is written again.
    static ARRIVED: ArcTrigger = ArcTrigger::new();
    static ASKED: Cell<bool> = const { Cell::new(false) };
}

/// The typesetter if it is there; otherwise asks for it (once, after the stand-in has been
/// drawn, so that loading and drawing again never hold back the slide) and subscribes the
/// running reactive computation to its arrival.
fn typesetter() -> Option<Typesetter> {
    if let Some(loaded) = LOADED.with(|l| l.get().copied()) {
        return Some(loaded);
    }
    ARRIVED.with(ArcTrigger::track);
    if !ASKED.with(|a| a.replace(true)) {
        crate::shell::after_first_paint(|| {
            leptos::task::spawn_local(async {
                let loaded = typesetter_code().await;
                LOADED.with(|l| {
                    let _ = l.set(loaded);
                });
                ARRIVED.with(ArcTrigger::notify);
            })
        });
    }
    None
}

/// Loaded on first use in a split build: everything the three functions reach goes with them.
#[cfg_attr(aula_lazy, leptos::lazy)]
async fn typesetter_code() -> Typesetter {
    Typesetter {
        latex: |latex, display| {
            aula_render::latex_to_mathml(latex, display).unwrap_or_else(|_| source(latex))
        },
        chart: aula_render::chart_svg,
        code: |language, code| lines(aula_render::highlight_code(language, code)),
    }
}

fn source(latex: &str) -> String {
    format!("<code>{}</code>", escape_html(latex))
}

fn lines(lines: impl IntoIterator<Item = String>) -> String {
    lines
        .into_iter()
        .map(|line| format!("<span class=\"code-line\">{line}</span>"))
        .collect()
}

/// A formula as MathML; its source until the typesetter is there, or when it cannot be read.
pub fn latex_html(latex: &str, display: bool) -> String {
    match typesetter() {
        Some(t) => (t.latex)(latex, display),
        None => source(latex),
    }
}

/// A chart as SVG; nothing until the typesetter is there.
pub fn chart_html(
    kind: ChartKind,
    data: &ChartData,
    colors: &[String],
    width: f64,
    height: f64,
) -> String {
    match typesetter() {
        Some(t) => (t.chart)(kind, data, colors, width, height),
        None => String::new(),
    }
}

/// Code as highlighted lines; plain lines until the typesetter is there.
pub fn code_html(language: &str, code: &str) -> String {
    match typesetter() {
        Some(t) => (t.code)(language, code),
        None => lines(code.split('\n').map(escape_html)),
    }
}
