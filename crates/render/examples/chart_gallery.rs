//! Writes every chart kind, a formula and some highlighted code into one HTML page, to look at.
//! `cargo run -p aula-render --example chart_gallery > gallery.html`
use aula_course::action::{ChartData, ChartKind};

fn main() {
    let data = ChartData {
        labels: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            .map(String::from)
            .to_vec(),
        legends: ["Apples", "Pears"].map(String::from).to_vec(),
        series: vec![
            vec![3.0, 7.5, -2.0, 9.0, 4.0, 6.0],
            vec![1.0, 4.0, 6.0, 2.5, 8.0, 3.0],
        ],
    };
    let scatter = ChartData {
        labels: vec![],
        legends: vec![],
        series: vec![
            vec![1.0, 2.0, 3.5, 4.0, 6.0, 7.2],
            vec![2.0, 3.1, 3.0, 5.5, 7.0, 6.5],
        ],
    };
    let mut page = String::from("<!doctype html><meta charset=utf-8><body style=\"font-family:sans-serif;display:flex;flex-wrap:wrap;gap:8px\">");
    for kind in [
        ChartKind::Column,
        ChartKind::Bar,
        ChartKind::Line,
        ChartKind::Area,
        ChartKind::Pie,
        ChartKind::Ring,
        ChartKind::Radar,
        ChartKind::Scatter,
    ] {
        let d = if kind == ChartKind::Scatter {
            &scatter
        } else {
            &data
        };
        page.push_str("<div style=\"border:1px solid #ccc\">");
        page.push_str(&aula_render::chart_svg(kind, d, &[], 400.0, 260.0));
        page.push_str("</div>");
    }
    page.push_str("<div style=\"font-size:24px\">");
    page.push_str(
        &aula_render::latex_to_mathml(r"x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}", true).unwrap(),
    );
    page.push_str("</div><pre style=\"font-size:14px\"><style>.tok-kw{color:#a626a4}.tok-str{color:#50a14f}.tok-num{color:#986801}.tok-com{color:#a0a1a7;font-style:italic}.tok-fn{color:#4078f2}</style>");
    for line in aula_render::highlight_code(
        "rust",
        "/// Doc\nfn main() {\n    let x: u32 = 42; // answer\n    println!(\"{x}\");\n}",
    ) {
        page.push_str(&line);
        page.push('\n');
    }
    page.push_str("</pre></body>");
    println!("{page}");
}
