//! Charts as standalone SVG: the whiteboard draws them and the exports embed them as they are.
//! The data comes from an LLM, so the drawing never trusts it: every value is made finite and
//! bounded before it meets a coordinate, every label is escaped, and colours are either the
//! palette's or a validated `#hex`. Text and axes use `currentColor`, so a chart follows the
//! page's light or dark theme.

use std::f64::consts::{PI, TAU};
use std::fmt::{self, Write as _};

use aula_course::action::{ChartData, ChartKind};

use crate::chart_scale::{extent_with_zero, value, Scale};
use crate::push_escaped;

/// Series colours when the caller gives none (or an invalid one) for a series.
pub const PALETTE: &[&str] = &[
    "#4f7cff", "#22b07d", "#f5a524", "#e5484d", "#8e6cef", "#12a5c9", "#f76b15", "#6b7280",
];
const DEFAULT_WIDTH: f64 = 480.0;
const DEFAULT_HEIGHT: f64 = 300.0;
const MAX_SIDE: f64 = 10_000.0;
const PAD: f64 = 8.0;
/// Labels longer than this many characters are cut with an ellipsis.
const MAX_LABEL_CHARS: usize = 24;

/// A chart of `kind` as one `<svg>` element whose `viewBox` is `width` × `height` (a missing or
/// absurd size falls back to 480 × 300).
///
/// `data.series[i]` holds one value per label and is named by `data.legends[i]`; a legend is
/// drawn when there is more than one series. Series `i` is coloured `colors[i]` when that is a
/// valid `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`, and from a built-in palette otherwise.
///
/// - `Column` (vertical bars) and `Bar` (horizontal bars) draw negative values below (left of)
///   the zero line.
/// - `Line` and `Area` put one point per label; `Area` fills down to zero.
/// - `Pie` and `Ring` use `series[0]` only, one slice per label, colour `colors[label index]`;
///   zero, negative and non-finite values get no slice.
/// - `Radar` has one spoke per label from zero at the centre; negative values sit at the centre.
/// - `Scatter` reads `series[0]` as the x values and every further series as y values at those
///   x (`series[1]` is the usual one); the points of `series[j + 1]` are coloured `colors[j]`
///   and named `legends[j + 1]`, and `labels[k]` names point `k` in its tooltip.
///
/// Empty or degenerate data draws empty axes (or an empty ring), never NaN.
pub fn chart_svg(
    kind: ChartKind,
    data: &ChartData,
    colors: &[String],
    width: f64,
    height: f64,
) -> String {
    let mut canvas = Canvas::new(
        side(width, DEFAULT_WIDTH),
        side(height, DEFAULT_HEIGHT),
        colors,
    );
    match kind {
        ChartKind::Column => bars(&mut canvas, data, false),
        ChartKind::Bar => bars(&mut canvas, data, true),
        ChartKind::Line => lines(&mut canvas, data, false),
        ChartKind::Area => lines(&mut canvas, data, true),
        ChartKind::Pie => pie(&mut canvas, data, 0.0),
        ChartKind::Ring => pie(&mut canvas, data, 0.58),
        ChartKind::Radar => radar(&mut canvas, data),
        ChartKind::Scatter => scatter(&mut canvas, data),
    }
    canvas.finish()
}

fn side(requested: f64, default: f64) -> f64 {
    if requested.is_finite() && requested >= 1.0 {
        requested.min(MAX_SIDE)
    } else {
        default
    }
}

/// A coordinate as written: finite, two decimals at most, no `-0`.
struct N(f64);

impl fmt::Display for N {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = if self.0.is_finite() {
            self.0.clamp(-1e6, 1e6)
        } else {
            0.0
        };
        let v = (v * 100.0).round() / 100.0;
        if v == 0.0 {
            f.write_str("0")
        } else {
            write!(f, "{v}")
        }
    }
}

