//! Charts drawn with native shapes, grouped: bars are rectangles, lines and areas freeform paths,
//! scatter points small ellipses, pie and ring slices polygons, radar webs polygons, and every
//! label, tick and legend entry a text box. A reader can restyle or move every piece, and every
//! slide program shows it the same way (no embedded chart part or spreadsheet to go stale). The
//! data is the course's, so nothing is trusted: values are made finite and bounded, empty or
//! ragged series draw what they have.

use aula_course::action::{ChartData, ChartKind};
use aula_course::scene::ChartElement;
use aula_render::chart_scale::{extent_with_zero as extent, value, Scale};
use aula_render::CHART_PALETTE;

use super::text::width_em;
use super::{
    canvas_font_to_centipoints, canvas_to_emu, Align, Anchor, Color, DeckItem, EmuRect, Geometry,
    Group, Line, Paragraph, RunStyle, Shape, ShapeRole, Stroke, TextBody, Typeface,
};

const LABEL: Color = Color::rgb(0x47, 0x55, 0x69);
const GRID: Color = Color::rgb(0xe2, 0xe8, 0xf0);
const AXIS: Color = Color::rgb(0x94, 0xa3, 0xb8);
const PAD: f64 = 6.0;
const MAX_LABEL_CHARS: usize = 24;

fn short(label: &str) -> String {
    let label = label.trim();
    if label.chars().count() > MAX_LABEL_CHARS {
        label.chars().take(MAX_LABEL_CHARS - 1).collect::<String>() + "…"
    } else {
        label.to_string()
    }
}

/// The chart `element` as a group of shapes named `name`.
pub(crate) fn chart_group(element: &ChartElement, name: String) -> Group {
    let frame = (
        element.left,
        element.top,
        element.width.max(0.0),
        element.height.max(0.0),
    );
    let font = (frame.2.min(frame.3) / 24.0).clamp(8.0, 13.0);
    let mut painter = Painter {
        items: Vec::new(),
        colors: element.colors.iter().map(|c| Color::parse(c)).collect(),
        font,
    };
    let data = &element.data;
    match element.chart_type {
        ChartKind::Column => axis_chart(&mut painter, frame, data, Plot::Columns),
        ChartKind::Bar => bar_chart(&mut painter, frame, data),
        ChartKind::Line => axis_chart(&mut painter, frame, data, Plot::Lines),
        ChartKind::Area => axis_chart(&mut painter, frame, data, Plot::Areas),
        ChartKind::Scatter => scatter_chart(&mut painter, frame, data),
        ChartKind::Pie => pie_chart(&mut painter, frame, data, false),
        ChartKind::Ring => pie_chart(&mut painter, frame, data, true),
        ChartKind::Radar => radar_chart(&mut painter, frame, data),
    }
    Group {
        name,
        frame: EmuRect::from_canvas(frame.0, frame.1, frame.2, frame.3),
        items: painter.items,
    }
}

/// Draws in canvas units; every item is converted to EMU as it is made.
struct Painter {
    items: Vec<DeckItem>,
    colors: Vec<Option<Color>>,
    font: f64,
}

impl Painter {
    fn color(&self, index: usize) -> Color {
        self.colors
            .get(index)
            .copied()
            .flatten()
            .or_else(|| Color::parse(CHART_PALETTE[index % CHART_PALETTE.len()]))
            .unwrap_or(LABEL)
    }

    fn shape(
        &mut self,
        frame: EmuRect,
        geometry: Geometry,
        fill: Option<Color>,
        outline: Option<Stroke>,
    ) {
        let n = self.items.len() + 1;
        self.items.push(DeckItem::Shape(Shape {
            name: format!("Chart part {n}"),
            description: String::new(),
            role: ShapeRole::Drawing,
            frame,
            geometry,
            fill,
            outline,
            text: None,
        }));
    }

    fn rect(&mut self, left: f64, top: f64, width: f64, height: f64, fill: Color) {
        let frame = EmuRect::from_canvas(left, top, width.max(0.0), height.max(0.0));
        self.shape(frame, Geometry::Rectangle, Some(fill), None);
    }

    fn dot(&mut self, x: f64, y: f64, radius: f64, fill: Color) {
        let frame = EmuRect::from_canvas(x - radius, y - radius, 2.0 * radius, 2.0 * radius);
        self.shape(frame, Geometry::Ellipse, Some(fill), None);
    }