/// `text` without control characters (invalid in XML) and cut to `max_chars`.
fn clip(text: &str, max_chars: usize) -> String {
    let cleaned = text.trim().chars().filter(|c| !c.is_control());
    let count = cleaned.clone().count();
    if count <= max_chars {
        return cleaned.collect();
    }
    let mut cut: String = cleaned.take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A rough width of `text` in the chart's sans-serif font, for layout only.
fn text_width(text: &str, font: f64) -> f64 {
    text.chars()
        .map(|c| if c.is_ascii() { 0.58 } else { 1.0 })
        .sum::<f64>()
        * font
}

/// A value for a tooltip or a pie legend.
fn format_value(v: f64) -> String {
    let v = value(v);
    if v.fract() == 0.0 {
        return format!("{}", v as i64);
    }
    if v.abs() < 1e-4 {
        return format!("{v:.2e}");
    }
    let digits = if v.abs() >= 1.0 {
        2
    } else {
        (3 - v.abs().log10().floor() as i32).clamp(2, 8)
    };
    let scale = 10f64.powi(digits);
    format!("{}", (v * scale).round() / scale)
}

#[derive(Debug, Clone, Copy)]
enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn as_str(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Plot {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// The SVG being written and the chart-wide settings.
struct Canvas<'a> {
    svg: String,
    width: f64,
    height: f64,
    font: f64,
    colors: &'a [String],
}

impl<'a> Canvas<'a> {
    fn new(width: f64, height: f64, colors: &'a [String]) -> Self {
        let font = (width.min(height) / 22.0).clamp(9.0, 14.0);
        let mut svg = String::with_capacity(4096);
        let _ = write!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" \
             height=\"{h}\" role=\"img\" class=\"aula-chart\" font-family=\"system-ui, sans-serif\" \
             font-size=\"{f}\" fill=\"currentColor\">",
            w = N(width),
            h = N(height),
            f = N(font),
        );
        Canvas {
            svg,
            width,
            height,
            font,
            colors,
        }
    }

    fn finish(mut self) -> String {
        self.svg.push_str("</svg>");
        self.svg
    }

    fn color(&self, index: usize) -> &'a str {
        match self.colors.get(index) {
            // The course validator's own check: hex digits or a known name, nothing else.
            Some(color) if aula_course::is_color(color) => color,
            _ => PALETTE[index % PALETTE.len()],
        }
    }

    /// A faint line in the text colour (grid, axes, spokes).
    fn rule(&mut self, from: (f64, f64), to: (f64, f64), opacity: f64) {
        let _ = write!(
            self.svg,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"currentColor\" stroke-opacity=\"{}\"/>",
            N(from.0),
            N(from.1),
            N(to.0),
            N(to.1),
            N(opacity),
        );
    }

    /// One line of text, already clipped; it is escaped here.
    fn text(&mut self, at: (f64, f64), anchor: Anchor, text: &str, extra: &str) {
        let _ = write!(
            self.svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\"{extra}>",
            N(at.0),
            N(at.1),
            anchor.as_str(),
        );
        push_escaped(&mut self.svg, text);
        self.svg.push_str("</text>");
    }

    /// Closes an element opened without `>`/`/>`, with a tooltip when there is one.
    fn close_with_tooltip(&mut self, element: &str, tooltip: &str) {
        if tooltip.is_empty() {
            self.svg.push_str("/>");
        } else {
            self.svg.push_str("><title>");
            push_escaped(&mut self.svg, &clip(tooltip, 80));
            let _ = write!(self.svg, "</title></{element}>");
        }
    }

    fn points(&mut self, points: &[(f64, f64)]) {
        for (i, (x, y)) in points.iter().enumerate() {
            if i > 0 {
                self.svg.push(' ');
            }
            let _ = write!(self.svg, "{},{}", N(*x), N(*y));
        }
    }

    /// A legend of coloured swatches across the top, wrapping into rows; returns where the
    /// drawing below it may start.
    fn legend(&mut self, names: &[(usize, String)]) -> f64 {
        let font = self.font;
        let row = font * 1.5;
        let swatch = font * 0.8;
        let (mut x, mut y) = (PAD, PAD);
        for (color_index, name) in names {
            let label = clip(name, MAX_LABEL_CHARS);
            let item = swatch + 4.0 + text_width(&label, font) + 12.0;
            if x > PAD && x + item > self.width - PAD {
                if y + 2.0 * row > self.height / 3.0 {
                    break;
                }
                x = PAD;
                y += row;
            }
            let color = self.color(*color_index);
            let _ = write!(
                self.svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{s}\" height=\"{s}\" rx=\"2\" fill=\"{color}\"/>",
                N(x),
                N(y + (row - swatch) / 2.0),
                s = N(swatch),
            );
            self.text(
                (x + swatch + 4.0, y + row / 2.0 + font * 0.35),
                Anchor::Start,
                &label,
                "",
            );
            x += item;
        }
        y + row
    }
}

fn category_count(data: &ChartData) -> usize {
    data.series
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(data.labels.len())
}

fn category_label(data: &ChartData, index: usize) -> &str {
    data.labels.get(index).map_or("", |l| l.as_str())
}

fn series_name(data: &ChartData, index: usize) -> String {
    match data.legends.get(index) {
        Some(name) if !name.trim().is_empty() => name.clone(),
        _ => format!("Series {}", index + 1),
    }
}

fn tooltip(data: &ChartData, series: usize, category: &str, v: f64) -> String {
    let v = format_value(v);
    match (data.series.len() > 1, category.trim().is_empty()) {
        (true, true) => format!("{}: {v}", series_name(data, series)),
        (true, false) => format!("{} · {category}: {v}", series_name(data, series)),
        (false, true) => v,
        (false, false) => format!("{category}: {v}"),
    }
}

/// Draws the legend when there are several series; returns the top of the drawing area.
fn series_legend(canvas: &mut Canvas, data: &ChartData, first: usize) -> f64 {
    let count = data.series.len().saturating_sub(first);
    if count > 1 {
        let names: Vec<(usize, String)> = (0..count)
            .map(|j| (j, series_name(data, first + j)))
            .collect();
        canvas.legend(&names)
    } else {
        PAD
    }
}

/// The width of the widest tick label of `scale`.
fn widest_label(scale: &Scale, font: f64) -> f64 {
    scale
        .ticks()
        .map(|t| text_width(&scale.label(t), font))
        .fold(0.0, f64::max)
}

/// The range of `values`, or `None` when there are none.
fn extent<'a>(values: impl Iterator<Item = &'a f64>) -> Option<(f64, f64)> {
    values.fold(None, |range, v| {
        let v = value(*v);
        Some(range.map_or((v, v), |(lo, hi): (f64, f64)| (lo.min(v), hi.max(v))))
    })
}

/// About one tick per 50 px of axis, between 2 and 8.
fn tick_target(length: f64) -> usize {
    ((length / 50.0) as usize).clamp(2, 8)
}

/// The plot rectangle below `top`, leaving `left` for labels on the left and a row of labels
/// below.
fn plot_area(canvas: &Canvas, top: f64, left: f64) -> Plot {
    let x = PAD + left + 6.0;
    let y = top + canvas.font * 0.6;
    Plot {
        x,
        y,
        w: (canvas.width - x - PAD - canvas.font * 1.5).max(1.0),
        h: (canvas.height - y - PAD - canvas.font * 1.6).max(1.0),
    }
}

/// Grid lines and tick labels for `scale`; `along_x` when values grow to the right.
fn value_axis(canvas: &mut Canvas, scale: &Scale, plot: Plot, along_x: bool) {
    let font = canvas.font;
    let ticks: Vec<f64> = scale.ticks().collect();
    for tick in ticks {
        let f = scale.fraction(tick);
        let opacity = if tick.abs() < scale.step * 1e-6 {
            0.55
        } else {
            0.12
        };
        let label = scale.label(tick);
        if along_x {
            let x = plot.x + f * plot.w;
            canvas.rule((x, plot.y), (x, plot.y + plot.h), opacity);
            canvas.text(
                (x, plot.y + plot.h + font * 1.25),
                Anchor::Middle,
                &label,
                "",
            );
        } else {
            let y = plot.y + plot.h - f * plot.h;
            canvas.rule((plot.x, y), (plot.x + plot.w, y), opacity);
            canvas.text((plot.x - 6.0, y + font * 0.35), Anchor::End, &label, "");
        }
    }
}

/// Category labels under the x axis (or left of the y axis when `along_y`), thinned out when
/// they would overlap.
fn category_axis(canvas: &mut Canvas, data: &ChartData, plot: Plot, count: usize, along_y: bool) {
    let font = canvas.font;
    let length = if along_y { plot.h } else { plot.w };
    let band = length / count.max(1) as f64;
    let room = if along_y { font * 1.2 } else { font * 4.0 };
    let every = ((room / band).ceil() as usize).max(1);
    let chars = if along_y {
        ((plot.x - PAD - 6.0) / (font * 0.58)) as usize
    } else {
        ((band * every as f64 - 4.0) / (font * 0.58)) as usize
    }
    .clamp(1, MAX_LABEL_CHARS);
    for i in (0..count).step_by(every) {
        let label = clip(category_label(data, i), chars);
        if label.is_empty() {
            continue;
        }
        let centre = (i as f64 + 0.5) * band;
        if along_y {
            canvas.text(
                (plot.x - 6.0, plot.y + centre + font * 0.35),
                Anchor::End,
                &label,
                "",
            );
        } else {
            canvas.text(
                (plot.x + centre, plot.y + plot.h + font * 1.25),
                Anchor::Middle,
                &label,
                "",
            );
        }
    }
}