    /// A freeform path through canvas points.
    fn path(
        &mut self,
        points: &[(f64, f64)],
        closed: bool,
        fill: Option<Color>,
        outline: Option<Stroke>,
    ) {
        if points.len() < 2 {
            return;
        }
        let emu: Vec<[i64; 2]> = points
            .iter()
            .map(|&(x, y)| [canvas_to_emu(x), canvas_to_emu(y)])
            .collect();
        let left = emu.iter().map(|p| p[0]).min().unwrap_or(0);
        let top = emu.iter().map(|p| p[1]).min().unwrap_or(0);
        let right = emu.iter().map(|p| p[0]).max().unwrap_or(0);
        let bottom = emu.iter().map(|p| p[1]).max().unwrap_or(0);
        let frame = EmuRect {
            x: left,
            y: top,
            cx: (right - left).max(1),
            cy: (bottom - top).max(1),
        };
        let points = emu.iter().map(|p| [p[0] - left, p[1] - top]).collect();
        self.shape(frame, Geometry::Path { points, closed }, fill, outline);
    }

    fn rule(&mut self, from: (f64, f64), to: (f64, f64), color: Color) {
        let n = self.items.len() + 1;
        self.items.push(DeckItem::Line(Line {
            name: format!("Chart part {n}"),
            from: [canvas_to_emu(from.0), canvas_to_emu(from.1)],
            to: [canvas_to_emu(to.0), canvas_to_emu(to.1)],
            outline: Stroke {
                color,
                width_emu: 9_525,
                dashed: false,
            },
            arrows: [false, false],
        }));
    }

    /// A one-line label in a box; `align` places it horizontally, vertically it is centred.
    fn label(&mut self, rect: (f64, f64, f64, f64), text: &str, align: Align) {
        if text.trim().is_empty() {
            return;
        }
        let n = self.items.len() + 1;
        let mut style = RunStyle::sized(canvas_font_to_centipoints(self.font));
        style.color = Some(LABEL);
        self.items.push(DeckItem::Shape(Shape {
            name: format!("Chart label {n}"),
            description: String::new(),
            role: ShapeRole::TextBox,
            frame: EmuRect::from_canvas(rect.0, rect.1, rect.2.max(0.0), rect.3.max(0.0)),
            geometry: Geometry::Rectangle,
            fill: None,
            outline: None,
            text: Some(TextBody {
                paragraphs: vec![Paragraph::plain(text, style, align)],
                anchor: Anchor::Middle,
                inset_emu: 0,
                wrap: false,
            }),
        }));
    }

    fn text_width(&self, text: &str) -> f64 {
        width_em(text, Typeface::Body, false) * self.font
    }

    /// Legend entries in rows across the top of `frame`; returns the height used.
    fn legend(&mut self, frame: (f64, f64, f64, f64), entries: &[(String, Color)]) -> f64 {
        if entries.is_empty() {
            return 0.0;
        }
        let row_height = self.font * 1.6;
        let swatch = self.font * 0.8;
        let (mut x, mut y) = (frame.0 + PAD, frame.1 + PAD);
        for (text, color) in entries {
            let width = swatch + 4.0 + self.text_width(text) + 10.0;
            if x > frame.0 + PAD && x + width > frame.0 + frame.2 - PAD {
                x = frame.0 + PAD;
                y += row_height;
            }
            self.rect(x, y + (row_height - swatch) / 2.0, swatch, swatch, *color);
            self.label(
                (x + swatch + 4.0, y, width - swatch - 4.0, row_height),
                text,
                Align::Left,
            );
            x += width;
        }
        y + row_height - frame.1
    }
}