/// Column (vertical) and bar (`horizontal`) charts: grouped bars from the zero line.
fn bars(canvas: &mut Canvas, data: &ChartData, horizontal: bool) {
    let count = category_count(data);
    let top = series_legend(canvas, data, 0);
    let (lo, hi) = extent_with_zero(data.series.iter().flatten());
    let value_length = if horizontal {
        canvas.width
    } else {
        canvas.height - top
    };
    let scale = Scale::nice(lo, hi, tick_target(value_length));
    let left = if horizontal {
        let widest = data
            .labels
            .iter()
            .map(|l| text_width(&clip(l, MAX_LABEL_CHARS), canvas.font))
            .fold(0.0, f64::max);
        widest.min(canvas.width * 0.3)
    } else {
        widest_label(&scale, canvas.font)
    };
    let plot = plot_area(canvas, top, left);
    value_axis(canvas, &scale, plot, horizontal);
    category_axis(canvas, data, plot, count, horizontal);
    if count == 0 || data.series.is_empty() {
        return;
    }

    let band = if horizontal { plot.h } else { plot.w } / count as f64;
    let group = band * 0.75;
    let thickness = group / data.series.len() as f64;
    let zero = scale.fraction(0.0);
    for (j, series) in data.series.iter().enumerate() {
        let color = canvas.color(j);
        for (i, v) in series.iter().enumerate() {
            let f = scale.fraction(*v);
            let (from, to) = (zero.min(f), zero.max(f));
            let across = i as f64 * band + (band - group) / 2.0 + j as f64 * thickness;
            let (x, y, w, h) = if horizontal {
                (
                    plot.x + from * plot.w,
                    plot.y + across,
                    (to - from) * plot.w,
                    thickness,
                )
            } else {
                (
                    plot.x + across,
                    plot.y + plot.h - to * plot.h,
                    thickness,
                    (to - from) * plot.h,
                )
            };
            let _ = write!(
                canvas.svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"",
                N(x),
                N(y),
                N(w),
                N(h),
            );
            canvas.close_with_tooltip("rect", &tooltip(data, j, category_label(data, i), *v));
        }
    }
}

/// Line and area charts: one point per category at the band's centre.
fn lines(canvas: &mut Canvas, data: &ChartData, filled: bool) {
    let count = category_count(data);
    let top = series_legend(canvas, data, 0);
    let (lo, hi) = extent_with_zero(data.series.iter().flatten());
    let scale = Scale::nice(lo, hi, tick_target(canvas.height - top));
    let plot = plot_area(canvas, top, widest_label(&scale, canvas.font));
    value_axis(canvas, &scale, plot, false);
    category_axis(canvas, data, plot, count, false);
    if count == 0 {
        return;
    }

    let band = plot.w / count as f64;
    let zero_y = plot.y + plot.h - scale.fraction(0.0) * plot.h;
    let markers = count <= 60;
    for (j, series) in data.series.iter().enumerate() {
        if series.is_empty() {
            continue;
        }
        let color = canvas.color(j);
        let points: Vec<(f64, f64)> = series
            .iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    plot.x + (i as f64 + 0.5) * band,
                    plot.y + plot.h - scale.fraction(*v) * plot.h,
                )
            })
            .collect();
        if filled {
            let first_x = points.first().map_or(plot.x, |p| p.0);
            let last_x = points.last().map_or(plot.x, |p| p.0);
            canvas.svg.push_str("<polygon points=\"");
            canvas.points(&points);
            let _ = write!(
                canvas.svg,
                " {},{} {},{}\" fill=\"{color}\" fill-opacity=\"0.25\"/>",
                N(last_x),
                N(zero_y),
                N(first_x),
                N(zero_y),
            );
        }
        canvas.svg.push_str("<polyline points=\"");
        canvas.points(&points);
        let _ = write!(
            canvas.svg,
            "\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" stroke-linejoin=\"round\"/>"
        );
        if markers {
            for (i, (x, y)) in points.iter().enumerate() {
                let _ = write!(
                    canvas.svg,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{color}\"",
                    N(*x),
                    N(*y),
                );
                let text = tooltip(data, j, category_label(data, i), series[i]);
                canvas.close_with_tooltip("circle", &text);
            }
        }
    }
}

/// Scatter: `series[0]` is x, each further series a set of y values at those x.
fn scatter(canvas: &mut Canvas, data: &ChartData) {
    let xs: &[f64] = data.series.first().map_or(&[], Vec::as_slice);
    let sets = data.series.get(1..).unwrap_or(&[]);
    let top = series_legend(canvas, data, 1);
    let shown = |set: &Vec<f64>| set.len().min(xs.len());
    // A little margin, so no point sits on an axis.
    let padded = |(lo, hi): (f64, f64)| (lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05);
    let (x_lo, x_hi) =
        extent(sets.iter().flat_map(|set| &xs[..shown(set)])).map_or((0.0, 1.0), padded);
    let (y_lo, y_hi) =
        extent(sets.iter().flat_map(|set| &set[..shown(set)])).map_or((0.0, 1.0), padded);
    let y_scale = Scale::nice(y_lo, y_hi, tick_target(canvas.height - top));
    let plot = plot_area(canvas, top, widest_label(&y_scale, canvas.font));
    let x_scale = Scale::nice(x_lo, x_hi, tick_target(plot.w));
    value_axis(canvas, &y_scale, plot, false);
    value_axis(canvas, &x_scale, plot, true);

    for (j, set) in sets.iter().enumerate() {
        let color = canvas.color(j);
        for (k, (x, y)) in xs.iter().zip(set).enumerate() {
            let _ = write!(
                canvas.svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{color}\" fill-opacity=\"0.8\"",
                N(plot.x + x_scale.fraction(*x) * plot.w),
                N(plot.y + plot.h - y_scale.fraction(*y) * plot.h),
            );
            let point = format!("({}, {})", format_value(*x), format_value(*y));
            let label = category_label(data, k);
            let text = match (sets.len() > 1, label.trim().is_empty()) {
                (true, _) => format!("{} {point}", series_name(data, j + 1)),
                (false, true) => point,
                (false, false) => format!("{label} {point}"),
            };
            canvas.close_with_tooltip("circle", &text);
        }
    }
}

/// Pie, or ring when `hole` (the inner radius as a share of the outer) is above zero.
fn pie(canvas: &mut Canvas, data: &ChartData, hole: f64) {
    let values: &[f64] = data.series.first().map_or(&[], Vec::as_slice);
    let slices: Vec<(usize, f64)> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (i, value(*v)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    let total: f64 = slices.iter().map(|(_, v)| v).sum();

    let top = if slices.len() > 1 {
        let names: Vec<(usize, String)> = slices
            .iter()
            .map(|(i, v)| {
                let label = clip(category_label(data, *i), MAX_LABEL_CHARS);
                let label = if label.is_empty() {
                    format!("#{}", i + 1)
                } else {
                    label
                };
                let percent = (v / total * 1000.0).round() / 10.0;
                (*i, format!("{label} ({percent}%)"))
            })
            .collect();
        canvas.legend(&names)
    } else {
        PAD
    };
    let radius = ((canvas.width - 2.0 * PAD).min(canvas.height - top - PAD) / 2.0).max(1.0);
    let inner = radius * hole;
    let centre = (canvas.width / 2.0, top + (canvas.height - top - PAD) / 2.0);
    let at = |r: f64, angle: f64| (centre.0 + r * angle.cos(), centre.1 + r * angle.sin());

    if slices.is_empty() {
        let _ = write!(
            canvas.svg,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"none\" stroke=\"currentColor\" \
             stroke-opacity=\"0.2\" stroke-width=\"{}\"/>",
            N(centre.0),
            N(centre.1),
            N((radius + inner) / 2.0),
            N((radius - inner).max(1.0)),
        );
        return;
    }

    let mut start = -PI / 2.0;
    for (i, v) in &slices {
        let share = v / total;
        let sweep = share * TAU;
        let end = start + sweep;
        let color = canvas.color(*i);
        if slices.len() == 1 {
            // A lone slice is the whole disc: an arc from a point to itself draws nothing.
            let _ = write!(
                canvas.svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{}\"",
                N(centre.0),
                N(centre.1),
                N((radius + inner) / 2.0),
                N(radius - inner),
            );
        } else {
            let large = u8::from(sweep > PI);
            let (o0, o1) = (at(radius, start), at(radius, end));
            canvas.svg.push_str("<path d=\"");
            if inner > 0.0 {
                let (i0, i1) = (at(inner, start), at(inner, end));
                let _ = write!(
                    canvas.svg,
                    "M{} {}A{r} {r} 0 {large} 1 {} {}L{} {}A{ir} {ir} 0 {large} 0 {} {}Z",
                    N(o0.0),
                    N(o0.1),
                    N(o1.0),
                    N(o1.1),
                    N(i1.0),
                    N(i1.1),
                    N(i0.0),
                    N(i0.1),
                    r = N(radius),
                    ir = N(inner),
                );
            } else {
                let _ = write!(
                    canvas.svg,
                    "M{} {}L{} {}A{r} {r} 0 {large} 1 {} {}Z",
                    N(centre.0),
                    N(centre.1),
                    N(o0.0),
                    N(o0.1),
                    N(o1.0),
                    N(o1.1),
                    r = N(radius),
                );
            }
            let _ = write!(
                canvas.svg,
                "\" fill=\"{color}\" stroke=\"#fff\" stroke-width=\"1\""
            );
        }
        let text = tooltip(data, 0, category_label(data, *i), *v);
        let element = if slices.len() == 1 { "circle" } else { "path" };
        canvas.close_with_tooltip(element, &text);

        if sweep > 0.3 && radius > canvas.font * 3.0 {
            let label_radius = if inner > 0.0 {
                (radius + inner) / 2.0
            } else {
                radius * 0.62
            };
            let mid = at(label_radius, start + sweep / 2.0);
            let percent = format!("{:.0}%", share * 100.0);
            canvas.text(
                (mid.0, mid.1 + canvas.font * 0.35),
                Anchor::Middle,
                &percent,
                " fill=\"#fff\"",
            );
        }
        start = end;
    }
}

/// Radar: one spoke per category, rings at the scale's ticks, one polygon per series.
fn radar(canvas: &mut Canvas, data: &ChartData) {
    let count = category_count(data);
    let top = series_legend(canvas, data, 0);
    let font = canvas.font;
    let widest = data
        .labels
        .iter()
        .map(|l| text_width(&clip(l, 16), font))
        .fold(0.0, f64::max)
        .min(canvas.width * 0.25);
    let radius = ((canvas.width - 2.0 * (widest + PAD + 6.0)) / 2.0)
        .min((canvas.height - top - PAD - 2.0 * font * 1.4) / 2.0)
        .max(1.0);
    let centre = (canvas.width / 2.0, top + (canvas.height - top - PAD) / 2.0);
    let (_, hi) = extent_with_zero(data.series.iter().flatten());
    let scale = Scale::nice(0.0, hi, 4);
    let angle = |i: usize| -PI / 2.0 + TAU * i as f64 / count.max(1) as f64;
    let at = |r: f64, i: usize| {
        let a = angle(i);
        (centre.0 + r * a.cos(), centre.1 + r * a.sin())
    };

    let rings: Vec<f64> = scale.ticks().filter(|t| *t > 0.0).collect();
    for ring in &rings {
        let r = scale.fraction(*ring) * radius;
        if count >= 3 {
            let corners: Vec<(f64, f64)> = (0..count).map(|i| at(r, i)).collect();
            canvas.svg.push_str("<polygon points=\"");
            canvas.points(&corners);
            canvas
                .svg
                .push_str("\" fill=\"none\" stroke=\"currentColor\" stroke-opacity=\"0.12\"/>");
        } else {
            let _ = write!(
                canvas.svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"none\" stroke=\"currentColor\" stroke-opacity=\"0.12\"/>",
                N(centre.0),
                N(centre.1),
                N(r),
            );
        }
        canvas.text(
            (centre.0 + 4.0, centre.1 - r + font * 0.35),
            Anchor::Start,
            &scale.label(*ring),
            " fill-opacity=\"0.6\"",
        );
    }
    for i in 0..count {
        canvas.rule(centre, at(radius, i), 0.2);
        let label = clip(category_label(data, i), 16);
        if label.is_empty() {
            continue;
        }
        let cos = angle(i).cos();
        let anchor = if cos > 0.3 {
            Anchor::Start
        } else if cos < -0.3 {
            Anchor::End
        } else {
            Anchor::Middle
        };
        // Far enough out that the top label clears the ring values beside the top spoke.
        let (x, y) = at(radius + font * 0.8, i);
        let sin = angle(i).sin();
        canvas.text((x, y + font * 0.35 + sin * font * 0.5), anchor, &label, "");
    }

    for (j, series) in data.series.iter().enumerate() {
        if series.is_empty() {
            continue;
        }
        let color = canvas.color(j);
        let corners: Vec<(f64, f64)> = series
            .iter()
            .enumerate()
            .map(|(i, v)| at(scale.fraction(*v) * radius, i))
            .collect();
        canvas.svg.push_str("<polygon points=\"");
        canvas.points(&corners);
        let _ = write!(
            canvas.svg,
            "\" fill=\"{color}\" fill-opacity=\"0.2\" stroke=\"{color}\" stroke-width=\"2\"/>"
        );
        for (i, (x, y)) in corners.iter().enumerate() {
            let _ = write!(
                canvas.svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{color}\"",
                N(*x),
                N(*y),
            );
            let text = tooltip(data, j, category_label(data, i), series[i]);
            canvas.close_with_tooltip("circle", &text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup_check::{assert_safe_markup, parse_markup, Element};

    const ALL_KINDS: [ChartKind; 8] = [
        ChartKind::Bar,
        ChartKind::Column,
        ChartKind::Line,
        ChartKind::Area,
        ChartKind::Pie,
        ChartKind::Ring,
        ChartKind::Radar,
        ChartKind::Scatter,
    ];

    fn data(labels: &[&str], legends: &[&str], series: &[&[f64]]) -> ChartData {
        ChartData {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            legends: legends.iter().map(|s| s.to_string()).collect(),
            series: series.iter().map(|s| s.to_vec()).collect(),
        }
    }

    fn elements(svg: &str) -> Vec<Element> {
        parse_markup(svg)
            .unwrap_or_else(|e| panic!("malformed SVG ({e}):\n{svg}"))
            .elements
    }

    fn number(element: &Element, attribute: &str) -> f64 {
        element
            .attribute(attribute)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no numeric {attribute} on {element:?}"))
    }

    fn assert_sound(svg: &str) {
        assert_safe_markup(svg);
        let elements = elements(svg);
        assert_eq!(elements[0].name, "svg", "{svg}");
        for bad in ["NaN", "inf"] {
            assert!(!svg.contains(bad), "{bad} in:\n{svg}");
        }
        for element in &elements {
            for color in ["fill", "stroke"]
                .iter()
                .filter_map(|a| element.attribute(a))
            {
                assert!(
                    color == "none" || color == "currentColor" || aula_course::is_color(color),
                    "colour {color:?} in:\n{svg}"
                );
            }
        }
    }

    fn sample() -> ChartData {
        data(
            &["Mon", "Tue", "Wed", "Thu"],
            &["Apples", "Pears"],
            &[&[3.0, 7.5, 2.0, 9.0], &[1.0, 4.0, 6.0, 2.5]],
        )
    }

    #[test]
    fn every_kind_draws_a_well_formed_svg_with_the_requested_view_box() {
        for kind in ALL_KINDS {
            let svg = chart_svg(kind, &sample(), &[], 600.0, 320.0);
            assert_sound(&svg);
            let root = &elements(&svg)[0];
            assert_eq!(root.attribute("viewBox"), Some("0 0 600 320"), "{kind:?}");
            let marks = elements(&svg)
                .iter()
                .filter(|e| {
                    matches!(
                        e.name.as_str(),
                        "rect" | "path" | "polyline" | "polygon" | "circle"
                    )
                })
                .count();
            assert!(marks >= 4, "{kind:?} drew {marks} marks:\n{svg}");
        }
    }

    #[test]
    fn labels_and_legends_are_escaped() {
        let hostile = data(
            &["<script>alert(1)</script>", "a\"b", "x&y", "\u{7}bell"],
            &["<img src=x onerror=alert(1)>", "ok"],
            &[&[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]],
        );
        for kind in ALL_KINDS {
            let svg = chart_svg(kind, &hostile, &[], 640.0, 400.0);
            assert_sound(&svg);
            assert!(!svg.contains("<img"), "{kind:?}:\n{svg}");
            assert!(
                !svg.contains('\u{7}'),
                "{kind:?}: a control character in the SVG"
            );
        }
        let svg = chart_svg(ChartKind::Column, &hostile, &[], 640.0, 400.0);
        assert!(svg.contains("&lt;img src=x onerror=alert(1)&gt;"), "{svg}");
        assert!(svg.contains("x&amp;y"), "{svg}");
    }

    #[test]
    fn empty_and_all_zero_data_draw_without_nan_or_panic() {
        let cases = [
            data(&[], &[], &[]),
            data(&["a", "b"], &[], &[]),
            data(&[], &[], &[&[]]),
            data(&["a"], &[], &[&[], &[]]),
            data(
                &["a", "b", "c"],
                &["x", "y"],
                &[&[0.0, 0.0, 0.0], &[0.0, 0.0, 0.0]],
            ),
            data(&["a"], &[], &[&[5.0]]),
            data(
                &["a", "b"],
                &[],
                &[&[f64::NAN, f64::INFINITY], &[f64::NEG_INFINITY, 1e300]],
            ),
            data(&["a", "b"], &[], &[&[-1.0, -2.0]]),
        ];
        for kind in ALL_KINDS {
            for case in &cases {
                for (w, h) in [(400.0, 300.0), (0.0, f64::NAN), (5.0, 5.0)] {
                    let svg = chart_svg(kind, case, &[], w, h);
                    assert_sound(&svg);
                }
            }
        }
    }

    #[test]
    fn negative_columns_are_drawn_below_the_zero_line() {
        let svg = chart_svg(
            ChartKind::Column,
            &data(&["up", "down"], &[], &[&[10.0, -5.0]]),
            &[],
            400.0,
            300.0,
        );
        assert_sound(&svg);
        let elements = elements(&svg);
        let zero = elements
            .iter()
            .find(|e| e.name == "line" && e.attribute("stroke-opacity") == Some("0.55"))
            .expect("a zero line");
        let zero_y = number(zero, "y1");
        let bars: Vec<&Element> = elements.iter().filter(|e| e.name == "rect").collect();
        assert_eq!(bars.len(), 2);
        let (up, down) = (bars[0], bars[1]);
        assert!(
            (number(up, "y") + number(up, "height") - zero_y).abs() < 0.02,
            "{svg}"
        );
        assert!((number(down, "y") - zero_y).abs() < 0.02, "{svg}");
        assert!(number(down, "height") > 0.0);
        assert!(number(up, "height") > number(down, "height") * 1.5, "{svg}");
    }

    #[test]
    fn negative_bars_extend_left_of_the_zero_line() {
        let svg = chart_svg(
            ChartKind::Bar,
            &data(&["gain", "loss"], &[], &[&[4.0, -4.0]]),
            &[],
            400.0,
            300.0,
        );
        let elements = elements(&svg);
        let zero = elements
            .iter()
            .find(|e| e.name == "line" && e.attribute("stroke-opacity") == Some("0.55"))
            .expect("a zero line");
        let zero_x = number(zero, "x1");
        let bars: Vec<&Element> = elements.iter().filter(|e| e.name == "rect").collect();
        assert!((number(bars[0], "x") - zero_x).abs() < 0.02, "{svg}");
        assert!(
            (number(bars[1], "x") + number(bars[1], "width") - zero_x).abs() < 0.02,
            "{svg}"
        );
    }

    #[test]
    fn pie_ignores_non_positive_values() {
        let svg = chart_svg(
            ChartKind::Pie,
            &data(&["a", "b", "c", "d"], &[], &[&[3.0, 0.0, -2.0, 1.0]]),
            &[],
            400.0,
            300.0,
        );
        assert_sound(&svg);
        let slices = elements(&svg).iter().filter(|e| e.name == "path").count();
        assert_eq!(slices, 2, "{svg}");
        assert!(svg.contains("a (75%)") && svg.contains("d (25%)"), "{svg}");
        assert!(!svg.contains(">b (") && !svg.contains(">c ("), "{svg}");
    }

    #[test]
    fn a_single_slice_is_a_full_circle() {
        for kind in [ChartKind::Pie, ChartKind::Ring] {
            let svg = chart_svg(kind, &data(&["all"], &[], &[&[7.0]]), &[], 300.0, 300.0);
            assert_sound(&svg);
            assert!(elements(&svg).iter().any(|e| e.name == "circle"), "{svg}");
        }
    }

    #[test]
    fn only_valid_hex_colours_are_used() {
        let colors = vec!["#123abc".to_string(), "red;background:url(x)".to_string()];
        let svg = chart_svg(ChartKind::Column, &sample(), &colors, 400.0, 300.0);
        assert_sound(&svg);
        assert!(svg.contains("fill=\"#123abc\""), "{svg}");
        assert!(!svg.contains("url("), "{svg}");
        assert!(svg.contains(&format!("fill=\"{}\"", PALETTE[1])), "{svg}");
    }

    #[test]
    fn legend_appears_only_for_several_series() {
        let one = chart_svg(
            ChartKind::Line,
            &data(&["a", "b"], &["Only"], &[&[1.0, 2.0]]),
            &[],
            400.0,
            300.0,
        );
        assert!(!one.contains(">Only<"), "{one}");
        let two = chart_svg(ChartKind::Line, &sample(), &[], 400.0, 300.0);
        assert!(two.contains(">Apples<") && two.contains(">Pears<"), "{two}");
        let unnamed = chart_svg(
            ChartKind::Radar,
            &data(&["a", "b", "c"], &[], &[&[1.0; 3], &[2.0; 3]]),
            &[],
            400.0,
            300.0,
        );
        assert!(unnamed.contains(">Series 2<"), "{unnamed}");
    }

    #[test]
    fn scatter_reads_x_from_the_first_series_and_y_from_the_second() {
        let svg = chart_svg(
            ChartKind::Scatter,
            &data(
                &["p", "q", "r"],
                &[],
                &[&[0.0, 5.0, 10.0], &[100.0, 50.0, 0.0]],
            ),
            &[],
            400.0,
            300.0,
        );
        assert_sound(&svg);
        let points: Vec<(f64, f64)> = elements(&svg)
            .iter()
            .filter(|e| e.name == "circle")
            .map(|e| (number(e, "cx"), number(e, "cy")))
            .collect();
        assert_eq!(points.len(), 3, "{svg}");
        assert!(
            points[0].0 < points[1].0 && points[1].0 < points[2].0,
            "{points:?}"
        );
        assert!(
            points[0].1 < points[1].1 && points[1].1 < points[2].1,
            "{points:?}"
        );
        assert!(svg.contains("<title>q (5, 50)</title>"), "{svg}");
    }

    #[test]
    fn a_chart_uses_the_colours_a_course_may_use_and_the_palette_for_any_other() {
        let canvas_colors: Vec<String> =
            ["#12ab9f", "red", "#fff\" onload=\"x", "#FFFA", "url(#x)"]
                .map(String::from)
                .to_vec();
        let canvas = Canvas::new(100.0, 100.0, &canvas_colors);
        assert_eq!(canvas.color(0), "#12ab9f");
        assert_eq!(canvas.color(1), "red");
        for i in 2..5 {
            assert_eq!(canvas.color(i), PALETTE[i % PALETTE.len()], "colour {i}");
        }
    }
}