fn series_legend(p: &Painter, data: &ChartData, skip: usize) -> Vec<(String, Color)> {
    let named = data.legends.iter().skip(skip).any(|l| !l.trim().is_empty());
    if !named && data.series.len() <= 1 + skip {
        return Vec::new();
    }
    (skip..data.series.len())
        .map(|i| {
            let name = data
                .legends
                .get(i)
                .map(|l| short(l))
                .filter(|l| !l.is_empty())
                .unwrap_or_else(|| format!("Series {}", i + 1 - skip));
            (name, p.color(i - skip))
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Plot {
    Columns,
    Lines,
    Areas,
}

/// Category labels under a run of slots, each centred on its slot; a label that would touch
/// the one before it is left out.
fn category_labels(p: &mut Painter, labels: &[String], left: f64, slot: f64, top: f64) {
    let mut free_from = f64::MIN;
    for (i, label) in labels.iter().enumerate() {
        let text = short(label);
        let width = p.text_width(&text) + 4.0;
        let center = left + (i as f64 + 0.5) * slot;
        if center - width / 2.0 < free_from {
            continue;
        }
        free_from = center + width / 2.0 + p.font * 0.4;
        p.label(
            (center - width / 2.0, top, width, p.font * 1.5),
            &text,
            Align::Center,
        );
    }
}

/// Value ticks and grid lines up the left of a plot.
fn value_axis(p: &mut Painter, scale: &Scale, plot: (f64, f64, f64, f64), label_width: f64) {
    for tick in scale.ticks() {
        let y = plot.1 + plot.3 * (1.0 - scale.fraction(tick));
        p.rule((plot.0, y), (plot.0 + plot.2, y), GRID);
        p.label(
            (
                plot.0 - label_width - 4.0,
                y - p.font,
                label_width,
                p.font * 2.0,
            ),
            &scale.label(tick),
            Align::Right,
        );
    }
}

fn axis_chart(p: &mut Painter, frame: (f64, f64, f64, f64), data: &ChartData, plot: Plot) {
    let legend = series_legend(p, data, 0);
    let legend_height = p.legend(frame, &legend);
    let (lo, hi) = extent(data.series.iter().flatten());
    let scale = Scale::nice(lo, hi, 4);
    let label_width = scale
        .ticks()
        .map(|t| p.text_width(&scale.label(t)))
        .fold(0.0, f64::max);
    let left = frame.0 + PAD + label_width + 6.0;
    let top = frame.1 + PAD + legend_height + p.font * 0.6;
    let bottom = frame.1 + frame.3 - PAD - p.font * 1.6;
    let right = frame.0 + frame.2 - PAD;
    let area = (left, top, (right - left).max(1.0), (bottom - top).max(1.0));
    value_axis(p, &scale, area, label_width);
    let count = data
        .labels
        .len()
        .max(data.series.iter().map(Vec::len).max().unwrap_or(0))
        .max(1);
    let slot = area.2 / count as f64;
    let y_of = |v: f64| area.1 + area.3 * (1.0 - scale.fraction(v));
    let zero = y_of(0.0);
    let series_count = data.series.len().max(1);
    for (s, series) in data.series.iter().enumerate() {
        let color = p.color(s);
        match plot {
            Plot::Columns => {
                let width = slot * 0.75 / series_count as f64;
                for (i, v) in series.iter().enumerate().take(count) {
                    let x = area.0 + i as f64 * slot + slot * 0.125 + s as f64 * width;
                    let y = y_of(*v);
                    p.rect(x, y.min(zero), width, (y - zero).abs(), color);
                }
            }
            Plot::Lines | Plot::Areas => {
                let points: Vec<(f64, f64)> = series
                    .iter()
                    .take(count)
                    .enumerate()
                    .map(|(i, v)| (area.0 + (i as f64 + 0.5) * slot, y_of(*v)))
                    .collect();
                let outline = Stroke {
                    color,
                    width_emu: 28_575,
                    dashed: false,
                };
                if plot == Plot::Areas && points.len() >= 2 {
                    let mut polygon = points.clone();
                    polygon.push((points[points.len() - 1].0, zero));
                    polygon.push((points[0].0, zero));
                    let fill = Color { alpha: 90, ..color };
                    p.path(&polygon, true, Some(fill), None);
                }
                p.path(&points, false, None, Some(outline));
                if points.len() <= 24 || points.len() == 1 {
                    for &(x, y) in &points {
                        p.dot(x, y, 2.5, color);
                    }
                }
            }
        }
    }
    p.rule((area.0, zero), (area.0 + area.2, zero), AXIS);
    category_labels(p, &data.labels, area.0, slot, bottom + 2.0);
}

fn bar_chart(p: &mut Painter, frame: (f64, f64, f64, f64), data: &ChartData) {
    let legend = series_legend(p, data, 0);
    let legend_height = p.legend(frame, &legend);
    let (lo, hi) = extent(data.series.iter().flatten());
    let scale = Scale::nice(lo, hi, 4);
    let label_width = data
        .labels
        .iter()
        .map(|l| p.text_width(&short(l)))
        .fold(0.0, f64::max)
        .min(frame.2 * 0.35);
    let left = frame.0 + PAD + label_width + 6.0;
    let top = frame.1 + PAD + legend_height + p.font * 0.4;
    let bottom = frame.1 + frame.3 - PAD - p.font * 1.6;
    let right = frame.0 + frame.2 - PAD - p.font;
    let area = (left, top, (right - left).max(1.0), (bottom - top).max(1.0));
    let x_of = |v: f64| area.0 + area.2 * scale.fraction(v);
    for tick in scale.ticks() {
        let x = x_of(tick);
        p.rule((x, area.1), (x, area.1 + area.3), GRID);
        let text = scale.label(tick);
        let width = p.text_width(&text) + 8.0;
        p.label(
            (x - width / 2.0, bottom + 2.0, width, p.font * 1.5),
            &text,
            Align::Center,
        );
    }
    let count = data
        .labels
        .len()
        .max(data.series.iter().map(Vec::len).max().unwrap_or(0))
        .max(1);
    let slot = area.3 / count as f64;
    let height = slot * 0.75 / data.series.len().max(1) as f64;
    let zero = x_of(0.0);
    for (s, series) in data.series.iter().enumerate() {
        let color = p.color(s);
        for (i, v) in series.iter().enumerate().take(count) {
            let y = area.1 + i as f64 * slot + slot * 0.125 + s as f64 * height;
            let x = x_of(*v);
            p.rect(x.min(zero), y, (x - zero).abs(), height, color);
        }
    }
    p.rule((zero, area.1), (zero, area.1 + area.3), AXIS);
    let every = ((p.font * 1.2) / slot.max(0.1)).ceil().max(1.0) as usize;
    for (i, label) in data.labels.iter().enumerate().step_by(every) {
        let center = area.1 + (i as f64 + 0.5) * slot;
        p.label(
            (frame.0 + PAD, center - p.font, label_width, p.font * 2.0),
            &short(label),
            Align::Right,
        );
    }
}

fn scatter_chart(p: &mut Painter, frame: (f64, f64, f64, f64), data: &ChartData) {
    let legend = series_legend(p, data, 1);
    let legend_height = p.legend(frame, &legend);
    let xs: &[f64] = data.series.first().map_or(&[], Vec::as_slice);
    let (x_lo, x_hi) = xs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| {
        (lo.min(value(*v)), hi.max(value(*v)))
    });
    let x_scale = if xs.is_empty() {
        Scale::nice(0.0, 1.0, 4)
    } else {
        Scale::nice(x_lo, x_hi, 4)
    };
    let (y_lo, y_hi) = extent(data.series.iter().skip(1).flatten());
    let y_scale = Scale::nice(y_lo, y_hi, 4);
    let label_width = y_scale
        .ticks()
        .map(|t| p.text_width(&y_scale.label(t)))
        .fold(0.0, f64::max);
    let left = frame.0 + PAD + label_width + 6.0;
    let top = frame.1 + PAD + legend_height + p.font * 0.6;
    let bottom = frame.1 + frame.3 - PAD - p.font * 1.6;
    let right = frame.0 + frame.2 - PAD - p.font;
    let area = (left, top, (right - left).max(1.0), (bottom - top).max(1.0));
    value_axis(p, &y_scale, area, label_width);
    for tick in x_scale.ticks() {
        let x = area.0 + area.2 * x_scale.fraction(tick);
        let text = x_scale.label(tick);
        let width = p.text_width(&text) + 8.0;
        p.label(
            (x - width / 2.0, bottom + 2.0, width, p.font * 1.5),
            &text,
            Align::Center,
        );
    }
    p.rule(
        (area.0, area.1 + area.3),
        (area.0 + area.2, area.1 + area.3),
        AXIS,
    );
    for (s, series) in data.series.iter().enumerate().skip(1) {
        let color = p.color(s - 1);
        for (x, y) in xs.iter().zip(series) {
            let cx = area.0 + area.2 * x_scale.fraction(*x);
            let cy = area.1 + area.3 * (1.0 - y_scale.fraction(*y));
            p.dot(cx, cy, 3.5, color);
        }
    }
}

/// Points along an arc from `start` to `end` (radians, clockwise from 12 o'clock).
fn arc(center: (f64, f64), radius: f64, start: f64, end: f64) -> Vec<(f64, f64)> {
    let steps = (((end - start).abs() / 0.06).ceil() as usize).clamp(1, 120);
    (0..=steps)
        .map(|k| {
            let angle = start + (end - start) * k as f64 / steps as f64;
            (
                center.0 + radius * angle.sin(),
                center.1 - radius * angle.cos(),
            )
        })
        .collect()
}

fn pie_chart(p: &mut Painter, frame: (f64, f64, f64, f64), data: &ChartData, ring: bool) {
    let values: Vec<f64> = data
        .series
        .first()
        .map(|s| s.iter().map(|v| value(*v).max(0.0)).collect())
        .unwrap_or_default();
    let total: f64 = values.iter().sum();
    let diameter = (frame.3 - 2.0 * PAD).min(frame.2 * 0.55).max(1.0);
    let radius = diameter / 2.0;
    let center = (frame.0 + PAD + radius, frame.1 + frame.3 / 2.0);
    let inner = if ring { radius * 0.55 } else { 0.0 };
    let mut entries = Vec::new();
    if total > 0.0 {
        let mut start = 0.0;
        for (i, v) in values.iter().enumerate() {
            let color = p.color(i);
            let label = data.labels.get(i).map(|l| short(l)).unwrap_or_default();
            entries.push((format!("{label} {:.0}%", v / total * 100.0), color));
            if *v <= 0.0 {
                continue;
            }
            let end = start + v / total * std::f64::consts::TAU;
            let mut polygon = arc(center, radius, start, end);
            if ring {
                polygon.extend(arc(center, inner, end, start));
            } else {
                polygon.push(center);
            }
            p.path(&polygon, true, Some(color), None);
            start = end;
        }
    } else {
        let outline = Stroke {
            color: GRID,
            width_emu: 19_050,
            dashed: false,
        };
        let polygon = arc(center, radius, 0.0, std::f64::consts::TAU);
        p.path(&polygon, true, None, Some(outline));
    }
    let legend_left = center.0 + radius + 16.0;
    let legend_width = (frame.0 + frame.2 - PAD - legend_left).max(1.0);
    let row = p.font * 1.6;
    let rows = entries.len().max(1) as f64;
    if rows * row > frame.3 - 2.0 * PAD {
        p.font = ((frame.3 - 2.0 * PAD) / rows / 1.6).max(5.0);
    }
    let row = p.font * 1.6;
    let mut y = center.1 - entries.len() as f64 * row / 2.0;
    let swatch = p.font * 0.8;
    for (text, color) in entries {
        p.rect(legend_left, y + (row - swatch) / 2.0, swatch, swatch, color);
        p.label(
            (
                legend_left + swatch + 4.0,
                y,
                legend_width - swatch - 4.0,
                row,
            ),
            &text,
            Align::Left,
        );
        y += row;
    }
}

fn radar_chart(p: &mut Painter, frame: (f64, f64, f64, f64), data: &ChartData) {
    let spokes = data
        .labels
        .len()
        .max(data.series.iter().map(Vec::len).max().unwrap_or(0));
    if spokes < 3 {
        // Fewer than three spokes make no web; the values read as well as lines.
        return axis_chart(p, frame, data, Plot::Lines);
    }
    let legend = series_legend(p, data, 0);
    let legend_height = p.legend(frame, &legend);
    let top = frame.1 + PAD + legend_height;
    let height = (frame.1 + frame.3 - PAD - top).max(1.0);
    let center = (frame.0 + frame.2 / 2.0, top + height / 2.0);
    let radius = ((frame.2 - 2.0 * PAD).min(height) / 2.0 - p.font * 2.0).max(4.0);
    let (_, hi) = extent(data.series.iter().flatten());
    let scale = Scale::nice(0.0, hi, 4);
    let angle = |i: usize| i as f64 / spokes as f64 * std::f64::consts::TAU;
    let at = |i: usize, r: f64| (center.0 + r * angle(i).sin(), center.1 - r * angle(i).cos());
    let grid = Stroke {
        color: GRID,
        width_emu: 9_525,
        dashed: false,
    };
    for tick in scale.ticks().skip(1) {
        let r = radius * scale.fraction(tick);
        let ring: Vec<(f64, f64)> = (0..spokes).map(|i| at(i, r)).collect();
        p.path(&ring, true, None, Some(grid));
    }
    for i in 0..spokes {
        p.rule(center, at(i, radius), GRID);
        if let Some(label) = data.labels.get(i) {
            let (x, y) = at(i, radius + p.font * 1.2);
            let width = p.font * 8.0;
            p.label(
                (x - width / 2.0, y - p.font, width, p.font * 2.0),
                &short(label),
                Align::Center,
            );
        }
    }
    for (s, series) in data.series.iter().enumerate() {
        let color = p.color(s);
        let polygon: Vec<(f64, f64)> = (0..spokes)
            .map(|i| {
                at(
                    i,
                    radius * scale.fraction(series.get(i).copied().unwrap_or(0.0).max(0.0)),
                )
            })
            .collect();
        let outline = Stroke {
            color,
            width_emu: 19_050,
            dashed: false,
        };
        p.path(
            &polygon,
            true,
            Some(Color { alpha: 60, ..color }),
            Some(outline),
        );
    }
}
